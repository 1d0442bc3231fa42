"""Flax's parameter initialization re-derived from its source, for derive_fixtures.py.

Nothing here runs Flax, JAX or linum. From github.com/google/flax (flax/core/scope.py, LazyRng)
and github.com/jax-ml/jax (jax/_src/random/, jax/_src/nn/initializers.py):
- a parameter's key is LazyRng's: fold_in(key, first 4 bytes (big-endian) of the SHA-1 of the
  scope path's names and the scope's params counter (1 for its first param, 2 for the next, each
  int as its minimal big-endian bytes), no separators (flax_fix_rng_separator is off);
- threefry, split, random_bits, uniform, normal and XLA:CPU's float32 erf_inv come from
  tests/random/reference_samplers.py; truncated_normal, variance_scaling and orthogonal follow
  JAX step by step in float32 (orthogonal's QR calls LAPACK sgeqrf/sorgqr, as jaxlib does on CPU).
"""
import ctypes
import ctypes.util
import hashlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "random"))
import reference_samplers as rs  # noqa: E402

F32 = np.float32
U32 = np.uint32


# ---- jax.random and Flax's rng paths ----------------------------------------------------------


def fold_in(k, data):
    # jax: threefry_2x32(key, threefry_seed(uint32 data)), the seed being [data >> 32, data].
    y = rs.threefry_2x32(k, np.array([0, data], U32))
    return (U32(y[0]), U32(y[1]))


def flax_param_key(root, *suffix):
    """LazyRng.as_jax_rng: the names of the scope path and the counter, hashed into one fold_in."""
    m = hashlib.sha1()
    for x in suffix:
        m.update(x.encode() if isinstance(x, str) else x.to_bytes((x.bit_length() + 7) // 8, "big"))
    return fold_in(root, int.from_bytes(m.digest()[:4], "big"))


def horner0(x, coeffs):
    return rs.horner0(x, coeffs)


def erf32(x):
    # chlo.erf for float32: x clamped to [-4, 4], x * alpha(x^2) / beta(x^2) with FMAs, clamped.
    alpha = [-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
             -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
             -1.60960333262415e-02]
    beta = [-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
            -7.37332916720468e-03, -1.42647390514189e-02]
    x = F32(min(max(F32(x), F32(-4)), F32(4)))
    x2 = F32(x * x)
    e = F32(F32(x * horner0(x2, alpha)) / horner0(x2, beta))
    return F32(min(max(e, F32(-1)), F32(1)))


def truncated_normal(k, n, lower=-2.0, upper=2.0):
    sqrt2 = F32(np.sqrt(2))
    lo, hi = F32(lower), F32(upper)
    a, b = erf32(F32(lo / sqrt2)), erf32(F32(hi / sqrt2))
    u = rs.uniform(k, n, a, b)
    out = np.array([F32(sqrt2 * rs.erf_inv(v)) for v in u], F32)
    return np.clip(out, np.nextafter(lo, F32(np.inf)), np.nextafter(hi, F32(-np.inf))).astype(F32)


def fans(shape, in_axis=-2, out_axis=-1):
    # jax's _compute_fans, in Python floats as there.
    in_size, out_size = shape[in_axis], shape[out_axis]
    receptive = float(np.prod(shape)) / in_size / out_size
    return in_size * receptive, out_size * receptive


def lecun_normal(k, shape):
    # variance_scaling(1.0, 'fan_in', 'truncated_normal'): float32 variance, sqrt, / 0.8796...
    variance = F32(1.0 / fans(shape)[0])
    stddev = F32(np.sqrt(variance) / F32(0.87962566103423978))
    return (truncated_normal(k, int(np.prod(shape))) * stddev).astype(F32).reshape(shape)


def embed_normal(k, shape):
    # Embed's default: variance_scaling(1.0, 'fan_in', 'normal', out_axis=0).
    variance = F32(1.0 / fans(shape, out_axis=0)[0])
    return (rs.normal(k, int(np.prod(shape))) * np.sqrt(variance)).astype(F32).reshape(shape)


def _lapack():
    lib = ctypes.CDLL(ctypes.util.find_library("lapack") or "liblapack.so.3")
    return lib


def orthogonal(k, shape):
    """jax.nn.initializers.orthogonal(): Q * sign(diag R) of the reduced QR of a normal matrix."""
    n_cols = shape[-1]
    n_rows = int(np.prod(shape)) // n_cols
    m, n = (n_cols, n_rows) if n_rows < n_cols else (n_rows, n_cols)
    a = rs.normal(k, m * n).reshape(m, n)
    # jnp.linalg.qr on CPU: LAPACK sgeqrf then sorgqr, column-major, float32 throughout.
    lib = _lapack()
    fa = np.asfortranarray(a, F32)
    tau = np.zeros(n, F32)
    work = np.zeros(max(1, 64 * n), F32)
    mi, ni, ki, lwork, info = (ctypes.c_int(v) for v in (m, n, n, work.size, 0))
    ptr = lambda x: x.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    lib.sgeqrf_(ctypes.byref(mi), ctypes.byref(ni), ptr(fa), ctypes.byref(mi), ptr(tau), ptr(work),
                ctypes.byref(lwork), ctypes.byref(info))
    assert info.value == 0
    sign = np.sign(np.diagonal(fa)[:n]).astype(F32)
    lib.sorgqr_(ctypes.byref(mi), ctypes.byref(ni), ctypes.byref(ki), ptr(fa), ctypes.byref(mi),
                ptr(tau), ptr(work), ctypes.byref(lwork), ctypes.byref(info))
    assert info.value == 0
    q = (np.ascontiguousarray(fa) * sign).astype(F32)
    if n_rows < n_cols:
        q = q.T
    return np.ascontiguousarray(q).reshape(shape)
