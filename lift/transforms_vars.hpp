// flax.core.lift's custom_vjp, map_variables / swap_collection and remat_scan (flax/core/lift.py):
// a custom derivative rule that also covers the scope's variables, a function of the variables
// applied on the way in and out, and a scan of checkpointed nested scans.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <linum/autodiff/custom.hpp>
#include <linum/lift/pack.hpp>
#include <linum/lift/transforms.hpp>
#include <linum/lift/transforms_ad.hpp>

namespace linum::lift {

// lift.custom_vjp(fn, forward_fn, backward_fn, grad_vars, nondiff_argnums): (Scope&, args...) ->
// fn(scope, args...), differentiated by forward_fn(scope, args...) -> (y, residuals) and
// backward_fn(nondiff_args..., residuals, y_cotangent) -> std::tuple({col: grads} over grad_vars,
// cotangent of each differentiable argument...); backward_fn gets no scope. As in Flax,
// nondiff_argnums count the scope as argument 0: dense(scope, x, features) marks features with 2.
template <class F, class Fwd, class Bwd, int... ND>
auto custom_vjp(F fn, Fwd forward_fn, Bwd backward_fn, Filter grad_vars = "params",
                NondiffArgnums<ND...> nd = {}) {
  static_assert(((ND > 0) && ...), "custom_vjp: nondiff_argnums must not include the scope (0)");
  return [=](Scope& scope, const auto&... args) {
    PackSpec spec{{grad_vars, true}, {grad_vars, true}, {true}, "custom_vjp"};
    return pack(spec, scope, [&](const auto& p) {
      // f and fwd may run again in a backward pass after this call returned: they own copies.
      auto run = [p](const auto& body, const Tree& gv, const auto&... a) {
        return p.call(body, Tree::tuple({gv, p.variables()[1]}), p.rngs(), a...);
      };
      auto f = [run, fn](const Tree& gv, const auto&... a) { return run(fn, gv, a...); };
      auto fwd = [run, forward_fn](const Tree& gv, const auto&... a) {
        auto [out, vars] = run(forward_fn, gv, a...);
        return std::make_pair(std::make_pair(std::move(out.first), std::move(vars)),
                              std::move(out.second));
      };
      // The repacked variables are outputs too; their cotangent is dropped, as in Flax. The
      // variable cotangents are the one packed scope's.
      auto bwd = [backward_fn](const auto&... a) {
        auto t = std::forward_as_tuple(a...);
        constexpr std::size_t n = sizeof...(a);
        auto cts = [&]<std::size_t... K>(std::index_sequence<K...>) {
          return backward_fn(std::get<K>(t)..., std::get<n - 2>(t), std::get<n - 1>(t).first);
        }
        (std::make_index_sequence<n - 2>{});
        std::get<0>(cts) = Tree::tuple({Tree(std::get<0>(cts))});
        return cts;
      };
      return linum::custom_vjp(f, fwd, bwd, nd)(p.variables()[0], args...);
    });
  };
}

// lift.map_variables(fn, mapped_collections, map_in_fn, map_out_fn, init, mutable, rngs,
// variables): fn sees the mapped collections as map_in_fn({col: the scope's part}), and with
// `init` or `mutable` what it leaves there goes back through map_out_fn (else they are read-only).
// With `init` and a mutable scope, fn first runs once on the unmapped variables to create them
// (an extra call that advances rng counters, as in Flax).
struct MapVariablesOptions {
  bool init = false;
  bool mutable_ = false;
  Filter rngs = true;
  Filter variables = true;
};
template <class F, class In, class Out>
auto map_variables(F fn, Filter mapped_collections, In map_in_fn, Out map_out_fn,
                   MapVariablesOptions opts = {}) {
  return [=](Scope& scope, const auto&... args) {
    const bool write_back = opts.init || opts.mutable_;
    PackSpec spec{{mapped_collections, opts.variables},
                  write_back ? std::vector<Filter>{mapped_collections, opts.variables}
                             : std::vector<Filter>{false, subtract_filters(opts.variables,
                                                                           mapped_collections)},
                  {opts.rngs},
                  "map_variables",
                  /*sorted_outputs=*/false};
    return pack(spec, scope, [&](const auto& p) {
      // The maps see the packed scope's {col: its part}.
      auto mapped = [](const auto& map, const Tree& group) { return Tree::tuple({map(group[0])}); };
      Tree target = p.variables()[0];
      if (opts.init && !is_filter_empty(scope.mutable_filter()))
        target = mapped(map_out_fn, p.call(fn, p.variables(), p.rngs(), args...).second[0]);
      auto out =
          p.call(fn, Tree::tuple({mapped(map_in_fn, target), p.variables()[1]}), p.rngs(), args...);
      if (write_back) out.second.items()[0] = mapped(map_out_fn, out.second[0]);
      return out;
    });
  };
}

// lift.swap_collection(fn, col_a, col_b): fn sees col_a's variables as col_b and vice versa.
template <class F>
auto swap_collection(F fn, std::string col_a, std::string col_b) {
  auto swap = [col_a, col_b](const Tree& vars) {
    if (!vars.is_dict()) throw TypeError("swap_collection: expected a dict of collections");
    Tree out = Tree::dict();
    for (const auto& [col, v] : vars.as_dict())
      out[col == col_a ? col_b : (col == col_b ? col_a : col)] = v;
    return out;
  };
  return map_variables(std::move(fn), Filter(std::set<std::string>{col_a, col_b}), swap, swap,
                       {.mutable_ = true});
}

// lift.remat_scan(body_fn, lengths, variable_broadcast, variable_carry, variable_axes,
// split_rngs): body_fn(Scope&, carry) -> carry repeated prod(lengths) times as nested scans, the
// inner ones checkpointed; every collection is stacked by default, so a dense repeated with
// lengths {a, b} has a kernel of shape (a, b, in, out).
struct RematScanOptions {
  Filter variable_broadcast = false;
  Filter variable_carry = false;
  std::vector<std::pair<Filter, int>> variable_axes = {{true, 0}};
  SplitRngs split_rngs = {{true, true}};
};

namespace detail {
template <class F, class Carry>
Carry remat_scan_call(const F& body_fn, const std::vector<std::int64_t>& lengths,
                      const RematScanOptions& opts, Scope& scope, const Carry& carry) {
  ScanOptions so{.variable_axes = opts.variable_axes,
                 .variable_broadcast = opts.variable_broadcast,
                 .variable_carry = opts.variable_carry,
                 .split_rngs = opts.split_rngs,
                 .length = lengths[0]};
  std::function<Carry(Scope&, const Carry&)> inner = body_fn;
  if (lengths.size() > 1) {
    // The recomputation may run after this call returned: it owns its copies.
    std::vector<std::int64_t> rest(lengths.begin() + 1, lengths.end());
    inner = checkpoint([body_fn, rest, opts](Scope& s, const Carry& c) {
      return remat_scan_call(body_fn, rest, opts, s, c);
    });
  }
  auto step = [&inner](Scope& s, const Carry& c) {
    return std::make_pair(inner(s, c), std::tuple<>{});
  };
  return lift::scan(step, so)(scope, carry).first;
}
}  // namespace detail

template <class F>
auto remat_scan(F body_fn, std::vector<std::int64_t> lengths, RematScanOptions opts = {}) {
  if (lengths.empty()) throw ValueError("remat_scan: lengths must not be empty");
  for (auto l : lengths)
    if (l <= 0)
      throw ValueError("remat_scan: every length must be positive, got " + std::to_string(l));
  return [=](Scope& scope, const auto& carry) {
    return detail::remat_scan_call(body_fn, lengths, opts, scope, carry);
  };
}

}  // namespace linum::lift
