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

namespace detail {

// Watches every leaf of x on the tape (in order), returning x rebuilt from the tracers.
Array watch_input(TapeTrace& tape, const Array& x, const char* fn);
// Checks the output of grad: a real scalar (JAX's messages).
void check_grad_output(const Array& out, const char* fn);
// Cotangents of the watched inputs; zeros where the output does not depend on an input.
Arrays pullback(const TapeTrace& tape, const Arrays& out_primals, const std::vector<int>& out_vars,
                const Arrays& cts, const Arrays& inputs, const char* fn);
void check_cotangent(const Array& ct, const Array& primal, const char* fn);

template <class T>
T watch_tree(TapeTrace& tape, const T& x, Arrays& inputs, const char* fn) {
  Arrays leaves = tree_arrays(x);
  for (auto& l : leaves) {
    inputs.push_back(l);
    l = watch_input(tape, l, fn);
  }
  return tree_rebuild(x, leaves);
}

// Replaces this level's tracers in t by their primal values (for outputs and aux).
template <class T>
T unwrap_tree(const TapeTrace& tape, const T& t) {
  return tree_apply(t, [&](const Array& a) { return tape.unwrap(a).first; });
}

template <class Tuple, int... I>
auto select_args(const Tuple& t, Argnums<I...>) {
  if constexpr (sizeof...(I) == 1) return std::get<I...>(t);
  else return std::make_tuple(std::get<I>(t)...);
}

// Runs f under a new tape with the argnums' leaves watched. Returns (out, aux, grads).
template <bool Aux, int... I, class F, class... Args>
auto value_and_grad_impl(const F& f, const char* fn, Argnums<I...> an, const Args&... args) {
  static_assert(sizeof...(I) > 0, "argnums must name at least one argument");
  auto tape = std::make_shared<TapeTrace>();
  TraceScope scope(*tape);
  std::tuple<Args...> targs(args...);
  Arrays inputs;
  ((std::get<I>(targs) = watch_tree(*tape, std::get<I>(targs), inputs, fn)), ...);
  auto result = std::apply(f, targs);
  Array out;
  if constexpr (Aux) out = std::get<0>(result);
  else out = result;
  check_grad_output(out, fn);
  auto [primal, var] = tape->unwrap(out);
  auto aux = [&] {
    if constexpr (Aux) return unwrap_tree(*tape, std::get<1>(result));
    else return 0;
  }();
  scope.close();
  Arrays cts = pullback(*tape, {primal}, {var}, {ones_like(primal)}, inputs, fn);
  tape->clear();
  std::tuple<Args...> grads(args...);
  std::size_t k = 0;
  auto fill = [&](auto& g) {
    Arrays leaves = tree_arrays(g);
    for (auto& l : leaves) l = cts[k++];
    g = tree_rebuild(g, leaves);
  };
  (fill(std::get<I>(grads)), ...);
  return std::make_tuple(primal, aux, select_args(grads, an));
}

}  // namespace detail

// value_and_grad(f)(x) -> (f(x), df/dx). With has_aux: ((value, aux), grad), as in JAX.
template <class F, int... I, class... Opts>
auto value_and_grad(F f, Argnums<I...> an, Opts...) {
  constexpr bool aux = (std::is_same_v<Opts, HasAux> || ...);
  return [f = std::move(f), an]<class... A>(const A&... args)
    requires std::invocable<const F&, const A&...>
  {
    auto [v, a, g] = detail::value_and_grad_impl<aux>(f, "value_and_grad", an, args...);
    if constexpr (aux) return std::make_pair(std::make_pair(v, a), g);
    else return std::make_pair(v, g);
  };
}
template <class F>
auto value_and_grad(F f) { return value_and_grad(std::move(f), argnums<0>); }
template <class F>
auto value_and_grad(F f, HasAux) { return value_and_grad(std::move(f), argnums<0>, has_aux); }

