#!/usr/bin/env python3
"""Flax checkpoints of every recurrent layer, against linum (no Flax needed: its layout is written
out here from flax/linen/recurrent.py and module.py).

Usage: rnn_checkpoint.py <test_serialization_rnn_checkpoint binary> <work dir>

1. For each model of rnn_checkpoint.cpp, writes with python3-msgpack and numpy (interop.py's
   Flax encoder) the checkpoint Flax would write: its variables in Flax's layout and key order,
   values from a closed formula of the path.
2. Runs the linum binary, which loads each into its init of the same model (from_bytes) and checks
   every value, then writes its own init of each model.
3. Decodes linum's files here: the keys, their order, shapes and dtypes must be Flax's layout, and
   the same values re-encoded the Flax way must be linum's bytes exactly.

Flax's layout: a cell built in the parent's compact method is the parent's child (LSTMCell_0, as
module.py's __post_init__ names it when it is built); RNN.__call__ scans it in function form, so
its params stay there and RNN_0 has none. A cell or RNN built outside any module is adopted as a
field (RNN's `cell`, Bidirectional's `forward_rnn` / `backward_rnn`). Whatever a lifted transform
(lax.scan, jax.checkpoint) returns has its dict keys sorted by jax's pytree flattening; a plain
cell keeps the order its Dense layers were built in (ii, hi, if, hf, ...), each Dense kernel
before bias.
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import flax_restore, flax_serialize  # noqa: E402

F32 = np.float32


def dense(n_in, n, bias=True):
    return {"kernel": (n_in, n), "bias": (n,)} if bias else {"kernel": (n_in, n)}


def lstm_built(n_in, n):
    # LSTMCell.__call__: dense_i(name='ii'), dense_h(name='hi'), ... gate by gate.
    out = {}
    for g in "ifgo":
        out["i" + g] = dense(n_in, n, bias=False)
        out["h" + g] = dense(n, n)
    return out


def sort_keys(d):
    if isinstance(d, dict):
        return {k: sort_keys(d[k]) for k in sorted(d)}
    return d


def lstm(n_in, n):
    return sort_keys(lstm_built(n_in, n))


def gru(n_in, n):
    # GRUCell: dense_i (bias) ir, iz, in; dense_h (no bias) hr, hz; hn with use_bias=True.
    return sort_keys({"ir": dense(n_in, n), "hr": dense(n, n, False), "iz": dense(n_in, n),
                      "hz": dense(n, n, False), "in": dense(n_in, n), "hn": dense(n, n)})


def simple(n_in, n):
    # SimpleCell: dense_i (use_bias=True) 'i', dense_h (use_bias=False) 'h'.
    return sort_keys({"i": dense(n_in, n), "h": dense(n, n, False)})


# Each model of rnn_checkpoint.cpp (inputs (2, 5, 3); one step (2, 3)) and Flax's variables.
MODELS = {
    # Dense(2)(RNN(LSTMCell(4))(x)): the scan publishes LSTMCell_0 before Dense_0 is built.
    "rnn_lstm": {"params": {"LSTMCell_0": lstm(3, 4), "Dense_0": dense(4, 2)}},
    "rnn_optimized": {"params": {"OptimizedLSTMCell_0": lstm(3, 4)}},
    "rnn_gru": {"params": {"GRUCell_0": gru(3, 4)}},
    "rnn_simple": {"params": {"SimpleCell_0": simple(3, 4)}},
    # Bidirectional(RNN(LSTMCell(4)), RNN(GRUCell(5))) in a compact method.
    "bidirectional": {"params": {"LSTMCell_0": lstm(3, 4), "GRUCell_0": gru(3, 5)}},
    # nn.RNN(nn.GRUCell(4)).init(...): the cell adopted as the field `cell`.
    "root_rnn": {"params": {"cell": gru(3, 4)}},
    "root_bidirectional": {"params": {"forward_rnn": {"cell": lstm(3, 4)},
                                      "backward_rnn": {"cell": lstm(3, 4)}}},
    # nn.scan(nn.LSTMCell, ...)(4) in a compact method: the class ScanLSTMCell.
    "scan_class": {"params": {"ScanLSTMCell_0": lstm(3, 4)}},
    # nn.scan(body_fn, ...)(nn.LSTMCell(4), carry, x): the cell's own scope.
    "scan_function": {"params": {"LSTMCell_0": lstm(3, 4)}},
    # nn.remat(nn.LSTMCell)(4)(carry, x): the class CheckpointLSTMCell, through jax.checkpoint.
    "remat_cell": {"params": {"CheckpointLSTMCell_0": lstm(3, 4)}},
    # LSTMCell(4).init(key, carry, x): no transform, the order its Dense layers were built in.
    "cell": {"params": lstm_built(3, 4)},
}


def formula(path, shape):
    # rnn_checkpoint.cpp's formula: ((k * 37 + h) % 101 - 50) / 8, h = sum of the path's bytes.
    h = sum(path.encode()) % 101
    k = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((k * 37 + h) % 101 - 50) / 8).reshape(shape).astype(F32)


def fill(layout, value, path=""):
    return {k: fill(v, value, f"{path}/{k}" if path else k) if isinstance(v, dict)
            else value(f"{path}/{k}", v) for k, v in layout.items()}


def check_layout(got, layout, path=""):
    assert isinstance(got, dict), f"{path}: expected a dict, got {type(got)}"
    assert list(got) == list(layout), f"{path}: keys {list(got)} != Flax's {list(layout)}"
    for k, v in layout.items():
        if isinstance(v, dict):
            check_layout(got[k], v, f"{path}/{k}")
        else:
            a = got[k]
            assert isinstance(a, np.ndarray), f"{path}/{k}: expected an array, got {type(a)}"
            assert a.shape == v and a.dtype == F32, f"{path}/{k}: {a.dtype}{a.shape} != float32{v}"


def lookup(tree, path):
    for k in path.split("/"):
        tree = tree[k]
    return tree


def main():
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    for name, layout in MODELS.items():
        with open(os.path.join(work, f"py_{name}.msgpack"), "wb") as f:
            f.write(flax_serialize(fill(layout, formula)))

    env = dict(os.environ, LINUM_INTEROP_DIR=work)
    subprocess.run([binary], env=env, check=True)

    for name, layout in MODELS.items():
        data = open(os.path.join(work, f"linum_{name}.msgpack"), "rb").read()
        got = flax_restore(data)
        check_layout(got, layout, name)
        # linum's values in Flax's layout, encoded the Flax way: linum's bytes exactly.
        flax_bytes = flax_serialize(fill(layout, lambda path, shape: lookup(got, path)))
        assert flax_bytes == data, f"linum_{name}.msgpack differs from Flax's bytes"
    print(f"rnn_checkpoint: {len(MODELS)} models load from Flax's checkpoints and save Flax's bytes")


if __name__ == "__main__":
    main()
