// User-defined differentiation rules and rematerialisation: custom_vjp (jax.custom_vjp),
// checkpoint / remat (jax.checkpoint) and remat_scan (flax.linen.remat_scan's √N segments).
// Each call becomes one higher-order primitive, so grad keeps a single tape node for it, vmap
// batches it as a whole, and nested transforms compose.
#pragma once

#include <array>
#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/eval_shape.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum {

// Which positional arguments of a custom_vjp function are not differentiated: they may be any
// C++ value (a double, a callable) and are passed first to bwd, as in JAX.
template <int... I>
struct NondiffArgnums {};
template <int... I>
inline constexpr NondiffArgnums<I...> nondiff_argnums{};

namespace detail {

// Whether a grad or jvp transform is active on this thread (else custom rules are not needed).
bool differentiating();
// The lowest transform level in the tracer chains of `xs` (INT_MAX when none is a tracer).
int lowest_level(const Arrays& xs);

// Type-erased pieces of one custom_vjp call, over flat leaves of the differentiable arguments.
struct CustomVjpState {
  // diff leaves -> f's output leaves followed by the residual leaves; sets n_out.
  std::function<Arrays(const Arrays&, std::size_t& n_out)> fwd;
  // (residual leaves, output cotangent leaves) -> one cotangent per diff leaf (never empty).
  std::function<Arrays(const Arrays&, const Arrays&)> bwd;
  std::size_t n_out = 0;
  int min_level = 0;  // see lowest_level: closures must not hold tracers at or above it
};
Arrays custom_vjp_call(const std::shared_ptr<CustomVjpState>& state, const Arrays& inputs);
// JAX's TypeError when fwd's primal output differs from f's output in structure (the two
// structures, printed) or in shapes/dtypes (the two lists of leaves).
void check_fwd_primal(const Arrays& fwd_out, const Arrays& f_out, const std::string& fwd_tree,
                      const std::string& f_tree);
// JAX's TypeError when bwd's cotangent for a differentiable argument has another structure.
[[noreturn]] void throw_bwd_structure(std::size_t arg, const std::string& ct_tree,
                                      const std::string& arg_tree);

// PyTreeDef(...) of t ("*" for a bare Array).
template <class T>
std::string tree_str(const T& t) {
  if constexpr (std::is_same_v<T, Array>)
    return "PyTreeDef(*)";
  else
    return pytree::tree_structure(t).to_string();
}

// One checkpoint call over flat leaves.
struct RematState {
  std::function<Arrays(const Arrays&)> run;
  int min_level = 0;
};
Arrays remat_call(const std::shared_ptr<RematState>& state, const Arrays& inputs);

// Positions of the (non)differentiable arguments among N, in increasing order.
template <bool Diff, std::size_t N, int... ND>
struct ArgPositions {
  static constexpr bool is_nd(std::size_t i) {
    (void)i;  // unused when ND is empty
    return ((static_cast<int>(i) == ND) || ...);
  }
  static constexpr std::size_t count = [] {
    std::size_t c = 0;
    for (std::size_t i = 0; i < N; ++i) c += is_nd(i) != Diff;
    return c;
  }();
  static constexpr std::array<std::size_t, count> value = [] {
    std::array<std::size_t, count> idx{};
    std::size_t k = 0;
    for (std::size_t i = 0; i < N; ++i)
      if (is_nd(i) != Diff) idx[k++] = i;
    return idx;
  }();
  template <class Seq>
  struct seq_of;
  template <std::size_t... K>
  struct seq_of<std::index_sequence<K...>> {
    using type = std::index_sequence<value[K]...>;
  };
  using seq = typename seq_of<std::make_index_sequence<count>>::type;
};

template <class Tuple, std::size_t... K>
auto pick(const Tuple& t, std::index_sequence<K...>) {
  return std::make_tuple(std::get<K>(t)...);
}
// The cotangents bwd returned, as a tuple with one entry per differentiable argument.
template <std::size_t NDiff, class R>
auto as_ct_tuple(R&& r) {
  using D = std::decay_t<R>;
  if constexpr (is_tuple_like<D>::value && std::tuple_size_v<D> == NDiff) {
    return D(std::forward<R>(r));
  } else {
    static_assert(NDiff == 1,
                  "custom_vjp: bwd must return a std::tuple with one cotangent per "
                  "differentiable argument");
    return std::tuple<D>(std::forward<R>(r));
  }
}

// Leaves of the cotangent c for differentiable argument k (structure `arg_tree`, n leaves): an
// empty Array() stands for zeros of the whole argument (JAX's None). Any other structure, even
// with as many leaves (other dict keys), is an error.
template <class C>
Arrays ct_leaves(const C& c, std::size_t k, std::size_t n, const std::string& arg_tree) {
  Arrays l = tree_arrays(c);
  if (l.size() == 1 && !l[0].valid()) {
    if constexpr (std::is_same_v<C, Array>) return Arrays(n);
  }
  const std::string ct_tree = tree_str(c);
  if (l.size() != n || ct_tree != arg_tree) throw_bwd_structure(k, ct_tree, arg_tree);
  return l;
}

template <int... ND, class F, class Fwd, class Bwd, class Args>
auto custom_vjp_apply(const F& f, const Fwd& fwd, const Bwd& bwd, const Args& targs) {
  constexpr std::size_t N = std::tuple_size_v<Args>;
  using DPos = ArgPositions<true, N, ND...>;
  using NPos = ArgPositions<false, N, ND...>;
  static_assert(DPos::count > 0, "custom_vjp: every argument is in nondiff_argnums");
  using DSeq = typename DPos::seq;
  using NSeq = typename NPos::seq;
  using DiffArgs = decltype(pick(targs, DSeq{}));
  using FwdR = std::decay_t<decltype(std::apply(fwd, targs))>;
  using Out = std::decay_t<std::tuple_element_t<0, FwdR>>;
  using Res = std::decay_t<std::tuple_element_t<1, FwdR>>;
  // std::nullopt residuals (none at all) are kept as an empty tuple.
  constexpr bool no_res = std::is_same_v<Res, std::nullopt_t>;
  using ResLike = std::conditional_t<no_res, std::tuple<>, Res>;

  DiffArgs diff_args = pick(targs, DSeq{});
  Arrays in = tree_arrays(diff_args);
  struct Protos {
    std::optional<Out> out;
    std::optional<ResLike> res;
    std::vector<std::size_t> arg_leaves;  // leaves per differentiable argument
    std::vector<std::string> arg_trees;   // their structures
    std::vector<std::pair<Shape, DType>> in_avals;
  };
  auto protos = std::make_shared<Protos>();
  std::apply(
      [&](const auto&... d) {
        (protos->arg_leaves.push_back(tree_arrays(d).size()), ...);
        (protos->arg_trees.push_back(tree_str(d)), ...);
      },
      diff_args);
  for (const auto& l : in) protos->in_avals.emplace_back(l.shape(), l.dtype());

  // fwd and bwd may run long after this call returned (in a backward pass), so they own copies
  // of what they need; the differentiable arguments are kept as empty structures only.
  auto blank = [](const auto& t) { return tree_apply(t, [](const Array&) { return Array(); }); };
  DiffArgs diff_like =
      std::apply([&](const auto&... d) { return std::make_tuple(blank(d)...); }, diff_args);
  // The arguments with the differentiable ones replaced by d.
  auto with_diff = [](Args a, const DiffArgs& d) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((std::get<DPos::value[K]>(a) = std::get<K>(d)), ...);
    }
    (std::make_index_sequence<DPos::count>{});
    return a;
  };
  const Args base = with_diff(targs, diff_like);

  auto state = std::make_shared<CustomVjpState>();
  state->fwd = [f, fwd, base, diff_like, protos, blank, with_diff](const Arrays& leaves,
                                                                   std::size_t& n_out) {
    FwdR r = std::apply(fwd, with_diff(base, tree_rebuild(diff_like, leaves)));
    Arrays o = tree_arrays(std::get<0>(r));
    Arrays rs;
    if constexpr (!no_res) rs = tree_arrays(std::get<1>(r));
    if (!protos->out) {
      // As JAX, fwd's primal output must have the type of f's output (f is traced abstractly).
      AbstractTrace at;
      TraceScope scope(at);
      const Out fo =
          std::apply(f, with_diff(base, tree_rebuild(diff_like, abstract_leaves(at, leaves))));
      check_fwd_primal(o, tree_arrays(fo), tree_str(std::get<0>(r)), tree_str(fo));
      protos->out.emplace(blank(std::get<0>(r)));
      if constexpr (no_res)
        protos->res.emplace();
      else
        protos->res.emplace(blank(std::get<1>(r)));
    }
    n_out = o.size();
    o.insert(o.end(), rs.begin(), rs.end());
    return o;
  };
  state->bwd = [bwd, nondiff = pick(targs, NSeq{}), protos](const Arrays& res_leaves,
                                                            const Arrays& cts) {
    const Res res = [&]() -> Res {
      if constexpr (no_res)
        return std::nullopt;
      else
        return tree_rebuild(*protos->res, res_leaves);
    }();
    Out ct = tree_rebuild(*protos->out, cts);
    auto r = as_ct_tuple<DPos::count>(
        std::apply([&](const auto&... n) { return bwd(n..., res, ct); }, nondiff));
    Arrays flat;
    std::size_t k = 0;
    std::apply(
        [&](const auto&... c) {
          auto one = [&](const auto& e) {
            Arrays l = ct_leaves(e, k, protos->arg_leaves[k], protos->arg_trees[k]);
            ++k;
            flat.insert(flat.end(), l.begin(), l.end());
          };
          (one(c), ...);
        },
        r);
    for (std::size_t i = 0; i < flat.size(); ++i)
      if (!flat[i].valid()) flat[i] = zeros(protos->in_avals[i].first, protos->in_avals[i].second);
    return flat;
  };
  Arrays outs = custom_vjp_call(state, in);
  outs.resize(state->n_out);
  return tree_rebuild(*protos->out, outs);
}

}  // namespace detail