// grad(f)(x) -> df/dx for a scalar-valued f. Several argnums give a tuple of gradients;
// with has_aux the result is (grad, aux).
template <class F, int... I, class... Opts>
auto grad(F f, Argnums<I...> an, Opts...) {
  constexpr bool aux = (std::is_same_v<Opts, HasAux> || ...);
  return [f = std::move(f), an]<class... A>(const A&... args)
    requires std::invocable<const F&, const A&...>
  {
    auto [v, a, g] = detail::value_and_grad_impl<aux>(f, "grad", an, args...);
    if constexpr (aux) return std::make_pair(g, a);
    else return g;
  };
}
template <class F>
auto grad(F f) { return grad(std::move(f), argnums<0>); }
template <class F>
auto grad(F f, HasAux) { return grad(std::move(f), argnums<0>, has_aux); }

// vjp(f, primals...) -> (f(primals...), vjp_fn) where vjp_fn(cotangent) returns a tuple with one
// cotangent per primal. The tape lives as long as vjp_fn.
template <class F, class... Args>
auto vjp(const F& f, const Args&... primals) {
  auto tape = std::make_shared<detail::TapeTrace>();
  detail::TraceScope scope(*tape);
  Arrays inputs;
  // Braces: inputs must be watched left to right (tape variable ids follow argument order).
  std::tuple<Args...> targs{detail::watch_tree(*tape, primals, inputs, "vjp")...};
  auto out = std::apply(f, targs);
  Arrays out_leaves = detail::tree_arrays(out), out_primals;
  std::vector<int> out_vars;
  for (const auto& o : out_leaves) {
    auto [p, v] = tape->unwrap(o);
    out_primals.push_back(p);
    out_vars.push_back(v);
  }
  scope.close();
  auto primal_out = detail::tree_rebuild(out, out_primals);
  std::tuple<Args...> like(primals...);
  auto fn = [tape, out_primals, out_vars, inputs, like](const decltype(primal_out)& ct) {
    Arrays cts = detail::tree_arrays(ct);
    if (cts.size() != out_primals.size())
      throw ValueError("vjp: the cotangent has " + std::to_string(cts.size()) +
                       " leaves but the primal output has " + std::to_string(out_primals.size()));
    Arrays g = detail::pullback(*tape, out_primals, out_vars, cts, inputs, "vjp");
    std::size_t k = 0;
    return std::apply(
        [&](const auto&... p) {
          auto one = [&](const auto& x) {
            Arrays leaves = detail::tree_arrays(x);
            for (auto& l : leaves) l = g[k++];
            return detail::tree_rebuild(x, leaves);
          };
          return std::tuple<Args...>{one(p)...};
        },
        like);
  };
  return std::make_pair(primal_out, std::move(fn));
}

namespace detail {
Array jvp_watch(JvpTrace& t, const Array& primal, const Array& tangent);
}

