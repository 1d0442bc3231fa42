#!/usr/bin/env python3
"""Fidelity fixtures derived from Flax's and JAX's source, for machines without Flax.

Writes tests/fidelity/fixtures/ in the format of scripts/flax_fixtures.py (which writes the same
files with the real Flax 0.12 / JAX 0.11 / optax 0.2.8 and replaces these): for each model of
MODELS and OPTIMIZERS and each threefry mode ('partitionable' = jax_threefry_partitionable on,
'original' = off)
  <model>.<mode>.msgpack       flax.serialization.to_bytes(model.init(jax.random.PRNGKey(0), ...))
  <model>.<mode>.case.msgpack  {'header', 'model', 'threefry_partitionable', 'inputs', 'output'
                                [, 'intermediates'][, 'cotangent', 'grads']}, Flax's msgpack
                                encoding; grads are d sum(output * cotangent) / d variables,
                                intermediates the state dict of the collection captured by
                                apply(..., capture_intermediates=True); an optimizer's case has
                                'output' (the loss before each step) and 'trajectory'
                                {'1'..'4': variables after that step}; a training state's
                                case has the inputs alone, its .msgpack is to_bytes(TrainState).

Nothing here runs Flax or linum. The steps are re-derived from the sources (github.com/google/flax
flax/core/{scope,lift}.py, flax/linen/{linear,normalization,recurrent,attention}.py;
github.com/jax-ml/jax; github.com/google-deepmind/optax):
- parameters: flax_init_reference.py (Flax's rng paths, jax.random, the initializers); each
  model's function below says which scope path and counter each parameter is drawn from, and the
  key order Flax writes;
- outputs and grads are float64 numpy computations of the layer's formula from the float32
  params and inputs (closed forms; central differences where noted), rounded to float32 once
  (linum is checked to float32 rounding against them); optax's update rules likewise.
Run with /usr/bin/python3 (numpy and msgpack only).

The committed fixtures are now the real Flax's (scripts/flax_fixtures.py, which found every init
value derived here exact): running this script overwrites them with the derived ones, for a
machine without Flax; `git checkout tests/fidelity/fixtures` brings the real ones back.
"""
import hashlib
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "serialization"))
from flax_init_reference import (embed_normal, flax_param_key, lecun_normal,  # noqa: E402
                                 orthogonal, rs)
from interop import flax_serialize  # noqa: E402

F32 = np.float32
OUT = os.path.join(HERE, "fixtures")
MODES = {"partitionable": True, "original": False}


def blob_id(name):
    # A file's git blob id: names the exact generator version whatever was committed.
    data = open(os.path.join(HERE, name), "rb").read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def header(model):
    return (f"DERIVED from the source of Flax 0.12 / JAX 0.11 / optax 0.2.8 (not written by "
            f"Flax) by tests/fidelity/derive_fixtures.py (git blob "
            f"{blob_id('derive_fixtures.py')}, flax_init_reference.py "
            f"{blob_id('flax_init_reference.py')}); model {model}. scripts/flax_fixtures.py "
            f"writes this file with the real Flax.")


# ---- inputs -----------------------------------------------------------------------------------


def ramp(shape, salt=0):
    """A deterministic float32 input: ((k * 37 + salt) % 101 - 50) / 40 at flat index k."""
    k = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((k * 37 + salt) % 101 - 50) / 40).reshape(shape).astype(F32)


def f64(a):
    return np.asarray(a, np.float64)


def with_fd_grads(inputs, variables, forward, salt, h=1e-6):
    """(inputs, variables, output, cotangent, grads) where the grads of sum(forward(v) * ct) are
    central differences in float64 (step h: error far below the suite's float32 tolerance)."""
    v64 = tree_map(lambda a: f64(a).copy(), variables)
    y = forward(v64)
    ct = ramp(y.shape, salt)

    def loss():
        return float((forward(v64) * f64(ct)).sum())

    def grad_of(a):
        g = np.zeros(a.shape)
        for i in np.ndindex(a.shape):
            old = a[i]
            a[i] = old + h
            up = loss()
            a[i] = old - h
            down = loss()
            a[i] = old
            g[i] = (up - down) / (2 * h)
        return g
    return inputs, variables, y, ct, tree_map(grad_of, v64)


def tree_map(fn, t):
    return {k: tree_map(fn, v) for k, v in t.items()} if isinstance(t, dict) else fn(t)


