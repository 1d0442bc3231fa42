#!/usr/bin/env python3
"""linum::data's .npy, .npz and CSV files against numpy itself.

Usage: numpy_interop.py <test_data_numpy binary> <work dir>

1. numpy writes .npy files of every dtype linum reads (both byte orders, C and Fortran order,
   header versions 1.0, 2.0 and 3.0, shapes () to 3-D and empty ones), .npz files (np.savez and
   np.savez_compressed), CSV files (np.savetxt), and files linum must refuse. manifest.txt lists
   what each must load as: linum dtype, shape and the values (repr of a float64: exact).
2. Runs the linum binary, which loads every file and checks it against the manifest, then writes
   its own files of formula values (vals below, also in numpy_interop.cpp).
3. numpy loads linum's files and checks dtype, shape and values; every .npy file linum wrote is
   byte for byte what np.save writes for the same array, and zipfile finds the archives sound.
"""
import io
import os
import subprocess
import sys
import zipfile

import numpy as np

CODES = ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1"]
LINUM = {"f2": "float16", "f4": "float32", "f8": "float64", "i1": "int32", "i2": "int32",
         "i4": "int32", "i8": "int32", "u1": "uint32", "u2": "uint32", "u4": "uint32",
         "u8": "uint32", "b1": "bool"}
# The last shape's header is exactly 128 bytes before numpy's padding, which then adds a whole
# 64-byte block: it checks that linum counts the header as numpy does, to the byte.
SHAPES = [(), (0,), (7,), (2, 3), (2, 3, 4), (0, 3), (1, 10, 10) + (1,) * 11]


def vals(n, kind):
    """The values both sides compute: k*37 % 101 - 50 (ints), /8 (floats), k % 3 == 0 (bool)."""
    k = np.arange(n, dtype=np.int64)
    if kind == "b":
        return k % 3 == 0
    if kind == "u":
        return k * 37 % 101
    if kind == "i":
        return k * 37 % 101 - 50
    return (k * 37 % 101 - 50) / 8


def array(shape, code, order):
    n = int(np.prod(shape))
    prefix = "|" if code[1] == "1" else order
    return vals(n, code[0]).reshape(shape).astype(prefix + code)


def fmt_values(a):
    flat = np.asarray(a).reshape(-1, order="C")
    if flat.dtype.kind == "b":
        return " ".join("1" if x else "0" for x in flat)
    if flat.dtype.kind in "iu":
        return " ".join(str(int(x)) for x in flat)
    return " ".join(repr(float(x)) for x in flat)


def line(kind, name, key, linum_dtype, a):
    shape = ",".join(str(d) for d in np.shape(a)) or "-"
    return f"{kind} {name} {key} {linum_dtype} {shape} {fmt_values(a)}".rstrip()


