#!/usr/bin/env python3
"""Interoperability of linum's checkpoint formats with an independent implementation.

Usage: interop.py <test_serialization_interop binary> <work dir>

1. Writes, with python3-msgpack and numpy, a checkpoint the way flax.serialization does (ext type
   1 array tuples, ext 3 numpy scalars, native numbers, arrays chunked under a small chunk limit)
   and a safetensors file by its specification.
2. Runs the linum binary, which reads both and checks every value, then writes its own files.
3. Decodes linum's files here, compares the values, and re-encodes them the Flax way: the bytes
   must be identical to linum's.
Values come from the same closed formulas on both sides (see interop.cpp).
"""
import json
import os
import struct
import subprocess
import sys

import msgpack
import numpy as np

CHUNK = 64  # Flax's MAX_CHUNK_SIZE is 2**30; a small limit exercises the same chunked layout.


def ints(n):
    return np.arange(n, dtype=np.int64) * 37 % 101 - 50


def floats(shape, dtype):
    return (ints(int(np.prod(shape))) / 8).reshape(shape).astype(dtype)


def bf16_values(n):
    return ((np.arange(n) % 9 - 4) * 0.5).astype(np.float32)


class BFloat16:
    """A bfloat16 array, which numpy lacks: raw uint16 bits under the dtype name 'bfloat16'."""

    def __init__(self, f32):
        self.shape = f32.shape
        self.bits = (f32.view(np.uint32) >> 16).astype(np.uint16)

    @classmethod
    def from_bits(cls, bits):
        b = cls(np.zeros(bits.shape, np.float32))
        b.bits = bits
        return b


# ---- Flax's msgpack format (flax/serialization.py), written from its documented layout ----

def ndarray_to_bytes(arr):
    return msgpack.packb((arr.shape, arr.dtype.name, arr.tobytes("C")), use_bin_type=True)


def ext_pack(x):
    if isinstance(x, np.ndarray):
        return msgpack.ExtType(1, ndarray_to_bytes(x))
    if isinstance(x, np.generic):
        return msgpack.ExtType(3, ndarray_to_bytes(np.asarray(x)))
    if isinstance(x, BFloat16):
        return msgpack.ExtType(1, msgpack.packb((x.shape, "bfloat16", x.bits.tobytes()), use_bin_type=True))
    raise TypeError(f"cannot pack {type(x)}")


def chunk(arr, limit):
    per = max(1, int(limit / arr.dtype.itemsize))
    flat = arr.reshape(-1)
    pieces = [flat[i:i + per] for i in range(0, flat.size, per)]
    return {"__msgpack_chunked_array__": True,
            "shape": {str(i): d for i, d in enumerate(arr.shape)},
            "chunks": {str(i): c for i, c in enumerate(pieces)}}


def chunk_in_place(d, limit):
    if isinstance(d, dict):
        for k, v in d.items():
            if isinstance(v, np.ndarray):
                if v.size * v.dtype.itemsize > limit:
                    d[k] = chunk(v, limit)
            elif isinstance(v, dict):
                chunk_in_place(v, limit)
    elif isinstance(d, np.ndarray) and d.size * d.dtype.itemsize > limit:
        return chunk(d, limit)
    return d


def flax_serialize(tree, limit=2**30):
    tree = chunk_in_place(tree, limit)
    return msgpack.packb(tree, default=ext_pack, strict_types=True)


def ndarray_from_bytes(data):
    shape, name, buf = msgpack.unpackb(data, raw=True)
    if name == b"bfloat16":  # ml_dtypes' name: kept as its raw bits
        return BFloat16.from_bits(np.frombuffer(buf, dtype=np.uint16).reshape(shape, order="C"))
    return np.frombuffer(buf, dtype=np.dtype(name.decode())).reshape(shape, order="C")


