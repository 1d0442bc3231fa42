// Control flow as in jax.lax: scan, cond, switch_, while_loop, fori_loop. They run eagerly as
// host loops and branches, so every transform sees the ops that ran: the tape records them (all
// of these are reverse-differentiable, while_loop included), and under vmap a batched predicate
// runs every branch / keeps iterating and selects per example with `where`. Under jit, a
// predicate computed from the arguments is staged: every branch (or the loop's cond and body)
// is traced into the program, and each replay picks (or repeats) by the predicate's value. With
// a grad, jvp or vmap between jit and the predicate, they are one primitive (JAX's cond and
// while) whose rules transform the branches; reverse mode of such a while_loop is an error.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/eval_shape.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/trace.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum {

struct ScanOptions {
  std::optional<std::int64_t> length = {};  // required when xs has no leaves
  bool reverse = false;                     // iterate from the last slice to the first
};

namespace detail {

// "float32[3,4]": an array's abstract value as JAX's messages print it.
std::string aval_str(const Array& a);

// x[0], ..., x[n-1] along axis 0: views of x's buffer, one primitive (its VJP stacks).
Arrays unstack(const Array& x, const char* op);
// Stacks along a new axis 0 (in chunks, so that any length fits a tape node).
Array stack_steps(const Arrays& ys);
// The scan length from xs' leading axes and the `length` option (JAX's errors).
std::int64_t scan_length(const Arrays& xs, std::optional<std::int64_t> length);

// Two lists of leaves that must agree in count, shape and dtype; the message starts with
// `header` and names leaf i as name(i) ("carry[0]"); `in_label`/`out_label` name the two sides.
void check_same_avals(const Arrays& in, const Arrays& out, const std::string& header,
                      const std::string& in_label, const std::string& out_label,
                      const std::function<std::string(std::size_t)>& name,
                      const std::function<std::string()>& structures);

// "carry[0]['h']": the key path of leaf i of t, prefixed.
template <class T>
std::string leaf_path(const T& t, std::size_t i, const std::string& prefix) {
  if constexpr (std::is_same_v<T, Array>) {
    return prefix;
  } else {
    auto lp = pytree::tree_leaves_with_path<Array>(t);
    return prefix + pytree::keystr(lp.at(i).first);
  }
}

template <class A, class B>
void check_tree_avals(const A& in, const B& out, const std::string& header,
                      const std::string& in_label, const std::string& out_label,
                      const std::string& prefix) {
  // Structure first, dict keys included: equal leaf counts under other keys are a mismatch too.
  if constexpr (!std::is_same_v<A, Array> || !std::is_same_v<B, Array>) {
    const auto si = pytree::tree_structure(in), so = pytree::tree_structure(out);
    if (!(si == so))
      throw TypeError(header.substr(0, header.find(" must ")) +
                      " must have the same pytree structure, but they differ:\n  * the " +
                      in_label + " has structure " + si.to_string() + " but the " + out_label +
                      " has structure " + so.to_string());
  }
  check_same_avals(
      tree_arrays(in), tree_arrays(out), header, in_label, out_label,
      [&](std::size_t i) { return leaf_path(in, i, prefix); },
      [&] {
        return "the " + in_label + " has structure " + pytree::tree_structure(in).to_string() +
               " but the " + out_label + " has structure " +
               pytree::tree_structure(out).to_string();
      });
}

// A cond/switch/while predicate: validated (scalar; bool, or integer meaning != 0).
Array check_pred(const Array& pred, const char* what);
// switch_'s index and fori_loop's bounds: integer scalars (TypeError otherwise).
void check_index(const Array& index, const char* what);
// Whether any example of a batched boolean is true (looks through every level).
bool any_true(const Array& pred);
// where(pred, a_i, b_i) leaf by leaf.
Arrays select_leaves(const Array& pred, const Arrays& a, const Arrays& b);

// Staging under jit (jit.cpp): whether x is a value of the innermost trace and that is a jit
// trace; whether a switch on x is staged (that, or x unbatched and traced by a jit below other
// transforms); whether jit traces x at all; a switch over flat branches (index: a clamped int32
// scalar) and a while_loop over flat cond/body functions, recorded into the jit trace's program
// or, under other transforms, bound as a primitive that reaches it.
using FlatFn = std::function<Arrays(const Arrays&)>;
bool jit_stageable(const Array& x);
bool jit_switchable(const Array& x);
bool jit_traced(const Array& x);
Arrays jit_stage_switch(const Array& index, const std::vector<FlatFn>& branches,
                        const Arrays& operands);
Arrays jit_stage_while(const Array& first_pred, const FlatFn& cond_fn, const FlatFn& body_fn,
                       const Arrays& init);

// The Array leaves of operands, in order, and f called on the operands with those leaves
// replaced by `in` (braced initialization keeps the order).
template <class... Ops>
Arrays operand_leaves(const Ops&... ops) {
  Arrays out;
  [[maybe_unused]] auto grab = [&](const auto& leaf) {
    if constexpr (std::is_same_v<std::decay_t<decltype(leaf)>, Array>) out.push_back(leaf);
    return leaf;
  };
  (map_leaves(ops, grab), ...);
  return out;
}
template <class F, class... Ops>
auto call_with_leaves(F&& f, const Arrays& in, const Ops&... ops) {
  std::size_t k = 0;
  [[maybe_unused]] auto put = [&](const auto& leaf) {
    if constexpr (std::is_same_v<std::decay_t<decltype(leaf)>, Array>)
      return in.at(k++);
    else
      return leaf;
  };
  std::tuple<std::decay_t<decltype(map_leaves(ops, put))>...> args{map_leaves(ops, put)...};
  return std::apply(std::forward<F>(f), args);
}

// cond/switch_ on a jit-traced index: call(k, operands...) for every k traced as a branch.
template <class R, class Call, class Label, class... Ops>
R staged_switch(const Array& index, std::size_t n, const Call& call, const char* header,
                const Label& label, const Ops&... ops) {
  std::optional<R> first;
  std::vector<FlatFn> fns;
  for (std::size_t k = 0; k < n; ++k)
    fns.push_back([&, k](const Arrays& in) {
      R r = call_with_leaves([&](const auto&... o) { return R(call(k, o...)); }, in, ops...);
      if (!first)
        first.emplace(r);
      else
        check_tree_avals(*first, r, header, label(0), label(k), "output");
      return tree_arrays(r);
    });
  Arrays outs = jit_stage_switch(index, fns, operand_leaves(ops...));
  return tree_rebuild(*first, outs);
}

template <class R>
using scan_carry_t = std::decay_t<std::tuple_element_t<0, R>>;
template <class R>
using scan_y_t = std::decay_t<std::tuple_element_t<1, R>>;

}  // namespace detail

