// linum::optim: optax's gradient transformations, optimizers, linesearches, losses, schedules,
// projections, perturbations and second-order helpers over any pytree of Arrays, and flax's
// TrainState and DynamicScale.
#pragma once

#include <linum/optim/accumulation.hpp>
#include <linum/optim/adaptive.hpp>
#include <linum/optim/adding.hpp>
#include <linum/optim/alias.hpp>
#include <linum/optim/alias_adaptive.hpp>
#include <linum/optim/alias_sgd.hpp>
#include <linum/optim/assignment.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/clipping.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/contrib_adaptive.hpp>
#include <linum/optim/contrib_adaptive_more.hpp>
#include <linum/optim/contrib_complex_valued.hpp>
#include <linum/optim/contrib_galore.hpp>
#include <linum/optim/contrib_learning_rate_free.hpp>
#include <linum/optim/contrib_momo.hpp>
#include <linum/optim/contrib_muon.hpp>
#include <linum/optim/contrib_reduce_on_plateau.hpp>
#include <linum/optim/contrib_sam.hpp>
#include <linum/optim/contrib_schedule_free.hpp>
#include <linum/optim/contrib_sophia.hpp>
#include <linum/optim/dynamic_scale.hpp>
#include <linum/optim/erased.hpp>
#include <linum/optim/factorized.hpp>
#include <linum/optim/inject.hpp>
#include <linum/optim/lbfgs.hpp>
#include <linum/optim/linear_algebra.hpp>
#include <linum/optim/linesearch.hpp>
#include <linum/optim/losses.hpp>
#include <linum/optim/microbatching.hpp>
#include <linum/optim/monitoring.hpp>
#include <linum/optim/multi_normal.hpp>
#include <linum/optim/numerics.hpp>
#include <linum/optim/perturbations.hpp>
#include <linum/optim/privacy.hpp>
#include <linum/optim/projections.hpp>
#include <linum/optim/scale_gradient.hpp>
#include <linum/optim/scaling.hpp>
#include <linum/optim/schedule.hpp>
#include <linum/optim/second_order.hpp>
#include <linum/optim/state_utils.hpp>
#include <linum/optim/train_state.hpp>
#include <linum/optim/transform.hpp>
#include <linum/optim/tree_random.hpp>
#include <linum/optim/tree_utils.hpp>
#include <linum/optim/wrappers.hpp>
#include <linum/pytree/pytree.hpp>  // flatten_dict / freeze for optimizer-state surgery