# ---- the models: (inputs, params from a key, output, grads or None) ---------------------------
# Each make(root) returns the variables (dicts in Flax's key order), the output, the cotangent
# and the grads (None where not derived here).


# model name -> the 'intermediates' collection of apply(..., capture_intermediates=True), for the
# models whose case records it (filled by the model functions).
INTERMEDIATES = {}


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
    # apply(..., capture_intermediates=True): each module's __call__ output, sown as a 1-tuple
    # when the call returns (Dense_0, Dense_1, then the model), as to_state_dict writes it.
    INTERMEDIATES["mlp"] = {"Dense_0": {"__call__": {"0": h}}, "Dense_1": {"__call__": {"0": y}},
                            "__call__": {"0": y}}
    return [x], {"params": {"Dense_0": p0, "Dense_1": p1}}, y, ct, {"params": g}


def correlate(xp, kernel, out_hw):
    """VALID cross-correlation of padded NHWC xp with an HWIO kernel (float64)."""
    kh, kw = kernel.shape[:2]
    y = np.zeros((xp.shape[0],) + out_hw + (kernel.shape[3],))
    for a in range(kh):
        for b in range(kw):
            y += np.einsum("nijc,cd->nijd", xp[:, a:a + out_hw[0], b:b + out_hw[1], :], f64(kernel[a, b]))
    return y


def correlate_kernel_grad(xp, ct, kernel_shape):
    kh, kw = kernel_shape[:2]
    oh, ow = ct.shape[1:3]
    dk = np.zeros(kernel_shape)
    for a in range(kh):
        for b in range(kw):
            dk[a, b] = np.einsum("nijc,nijd->cd", xp[:, a:a + oh, b:b + ow, :], f64(ct))
    return dk


def mlp_case(x, p0, p1, mask, salt):
    """Dense -> relu -> [dropout mask, scaled by 1/0.5] -> Dense in float64, with closed-form grads."""
    h = f64(x) @ f64(p0["kernel"]) + f64(p0["bias"])
    a = np.maximum(h, 0)
    keep = np.ones_like(a) if mask is None else mask / 0.5
    ad = a * keep
    y = ad @ f64(p1["kernel"]) + f64(p1["bias"])
    ct = ramp(y.shape, salt)
    dh = (f64(ct) @ f64(p1["kernel"]).T) * keep * (h > 0)
    g0 = {"kernel": f64(x).T @ dh, "bias": dh.sum(0)}
    g1 = {"kernel": ad.T @ f64(ct), "bias": f64(ct).sum(0)}
    return h, y, ct, g0, g1


def model_sequential(root):
    # nn.Sequential([nn.Dense(5), nn.relu, nn.Dense(3)]).init(key, x), x (2, 4): the layers are
    # setup attributes named by their list index (layers_0, layers_2; relu is not a module).
    x = ramp((2, 4), 163)
    p0 = dense_params(root, ("layers_0",), 4, 5)
    p1 = dense_params(root, ("layers_2",), 5, 3)
    _, y, ct, g0, g1 = mlp_case(x, p0, p1, None, 167)
    return ([x], {"params": {"layers_0": p0, "layers_2": p1}}, y, ct,
            {"params": {"layers_0": g0, "layers_2": g1}})


def model_dropout_mlp(root):
    # class Model: @nn.compact __call__: Dense(5) -> relu -> nn.Dropout(0.5, deterministic=False)
    # -> Dense(3), x (2, 4), applied with rngs={'dropout': PRNGKey(1)}: the mask is
    # bernoulli(fold_in(PRNGKey(1), hash('Dropout_0', 1)), 0.5) = uniform < 0.5, kept values / 0.5.
    x = ramp((2, 4), 173)
    p0 = dense_params(root, ("Dense_0",), 4, 5)
    p1 = dense_params(root, ("Dense_1",), 5, 3)
    u = rs.uniform(flax_param_key(rs.key(1), "Dropout_0", 1), 10).reshape(2, 5)
    _, y, ct, g0, g1 = mlp_case(x, p0, p1, (u < F32(0.5)).astype(np.float64), 179)
    return ([x], {"params": {"Dense_0": p0, "Dense_1": p1}}, y, ct,
            {"params": {"Dense_0": g0, "Dense_1": g1}})