// jax.custom_vjp: custom_vjp(f, fwd, bwd)(args...) computes f(args...); under grad/vjp its
// derivative is given by fwd(args...) -> (out, residuals) and bwd(residuals, out_cotangent) ->
// std::tuple of cotangents, one per differentiable argument (an empty Array() means zero).
// With nondiff_argnums<I...>, those arguments are not differentiated and bwd receives them
// first: bwd(nondiff_args..., residuals, ct). Residuals are any pytree of Arrays. Outside
// grad/vjp f itself runs; jvp of a custom_vjp function is an error, as in JAX.
template <class F, class Fwd, class Bwd, int... ND>
auto custom_vjp(F f, Fwd fwd, Bwd bwd, NondiffArgnums<ND...> = {}) {
  return [ f = std::move(f), fwd = std::move(fwd), bwd = std::move(bwd) ]<class... A>(
      const A&... args) requires std::invocable<const F&, const A&...> {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    using Out = std::decay_t<std::invoke_result_t<const F&, const decltype(args)&...>>;
    Args targs(args...);
    if (!detail::differentiating()) return Out(std::apply(f, targs));
    using FwdR = std::decay_t<decltype(std::apply(fwd, targs))>;
    static_assert(std::is_same_v<std::decay_t<std::tuple_element_t<0, FwdR>>, Out>,
                  "custom_vjp: fwd must return (output of f, residuals)");
    return Out(detail::custom_vjp_apply<ND...>(f, fwd, bwd, targs));
  };
}

