#!/usr/bin/env python3
"""Fidelity fixtures derived from Flax's and JAX's source, for machines without Flax.

Writes tests/fidelity/fixtures/ in the format of scripts/flax_fixtures.py (which writes the same
files with the real Flax 0.12 / JAX 0.11 and replaces these): for each model of MODELS and each
threefry mode ('partitionable' = jax_threefry_partitionable on, 'original' = off)
  <model>.<mode>.msgpack       flax.serialization.to_bytes(model.init(jax.random.key(0), *inputs))
  <model>.<mode>.case.msgpack  {'header', 'model', 'threefry_partitionable', 'inputs', 'output'
                                [, 'cotangent', 'grads']}, Flax's msgpack encoding; grads are
                                d sum(output * cotangent) / d variables.

Nothing here runs Flax or linum. The steps are re-derived from the sources (github.com/google/flax
flax/core/scope.py, flax/linen/{linear,normalization,recurrent}.py; github.com/jax-ml/jax
jax/_src/random/, jax/_src/nn/initializers.py):
- a parameter's key is LazyRng's: fold_in(key, first 4 bytes (big-endian) of the SHA-1 of the
  scope path's names and the scope's params counter (1 for its first param, 2 for the next, each
  int as its minimal big-endian bytes), no separators (flax_fix_rng_separator is off);
- threefry, split, random_bits, uniform, normal and XLA:CPU's float32 erf_inv come from
  tests/random/reference_samplers.py; truncated_normal, variance_scaling and orthogonal follow
  JAX step by step in float32 (orthogonal's QR calls LAPACK sgeqrf/sorgqr, as jaxlib does on CPU);
- outputs and grads are float64 numpy computations of the layer's formula from the float32
  params and inputs, rounded to float32 once (linum is checked to float32 rounding against them).
Run with /usr/bin/python3 (numpy and msgpack only).
"""
import ctypes
import ctypes.util
import hashlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "random"))
sys.path.insert(0, os.path.join(HERE, "..", "serialization"))
import reference_samplers as rs  # noqa: E402
from interop import flax_serialize  # noqa: E402

F32 = np.float32
U32 = np.uint32
OUT = os.path.join(HERE, "fixtures")
MODES = {"partitionable": True, "original": False}


def script_version():
    # The git blob id of this script: names the exact generator version whatever was committed.
    data = open(os.path.abspath(__file__), "rb").read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def header(model):
    return (f"DERIVED from the source of Flax 0.12 / JAX 0.11 (not written by Flax) by "
            f"tests/fidelity/derive_fixtures.py (git blob {script_version()}); model {model}. "
            f"scripts/flax_fixtures.py writes this file with the real Flax.")


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


# ---- inputs -----------------------------------------------------------------------------------


def ramp(shape, salt=0):
    """A deterministic float32 input: ((k * 37 + salt) % 101 - 50) / 40 at flat index k."""
    k = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((k * 37 + salt) % 101 - 50) / 40).reshape(shape).astype(F32)


def f64(a):
    return np.asarray(a, np.float64)


# ---- the models: (inputs, params from a key, output, grads or None) ---------------------------
# Each make(root) returns the variables (dicts in Flax's key order), the output, the cotangent
# and the grads (None where not derived here).


def dense_params(root, path, n_in, n_out):
    # Dense: kernel (counter 1), bias zeros (counter 2, unused).
    return {"kernel": lecun_normal(flax_param_key(root, *path, 1), (n_in, n_out)),
            "bias": np.zeros(n_out, F32)}


def model_dense(root):
    # nn.Dense(3).init(key, x), x (2, 4): the root scope's params, no names in the path.
    x = ramp((2, 4))
    p = dense_params(root, (), 4, 3)
    y = f64(x) @ f64(p["kernel"]) + f64(p["bias"])
    ct = ramp(y.shape, 7)
    g = {"kernel": f64(x).T @ f64(ct), "bias": f64(ct).sum(0)}
    return [x], {"params": p}, y, ct, {"params": g}


def model_mlp(root):
    # class MLP(nn.Module): @nn.compact __call__: x = Dense(5)(x); x = relu(x); Dense(3)(x).
    x = ramp((2, 4), 3)
    p0 = dense_params(root, ("Dense_0",), 4, 5)
    p1 = dense_params(root, ("Dense_1",), 5, 3)
    h = f64(x) @ f64(p0["kernel"]) + f64(p0["bias"])
    a = np.maximum(h, 0)
    y = a @ f64(p1["kernel"]) + f64(p1["bias"])
    ct = ramp(y.shape, 11)
    da = f64(ct) @ f64(p1["kernel"]).T
    dh = da * (h > 0)
    g = {"Dense_0": {"kernel": f64(x).T @ dh, "bias": dh.sum(0)},
         "Dense_1": {"kernel": a.T @ f64(ct), "bias": f64(ct).sum(0)}}
    return [x], {"params": {"Dense_0": p0, "Dense_1": p1}}, y, ct, {"params": g}