// jvp(f, {primals...}, {tangents...}) -> (f(primals...), directional derivative).
template <class F, class... Args, class... Tans>
auto jvp(const F& f, const std::tuple<Args...>& primals, const std::tuple<Tans...>& tangents) {
  static_assert(sizeof...(Args) == sizeof...(Tans), "jvp: one tangent per primal");
  detail::JvpTrace trace;
  detail::TraceScope scope(trace);
  auto wrap = [&](const auto& p, const auto& t) {
    Arrays ps = detail::tree_arrays(p), ts = detail::tree_arrays(t);
    for (std::size_t i = 0; i < ps.size(); ++i) ps[i] = detail::jvp_watch(trace, ps[i], ts[i]);
    return detail::tree_rebuild(p, ps);
  };
  auto targs = [&]<std::size_t... K>(std::index_sequence<K...>) {
    return std::tuple<Args...>{wrap(std::get<K>(primals), std::get<K>(tangents))...};
  }(std::index_sequence_for<Args...>{});
  auto out = std::apply(f, targs);
  Arrays leaves = detail::tree_arrays(out), ps, ts;
  for (const auto& o : leaves) {
    auto [p, t] = trace.unwrap(o);
    ps.push_back(p);
    ts.push_back(t);
  }
  return std::make_pair(detail::tree_rebuild(out, ps), detail::tree_rebuild(out, ts));
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
  static AxisSpec seq(std::vector<AxisSpec> items);
  static AxisSpec dict(std::vector<std::pair<std::string, AxisSpec>> items);

  Kind kind() const { return kind_; }
  std::optional<int> axis() const { return axis_; }  // a leaf's axis (nullopt: None)
  const std::vector<AxisSpec>& items() const { return items_; }
  const std::vector<std::string>& keys() const { return keys_; }  // a dict's keys, sorted
  std::string to_string() const;  // "(0, None, {'w': 1})", as JAX prints in_axes

  // For code written against the first vmap API (in_axes a std::vector<int>, out_axes an int):
  // assignment from a vector of ints, empty() (no per-argument list), and conversions back.
  template <class V>
    requires std::same_as<V, std::vector<int>>
  AxisSpec& operator=(const V& per_arg) {
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
};

// vmap's options, in JAX's order: vmap(f, {in_axes, out_axes, axis_name, axis_size}).
struct VmapOptions {
  AxisSpec in_axes = 0;
  AxisSpec out_axes = 0;
  std::string axis_name = {};            // names the axis for psum/pmean/... and axis_index
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
  return [f = std::move(f), opts = std::move(opts)]<class... A>(const A&... args)
    requires std::invocable<const F&, const A&...>
  {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    Args targs(args...);
    auto [leaves, def] = pytree::tree_flatten<Array>(targs);
    auto axes = detail::vmap_leaf_axes(opts.in_axes, def, true);
    const std::int64_t n = detail::vmap_axis_size(
        leaves, axes, opts.axis_size, [&](std::size_t i) { return detail::arg_leaf_name(targs, i); });
    detail::BatchTrace trace(n, opts.axis_name);
    detail::TraceScope scope(trace);
    for (std::size_t i = 0; i < leaves.size(); ++i)
      if (axes[i]) leaves[i] = trace.wrap(leaves[i], *axes[i]);
    auto out = std::apply(f, detail::tree_rebuild(targs, leaves));
    return detail::vmap_outputs(trace, out, opts.out_axes);
  };
}

// ---- Jacobians --------------------------------------------------------------------------------

// jacrev(f)(x): the Jacobian of an Array -> Array function by reverse mode, shape out + in;
// one vjp batched over the output basis with vmap.
template <class F>
auto jacrev(F f) {
  return [f = std::move(f)](const Array& x) {
    auto [y, fn] = vjp(f, x);
    const std::int64_t m = y.size();
    Array basis = reshape(eye(m, m, 0, y.dtype()), [&] {
      Shape s{m};
      s.insert(s.end(), y.shape().begin(), y.shape().end());
      return s;
    }());
    Array rows = vmap([&](const Array& ct) { return std::get<0>(fn(ct)); })(basis);
    Shape s = y.shape();
    s.insert(s.end(), x.shape().begin(), x.shape().end());
    return reshape(rows, s);
  };
}

// jacfwd(f)(x): the Jacobian by forward mode: one jvp batched over the input basis.
template <class F>
auto jacfwd(F f) {
  return [f = std::move(f)](const Array& x) {
    const std::int64_t n = x.size();
    Shape bs{n};
    bs.insert(bs.end(), x.shape().begin(), x.shape().end());
    Array basis = reshape(eye(n, n, 0, x.dtype()), bs);
    Array cols = vmap([&](const Array& t) { return jvp(f, std::tuple{x}, std::tuple{t}).second; },
                      {{0}, -1})(basis);  // shape out + (n,)
    Shape s = cols.shape();
    s.pop_back();
    s.insert(s.end(), x.shape().begin(), x.shape().end());
    return reshape(cols, s);
  };
}

// hessian(f)(x) = jacfwd(jacrev(f))(x), as in JAX.
template <class F>
auto hessian(F f) {
  return jacfwd(jacrev(std::move(f)));
}

}  // namespace linum
