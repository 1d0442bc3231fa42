// linum::nn: flax.linen — the Module system, layers, activations and initializers.
#pragma once

#include <linum/nn/activation.hpp>
#include <linum/nn/attention.hpp>
#include <linum/nn/batch_apply.hpp>
#include <linum/nn/combinators.hpp>
#include <linum/nn/conv_local.hpp>
#include <linum/nn/dense_general.hpp>
#include <linum/nn/embedding.hpp>
#include <linum/nn/initializers.hpp>
#include <linum/nn/linear.hpp>
#include <linum/nn/module.hpp>
#include <linum/nn/normalization.hpp>
#include <linum/nn/normalization_wrappers.hpp>
#include <linum/nn/partitioning.hpp>
#include <linum/nn/recurrent.hpp>
#include <linum/nn/recurrent_cells.hpp>
#include <linum/nn/stochastic.hpp>
#include <linum/nn/tabulate.hpp>
#include <linum/nn/transforms.hpp>
