// xsimd for linum's kernels. GCC 12's AVX-512 intrinsics read an uninitialized register
// (GCC PR 105593, fixed in GCC 13), which floods -march=native builds on AVX-512 machines with
// -Wmaybe-uninitialized false positives; they are silenced for the rest of the including file.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <xsimd/xsimd.hpp>