def model_prelu(root):
    # nn.PReLU().init(key, x), x (3, 4): param negative_slope, a shape () float32 array 0.01;
    # y = x where x >= 0, else negative_slope * x.
    x = ramp((3, 4), 181)
    slope = np.asarray(F32(0.01))
    y = np.where(f64(x) >= 0, f64(x), f64(slope) * f64(x))
    ct = ramp(y.shape, 191)
    g = np.asarray((f64(ct) * f64(x) * (f64(x) < 0)).sum())
    return [x], {"params": {"negative_slope": slope}}, y, ct, {"params": {"negative_slope": g}}


def model_conv(root):
    # nn.Conv(4, (3, 3)).init(key, x), x (2, 5, 5, 2) NHWC, padding 'SAME' (1 on each side).
    x = ramp((2, 5, 5, 2), 5)
    kernel = lecun_normal(flax_param_key(root, 1), (3, 3, 2, 4))
    p = {"kernel": kernel, "bias": np.zeros(4, F32)}
    xp = np.pad(f64(x), ((0, 0), (1, 1), (1, 1), (0, 0)))
    y = correlate(xp, kernel, (5, 5))
    ct = ramp(y.shape, 13)
    g = {"kernel": correlate_kernel_grad(xp, ct, (3, 3, 2, 4)), "bias": f64(ct).sum((0, 1, 2))}
    return [x], {"params": p}, y, ct, {"params": g}


def model_conv_circular(root):
    # nn.Conv(3, (3, 3), padding='CIRCULAR').init(key, x), x (2, 2, 4, 4, 2): the two leading
    # batch dims folded into one, the input padded periodically by (1, 1) (jnp.pad mode 'wrap'),
    # then a VALID convolution, unfolded again.
    x = ramp((2, 2, 4, 4, 2), 151)
    kernel = lecun_normal(flax_param_key(root, 1), (3, 3, 2, 3))
    p = {"kernel": kernel, "bias": np.zeros(3, F32)}
    xp = np.pad(f64(x).reshape(4, 4, 4, 2), ((0, 0), (1, 1), (1, 1), (0, 0)), mode="wrap")
    y = correlate(xp, kernel, (4, 4)).reshape(2, 2, 4, 4, 3)
    ct = ramp(y.shape, 157)
    g = {"kernel": correlate_kernel_grad(xp, f64(ct).reshape(4, 4, 4, 3), (3, 3, 2, 3)),
         "bias": f64(ct).sum((0, 1, 2, 3))}
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


def model_dense_general(root):
    # nn.DenseGeneral(features=(2, 5), axis=(-2, -1)).init(key, x), x (2, 3, 4): the kernel
    # (3, 4, 2, 5) is lecun_normal of its flat (12, 10) shape, reshaped; bias (2, 5) zeros.
    x = ramp((2, 3, 4), 31)
    kernel = lecun_normal(flax_param_key(root, 1), (12, 10)).reshape(3, 4, 2, 5)
    p = {"kernel": kernel, "bias": np.zeros((2, 5), F32)}
    y = np.einsum("bij,ijkl->bkl", f64(x), f64(kernel)) + f64(p["bias"])
    ct = ramp(y.shape, 37)
    g = {"kernel": np.einsum("bij,bkl->ijkl", f64(x), f64(ct)), "bias": f64(ct).sum(0)}
    return [x], {"params": p}, y, ct, {"params": g}


def model_einsum(root):
    # nn.Einsum((4, 2, 3), 'btc,cde->btde').init(key, x), x (2, 3, 4): kernel (4, 2, 3)
    # lecun_normal with jax's fans of that shape (in 2, out 3, receptive field 4: fan_in 8), then
    # a bias over the kernel axes kept in the output, (2, 3).
    x = ramp((2, 3, 4), 193)
    kernel = lecun_normal(flax_param_key(root, 1), (4, 2, 3))
    p = {"kernel": kernel, "bias": np.zeros((2, 3), F32)}
    y = np.einsum("btc,cde->btde", f64(x), f64(kernel)) + f64(p["bias"])
    ct = ramp(y.shape, 197)
    g = {"kernel": np.einsum("btc,btde->cde", f64(x), f64(ct)), "bias": f64(ct).sum((0, 1))}
    return [x], {"params": p}, y, ct, {"params": g}


