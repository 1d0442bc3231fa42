// JAX's differentiation transforms: grad, value_and_grad, vjp, jvp, jacfwd, jacrev, hessian,
// and vmap. Each wraps its arguments' leaves as tracers of a new level, calls f, and unwraps.
#pragma once

#include <concepts>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/trace.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum {

// Which positional arguments to differentiate: grad(f, argnums<0, 2>).
template <int... I>
struct Argnums {};
template <int... I>
inline constexpr Argnums<I...> argnums{};
// f returns (output, aux) and aux is passed through: grad(f, has_aux).
struct HasAux {};
inline constexpr HasAux has_aux{};
// Integer and boolean leaves of the differentiated arguments are accepted and get zero
// cotangents (JAX's float0; linum has no float0 dtype, so the zeros keep the leaf's dtype).
struct AllowInt {};
inline constexpr AllowInt allow_int{};

namespace detail {

template <class T>
inline constexpr bool is_grad_option_v = std::is_same_v<T, HasAux> || std::is_same_v<T, AllowInt>;
template <class T, class... Opts>
inline constexpr bool has_option_v = (std::is_same_v<Opts, T> || ...);

// Holds a transform's function so that a const transformed function can call a mutable one
// (std::invocable<F&>, as a Python function may mutate its closure).
template <class F>
struct Held {
  mutable F f;
};

// The leaves of the differentiated arguments and, for each, its tape variable (-1: an integer
// leaf that is not watched and gets a zero cotangent).
struct Watched {
  Arrays leaves;
  std::vector<int> vars;
  int n_vars = 0;
};

// A clear error for an empty Array() where a value is needed (defined in ops/kernel_util.cpp).
void check_valid(const Array& x, const char* op);
// Watches x on the tape (integer leaves only when allow_int), recording it in w.
Array watch_input(TapeTrace& tape, const Array& x, Watched& w, bool allow_int, const char* fn);
// Checks the output of grad: a real scalar (JAX's messages).
void check_grad_output(const Array& out, const char* fn);
// Cotangents of every watched leaf; zeros where the output does not depend on a leaf. `release`
// frees the residuals during the sweep (see TapeTrace::backward): for a tape swept once.
Arrays pullback(TapeTrace& tape, const Arrays& out_primals, const std::vector<int>& out_vars,
                Arrays cts, const Watched& w, const char* fn, bool release = false);
void check_cotangent(const Array& ct, const Array& primal, const char* fn);
// "vjp: the cotangent has tree structure ... but the primal output has ...".
[[noreturn]] void throw_structure_mismatch(const char* fn, const char* what_a,
                                           const pytree::TreeDef& a, const char* what_b,
                                           const pytree::TreeDef& b);

template <class T>
T watch_tree(TapeTrace& tape, const T& x, Watched& w, bool allow_int, const char* fn) {
  Arrays leaves = tree_arrays(x);
  for (auto& l : leaves) l = watch_input(tape, l, w, allow_int, fn);
  return tree_rebuild(x, leaves);
}

// Replaces this level's tracers in t by their primal values (for outputs and aux).
template <class T>
T unwrap_tree(const TapeTrace& tape, const T& t) {
  return tree_apply(t, [&](const Array& a) { return tape.unwrap(a).first; });
}

// The aux output of f's (out, aux) result, unwrapped from the tape; 0 without has_aux.
template <bool Aux, class R>
auto unwrap_aux(const TapeTrace& tape, const R& result) {
  if constexpr (Aux)
    return unwrap_tree(tape, std::get<1>(result));
  else
    return 0;
}

template <class Tuple, int... I>
auto select_args(const Tuple& t, Argnums<I...>) {
  if constexpr (sizeof...(I) == 1)
    return std::get<I...>(t);
  else
    return std::make_tuple(std::get<I>(t)...);
}

// The output and the aux of f's result (aux: 0 without has_aux).
template <bool Aux, class R>
decltype(auto) main_out(R& r) {
  if constexpr (Aux)
    return (std::get<0>(r));
  else
    return (r);
}

// Gives each argument's leaves values taken in order from `g`, starting at k.
template <class T>
T fill_leaves(const T& like, const Arrays& g, std::size_t& k) {
  Arrays leaves = tree_arrays(like);
  for (auto& l : leaves) l = g.at(k++);
  return tree_rebuild(like, leaves);
}

// Runs f under a new tape with the argnums' leaves watched. Returns (out, aux, grads).
template <bool Aux, bool Int, int... I, class F, class... Args>
auto value_and_grad_impl(F& f, const char* fn, Argnums<I...> an, const Args&... args) {
  static_assert(sizeof...(I) > 0, "argnums must name at least one argument");
  static_assert(((I >= 0 && I < static_cast<int>(sizeof...(Args))) && ...),
                "argnums names a positional argument that the function is not called with");
  auto tape = std::make_shared<TapeTrace>();
  TraceScope scope(*tape);
  std::tuple<Args...> targs(args...);
  Watched w;
  ((std::get<I>(targs) = watch_tree(*tape, std::get<I>(targs), w, Int, fn)), ...);
  auto result = std::apply(f, targs);
  const Array& out = main_out<Aux>(result);
  check_grad_output(out, fn);
  auto [primal, var] = tape->unwrap(out);
  auto aux = unwrap_aux<Aux>(*tape, result);
  scope.close();
  Arrays cts = pullback(*tape, {primal}, {var}, {ones_like(primal)}, w, fn, true);
  tape->clear();
  std::tuple<Args...> grads(args...);
  std::size_t k = 0;
  ((std::get<I>(grads) = fill_leaves(std::get<I>(grads), cts, k)), ...);
  return std::make_tuple(primal, aux, select_args(grads, an));
}

// The closure of value_and_grad (WithValue) and of grad: value_and_grad_impl under the name
// `fn`, its result packed as JAX packs each.
template <bool WithValue, class F, int... I, class... Opts>
auto grad_closure(F f, Argnums<I...> an, const char* fn, Opts...) {
  constexpr bool aux = has_option_v<HasAux, Opts...>;
  return [ h = Held<F>{std::move(f)}, an,
           fn ]<class... A>(const A&... args) requires std::invocable<F&, const A&...> {
    auto [v, a, g] =
        value_and_grad_impl<aux, has_option_v<AllowInt, Opts...>>(h.f, fn, an, args...);
    if constexpr (WithValue && aux)
      return std::make_pair(std::make_pair(v, a), g);
    else if constexpr (WithValue)
      return std::make_pair(v, g);
    else if constexpr (aux)
      return std::make_pair(g, a);
    else
      return g;
  };
}

}  // namespace detail

