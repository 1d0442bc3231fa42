// jacfwd, jacrev and hessian over pytrees, with JAX's nesting: the Jacobian has the output's
// structure outside and the (selected) inputs' structure inside; the leaf for output leaf y_i
// and input leaf x_j has shape y_i.shape + x_j.shape. f runs once per call: jacrev is one vjp
// whose pullback is vmapped over the output basis, jacfwd one jvp vmapped over the input basis.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/transforms.hpp>
#include <linum/pytree/frozen_dict.hpp>

namespace linum {
namespace detail {

// A value of any pytree type as a dynamic Tree (for grafting into a Tree-shaped output).
template <class X>
Tree to_dynamic_tree(const X& x) {
  if constexpr (std::is_same_v<X, Tree>)
    return x;
  else if constexpr (std::is_same_v<X, Array>)
    return Tree(x);
  else {
    auto [leaves, def] = pytree::tree_flatten<Array>(x);
    return pytree::tree_unflatten(def, std::move(leaves));
  }
}

template <class Fn>
Tree graft_dynamic(const Tree& y, std::size_t& i, Fn& inner);

// The entries of a dict or FrozenDict output, grafted in sorted-key (leaf) order.
template <class Fn>
Tree::dict_type graft_entries(const Tree::dict_type& d, std::size_t& i, Fn& inner) {
  Tree::dict_type out;
  for (std::size_t pos : d.sorted_positions()) {
    const auto& kv = *(d.begin() + static_cast<std::ptrdiff_t>(pos));
    out.insert_or_assign(kv.first, graft_dynamic(kv.second, i, inner));
  }
  return out;
}

// The output structure with each leaf (the i-th in flattening order) replaced by inner(i), a
// value of the input structure. A dynamic Tree output holds the inner values as subtrees.
template <class Fn>
Tree graft_dynamic(const Tree& y, std::size_t& i, Fn& inner) {
  using pytree::NodeKind;
  switch (y.kind()) {
    case NodeKind::Leaf: return to_dynamic_tree(inner(i++));
    case NodeKind::Dict: return Tree(graft_entries(y.as_dict(), i, inner));
    case NodeKind::FrozenDict:  // stays a FrozenDict node, as JAX keeps each node's type
      return Tree(pytree::FrozenDict<Array>(graft_entries(y.as_mapping(), i, inner)));
    case NodeKind::Tuple:
    case NodeKind::List: {
      Tree::seq_type out;
      for (const auto& e : y.items()) out.push_back(graft_dynamic(e, i, inner));
      return y.is_tuple() ? Tree::tuple(std::move(out)) : Tree::list(std::move(out));
    }
    case NodeKind::Box: return Tree::box(y.box_metadata(), graft_dynamic(y.box_value(), i, inner));
    case NodeKind::None:
    case NodeKind::EmptyNode: return y;  // no leaves
    case NodeKind::NamedTuple:
    case NodeKind::Custom:
    case NodeKind::TupleDict: break;  // static node kinds: a dynamic Tree never holds them
  }
  throw TypeError("jacobian: a dynamic Tree output holds a " +
                  std::string(pytree::kind_name(y.kind())));
}

template <class Y, class Fn>
auto graft(const Y& y, std::size_t& i, Fn& inner) {
  using pytree::detail::Category;
  constexpr Category c = pytree::detail::category_v<Y>;
  if constexpr (std::is_same_v<Y, Array>) {
    return inner(i++);
  } else if constexpr (c == Category::Dynamic) {
    return graft_dynamic(y, i, inner);
  } else if constexpr (c == Category::Frozen) {
    return Y(graft_entries(y.dict(), i, inner));
  } else if constexpr (c == Category::Optional) {
    using R = decltype(graft(std::declval<const typename Y::value_type&>(), i, inner));
    return y ? std::optional<R>(graft(*y, i, inner)) : std::optional<R>();
  } else if constexpr (c == Category::List) {
    using R = decltype(graft(std::declval<const typename Y::value_type&>(), i, inner));
    std::vector<R> out;
    for (const auto& e : y) out.push_back(graft(e, i, inner));
    return out;
  } else if constexpr (c == Category::Dict) {
    using R = decltype(graft(std::declval<const typename Y::mapped_type&>(), i, inner));
    std::map<std::string, R> out;
    for (const auto* kv : pytree::detail::sorted_entries(y))
      out.emplace(kv->first, graft(kv->second, i, inner));
    return out;
  } else if constexpr (c == Category::Tuple && requires { typename Y::first_type; }) {
    auto a = graft(y.first, i, inner);
    auto b = graft(y.second, i, inner);
    return std::make_pair(std::move(a), std::move(b));
  } else if constexpr (c == Category::Tuple) {
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      // Braces evaluate left to right: the leaf order.
      return std::tuple<decltype(graft(std::get<K>(y), i, inner))...>{
          graft(std::get<K>(y), i, inner)...};
    }
    (std::make_index_sequence<std::tuple_size_v<Y>>{});
  } else {
    // Hana structs and custom nodes: tree_map re-types them where their declaration allows.
    return pytree::tree_map([&](const Array&) { return inner(i++); }, y);
  }
}

// f with the argnums' arguments replaced by `d...` and the others fixed to `targs`.
template <int... I, class F, class Tuple>
auto bind_argnums(F& f, const Tuple& targs) {
  return [&f, &targs](const auto&... d) {
    Tuple a = targs;
    ((std::get<I>(a) = d), ...);
    return std::apply(f, a);
  };
}

std::vector<std::int64_t> leaf_sizes(const Arrays& leaves, std::int64_t& total);

// Where each leaf starts among the flattened coordinates.
inline std::vector<std::int64_t> offsets(const std::vector<std::int64_t>& sizes) {
  std::vector<std::int64_t> offs;
  std::int64_t off = 0;
  for (auto s : sizes) offs.push_back(std::exchange(off, off + s));
  return offs;
}
// The (empty) block of output leaf y and input leaf x when there are no coordinates.
inline Array zero_block(const Array& y, const Array& x, DType dtype) {
  Shape s = y.shape();
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return zeros(s, dtype);
}
// The Jacobian tree: output structure outside, input structure inside; block(i, j) is the
// block of output leaf i and input leaf j.
template <class Y, class X, class Block>
auto assemble_jacobian(const Y& y, const X& x_like, std::size_t n_in, Block block) {
  auto inner = [&](std::size_t i) {
    Arrays blocks;
    for (std::size_t j = 0; j < n_in; ++j) blocks.push_back(block(i, j));
    return tree_rebuild(x_like, blocks);
  };
  std::size_t k = 0;
  return graft(y, k, inner);
}
// Rows [off, off + n) of the basis-major Jacobian block `rows` (shape (M,) + in) as out + in.
Array jac_rows(const Array& rows, std::int64_t off, std::int64_t n, const Shape& out,
               std::int64_t total);
// Rows [off, off + n) of the column block `cols` (shape (N,) + out) as out + in.
Array jac_cols(const Array& cols, std::int64_t off, std::int64_t n, const Shape& in,
               std::int64_t total);
// The standard basis of a leaf among `total` coordinates starting at `off`: shape (total,) + like.
Array basis_block(const Array& like, std::int64_t off, std::int64_t total);
void check_jac_dtypes(const Arrays& leaves, const char* fn, const char* what);
// The standard basis of all leaves' coordinates (`total` of them): one basis_block per leaf.
inline Arrays standard_basis(const Arrays& leaves, const std::vector<std::int64_t>& sizes,
                             std::int64_t total) {
  Arrays basis;
  std::int64_t off = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    basis.push_back(basis_block(leaves[i], off, total));
    off += sizes[i];
  }
  return basis;
}
// The Jacobian, paired with f's aux output (the third entry of vjp_impl/jvp_impl) under has_aux.
template <bool Aux, class J, class R>
auto with_aux(J jac, const R& r) {
  if constexpr (Aux)
    return std::make_pair(std::move(jac), std::get<2>(r));
  else
    return jac;
}

}  // namespace detail