def model_conv_transpose(root):
    # nn.ConvTranspose(3, (3, 3), strides=(2, 2)).init(key, x), x (1, 3, 3, 2), padding 'SAME':
    # lax.conv_transpose without kernel flip: the input dilated by 2, padded (2, 1) per
    # spatial dim (jax's _conv_transpose_padding for k=3, s=2), then correlated with the kernel.
    x = ramp((1, 3, 3, 2), 41)
    kernel = lecun_normal(flax_param_key(root, 1), (3, 3, 2, 3))
    p = {"kernel": kernel, "bias": np.zeros(3, F32)}
    xd = np.zeros((1, 5, 5, 2))
    xd[:, ::2, ::2, :] = f64(x)
    xp = np.pad(xd, ((0, 0), (2, 1), (2, 1), (0, 0)))
    y = correlate(xp, kernel, (6, 6))
    ct = ramp(y.shape, 43)
    g = {"kernel": correlate_kernel_grad(xp, ct, (3, 3, 2, 3)), "bias": f64(ct).sum((0, 1, 2))}
    return [x], {"params": p}, y, ct, {"params": g}


def normalized(xd, axes, eps):
    # Flax's _compute_stats with use_fast_variance: var = max(0, E[x^2] - E[x]^2).
    mean = xd.mean(axes, keepdims=True)
    var = np.maximum((xd * xd).mean(axes, keepdims=True) - mean * mean, 0)
    return (xd - mean) / np.sqrt(var + eps)


def scale_bias_case(x, xhat, salt, stats=None):
    # y = xhat * scale + bias with scale ones, bias zeros (params created scale, then bias).
    p = {"scale": np.ones(x.shape[-1], F32), "bias": np.zeros(x.shape[-1], F32)}
    ct = ramp(xhat.shape, salt)
    axes = tuple(range(x.ndim - 1))
    g = {"params": {"scale": (f64(ct) * xhat).sum(axes), "bias": f64(ct).sum(axes)}}
    variables = {"params": p}
    if stats is not None:
        variables = {"batch_stats": stats, "params": p}
        g["batch_stats"] = {k: np.zeros_like(v) for k, v in stats.items()}
    return [x], variables, xhat, ct, g


def model_group_norm(root):
    # nn.GroupNorm(num_groups=2).init(key, x), x (2, 3, 4): statistics per example and group of
    # 2 channels over (3, 2) values; epsilon 1e-6.
    x = ramp((2, 3, 4), 47)
    xg = f64(x).reshape(2, 3, 2, 2)
    xhat = normalized(xg, (1, 3), 1e-6).reshape(2, 3, 4)
    return scale_bias_case(x, xhat, 53)


def model_rms_norm(root):
    # nn.RMSNorm().init(key, x), x (3, 5): x / sqrt(mean(x^2) + 1e-6) * scale, scale ones.
    x = ramp((3, 5), 59)
    xd = f64(x)
    y = xd / np.sqrt((xd * xd).mean(-1, keepdims=True) + 1e-6)
    ct = ramp(y.shape, 61)
    return ([x], {"params": {"scale": np.ones(5, F32)}}, y, ct,
            {"params": {"scale": (f64(ct) * y).sum(0)}})


def model_batch_norm(root):
    # nn.BatchNorm(use_running_average=False).init(key, x), x (4, 3): batch_stats (mean zeros,
    # var ones, created before the params and left alone while initializing); applied with
    # mutable=['batch_stats'], the output is normalized by the batch's statistics (epsilon 1e-5).
    x = ramp((4, 3), 67)
    xhat = normalized(f64(x), (0,), 1e-5)
    return scale_bias_case(x, xhat, 71, {"mean": np.zeros(3, F32), "var": np.ones(3, F32)})


def model_remat_dense(root):
    # class Model: @nn.compact __call__: nn.remat(nn.Dense)(3)(x), x (2, 4). The class is named
    # CheckpointDense; what jax.checkpoint returns has its keys sorted (bias before kernel).
    x = ramp((2, 4), 73)
    p = dense_params(root, ("CheckpointDense_0",), 4, 3)
    y = f64(x) @ f64(p["kernel"]) + f64(p["bias"])
    ct = ramp(y.shape, 79)
    g = {"kernel": f64(x).T @ f64(ct), "bias": f64(ct).sum(0)}
    return [x], {"params": {"CheckpointDense_0": sort_keys(p)}}, y, ct, {"params": {"CheckpointDense_0": g}}


