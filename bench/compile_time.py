#!/usr/bin/env python3
"""Compile time of a user translation unit (goal: <= 3 s, see README's Performance section).

Compiles examples/mlp_demo.cpp (includes <linum/linum.hpp>, trains a small MLP with
value_and_grad) as a user would, with only linum's include/ folder on the path, and, to split the
cost, a file that only includes <linum/linum.hpp>. Prints CPU seconds (user + sys of the compiler:
steadier than wall time on a shared machine) and wall seconds, min and median of --runs runs.
Last, the same program against a precompiled <linum/linum.hpp> (GCC's .gch, made once with the
same flags), the route for a user whose build allows precompiled headers.

  bench/compile_time.py [--cxx c++] [--runs 5] [--opt -O2]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compile_once(cxx, opt, src, out, extra=()):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([cxx, "-std=c++20", opt, *extra, "-I", os.path.join(ROOT, "include"), "-c", src,
                    "-o", out], check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--opt", default="-O2")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        header_only = os.path.join(tmp, "include_only.cpp")
        with open(header_only, "w") as f:
            f.write("#include <linum/linum.hpp>\nint main() { return 0; }\n")
        demo = os.path.join(ROOT, "examples", "mlp_demo.cpp")
        # GCC finds pch/linum/linum.hpp.gch before include/linum/linum.hpp on the include path.
        pch_dir = os.path.join(tmp, "pch")
        os.makedirs(os.path.join(pch_dir, "linum"))
        subprocess.run([args.cxx, "-std=c++20", args.opt, "-I", os.path.join(ROOT, "include"), "-x",
                        "c++-header", os.path.join(ROOT, "include", "linum", "linum.hpp"), "-o",
                        os.path.join(pch_dir, "linum", "linum.hpp.gch")], check=True,
                       stderr=subprocess.DEVNULL)  # "#pragma once in main file"
        # The program's own #include then finds the same file (skipped by #pragma once).
        os.symlink(os.path.join(ROOT, "include", "linum", "linum.hpp"),
                   os.path.join(pch_dir, "linum", "linum.hpp"))
        pch = ("-I", pch_dir, "-include", "linum/linum.hpp")
        cases = [("#include <linum/linum.hpp> only", header_only, ()),
                 ("examples/mlp_demo.cpp", demo, ()),
                 ("examples/mlp_demo.cpp, precompiled", demo, pch)]
        print(f"{args.cxx} -std=c++20 {args.opt}, {args.runs} runs, load {os.getloadavg()[0]:.1f}")
        for name, src, extra in cases:
            runs = [compile_once(args.cxx, args.opt, src, os.path.join(tmp, "out.o"), extra)
                    for _ in range(args.runs)]
            cpu = [r[0] for r in runs]
            wall = [r[1] for r in runs]
            print(f"{name:36s} cpu min {min(cpu):5.2f} s  median {statistics.median(cpu):5.2f} s   "
                  f"wall min {min(wall):5.2f} s  median {statistics.median(wall):5.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