// jacrev(f, argnums<I...>, has_aux?, allow_int?)(args...): the Jacobian by reverse mode.
template <class F, int... I, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto jacrev(F f, Argnums<I...> an, Opts...) {
  return [ h = detail::Held<F>{std::move(f)},
           an ]<class... A>(const A&... args) requires std::invocable<F&, const A&...> {
    // Declared in here: GCC 12 calls an outer one unused when only template arguments use it.
    constexpr bool aux = detail::has_option_v<HasAux, Opts...>;
    std::tuple<A...> targs(args...);
    auto g = detail::bind_argnums<I...>(h.f, targs);
    auto r = detail::vjp_impl<aux>(g, "jacrev", detail::has_option_v<AllowInt, Opts...>,
                                   std::get<I>(targs)...);
    const auto& y = std::get<0>(r);
    auto& pull = std::get<1>(r);
    Arrays yl = detail::tree_arrays(y);
    detail::check_jac_dtypes(yl, "jacrev", "outputs");
    std::int64_t m = 0;
    auto ys = detail::leaf_sizes(yl, m);
    auto x_like = detail::select_args(targs, an);
    Arrays xl = detail::tree_arrays(x_like);
    Arrays rows;  // per input leaf: (m,) + x_j.shape
    if (m > 0) {
      using Y = std::decay_t<decltype(y)>;
      rows = detail::tree_arrays(vmap([&](const Y& ct) { return pull(ct); })(
          detail::tree_rebuild(y, detail::standard_basis(yl, ys, m))));
    }
    auto offs = detail::offsets(ys);
    auto jac = detail::assemble_jacobian(y, x_like, xl.size(), [&](std::size_t i, std::size_t j) {
      return m > 0 ? detail::jac_rows(rows[j], offs[i], ys[i], yl[i].shape(), m)
                   : detail::zero_block(yl[i], xl[j], xl[j].dtype());
    });
    return detail::with_aux<aux>(std::move(jac), r);
  };
}
template <class F, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto jacrev(F f, Opts... opts) {
  return jacrev(std::move(f), argnums<0>, opts...);
}

