// Flax's function forms nn.init / nn.init_with_output / nn.apply(fn, module): fn(module, args...)
// run through the module's init/apply, with the same trailing Rngs and options.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <linum/nn/module.hpp>

namespace linum::nn {

namespace detail {
template <class T>
constexpr bool is_call_option_v =
    std::is_same_v<T, Rngs> || std::is_same_v<T, ApplyOptions> || std::is_same_v<T, InitOptions>;
// How many of A... at the end are options (Rngs, ApplyOptions, InitOptions).
template <class... A>
constexpr std::size_t trailing_options() {
  constexpr bool option[] = {is_call_option_v<std::remove_cvref_t<A>>..., false};
  std::size_t k = 0;
  while (k < sizeof...(A) && option[sizeof...(A) - 1 - k]) ++k;
  return k;
}
// f(args before the trailing options..., m, trailing options...): the method of a function form
// goes where Module::init/apply take it, before a trailing Rngs or options struct.
template <class F, class M, class... A>
decltype(auto) call_with_method_before_options(F&& f, M&& m, A&&... args) {
  constexpr std::size_t n = sizeof...(A), k = trailing_options<A...>();
  auto t = std::forward_as_tuple(std::forward<A>(args)...);
  return [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>,
                                                 std::index_sequence<J...>)
      ->decltype(auto) {
    return f(
        std::forward<std::tuple_element_t<I, std::tuple<A...>>>(std::get<I>(t))...,
        std::forward<M>(m),
        std::forward<std::tuple_element_t<n - k + J, std::tuple<A...>>>(std::get<n - k + J>(t))...);
  }
  (std::make_index_sequence<n - k>{}, std::make_index_sequence<k>{});
}
// fn(module, args...) through init or apply: the method goes before a trailing Rngs or options
// struct, and the options given to the function form follow unless the call passes its own.
template <class Run, class F, class Opts, class... A>
decltype(auto) run_function_form(const Run& run, const F& fn, const Opts& opts, A&&... args) {
  if constexpr (lift::detail::last_is<Opts, A...>()) {
    return call_with_method_before_options(run, method(fn), std::forward<A>(args)...);
  } else {
    return call_with_method_before_options(
        [&](auto&&... a) -> decltype(auto) { return run(std::forward<decltype(a)>(a)..., opts); },
        method(fn), std::forward<A>(args)...);
  }
}
}  // namespace detail

// nn.init_with_output / nn.init / nn.apply of a function fn(module, args...):
//   auto [y, v] = nn::init_with_output(f, foo)(key, x);  Array y2 = nn::apply(f, foo)(v, x);
// The returned function takes a trailing Rngs (or options struct) as Module::init/apply do;
// Flax's mutable/capture_intermediates arguments are the options given here:
//   auto [y3, state] = nn::apply(f, foo, {.mutable_ = "batch_stats"})(v, x, nn::Rngs(key));
template <class F, class D>
auto init_with_output(F fn, const Module<D>& module, InitOptions opts = {}) {
  return [fn, opts = std::move(opts), proto = static_cast<const D&>(module).clone()](
             const auto& rngs, auto&&... args) {
    return detail::run_function_form(
        [&](auto&&... a) { return proto.init_with_output(rngs, std::forward<decltype(a)>(a)...); },
        fn, opts, std::forward<decltype(args)>(args)...);
  };
}
template <class F, class D>
auto init(F fn, const Module<D>& module, InitOptions opts = {}) {
  return [fn, opts = std::move(opts), proto = static_cast<const D&>(module).clone()](
             const auto& rngs, auto&&... args) {
    return detail::run_function_form(
        [&](auto&&... a) { return proto.init(rngs, std::forward<decltype(a)>(a)...); }, fn, opts,
        std::forward<decltype(args)>(args)...);
  };
}
template <class F, class D>
auto apply(F fn, const Module<D>& module) {
  return
      [fn, proto = static_cast<const D&>(module).clone()](const Tree& variables, auto&&... args) {
        return detail::call_with_method_before_options(
            [&](auto&&... a) { return proto.apply(variables, std::forward<decltype(a)>(a)...); },
            method(fn), std::forward<decltype(args)>(args)...);
      };
}
// With options, the function returns (out, mutated collections), as Flax's for mutable != False.
template <class F, class D>
auto apply(F fn, const Module<D>& module, ApplyOptions opts) {
  return [fn, opts = std::move(opts), proto = static_cast<const D&>(module).clone()](
             const Tree& variables, auto&&... args) {
    return detail::run_function_form(
        [&](auto&&... a) { return proto.apply(variables, std::forward<decltype(a)>(a)...); }, fn,
        opts, std::forward<decltype(args)>(args)...);
  };
}
// The module first and the function second: Flax's order is nn.apply(fn, module).
template <class D, class F, class... O>
void init_with_output(const Module<D>&, F, O&&...) {
  static_assert(detail::dependent_false<F>,
                "nn::init_with_output(fn, module): the function comes first, then the module");
}
template <class D, class F, class... O>
void init(const Module<D>&, F, O&&...) {
  static_assert(detail::dependent_false<F>,
                "nn::init(fn, module): the function comes first, then the module");
}
template <class D, class F, class... O>
void apply(const Module<D>&, F, O&&...) {
  static_assert(detail::dependent_false<F>,
                "nn::apply(fn, module): the function comes first, then the module");
}

}  // namespace linum::nn
