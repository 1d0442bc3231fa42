// Every op of linum: jax.numpy / jax.lax / jax.nn names over linum::Array. The ops that take a
// callable (ops/apply.hpp, ops/index_tricks.hpp) come with linum.hpp instead: their <functional>
// would make std::bind a candidate for the library's unqualified bind(primitive, inputs) calls.
#pragma once

#include <linum/autodiff/ops/bits.hpp>
#include <linum/autodiff/ops/complex.hpp>
#include <linum/autodiff/ops/contraction.hpp>
#include <linum/autodiff/ops/creation_math.hpp>
#include <linum/autodiff/ops/cumulative.hpp>
#include <linum/autodiff/ops/differences.hpp>
#include <linum/autodiff/ops/dtype_info.hpp>
#include <linum/autodiff/ops/elementwise.hpp>
#include <linum/autodiff/ops/elementwise_math.hpp>
#include <linum/autodiff/ops/fft.hpp>
#include <linum/autodiff/ops/histogram.hpp>
#include <linum/autodiff/ops/linalg.hpp>
#include <linum/autodiff/ops/linalg_decomp.hpp>
#include <linum/autodiff/ops/manipulation.hpp>
#include <linum/autodiff/ops/polynomial.hpp>
#include <linum/autodiff/ops/polynomial_solve.hpp>
#include <linum/autodiff/ops/reduction.hpp>
#include <linum/autodiff/ops/reduction_stats.hpp>
#include <linum/autodiff/ops/reshaping.hpp>
#include <linum/autodiff/ops/scatter.hpp>
#include <linum/autodiff/ops/set_ops.hpp>
#include <linum/autodiff/ops/shape.hpp>
#include <linum/autodiff/ops/sort.hpp>
#include <linum/autodiff/ops/special.hpp>
