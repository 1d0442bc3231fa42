// linum: JAX's composable function transforms and Flax's functional modules, in C++.
#pragma once

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/transforms.hpp>
#include <linum/autodiff/collectives.hpp>
#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/custom.hpp>
#include <linum/autodiff/eval_shape.hpp>
#include <linum/autodiff/jit.hpp>
#include <linum/autodiff/memory.hpp>
#include <linum/autodiff/random/matrix_samplers.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/error.hpp>
#include <linum/lift/lift.hpp>
#include <linum/nn/nn.hpp>
#include <linum/optim/optim.hpp>
