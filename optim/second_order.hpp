// optax.second_order (deprecated in optax 0.2.7, still public in 0.2.8): hvp, hessian_diag and
// fisher_diag of a loss(params, inputs, targets), with linum's autodiff. Vectors over params are
// jax.flatten_util.ravel_pytree's flat vectors (optim/ravel.hpp).
#pragma once

#include <tuple>
#include <utility>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/transforms.hpp>
#include <linum/optim/ravel.hpp>

namespace linum::optim::second_order {

// optax.second_order.hvp(loss, v, params, inputs, targets): the Hessian of p -> loss(p, inputs,
// targets) at params times v, as jvp(grad(loss), params, unravel(v)); v is a flat vector of
// params' raveled size and dtype (ValueError / TypeError otherwise, as JAX's unravel). Returns
// a tree shaped like params (optax's too, whatever its docstring says).
template <class Loss, class P, class In, class Tg>
P hvp(const Loss& loss, const Array& v, const P& params, const In& inputs, const Tg& targets) {
  const P tangent = optim::detail::unravel_like(params, v, "hvp");
  auto loss_fn = [&](const P& p) { return loss(p, inputs, targets); };
  return std::get<1>(jvp(grad(loss_fn), std::make_tuple(params), std::make_tuple(tangent)));
}

// optax.second_order.hessian_diag(loss, params, inputs, targets): the diagonal of the Hessian
// as a flat vector, e_i . ravel(hvp(e_i)) vmapped over the rows e_i of the identity (one
// Hessian-vector product per parameter, batched). The identity is in params' raveled dtype.
template <class Loss, class P, class In, class Tg>
Array hessian_diag(const Loss& loss, const P& params, const In& inputs, const Tg& targets) {
  const Array flat = optim::detail::ravel_tree(params);
  const Array vs = eye(flat.size(), -1, 0, flat.dtype());
  auto comp = [&](const Array& v) {
    return vdot(v, optim::detail::ravel_tree(hvp(loss, v, params, inputs, targets)));
  };
  return vmap(comp)(vs);
}

// optax.second_order.fisher_diag(negative_log_likelihood, params, inputs, targets): the
// diagonal of the observed Fisher information, ravel(grad(nll)(params, inputs, targets))^2.
template <class Nll, class P, class In, class Tg>
Array fisher_diag(const Nll& negative_log_likelihood, const P& params, const In& inputs,
                  const Tg& targets) {
  return square(optim::detail::ravel_tree(grad(negative_log_likelihood)(params, inputs, targets)));
}

}  // namespace linum::optim::second_order