// jax.lax.scan: f(carry, x) -> (carry, y) over the leading axis of xs (a pytree, or std::nullopt
// with `length`); returns (final carry, ys stacked along a new leading axis).
template <class F, class Carry, class Xs>
auto scan(F&& f, const Carry& init, const Xs& xs, const ScanOptions& opts = {}) {
  constexpr bool no_xs = std::is_same_v<Xs, std::nullopt_t>;
  Arrays xl;
  if constexpr (!no_xs) xl = detail::tree_arrays(xs);
  const std::int64_t n = detail::scan_length(xl, opts.length);
  std::vector<Arrays> slices(xl.size());
  for (std::size_t k = 0; k < xl.size(); ++k) slices[k] = detail::unstack(xl[k], "scan");
  auto x_at = [&](std::int64_t t) {
    if constexpr (no_xs) {
      return std::nullopt;
    } else {
      Arrays l;
      l.reserve(slices.size());
      for (auto& s : slices) l.push_back(s[t]);
      return detail::tree_rebuild(xs, l);
    }
  };
  using X = decltype(x_at(0));
  using R = std::decay_t<std::invoke_result_t<F&, const Carry&, const X&>>;
  using Y = detail::scan_y_t<R>;
  static_assert(std::is_convertible_v<detail::scan_carry_t<R>, Carry>,
                "scan: f must return (carry, y) with a carry of the type of init");
  constexpr bool no_ys = std::is_same_v<Y, std::nullopt_t>;

  Carry carry = init;
  std::vector<Arrays> ys(static_cast<std::size_t>(n));
  std::optional<std::conditional_t<no_ys, int, Y>> y_like;
  const std::string header =
      "scan body function carry input and carry output must have equal types (e.g. shapes and "
      "dtypes of arrays)";
  // Abstract inputs (eval_shape) or no step at all: the body is traced once on abstract values,
  // as JAX does; the carry must keep its types and ys get the leading axis n.
  const Arrays init_leaves = detail::tree_arrays(init);
  if (const Array* ref = detail::first_abstract(init_leaves, xl); ref || n == 0) {
    detail::AbstractTrace at;
    detail::TraceScope scope(at);
    const R r = [&] {
      const Carry c = detail::tree_rebuild(init, detail::abstract_leaves(at, init_leaves));
      if constexpr (no_xs) return f(c, std::nullopt);
      else return f(c, detail::tree_rebuild(xs, detail::abstract_leaves(at, xl, true)));
    }();
    const Carry next = std::get<0>(r);
    detail::check_tree_avals(init, next, header, "input carry", "output carry", "carry");
    scope.close();
    Carry out = ref ? detail::tree_rebuild(init, detail::rewrap_abstract(*ref, detail::tree_arrays(next))) : init;
    if constexpr (no_ys) {
      return std::make_pair(out, std::nullopt);
    } else {
      Arrays e = detail::tree_arrays(std::get<1>(r));
      if (ref) e = detail::rewrap_abstract(*ref, e, n);
      else
        for (auto& l : e) {
          Shape s = l.shape();
          s.insert(s.begin(), 0);
          l = zeros(s, l.dtype());
        }
      return std::make_pair(out, detail::tree_rebuild(std::get<1>(r), e));
    }
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t t = opts.reverse ? n - 1 - i : i;
    R r = f(carry, x_at(t));
    Carry next = std::get<0>(std::move(r));
    detail::check_tree_avals(init, next, header, "input carry", "output carry", "carry");
    carry = std::move(next);
    if constexpr (!no_ys) {
      if (!y_like) y_like.emplace(std::get<1>(r));
      ys[static_cast<std::size_t>(t)] = detail::tree_arrays(std::get<1>(r));
    }
  }
  if constexpr (no_ys) {
    return std::make_pair(carry, std::nullopt);
  } else {
    const std::size_t m = ys[0].size();
    Arrays stacked(m);
    Arrays col(static_cast<std::size_t>(n));
    for (std::size_t j = 0; j < m; ++j) {
      for (std::int64_t t = 0; t < n; ++t) {
        if (ys[t].size() != m)
          throw ValueError("scan: the body returned y with " + std::to_string(ys[t].size()) +
                           " leaves at step " + std::to_string(t) + " but " + std::to_string(m) +
                           " at another step");
        col[t] = std::move(ys[t][j]);
      }
      stacked[j] = detail::stack_steps(col);
    }
    return std::make_pair(carry, detail::tree_rebuild(*y_like, stacked));
  }
}