// value_and_grad(f)(x) -> (f(x), df/dx). With has_aux: ((value, aux), grad), as in JAX.
// Options: has_aux, allow_int.
template <class F, int... I, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto value_and_grad(F f, Argnums<I...> an,
                                                                  Opts... opts) {
  return detail::grad_closure<true>(std::move(f), an, "value_and_grad", opts...);
}
template <class F, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto value_and_grad(F f, Opts... opts) {
  return value_and_grad(std::move(f), argnums<0>, opts...);
}

// grad(f)(x) -> df/dx for a scalar-valued f. Several argnums give a tuple of gradients;
// with has_aux the result is (grad, aux). Options: has_aux, allow_int.
template <class F, int... I, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto grad(F f, Argnums<I...> an, Opts... opts) {
  return detail::grad_closure<false>(std::move(f), an, "grad", opts...);
}
template <class F, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto grad(F f, Opts... opts) {
  return grad(std::move(f), argnums<0>, opts...);
}

namespace detail {

// vjp's work: f runs once under a new tape; every leaf of every primal is watched. Integer
// leaves get zero cotangents with allow_int, else they are an error naming `fn` (jacrev).
template <bool Aux, class F, class... Args>
auto vjp_impl(F& f, const char* fn, bool allow_int, const Args&... primals) {
  auto tape = std::make_shared<TapeTrace>();
  TraceScope scope(*tape);
  Watched w;
  // Braces: inputs must be watched left to right (tape variable ids follow argument order).
  std::tuple<Args...> targs{watch_tree(*tape, primals, w, allow_int, fn)...};
  auto result = std::apply(f, targs);
  const auto& out = main_out<Aux>(result);
  Arrays out_leaves = tree_arrays(out), out_primals;
  std::vector<int> out_vars;
  for (const auto& o : out_leaves) {
    check_valid(o, fn);
    auto [p, v] = tape->unwrap(o);
    out_primals.push_back(p);
    out_vars.push_back(v);
  }
  auto aux = unwrap_aux<Aux>(*tape, result);
  scope.close();
  using Out = std::decay_t<decltype(out)>;
  Out primal_out = tree_rebuild(out, out_primals);
  auto pull = [tape, out_primals, out_vars, w = std::move(w),
               like = std::tuple<Args...>(primals...), out_def = pytree::tree_structure(primal_out),
               fn](const Out& ct) {
    if constexpr (!std::is_same_v<Out, Array>) {
      auto def = pytree::tree_structure(ct);
      if (!(def == out_def))
        throw_structure_mismatch(fn, "the cotangent", def, "the primal output", out_def);
    }
    Arrays g = pullback(*tape, out_primals, out_vars, tree_arrays(ct), w, fn);
    std::size_t k = 0;
    return std::apply(
        [&](const auto&... p) { return std::tuple<Args...>{fill_leaves(p, g, k)...}; }, like);
  };
  if constexpr (Aux)
    return std::make_tuple(primal_out, std::move(pull), aux);
  else
    return std::make_pair(primal_out, std::move(pull));
}

template <class... T>
struct last_type {
  using type = void;
};
template <class T>
struct last_type<T> {
  using type = T;
};
template <class T, class... Ts>
requires(sizeof...(Ts) > 0) struct last_type<T, Ts...> : last_type<Ts...> {
};

}  // namespace detail