namespace detail {
// checkpoint's arguments: the static ones (ints, bools, enums, strings) as they are, the pytrees
// of Arrays with empty leaves (the recomputation owns no arrays of the call).
template <class A>
A remat_blank(const A& a) {
  if constexpr (always_static_v<A>)
    return a;
  else
    return tree_apply(a, [](const Array&) { return Array(); });
}
template <class... A>
std::tuple<A...> remat_blank_args(const std::tuple<A...>& args) {
  return std::apply([](const A&... a) { return std::tuple<A...>{remat_blank(a)...}; }, args);
}
template <class... A>
Arrays remat_leaves(const std::tuple<A...>& args) {
  Arrays out;
  std::apply(
      [&](const A&... a) {
        (
            [&] {
              if constexpr (!always_static_v<A>) {
                Arrays l = tree_arrays(a);
                out.insert(out.end(), l.begin(), l.end());
              }
            }(),
            ...);
      },
      args);
  return out;
}
template <class... A>
std::tuple<A...> remat_rebuild(const std::tuple<A...>& like, const Arrays& leaves) {
  std::size_t k = 0;
  auto one = [&]<class T>(const T& a) -> T {
    if constexpr (always_static_v<T>) {
      return a;
    } else {
      const std::size_t n = tree_arrays(a).size();
      Arrays part(leaves.begin() + static_cast<std::ptrdiff_t>(k),
                  leaves.begin() + static_cast<std::ptrdiff_t>(k + n));
      k += n;
      return tree_rebuild(a, part);
    }
  };
  // Braced initialization: the arguments are rebuilt left to right, in leaf order.
  return std::apply([&](const A&... a) { return std::tuple<A...>{one(a)...}; }, like);
}
}  // namespace detail