// jax.lax.cond: true_fn(operands...) if pred else false_fn(operands...). A batched predicate
// (under vmap) runs both branches and selects per example; they must then agree in structure,
// shapes and dtypes.
template <class TF, class FF, class... Ops>
auto cond(const Array& pred, TF&& true_fn, FF&& false_fn, const Ops&... operands) {
  using RT = std::decay_t<std::invoke_result_t<TF&, const Ops&...>>;
  using RF = std::decay_t<std::invoke_result_t<FF&, const Ops&...>>;
  static_assert(std::is_same_v<RT, RF>, "cond: true_fun and false_fun must return the same type");
  Array p = detail::check_pred(pred, "cond");
  const char* header = "cond: true_fun and false_fun output must have identical types";
  if (detail::jit_switchable(p))  // branch 0 is false_fn, as lax.cond's index
    return detail::staged_switch<RT>(
        p.astype(int32), 2,
        [&](std::size_t k, const auto&... o) { return k ? RT(true_fn(o...)) : RT(false_fn(o...)); },
        header, [](std::size_t k) { return k ? "true_fun output" : "false_fun output"; },
        operands...);
  if (!detail::is_batched(p) && !detail::is_abstract(p)) {
    // One branch runs; the other is still checked, by abstract evaluation (as JAX traces both).
    if (p.concrete().template item<bool>()) {
      RT t = true_fn(operands...);
      detail::check_tree_avals(t, RT(detail::abstract_call(false_fn, operands...)), header,
                               "true_fun output", "false_fun output", "output");
      return t;
    }
    RT f = false_fn(operands...);
    detail::check_tree_avals(RT(detail::abstract_call(true_fn, operands...)), f, header,
                             "true_fun output", "false_fun output", "output");
    return f;
  }
  // A batched or abstract predicate runs both branches and selects (per example).
  RT t = true_fn(operands...);
  RT f = false_fn(operands...);
  detail::check_tree_avals(t, f, header, "true_fun output", "false_fun output", "output");
  return detail::tree_rebuild(t, detail::select_leaves(p, detail::tree_arrays(t), detail::tree_arrays(f)));
}