def attention(p, x):
    proj = {n: np.einsum("bti,ihd->bthd", f64(x), f64(p[n]["kernel"])) + f64(p[n]["bias"])
            for n in ("query", "key", "value")}
    logits = np.einsum("bqhd,bkhd->bhqk", proj["query"] / np.sqrt(2.0), proj["key"])
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    heads = np.einsum("bhqk,bkhd->bqhd", w, proj["value"])
    return np.einsum("bqhd,hdo->bqo", heads, f64(p["out"]["kernel"])) + f64(p["out"]["bias"])


def model_attention(root):
    # nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=4).init(key, x), x (2, 3, 4):
    # DenseGeneral layers query, key, value ((4,) -> (2, 2)) and out ((2, 2) -> 4), built in that
    # order, kernels lecun_normal of their flat shapes; the query is divided by sqrt(head_dim),
    # softmax over the keys. Grads by central differences.
    x = ramp((2, 3, 4), 127)
    p = {}
    for name in ("query", "key", "value"):
        p[name] = {"kernel": lecun_normal(flax_param_key(root, name, 1), (4, 4)).reshape(4, 2, 2),
                   "bias": np.zeros((2, 2), F32)}
    p["out"] = {"kernel": lecun_normal(flax_param_key(root, "out", 1), (4, 4)).reshape(2, 2, 4),
                "bias": np.zeros(4, F32)}
    variables = {"params": p}
    return with_fd_grads([x], variables, lambda v: attention(v["params"], x), 131)


def model_jit_dense(root):
    # class Model: @nn.compact __call__: nn.jit(nn.Dense)(3)(x), x (2, 4). nn.jit of a class
    # (module_class_lift_transform_cached) first forks the rngs: JitDense_0's make_rng('params')
    # (its counter 1) becomes the stream's new key, with an empty suffix, which lift.jit keeps
    # (clear_suffix). The kernel is then drawn with JitDense_0's counter, now 2:
    # fold_in(fold_in(key, hash('JitDense_0', 1)), hash(2)). What jax.jit returns has its keys
    # sorted (bias before kernel).
    x = ramp((2, 4), 199)
    forked = flax_param_key(root, "JitDense_0", 1)
    p = {"kernel": lecun_normal(flax_param_key(forked, 2), (4, 3)), "bias": np.zeros(3, F32)}
    y = f64(x) @ f64(p["kernel"]) + f64(p["bias"])
    ct = ramp(y.shape, 211)
    g = {"bias": f64(ct).sum(0), "kernel": f64(x).T @ f64(ct)}
    return [x], {"params": {"JitDense_0": sort_keys(p)}}, y, ct, {"params": {"JitDense_0": g}}


def model_vmap_dense(root):
    # class Model: @nn.compact __call__: nn.vmap(nn.Dense, variable_axes={'params': 0},
    # split_rngs={'params': True}, in_axes=0)(3)(x), x (3, 2, 4). lift.vmap splits the raw key
    # under VmapDense_0's LazyRng into 3 (jax.random.split) and each copy keeps the suffix, so
    # copy i's kernel key is fold_in(split(key, 3)[i], hash('VmapDense_0', 1)). The params come
    # out of jax.vmap with sorted keys.
    x = ramp((3, 2, 4), 103)
    ks = rs.split(root, 3)
    kernel = np.stack([lecun_normal(flax_param_key(k, "VmapDense_0", 1), (4, 3)) for k in ks])
    p = {"bias": np.zeros((3, 3), F32), "kernel": kernel}
    y = np.einsum("bni,bio->bno", f64(x), f64(kernel))
    ct = ramp(y.shape, 107)
    g = {"bias": f64(ct).sum(1), "kernel": np.einsum("bni,bno->bio", f64(x), f64(ct))}
    return [x], {"params": {"VmapDense_0": p}}, y, ct, {"params": {"VmapDense_0": g}}