def write_numpy_files(d):
    manifest = []
    i = 0
    for code in CODES:
        for order in "<>":
            if code[1] == "1" and order == ">":
                continue  # one-byte types have no byte order
            for shape in SHAPES:
                for fortran in ([False, True] if len(shape) >= 2 else [False]):
                    a = array(shape, code, order)
                    if fortran:
                        a = np.asfortranarray(a)
                    name = f"np_{i}.npy"
                    version = [(1, 0), (2, 0), (3, 0)][i % 3]
                    with open(os.path.join(d, name), "wb") as f:
                        np.lib.format.write_array(f, a, version=version)
                    manifest.append(line("npy", name, "-", LINUM[code], a))
                    i += 1
    # Special float values, exact in float32 and float64.
    for code in ["<f4", ">f8"]:
        a = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-38, 3.4e38], dtype=code)
        np.save(os.path.join(d, f"special_{code[1:]}.npy"), a)
        manifest.append(line("npy", f"special_{code[1:]}.npy", "-", LINUM[code[1:]], a))

    arrays = {"images": vals(24, "f").reshape(2, 3, 4).astype(np.float32),
              "labels": vals(5, "i").astype(np.int64),
              "mask": vals(4, "b"),
              "scalar": np.float32(2.5),
              "bytes": vals(6, "u").astype(np.uint8)}
    np.savez(os.path.join(d, "np_stored.npz"), **arrays)
    np.savez_compressed(os.path.join(d, "np_deflated.npz"), **arrays)
    np.savez(os.path.join(d, "np_positional.npz"), vals(3, "f"), vals(2, "i"))
    for name in ["np_stored.npz", "np_deflated.npz"]:
        for key, a in arrays.items():
            code = np.asarray(a).dtype.str[1:]
            manifest.append(line("npz", name, key, LINUM[code], a))
    manifest.append(line("npz", "np_positional.npz", "arr_0", "float64", vals(3, "f")))
    manifest.append(line("npz", "np_positional.npz", "arr_1", "int32", vals(2, "i")))

    table = vals(12, "f").reshape(4, 3)
    np.savetxt(os.path.join(d, "np_table.csv"), table, delimiter=";", header="a;b;c",
               comments="", fmt="%.17g")
    manifest.append(line("csv", "np_table.csv", "header", "float64", table))
    ints = vals(6, "i").reshape(3, 2)
    np.savetxt(os.path.join(d, "np_ints.csv"), ints, delimiter=",", fmt="%d",
               header="made by numpy.savetxt")  # a '# ' comment line
    manifest.append(line("csv", "np_ints.csv", "-", "int32", ints))

    # Files linum must refuse, with the words its error must contain.
    refused = {"np_unicode.npy": (np.array(["ab", "c"]), "Unicode strings"),
               "np_object.npy": (np.array([1, "a"], dtype=object), "Python objects"),
               "np_complex.npy": (np.array([1 + 2j], dtype=np.complex64), "complex numbers"),
               "np_struct.npy": (np.zeros(2, dtype=[("a", "<f4")]), "structured dtypes"),
               "np_wide.npy": (np.array([1, 2**40]), "does not fit")}
    for name, (a, words) in refused.items():
        np.save(os.path.join(d, name), a, allow_pickle=True)
        manifest.append(f"refused {name} - {words}")
    with open(os.path.join(d, "manifest.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")


LINUM_DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32,
                "uint32": np.uint32, "bool": np.bool_}
LINUM_KIND = {"float32": "f", "float64": "f", "int32": "i", "uint32": "u", "bool": "b"}


def expected(dtype, shape):
    return vals(int(np.prod(shape)), LINUM_KIND[dtype]).reshape(shape).astype(LINUM_DTYPES[dtype])


def check_linum_files(d):
    failures = []
    checked = 0
    for dtype in LINUM_DTYPES:
        for s, shape in enumerate(SHAPES):
            path = os.path.join(d, f"linum_{dtype}_{s}.npy")
            want = expected(dtype, shape)
            got = np.load(path)
            if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
                failures.append(f"{path}: got {got.dtype} {got.shape} {got!r}")
            buf = io.BytesIO()
            np.save(buf, want)
            if buf.getvalue() != open(path, "rb").read():
                failures.append(f"{path}: bytes differ from np.save's")
            checked += 1
    for name in ["linum_stored.npz", "linum_deflated.npz"]:
        path = os.path.join(d, name)
        with zipfile.ZipFile(path) as z:
            if z.testzip() is not None:
                failures.append(f"{path}: zipfile reports a bad member")
            methods = {i.compress_type for i in z.infolist()}
            want_method = zipfile.ZIP_DEFLATED if "deflated" in name else zipfile.ZIP_STORED
            if methods != {want_method}:
                failures.append(f"{path}: compression methods {methods}")
        with np.load(path) as npz:
            if sorted(npz.files) != sorted(LINUM_DTYPES):
                failures.append(f"{path}: members {npz.files}")
            for dtype in LINUM_DTYPES:
                want = expected(dtype, (2, 3, 4))
                got = npz[dtype]
                if got.dtype != want.dtype or not np.array_equal(got, want):
                    failures.append(f"{path}[{dtype}]: got {got!r}")
                checked += 1
    return checked, failures


def main():
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    write_numpy_files(work)
    env = dict(os.environ, LINUM_NUMPY_DIR=work)
    r = subprocess.run([binary], env=env)
    if r.returncode != 0:
        print(f"numpy_interop: the linum side failed ({r.returncode})")
        return 1
    checked, failures = check_linum_files(work)
    for f in failures:
        print("numpy_interop:", f)
    print(f"numpy_interop: numpy checked {checked} arrays linum wrote, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