namespace detail {
template <class T>
struct is_tuple_like : std::false_type {};
template <class... T>
struct is_tuple_like<std::tuple<T...>> : std::true_type {};

template <class Branches>
std::size_t branch_count(const Branches& b) {
  if constexpr (is_tuple_like<Branches>::value)
    return std::tuple_size_v<Branches>;
  else
    return std::size(b);
}

template <class Branches, class... Ops>
auto call_branch(const Branches& br, std::size_t k, const Ops&... ops) {
  if constexpr (is_tuple_like<Branches>::value) {
    using R =
        std::decay_t<std::invoke_result_t<const std::tuple_element_t<0, Branches>&, const Ops&...>>;
    std::optional<R> out;
    std::size_t i = 0;
    std::apply(
        [&](const auto&... b) { ((i++ == k ? (void)out.emplace(b(ops...)) : (void)0), ...); }, br);
    return std::move(*out);
  } else {
    using R = std::decay_t<decltype(br[0](ops...))>;
    return R(br[k](ops...));
  }
}
}  // namespace detail

// jax.lax.switch: branches[clamp(index, 0, n - 1)](operands...). `branches` is a std::vector /
// std::array of callables, or a std::tuple of different lambdas returning the same type.
template <class Branches, class... Ops>
auto switch_(const Array& index, const Branches& branches, const Ops&... operands) {
  const std::size_t n = detail::branch_count(branches);
  if (n == 0) throw ValueError("switch: empty branch sequence");
  detail::check_index(index, "switch");
  if (n == 1) return detail::call_branch(branches, 0, operands...);
  if (detail::jit_switchable(index)) {
    using R = std::decay_t<decltype(detail::call_branch(branches, 0, operands...))>;
    return detail::staged_switch<R>(
        clip(astype(index, int32), 0, static_cast<int>(n - 1)), n,
        [&](std::size_t k, const auto&... o) { return detail::call_branch(branches, k, o...); },
        "switch: branch outputs must have identical types",
        [](std::size_t k) { return "output of branch " + std::to_string(k); }, operands...);
  }
  if (!detail::is_batched(index) && !detail::is_abstract(index)) {
    const auto i = index.concrete().template item<std::int64_t>();
    const std::size_t k = i < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(i), n - 1);
    auto out = detail::call_branch(branches, k, operands...);
    // The branches not taken are checked by abstract evaluation, as JAX traces every branch.
    for (std::size_t j = 0; j < n; ++j)
      if (j != k)
        detail::check_tree_avals(
            detail::abstract_call([&](const auto&... ops) { return detail::call_branch(branches, j, ops...); },
                                  operands...),
            out, "switch: branch outputs must have identical types", "output of branch " + std::to_string(j),
            "output of branch " + std::to_string(k), "output");
    return out;
  }
  Array idx = clip(astype(index, int32), 0, static_cast<int>(n - 1));
  auto out = detail::call_branch(branches, n - 1, operands...);
  Arrays leaves = detail::tree_arrays(out);
  for (std::size_t k = n - 1; k-- > 0;) {
    auto bk = detail::call_branch(branches, k, operands...);
    detail::check_tree_avals(bk, out, "switch: branch outputs must have identical types",
                             "output of branch " + std::to_string(k),
                             "output of branch " + std::to_string(n - 1), "output");
    leaves = detail::select_leaves(equal(idx, Array(static_cast<int>(k))), detail::tree_arrays(bk),
                                   leaves);
  }
  return detail::tree_rebuild(out, leaves);
}

