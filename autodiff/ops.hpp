// Every op of linum: jax.numpy / jax.lax / jax.nn names over linum::Array.
#pragma once

#include <linum/autodiff/ops/cumulative.hpp>
#include <linum/autodiff/ops/complex.hpp>
#include <linum/autodiff/ops/elementwise.hpp>
#include <linum/autodiff/ops/fft.hpp>
#include <linum/autodiff/ops/linalg.hpp>
#include <linum/autodiff/ops/manipulation.hpp>
#include <linum/autodiff/ops/linalg_decomp.hpp>
#include <linum/autodiff/ops/reduction.hpp>
#include <linum/autodiff/ops/scatter.hpp>
#include <linum/autodiff/ops/shape.hpp>
#include <linum/autodiff/ops/sort.hpp>
