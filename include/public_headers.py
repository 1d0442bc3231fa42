#!/usr/bin/env python3
"""Prints linum's public headers, one per line, as users include them (linum/nn/nn.hpp).

Every .hpp under include/linum is public (the layer folders there are links to the source
folders), except the implementation headers named below: `meson install` installs exactly this
list, and tests/consumer checks that the install holds it and that each one compiles alone.
A new header is public unless it is added here.
"""
import os
import sys

# Included only by the library's .cpp files (each says so in its first lines).
PRIVATE = {
    "linum/autodiff/allocator.hpp",
    "linum/autodiff/collective_rules.hpp",
    "linum/autodiff/jit_fused.hpp",
    "linum/autodiff/jit_program.hpp",
    "linum/autodiff/ops/complex_arith.hpp",
    "linum/autodiff/ops/dnnl_backend.hpp",
    "linum/autodiff/ops/elementwise_rules.hpp",
    "linum/autodiff/ops/fusion.hpp",
    "linum/autodiff/ops/index_util.hpp",
    "linum/autodiff/ops/kernel_util.hpp",
    "linum/autodiff/ops/lapack.hpp",
    "linum/autodiff/ops/linalg_util.hpp",
    "linum/autodiff/ops/recorded_params.hpp",
    "linum/autodiff/ops/reduction_util.hpp",
    "linum/autodiff/ops/simd.hpp",
    "linum/autodiff/ops/small_gemm.hpp",
    "linum/autodiff/ops/special_math.hpp",
    "linum/autodiff/ops/window_util.hpp",
    "linum/autodiff/parallel.hpp",
    "linum/autodiff/random/draw_format.hpp",
    "linum/autodiff/random/fp_contract_off.hpp",
    "linum/autodiff/random/keyed_primitive.hpp",
    "linum/autodiff/random/sampler_args.hpp",
    "linum/autodiff/random/xla_math.hpp",
    "linum/data/file_io.hpp",
    "linum/data/npy_codec.hpp",
    "linum/data/zip.hpp",
    "linum/distributed/runtime.hpp",
    "linum/distributed/watchdog_mpi.hpp",
    "linum/nn/dtype_codec.hpp",
    "linum/nn/dtypes.hpp",
    "linum/nn/module_repr.hpp",
    "linum/nn/state_dict_kind.hpp",
    "linum/optim/losses_detail.hpp",
}


def all_headers(include_dir):
    found = []
    for dirpath, _, files in os.walk(os.path.join(include_dir, "linum"), followlinks=True):
        for f in files:
            if f.endswith(".hpp"):
                found.append(os.path.relpath(os.path.join(dirpath, f), include_dir))
    return sorted(found)


def public_headers(include_dir):
    headers = all_headers(include_dir)
    stale = PRIVATE - set(headers)
    if stale:
        sys.exit(f"include/public_headers.py: private headers not found: {sorted(stale)}")
    return [h for h in headers if h not in PRIVATE]


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    print("\n".join(public_headers(here)))