def ext_unpack(code, data):
    if code == 1:
        return ndarray_from_bytes(data)
    if code == 3:
        return ndarray_from_bytes(data)[()]
    raise ValueError(f"unexpected ext type {code}")


def unchunk(d):
    shape = tuple(d["shape"][str(i)] for i in range(len(d["shape"])))
    return np.concatenate([d["chunks"][str(i)] for i in range(len(d["chunks"]))]).reshape(shape)


def unchunk_in_place(d):
    if isinstance(d, dict):
        if "__msgpack_chunked_array__" in d:
            return unchunk(d)
        for k, v in d.items():
            if isinstance(v, dict) and "__msgpack_chunked_array__" in v:
                d[k] = unchunk(v)
            elif isinstance(v, dict):
                unchunk_in_place(v)
    return d


def flax_restore(data, unchunked=True):
    tree = msgpack.unpackb(data, ext_hook=ext_unpack, raw=False)
    return unchunk_in_place(tree) if unchunked else tree


# ---- safetensors (github.com/huggingface/safetensors, format section) ----

ST_NAMES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16",
            "float16": "F16", "int32": "I32", "uint32": "U32", "float32": "F32",
            "float64": "F64", "int64": "I64", "uint64": "U64"}
ST_ORDER = ["BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64"]


def st_save(tensors, metadata=None):
    # The reference writer: larger dtypes first, then by name; header padded to 8 bytes.
    items = sorted(tensors.items(), key=lambda kv: (-ST_ORDER.index(ST_NAMES[kv[1].dtype.name]), kv[0]))
    header, data, at = {}, b"", 0
    if metadata:
        header["__metadata__"] = metadata
    for name, arr in items:
        b = arr.tobytes("C")
        header[name] = {"dtype": ST_NAMES[arr.dtype.name], "shape": list(arr.shape),
                        "data_offsets": [at, at + len(b)]}
        data += b
        at += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def st_load(data):
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", None)
    inv = {v: k for k, v in ST_NAMES.items()}
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + b:8 + n + e], dtype=inv[info["dtype"]]).reshape(info["shape"])
    return out, meta


# ---- the files ----

def python_checkpoint():
    return {
        "params": {"Conv_0": {"kernel": floats((3, 3, 1, 4), np.float32), "bias": floats((4,), np.float32)},
                   "Dense_0": {"kernel": floats((4, 2), np.float64), "bias": floats((2,), np.float64)}},
        "dtypes": {"int32": (ints(5) * 1000).astype(np.int32),
                   "uint32": (ints(4) + 50).astype(np.uint32) * 100000,
                   "bool": np.arange(6) % 3 == 0,
                   "float16": floats((2, 3), np.float16),
                   "int8": ints(7).astype(np.int8),
                   "int64": ints(5) * 1000,
                   "uint8": (np.arange(6) * 37 % 256).astype(np.uint8),
                   "uint16": ((ints(3) + 50) * 600).astype(np.uint16)},
        "bf16": BFloat16(bf16_values(5)),
        "scalar": np.float32(2.5),
        "step": 7,
        "lr": 0.5,
        "big": floats((10, 7), np.float32),
        "name": "r\u00e9sum\u00e9",
    }


def python_safetensors():
    return {"a.b": floats((2, 3), np.float32), "a.c": ints(3) * 1000, "d": floats((2,), np.float16),
            "e": np.arange(3) % 3 == 0, "f": floats((2,), np.float64)}


def linum_tree():
    # The tree interop.cpp writes, as Flax's to_state_dict sees it (tuple -> {'0', '1'}).
    return {"params": {"Conv_0": {"kernel": floats((3, 3, 1, 4), np.float32), "bias": floats((4,), np.float32)},
                       "Dense_0": {"kernel": floats((4, 2), np.float64), "bias": floats((2,), np.float64)}},
            "ints": (ints(5) * 1000).astype(np.int32),
            "u": (ints(3) + 50).astype(np.uint32) * 100000,
            "flags": np.arange(4) % 3 == 0,
            "seq": {"0": floats((2,), np.float32), "1": np.asarray(np.float32(1.5))},
            "none": None,
            "name": "linum \u2713",
            "step": 7,
            "half": {"b": BFloat16(floats((3,), np.float32)), "h": floats((2,), np.float16)}}