def model_scan_residual(root):
    # class ResidualBlock: @nn.compact __call__(c, _): c + relu(Dense(4)(c)), None; the model
    # calls nn.scan(ResidualBlock, variable_axes={'params': 0}, split_rngs={'params': True},
    # length=3)()(x, None), x (2, 4), and returns the carry. lift.scan splits the raw key into 3
    # like vmap, and traces the body twice while initializing: the kernel kept is the second
    # trace's, drawn with Dense_0's counter at 3 (Flax's RNG guide prints these values).
    x = ramp((2, 4), 109)
    ks = rs.split(root, 3)
    kernel = np.stack([lecun_normal(flax_param_key(k, "ScanResidualBlock_0", "Dense_0", 3), (4, 4))
                       for k in ks])
    p = {"bias": np.zeros((3, 4), F32), "kernel": kernel}
    cs, hs = [f64(x)], []
    for layer in range(3):
        hs.append(cs[-1] @ f64(kernel[layer]))
        cs.append(cs[-1] + np.maximum(hs[-1], 0))
    ct = ramp((2, 4), 113)
    dc, dk, db = f64(ct), np.zeros((3, 4, 4)), np.zeros((3, 4))
    for layer in reversed(range(3)):
        dh = dc * (hs[layer] > 0)
        dk[layer], db[layer] = cs[layer].T @ dh, dh.sum(0)
        dc = dc + dh @ f64(kernel[layer]).T
    return ([x], {"params": {"ScanResidualBlock_0": {"Dense_0": p}}}, cs[-1], ct,
            {"params": {"ScanResidualBlock_0": {"Dense_0": {"bias": db, "kernel": dk}}}})


# ---- recurrent cells: Flax's LSTMCell / OptimizedLSTMCell (same params), GRUCell, SimpleCell --

GATES = {"lstm": [("ii", False, "i"), ("hi", True, "h"), ("if", False, "i"), ("hf", True, "h"),
                  ("ig", False, "i"), ("hg", True, "h"), ("io", False, "i"), ("ho", True, "h")],
         # GRUCell: dense_i (bias) ir, iz, in; dense_h (no bias) hr, hz; hn with a bias.
         "gru": [("ir", True, "i"), ("hr", False, "h"), ("iz", True, "i"), ("hz", False, "h"),
                 ("in", True, "i"), ("hn", True, "h")],
         # SimpleCell: dense_i 'i' with a bias, dense_h 'h' without.
         "simple": [("i", True, "i"), ("h", False, "h")]}


def cell_params(root, path, kind, n_in, n_h):
    """A cell's Dense layers in the order it builds them: input kernels lecun_normal (the Dense's
    first param, counter 1), recurrent kernels orthogonal, biases zeros."""
    out = {}
    for name, bias, src in GATES[kind]:
        key = flax_param_key(root, *path, name, 1)
        kernel = lecun_normal(key, (n_in, n_h)) if src == "i" else orthogonal(key, (n_h, n_h))
        out[name] = {"kernel": kernel, "bias": np.zeros(n_h, F32)} if bias else {"kernel": kernel}
    return out


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def cell_run(kind, params, xs, n_h):
    """The cell scanned over xs (batch, time, features) from a zero carry: outputs (b, t, n_h)."""
    w = {k: {n: f64(v) for n, v in d.items()} for k, d in params.items()}

    def dense(name, v):
        return v @ w[name]["kernel"] + (w[name]["bias"] if "bias" in w[name] else 0)

    b = xs.shape[0]
    c, h = np.zeros((b, n_h)), np.zeros((b, n_h))
    ys = []
    for t in range(xs.shape[1]):
        xt = f64(xs[:, t])
        if kind == "lstm":
            pre = {g: dense("i" + g, xt) + dense("h" + g, h) for g in "ifgo"}
            c = sigmoid(pre["f"]) * c + sigmoid(pre["i"]) * np.tanh(pre["g"])
            h = sigmoid(pre["o"]) * np.tanh(c)
        elif kind == "gru":
            r = sigmoid(dense("ir", xt) + dense("hr", h))
            z = sigmoid(dense("iz", xt) + dense("hz", h))
            n = np.tanh(dense("in", xt) + r * dense("hn", h))
            h = (1 - z) * n + z * h
        else:
            h = np.tanh(dense("i", xt) + dense("h", h))
        ys.append(h)
    return np.stack(ys, 1)


def rnn_model(kind, cell_name):
    # class Model: @nn.compact __call__: nn.RNN(Cell(4))(x), x (2, 5, 3). The cell is the parent's
    # <Cell>_0; the scan returns its params with sorted keys. Grads by central differences.
    def make(root):
        x = ramp((2, 5, 3), 29)
        variables = {"params": {cell_name: sort_keys(cell_params(root, (cell_name,), kind, 3, 4))}}
        return with_fd_grads([x], variables, lambda v: cell_run(kind, v["params"][cell_name], x, 4),
                             137)
    return make