// jax.lax.while_loop: while cond_fn(val): val = body_fn(val). Under vmap with a batched
// predicate it iterates until every example is done; finished examples keep their value.
template <class CF, class BF, class T>
T while_loop(CF&& cond_fn, BF&& body_fn, const T& init) {
  T val = init;
  const char* header = "while_loop: body_fun output and input must have identical types";
  for (;;) {
    Array p = detail::check_pred(cond_fn(static_cast<const T&>(val)), "while_loop");
    if (detail::is_abstract(p)) {
      // No value to test (eval_shape): the body runs once abstractly and must keep the carry's
      // types; the result is the carry's avals, as JAX's abstract evaluation gives.
      T next = body_fn(static_cast<const T&>(val));
      detail::check_tree_avals(init, next, header, "input carry", "output carry", "carry");
      return detail::tree_rebuild(val, detail::rewrap_abstract(p, detail::tree_arrays(next)));
    }
    if (detail::jit_traced(p)) {  // traced by jit: the loop from here on is staged
      auto cond_flat = [&](const Arrays& in) {
        return Arrays{detail::check_pred(cond_fn(detail::tree_rebuild(val, in)), "while_loop")};
      };
      auto body_flat = [&](const Arrays& in) {
        T next = body_fn(detail::tree_rebuild(val, in));
        detail::check_tree_avals(init, next, header, "input carry", "output carry", "carry");
        return detail::tree_arrays(next);
      };
      return detail::tree_rebuild(
          val, detail::jit_stage_while(p, cond_flat, body_flat, detail::tree_arrays(val)));
    }
    const bool batched = detail::is_batched(p);
    if (batched ? !detail::any_true(p) : !p.concrete().template item<bool>()) break;
    T next = body_fn(static_cast<const T&>(val));
    detail::check_tree_avals(init, next, header, "input carry", "output carry", "carry");
    if (batched)
      val = detail::tree_rebuild(
          val, detail::select_leaves(p, detail::tree_arrays(next), detail::tree_arrays(val)));
    else
      val = std::move(next);
  }
  return val;
}

// jax.lax.fori_loop: for i in [lower, upper): val = body(i, val), with i an int32 scalar.
// Batched or jit-traced bounds run as a while_loop over (i, val).
template <class BF, class T>
T fori_loop(const Array& lower, const Array& upper, BF&& body, const T& init) {
  detail::check_index(lower, "fori_loop");
  detail::check_index(upper, "fori_loop");
  if (!detail::is_batched(lower) && !detail::is_batched(upper) && !detail::is_abstract(lower) &&
      !detail::is_abstract(upper) && !detail::jit_traced(lower) && !detail::jit_traced(upper)) {
    const auto lo = lower.concrete().template item<std::int64_t>();
    const auto hi = upper.concrete().template item<std::int64_t>();
    T val = init;
    for (std::int64_t i = lo; i < hi; ++i) {
      T next = body(Array(static_cast<int>(i)), static_cast<const T&>(val));
      detail::check_tree_avals(init, next,
                               "fori_loop: body_fun output and input must have identical types",
                               "input carry", "output carry", "carry");
      val = std::move(next);
    }
    return val;
  }
  using C = std::pair<Array, T>;
  C out = while_loop([&](const C& c) { return less(c.first, upper); },
                     [&](const C& c) { return C(add(c.first, Array(1)), body(c.first, c.second)); },
                     C(astype(lower, int32), init));
  return out.second;
}

}  // namespace linum