def model_conv(root):
    # nn.Conv(4, (3, 3)).init(key, x), x (2, 5, 5, 2) NHWC, padding 'SAME' (1 on each side).
    x = ramp((2, 5, 5, 2), 5)
    kernel = lecun_normal(flax_param_key(root, 1), (3, 3, 2, 4))
    p = {"kernel": kernel, "bias": np.zeros(4, F32)}
    xp = np.pad(f64(x), ((0, 0), (1, 1), (1, 1), (0, 0)))
    y = np.zeros((2, 5, 5, 4))
    for a in range(3):
        for b in range(3):
            y += np.einsum("nijc,cd->nijd", xp[:, a:a + 5, b:b + 5, :], f64(kernel[a, b]))
    ct = ramp(y.shape, 13)
    dk = np.zeros((3, 3, 2, 4))
    for a in range(3):
        for b in range(3):
            dk[a, b] = np.einsum("nijc,nijd->cd", xp[:, a:a + 5, b:b + 5, :], f64(ct))
    g = {"kernel": dk, "bias": f64(ct).sum((0, 1, 2))}
    return [x], {"params": p}, y, ct, {"params": g}


def model_embed(root):
    # nn.Embed(7, 3).init(key, ids), ids (2, 4) int32.
    ids = (np.arange(8, dtype=np.int32) * 3 % 7).reshape(2, 4)
    table = embed_normal(flax_param_key(root, 1), (7, 3))
    y = f64(table)[ids]
    ct = ramp(y.shape, 17)
    g = np.zeros((7, 3))
    np.add.at(g, ids, f64(ct))
    return [ids], {"params": {"embedding": table}}, y, ct, {"params": {"embedding": g}}


def model_layer_norm(root):
    # nn.LayerNorm().init(key, x), x (3, 5): scale ones, bias zeros, epsilon 1e-6.
    x = ramp((3, 5), 19)
    p = {"scale": np.ones(5, F32), "bias": np.zeros(5, F32)}
    xd = f64(x)
    mean = xd.mean(-1, keepdims=True)
    var = np.maximum((xd * xd).mean(-1, keepdims=True) - mean * mean, 0)
    xhat = (xd - mean) / np.sqrt(var + 1e-6)
    y = xhat * f64(p["scale"]) + f64(p["bias"])
    ct = ramp(y.shape, 23)
    g = {"scale": (f64(ct) * xhat).sum(0), "bias": f64(ct).sum(0)}
    return [x], {"params": p}, y, ct, {"params": g}


def sort_keys(d):
    return {k: sort_keys(d[k]) for k in sorted(d)} if isinstance(d, dict) else d


def model_rnn_lstm(root):
    # class Model: @nn.compact __call__: nn.RNN(nn.LSTMCell(4))(x), x (2, 5, 3). The cell is the
    # parent's LSTMCell_0; its Dense layers ii, hi, if, hf, ig, hg, io, ho are built in that order;
    # the scan returns them with sorted keys. ii.. kernels lecun_normal, h.. kernels orthogonal.
    x = ramp((2, 5, 3), 29)
    cell = {}
    for gate in "ifgo":
        cell["i" + gate] = {"kernel": lecun_normal(flax_param_key(root, "LSTMCell_0", "i" + gate, 1), (3, 4))}
        cell["h" + gate] = {"kernel": orthogonal(flax_param_key(root, "LSTMCell_0", "h" + gate, 1), (4, 4)),
                            "bias": np.zeros(4, F32)}
    w = {k: {n: f64(v) for n, v in d.items()} for k, d in cell.items()}
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    c = np.zeros((2, 4))
    h = np.zeros((2, 4))
    ys = []
    for t in range(5):
        xt = f64(x[:, t])
        pre = {g: xt @ w["i" + g]["kernel"] + h @ w["h" + g]["kernel"] + w["h" + g]["bias"] for g in "ifgo"}
        c = sig(pre["f"]) * c + sig(pre["i"]) * np.tanh(pre["g"])
        h = sig(pre["o"]) * np.tanh(c)
        ys.append(h)
    y = np.stack(ys, 1)
    return [x], {"params": {"LSTMCell_0": sort_keys(cell)}}, y, None, None


MODELS = {
    "dense": model_dense,
    "mlp": model_mlp,
    "conv": model_conv,
    "embed": model_embed,
    "layer_norm": model_layer_norm,
    "rnn_lstm": model_rnn_lstm,
}


def f32_tree(t):
    return {k: f32_tree(v) for k, v in t.items()} if isinstance(t, dict) else np.asarray(t).astype(F32)


def main():
    os.makedirs(OUT, exist_ok=True)
    for mode, partitionable in MODES.items():
        rs.Mode.partitionable = partitionable
        root = rs.key(0)
        for name, make in MODELS.items():
            inputs, variables, output, cotangent, grads = make(root)
            case = {"header": header(name), "model": name, "threefry_partitionable": partitionable,
                    "inputs": {str(i): a for i, a in enumerate(inputs)},
                    "output": np.asarray(output).astype(F32)}
            if grads is not None:
                case["cotangent"] = np.asarray(cotangent, F32)
                # jax.grad rebuilds dicts from their flattening: keys sorted.
                case["grads"] = sort_keys(f32_tree(grads))
            with open(os.path.join(OUT, f"{name}.{mode}.msgpack"), "wb") as f:
                f.write(flax_serialize(variables))
            with open(os.path.join(OUT, f"{name}.{mode}.case.msgpack"), "wb") as f:
                f.write(flax_serialize(case))
    print(f"wrote {2 * len(MODELS) * len(MODES)} files to {OUT}")


if __name__ == "__main__":
    main()