// vjp(f, primals...) -> (f(primals...), vjp_fn) where vjp_fn(cotangent) returns a tuple with one
// cotangent per primal (zeros of an integer primal's dtype for integer leaves, JAX's float0).
// vjp(f, primals..., has_aux) -> (f's output, vjp_fn, aux) for f returning (output, aux).
// The tape lives as long as vjp_fn.
template <class F, class... Args>
auto vjp(F&& f, const Args&... primals) {
  if constexpr (std::is_same_v<typename detail::last_type<Args...>::type, HasAux>) {
    auto all = std::forward_as_tuple(primals...);
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      return detail::vjp_impl<true>(f, "vjp", true, std::get<K>(all)...);
    }
    (std::make_index_sequence<sizeof...(Args) - 1>{});
  } else {
    return detail::vjp_impl<false>(f, "vjp", true, primals...);
  }
}

namespace detail {
Array jvp_watch(JvpTrace& t, const Array& primal, const Array& tangent);

template <bool Aux, class F, class... Args, class... Tans>
auto jvp_impl(F& f, const std::tuple<Args...>& primals, const std::tuple<Tans...>& tangents) {
  static_assert(sizeof...(Args) == sizeof...(Tans), "jvp: one tangent per primal");
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    auto check = [](const auto& p, const auto& t) {
      auto pd = pytree::tree_structure(p), td = pytree::tree_structure(t);
      if (!(pd == td)) throw_structure_mismatch("jvp", "primals", pd, "tangents", td);
    };
    (check(std::get<K>(primals), std::get<K>(tangents)), ...);
  }
  (std::index_sequence_for<Args...>{});
  JvpTrace trace;
  TraceScope scope(trace);
  auto wrap = [&](const auto& p, const auto& t) {
    Arrays ps = tree_arrays(p), ts = tree_arrays(t);
    for (std::size_t i = 0; i < ps.size(); ++i) ps[i] = jvp_watch(trace, ps[i], ts[i]);
    return tree_rebuild(p, ps);
  };
  auto targs = [&]<std::size_t... K>(std::index_sequence<K...>) {
    return std::tuple<Args...>{wrap(std::get<K>(primals), std::get<K>(tangents))...};
  }
  (std::index_sequence_for<Args...>{});
  auto result = std::apply(f, targs);
  const auto& out = main_out<Aux>(result);
  Arrays leaves = tree_arrays(out), ps, ts;
  for (const auto& o : leaves) {
    check_valid(o, "jvp");
    auto [p, t] = trace.unwrap(o);
    ps.push_back(p);
    ts.push_back(t);
  }
  auto po = tree_rebuild(out, ps), to = tree_rebuild(out, ts);
  if constexpr (Aux)
    return std::make_tuple(po, to, tree_apply(std::get<1>(result), [&](const Array& a) {
                             return trace.unwrap(a).first;
                           }));
  else
    return std::make_pair(po, to);
}
}  // namespace detail