def linum_train_state():
    # flax TrainState.create(params={'w': ...}, tx=optax.sgd(0.5)).apply_gradients(grads=ones):
    # step is the Python int 1; sgd without momentum keeps (EmptyState(), EmptyState()).
    return {"step": 1,
            "params": {"w": (floats((3,), np.float32) - np.float32(0.5)).astype(np.float32)},
            "opt_state": {"0": {}, "1": {}}}


def check_equal(got, want, path="."):
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{path}: expected a dict, got {type(got)}"
        assert list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            check_equal(got[k], want[k], f"{path}/{k}")
    elif want is None:
        assert got is None, f"{path}: expected None, got {got!r}"
    elif isinstance(want, BFloat16):
        assert isinstance(got, BFloat16), f"{path}: expected bfloat16, got {type(got)}"
        assert got.shape == want.shape and np.array_equal(got.bits, want.bits), f"{path}: bits differ"
    else:
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype, f"{path}: dtype {got.dtype} != {want.dtype}"
        assert got.shape == want.shape, f"{path}: shape {got.shape} != {want.shape}"
        assert np.array_equal(got, want), f"{path}: values differ:\n{got}\n{want}"


def main():
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "py_flax.msgpack"), "wb") as f:
        f.write(flax_serialize(python_checkpoint(), CHUNK))
    with open(os.path.join(work, "py.safetensors"), "wb") as f:
        f.write(st_save(python_safetensors(), {"format": "np"}))

    env = dict(os.environ, LINUM_INTEROP_DIR=work)
    subprocess.run([binary], env=env, check=True)

    data = open(os.path.join(work, "linum_flax.msgpack"), "rb").read()
    check_equal(flax_restore(data), linum_tree())
    assert flax_serialize(linum_tree()) == data, "linum_flax.msgpack differs from Flax's bytes"

    data = open(os.path.join(work, "linum_train_state.msgpack"), "rb").read()
    state = flax_restore(data)
    assert type(state["step"]) is int, f"step is {type(state['step'])}, Flax writes a Python int"
    check_equal(state, linum_train_state())
    assert flax_serialize(linum_train_state()) == data, "linum_train_state.msgpack differs from Flax's bytes"

    data = open(os.path.join(work, "linum_chunked.msgpack"), "rb").read()
    raw = flax_restore(data, unchunked=False)
    assert raw["big"]["__msgpack_chunked_array__"] is True
    assert raw["big"]["shape"] == {"0": 10, "1": 7}
    assert len(raw["big"]["chunks"]) == 5 and raw["big"]["chunks"]["4"].shape == (6,)
    want = dict(linum_tree(), big=floats((10, 7), np.float32))
    check_equal(unchunk_in_place(raw), want)
    assert flax_serialize(dict(linum_tree(), big=floats((10, 7), np.float32)), CHUNK) == data, \
        "linum_chunked.msgpack differs from Flax's chunked bytes"

    data = open(os.path.join(work, "linum.safetensors"), "rb").read()
    tensors, meta = st_load(data)
    want = {"w": floats((3, 4), np.float32), "b": floats((4,), np.float64), "i": (ints(3) * 1000).astype(np.int32),
            "m": np.arange(5) % 3 == 0}
    assert meta == {"format": "np"}, meta
    assert sorted(tensors) == sorted(want)
    for k in want:
        check_equal(tensors[k], want[k], k)
    assert st_save(want, {"format": "np"}) == data, "linum.safetensors differs from the reference layout"
    print("interop: linum read the Python files; Python read linum's files, bytes identical")


if __name__ == "__main__":
    main()