def model_scan_lstm(root):
    # class Model: @nn.compact __call__: lstm = nn.scan(nn.LSTMCell, variable_broadcast='params',
    # split_rngs={'params': False}, in_axes=1, out_axes=1)(4); lstm(zero carry, x)[1], x (2, 5, 3).
    # The class is ScanLSTMCell; broadcast params are made once, before the loop, from the
    # unsplit key (counter 1), and come out of the scan with sorted keys.
    x = ramp((2, 5, 3), 223)
    variables = {"params": {"ScanLSTMCell_0": sort_keys(cell_params(root, ("ScanLSTMCell_0",), "lstm",
                                                                     3, 4))}}
    return with_fd_grads([x], variables,
                         lambda v: cell_run("lstm", v["params"]["ScanLSTMCell_0"], x, 4), 227)


def model_bidirectional(root):
    # class Model: @nn.compact __call__:
    #   nn.Bidirectional(nn.RNN(nn.LSTMCell(4)), nn.RNN(nn.GRUCell(5)))(x), x (2, 5, 3):
    # both cells are the parent's (LSTMCell_0, GRUCell_0, the forward scan publishing first); the
    # output concatenates the forward outputs and the backward ones (reversed, kept in order).
    x = ramp((2, 5, 3), 83)
    variables = {"params": {"LSTMCell_0": sort_keys(cell_params(root, ("LSTMCell_0",), "lstm", 3, 4)),
                            "GRUCell_0": sort_keys(cell_params(root, ("GRUCell_0",), "gru", 3, 5))}}

    def forward(v):
        p = v["params"]
        return np.concatenate([cell_run("lstm", p["LSTMCell_0"], x, 4),
                               cell_run("gru", p["GRUCell_0"], x[:, ::-1], 5)[:, ::-1]], -1)
    return with_fd_grads([x], variables, forward, 139)


MODELS = {
    "dense": model_dense,
    "mlp": model_mlp,
    "conv": model_conv,
    "conv_circular": model_conv_circular,
    "embed": model_embed,
    "layer_norm": model_layer_norm,
    "sequential": model_sequential,
    "dropout_mlp": model_dropout_mlp,
    "prelu": model_prelu,
    "dense_general": model_dense_general,
    "einsum": model_einsum,
    "conv_transpose": model_conv_transpose,
    "group_norm": model_group_norm,
    "rms_norm": model_rms_norm,
    "batch_norm": model_batch_norm,
    "remat_dense": model_remat_dense,
    "attention": model_attention,
    "jit_dense": model_jit_dense,
    "vmap_dense": model_vmap_dense,
    "scan_residual": model_scan_residual,
    "rnn_lstm": rnn_model("lstm", "LSTMCell_0"),
    "rnn_optimized_lstm": rnn_model("lstm", "OptimizedLSTMCell_0"),
    "rnn_gru": rnn_model("gru", "GRUCell_0"),
    "rnn_simple": rnn_model("simple", "SimpleCell_0"),
    "bidirectional": model_bidirectional,
    "scan_lstm": model_scan_lstm,
}


# ---- optax trajectories: Dense(3) fitted to a target by mean squared error ------------------


def optax_trajectory(update):
    """4 steps of an optimizer on nn.Dense(3)'s variables (init from the key, as model_dense),
    loss mean((dense(x) - target)^2), x (4, 4), target (4, 3). `update(step, g, state, p)` is
    optax's rule in float64 (tree of the variables' leaves). Returns the losses before each step
    and the variables after each step (keys sorted, as jax.tree.map rebuilds dicts)."""
    def make(root):
        x, target = ramp((4, 4), 89), ramp((4, 3), 97)
        v0 = {"params": dense_params(root, (), 4, 3)}
        p = {k: f64(a) for k, a in v0["params"].items()}
        state, losses, traj = None, [], {}
        for step in range(1, 5):
            y = f64(x) @ p["kernel"] + p["bias"]
            losses.append(((y - f64(target)) ** 2).mean())
            dy = 2 * (y - f64(target)) / y.size
            g = {"kernel": f64(x).T @ dy, "bias": dy.sum(0)}
            u, state = update(step, g, state, p)
            p = {k: p[k] + u[k] for k in p}
            traj[str(step)] = sort_keys({"params": f32_tree(p)})
        return [x, target], v0, np.array(losses), traj
    return make


