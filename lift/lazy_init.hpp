// flax.core.lazy_init: init on abstract inputs. Arguments given as ShapeDtype (JAX's
// ShapeDtypeStruct) are abstract, so nothing that depends on them is computed or allocated;
// the variables, which must not depend on them, come back as concrete arrays.
#pragma once

#include <type_traits>
#include <utility>

#include <linum/autodiff/eval_shape.hpp>
#include <linum/lift/scope.hpp>

namespace linum::lift {

namespace detail {
// LazyInitError naming the first abstract leaf of `variables` (one that depends on an input).
void check_lazy_variables(const Tree& variables);
}  // namespace detail

// lazy_init(fn, mutable, flags)(key or Rngs, args...) -> variables, as Flax's
// partial_eval.lazy_init of init(fn)(...)[1]: ShapeDtype leaves of args are unknown, the others
// known. Under linum's abstract level an op on known values runs eagerly, so exactly the
// input-free computations happen, as with Flax's partial evaluation.
template <class F>
auto lazy_init(F fn, Filter mutable_ = true, Flags flags = {}) {
  return [init_fn = lift::init(std::move(fn), std::move(mutable_), std::move(flags))](
             const auto& rngs, const auto&... args) mutable -> Tree {
    linum::detail::AbstractTrace trace;
    linum::detail::TraceScope level(trace);
    auto unknown = [&](const auto& leaf) {
      if constexpr (std::is_same_v<std::decay_t<decltype(leaf)>, ShapeDtype>)
        return trace.wrap(leaf);
      else
        return leaf;
    };
    Tree variables = init_fn(rngs, linum::detail::map_leaves(args, unknown)...).second;
    detail::check_lazy_variables(variables);
    return variables;
  };
}

}  // namespace linum::lift
