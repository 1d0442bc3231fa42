// Every op of linum: jax.numpy / jax.lax / jax.nn names over linum::Array.
#pragma once

#include <linum/autodiff/ops/complex.hpp>
#include <linum/autodiff/ops/contraction.hpp>
#include <linum/autodiff/ops/creation_math.hpp>
#include <linum/autodiff/ops/cumulative.hpp>
#include <linum/autodiff/ops/elementwise.hpp>
#include <linum/autodiff/ops/elementwise_math.hpp>
#include <linum/autodiff/ops/fft.hpp>
#include <linum/autodiff/ops/linalg.hpp>
#include <linum/autodiff/ops/linalg_decomp.hpp>
#include <linum/autodiff/ops/manipulation.hpp>
#include <linum/autodiff/ops/polynomial.hpp>
#include <linum/autodiff/ops/reduction.hpp>
#include <linum/autodiff/ops/reduction_stats.hpp>
#include <linum/autodiff/ops/scatter.hpp>
#include <linum/autodiff/ops/shape.hpp>
#include <linum/autodiff/ops/sort.hpp>
#include <linum/autodiff/ops/special.hpp>