// jvp(f, {primals...}, {tangents...}) -> (f(primals...), directional derivative); each tangent
// has its primal's tree structure, shapes and dtypes. With has_aux, f returns (output, aux)
// and the result is (output, tangent, aux).
template <class F, class... Args, class... Tans>
auto jvp(F&& f, const std::tuple<Args...>& primals, const std::tuple<Tans...>& tangents) {
  return detail::jvp_impl<false>(f, primals, tangents);
}
template <class F, class... Args, class... Tans>
auto jvp(F&& f, const std::tuple<Args...>& primals, const std::tuple<Tans...>& tangents, HasAux) {
  return detail::jvp_impl<true>(f, primals, tangents);
}

// ---- vmap ---------------------------------------------------------------------------------------

// in_axes / out_axes of vmap: a pytree prefix whose leaves are an axis (negative counts from the
// end) or None (not batched). An int or None applies to a whole subtree; {0, kNone} is a tuple
// (for in_axes: one entry per positional argument), AxisSpec::dict({{"w", 0}}) a dict. C++'s
// brace rules make {spec} with a single AxisSpec element that spec itself: a tuple of one
// non-int entry is written AxisSpec::seq({spec}).
class AxisSpec {
 public:
  static constexpr int kNone = std::numeric_limits<int>::min();
  enum class Kind { Leaf, Seq, Dict };

  AxisSpec() : axis_(0) {}
  AxisSpec(int axis) {  // NOLINT(google-explicit-constructor): in_axes=0 reads like JAX
    if (axis != kNone) axis_ = axis;
  }
  AxisSpec(std::nullopt_t) {}  // NOLINT(google-explicit-constructor): None
  AxisSpec(std::initializer_list<AxisSpec> items) : kind_(Kind::Seq), items_(items) {}
  // From a dynamic tree of axes built at run time (per-key axes of a params dict): a leaf is an
  // axis (kNone: None), None is None, a dict or FrozenDict a dict, a tuple or list a tuple.
  AxisSpec(const pytree::BasicTree<int>& axes);  // NOLINT(google-explicit-constructor)
  // Per-key axes of a tuple-keyed dict (flatten_dict of an axes tree, for flatten_dict's params).
  // NOLINTNEXTLINE(google-explicit-constructor)
  AxisSpec(const pytree::Dict<pytree::Path, pytree::BasicTree<int>>& axes);
  static AxisSpec seq(std::vector<AxisSpec> items);
  static AxisSpec dict(std::vector<std::pair<std::string, AxisSpec>> items);
  // A dict with tuple keys, {('a', 'b'): 0, ...}: the prefix of a tuple-keyed dict (what
  // traverse_util.flatten_dict returns), as a JAX dict spec with tuple keys.
  static AxisSpec tuple_dict(std::vector<std::pair<pytree::Path, AxisSpec>> items);

  Kind kind() const { return kind_; }
  std::optional<int> axis() const { return axis_; }  // a leaf's axis (nullopt: None)
  const std::vector<AxisSpec>& items() const { return items_; }
  // A dict's keys, sorted; a tuple-keyed dict's as TreeDef node data (pytree's encode_tuple_key).
  const std::vector<std::string>& keys() const { return keys_; }
  bool has_tuple_keys() const { return tuple_keys_; }
  std::string to_string() const;  // "(0, None, {'w': 1})", as JAX prints in_axes