// jacfwd(f, argnums<I...>, has_aux?)(args...): the Jacobian by forward mode.
template <class F, int... I, class... Opts>
requires(std::is_same_v<Opts, HasAux>&&...) auto jacfwd(F f, Argnums<I...> an, Opts...) {
  constexpr bool aux = detail::has_option_v<HasAux, Opts...>;
  return [ h = detail::Held<F>{std::move(f)},
           an ]<class... A>(const A&... args) requires std::invocable<F&, const A&...> {
    std::tuple<A...> targs(args...);
    auto g = detail::bind_argnums<I...>(h.f, targs);
    auto x_like = detail::select_args(targs, an);
    Arrays xl = detail::tree_arrays(x_like);
    detail::check_jac_dtypes(xl, "jacfwd", "inputs");
    std::int64_t n = 0;
    auto xs = detail::leaf_sizes(xl, n);
    auto primals = std::make_tuple(std::get<I>(targs)...);
    using P = decltype(primals);
    auto push = [&](const P& t) {
      if constexpr (aux)
        return detail::jvp_impl<true>(g, primals, t);
      else
        return detail::jvp_impl<false>(g, primals, t);
    };
    // n == 0: one jvp on empty tangents gives the output structure (its tangents are dropped).
    P tangents = detail::tree_rebuild(
        primals, n > 0 ? detail::standard_basis(xl, xs, n)
                       : detail::tree_apply(xl, [](const Array& x) { return zeros_like(x); }));
    VmapOptions o;
    o.out_axes = aux ? AxisSpec{AxisSpec::kNone, 0, AxisSpec::kNone} : AxisSpec{AxisSpec::kNone, 0};
    auto r = n > 0 ? vmap(push, o)(tangents) : push(tangents);
    const auto& y = std::get<0>(r);
    Arrays yl = detail::tree_arrays(y), cols = detail::tree_arrays(std::get<1>(r));
    detail::check_jac_dtypes(yl, "jacfwd", "outputs");
    auto offs = detail::offsets(xs);
    auto jac = detail::assemble_jacobian(y, x_like, xl.size(), [&](std::size_t i, std::size_t j) {
      return n > 0 ? detail::jac_cols(cols[i], offs[j], xs[j], xl[j].shape(), n)
                   : detail::zero_block(yl[i], xl[j], yl[i].dtype());
    });
    return detail::with_aux<aux>(std::move(jac), r);
  };
}
template <class F, class... Opts>
requires(std::is_same_v<Opts, HasAux>&&...) auto jacfwd(F f, Opts... opts) {
  return jacfwd(std::move(f), argnums<0>, opts...);
}

// hessian(f, argnums<I...>, has_aux?) = jacfwd(jacrev(f, ...), ...), as in JAX.
template <class F, int... I, class... Opts>
requires(std::is_same_v<Opts, HasAux>&&...) auto hessian(F f, Argnums<I...> an, Opts... opts) {
  return jacfwd(jacrev(std::move(f), an, opts...), an, opts...);
}
template <class F, class... Opts>
requires(std::is_same_v<Opts, HasAux>&&...) auto hessian(F f, Opts... opts) {
  return hessian(std::move(f), argnums<0>, opts...);
}

}  // namespace linum