def sgd_momentum(lr, momentum):
    # optax.sgd(lr, momentum): trace (t = g + momentum * t, from zeros), then -lr.
    def update(step, g, state, p):
        t = {k: g[k] + momentum * (state[k] if state else 0) for k in g}
        return {k: -lr * t[k] for k in t}, t
    return update


def adam(lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=None):
    # optax.scale_by_adam: mu, nu moving averages, bias-corrected by 1 - b**count, then
    # m / (sqrt(v) + eps); adamw adds weight_decay * params; then -lr.
    def update(step, g, state, p):
        mu0, nu0 = state if state else ({k: 0 for k in g}, {k: 0 for k in g})
        mu = {k: (1 - b1) * g[k] + b1 * mu0[k] for k in g}
        nu = {k: (1 - b2) * g[k] ** 2 + b2 * nu0[k] for k in g}
        u = {k: (mu[k] / (1 - b1 ** step)) / (np.sqrt(nu[k] / (1 - b2 ** step)) + eps) for k in g}
        if weight_decay is not None:
            u = {k: u[k] + weight_decay * p[k] for k in u}
        return {k: -lr * u[k] for k in u}, (mu, nu)
    return update


OPTIMIZERS = {
    "optax_sgd_momentum": optax_trajectory(sgd_momentum(0.1, 0.9)),
    "optax_adam": optax_trajectory(adam(0.05)),
    "optax_adamw": optax_trajectory(adam(0.05, weight_decay=0.1)),
}


def train_state_adam(root):
    """flax TrainState.create(apply_fn=dense.apply, params=variables['params'], tx=optax.adam(0.05))
    of nn.Dense(3) (init as model_dense's, x (4, 4)): its state dict is step (the Python int 0),
    params (the init's order), opt_state ({'0': ScaleByAdamState(count int32 0, mu, nu: zeros by
    jax.tree.map, so keys sorted), '1': the EmptyState of the learning-rate scale, {}})."""
    x = ramp((4, 4), 89)
    params = dense_params(root, (), 4, 3)
    zeros = sort_keys({k: np.zeros_like(v) for k, v in params.items()})
    state = {"step": 0, "params": params,
             "opt_state": {"0": {"count": np.asarray(np.int32(0)), "mu": zeros,
                                 "nu": {k: v.copy() for k, v in zeros.items()}}, "1": {}}}
    return [x], state


# Checkpoints of training states: name -> make(root) = (inputs, the state dict to_bytes writes).
TRAIN_STATES = {"train_state_adam": train_state_adam}


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
            if name in INTERMEDIATES:
                case["intermediates"] = f32_tree(INTERMEDIATES[name])
            if grads is not None:
                case["cotangent"] = np.asarray(cotangent, F32)
                # jax.grad rebuilds dicts from their flattening: keys sorted.
                case["grads"] = sort_keys(f32_tree(grads))
            write(name, mode, variables, case)
        for name, make in OPTIMIZERS.items():
            inputs, variables, losses, trajectory = make(root)
            case = {"header": header(name), "model": name, "threefry_partitionable": partitionable,
                    "inputs": {str(i): a for i, a in enumerate(inputs)},
                    "output": losses.astype(F32), "trajectory": trajectory}
            write(name, mode, variables, case)
        for name, make in TRAIN_STATES.items():
            inputs, state = make(root)
            case = {"header": header(name), "model": name, "threefry_partitionable": partitionable,
                    "inputs": {str(i): a for i, a in enumerate(inputs)}}
            write(name, mode, state, case)
    count = len(MODELS) + len(OPTIMIZERS) + len(TRAIN_STATES)
    print(f"wrote {2 * count * len(MODES)} files to {OUT}")


def write(name, mode, variables, case):
    with open(os.path.join(OUT, f"{name}.{mode}.msgpack"), "wb") as f:
        f.write(flax_serialize(variables))
    with open(os.path.join(OUT, f"{name}.{mode}.case.msgpack"), "wb") as f:
        f.write(flax_serialize(case))


if __name__ == "__main__":
    main()