  // For code written against the first vmap API (in_axes a std::vector<int>, out_axes an int):
  // assignment from a vector of ints, empty() (no per-argument list), and conversions back.
  template <class V>
  requires std::same_as<V, std::vector<int>> AxisSpec& operator=(const V& per_arg) {
    std::vector<AxisSpec> items(per_arg.begin(), per_arg.end());
    return *this = seq(std::move(items));
  }
  bool empty() const { return kind_ == Kind::Leaf; }
  operator int() const;               // NOLINT(google-explicit-constructor): a leaf; kNone for None
  operator std::vector<int>() const;  // NOLINT(google-explicit-constructor): a tuple of leaves

 private:
  Kind kind_ = Kind::Leaf;
  std::optional<int> axis_;
  std::vector<AxisSpec> items_;
  std::vector<std::string> keys_;
  bool tuple_keys_ = false;
};

// vmap's options, in JAX's order: vmap(f, {in_axes, out_axes, axis_name, axis_size}).
struct VmapOptions {
  AxisSpec in_axes = 0;
  AxisSpec out_axes = 0;
  std::string axis_name = {};                  // names the axis for psum/pmean/... and axis_index
  std::optional<std::int64_t> axis_size = {};  // required when no argument is batched
  static constexpr int kNone = AxisSpec::kNone;
};

namespace detail {
// Per-leaf axes of a value of structure `def` from a prefix spec (nullopt: not batched).
// For in_axes, `def` is the tuple of the positional arguments.
std::vector<std::optional<int>> vmap_leaf_axes(const AxisSpec& spec, const pytree::TreeDef& def,
                                               bool in_axes);
// The mapped size; errors name each argument leaf via `leaf_name`.
std::int64_t vmap_axis_size(const Arrays& leaves, std::vector<std::optional<int>>& axes,
                            std::optional<std::int64_t> axis_size,
                            const std::function<std::string(std::size_t)>& leaf_name);
Array vmap_out(const BatchTrace& t, const Array& y, std::optional<int> out_axis);

// "args[1]['w']": how vmap's errors name the i-th leaf of the positional arguments.
template <class Tuple>
std::string arg_leaf_name(const Tuple& args, std::size_t i) {
  auto lp = pytree::tree_leaves_with_path<Array>(args);
  return "args" + pytree::keystr(lp.at(i).first);
}

template <class T>
T vmap_outputs(const BatchTrace& trace, const T& out, const AxisSpec& out_axes) {
  auto [leaves, def] = pytree::tree_flatten<Array>(out);
  auto axes = vmap_leaf_axes(out_axes, def, false);
  for (std::size_t i = 0; i < leaves.size(); ++i) leaves[i] = vmap_out(trace, leaves[i], axes[i]);
  return tree_rebuild(out, leaves);
}
}  // namespace detail

// vmap(f, opts)(args...): f mapped over the axes in_axes of its (pytree) arguments; results are
// stacked along out_axes. Batching rules turn each op into one vectorized op.
template <class F>
auto vmap(F f, VmapOptions opts = {}) {
  return [ h = detail::Held<F>{std::move(f)}, opts = std::move(opts) ]<class... A>(
      const A&... args) requires std::invocable<F&, const A&...> {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    Args targs(args...);
    auto [leaves, def] = pytree::tree_flatten<Array>(targs);
    auto axes = detail::vmap_leaf_axes(opts.in_axes, def, true);
    const std::int64_t n = detail::vmap_axis_size(leaves, axes, opts.axis_size, [&](std::size_t i) {
      return detail::arg_leaf_name(targs, i);
    });
    detail::BatchTrace trace(n, opts.axis_name);
    detail::TraceScope scope(trace);
    for (std::size_t i = 0; i < leaves.size(); ++i)
      if (axes[i]) leaves[i] = trace.wrap(leaves[i], *axes[i]);
    auto out = std::apply(h.f, detail::tree_rebuild(targs, leaves));
    return detail::vmap_outputs(trace, out, opts.out_axes);
  };
}

}  // namespace linum

#include <linum/autodiff/jacobian.hpp>