// jax.checkpoint (alias remat): checkpoint(f)(args...) computes f(args...), but grad keeps only
// the arguments and outputs of the call and runs f again in the backward pass, so f's
// intermediates are not held between the forward and backward passes. Arguments are pytrees
// of Arrays, or static values (ints, bools, enums, strings: jax.checkpoint's static_argnums)
// passed through as they are; arrays that are differentiated must be arguments (not captured).
template <class F>
auto checkpoint(F f) {
  return [f = std::move(f)]<class... A>(
      const A&... args) requires std::invocable<const F&, const A&...> {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    using Out = std::decay_t<std::invoke_result_t<const F&, const decltype(args)&...>>;
    Args targs(args...);
    if (!detail::differentiating()) return Out(std::apply(f, targs));
    // The recomputation may run after this call returned: it owns f and empty structures only.
    auto out_like = std::make_shared<std::optional<Out>>();
    auto state = std::make_shared<detail::RematState>();
    state->run = [f, like = detail::remat_blank_args(targs), out_like](const Arrays& leaves) {
      Out o = std::apply(f, detail::remat_rebuild(like, leaves));
      if (!*out_like) out_like->emplace(detail::remat_blank(o));
      return detail::tree_arrays(o);
    };
    Arrays outs = detail::remat_call(state, detail::remat_leaves(targs));
    return detail::tree_rebuild(**out_like, outs);
  };
}
template <class F>
auto remat(F f) {
  return checkpoint(std::move(f));
}

// flax.linen.remat_scan for functions: carry = f(carry, x) over the leading axis of xs, run as
// nested scans of the given lengths (their product is the length of xs) whose bodies are
// checkpointed. lengths = {√N, √N} keeps O(√N) carries instead of N steps of intermediates.
template <class F, class Carry, class Xs>
Carry remat_scan(F f, const Carry& init, const Xs& xs, std::vector<std::int64_t> lengths) {
  if (lengths.empty()) throw ValueError("remat_scan: lengths must not be empty");
  Arrays xl = detail::tree_arrays(xs);
  std::int64_t total = 1;
  for (auto l : lengths) total *= l;
  for (const auto& x : xl)
    if (x.ndim() == 0 || x.shape(0) != total)
      throw ValueError("remat_scan: the leading axis of xs (shape " + shape_str(x.shape()) +
                       ") must equal the product of lengths, " + std::to_string(total));
  if (lengths.size() == 1)
    return scan([&](const Carry& c,
                    const Xs& x) { return std::make_pair(Carry(f(c, x)), std::nullopt); },
                init, xs)
        .first;
  const std::int64_t outer = lengths.front();
  std::vector<std::int64_t> rest(lengths.begin() + 1, lengths.end());
  Xs split = detail::tree_apply(xs, [&](const Array& x) {
    Shape s = x.shape();
    s[0] = total / outer;
    s.insert(s.begin(), outer);
    return reshape(x, s);
  });
  auto segment =
      checkpoint([f, rest](const Carry& c, const Xs& seg) { return remat_scan(f, c, seg, rest); });
  return scan([&](const Carry& c,
                  const Xs& seg) { return std::make_pair(segment(c, seg), std::nullopt); },
              init, split)
      .first;
}

}  // namespace linum
