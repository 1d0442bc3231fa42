// GradientTransformation<P>: any transformation behind one type, for choosing an optimizer at run
// time. Its state is the dynamic Tree (to_tree below: tuples stay tuples, optax's NamedTuple
// states become dicts of their fields), so it can be printed, flattened and edited like Flax
// variables. Also multi_transform, whose per-label transformations are such erased ones.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/optim/base.hpp>
#include <linum/optim/combine.hpp>
#include <linum/pytree/to_dynamic.hpp>

namespace linum::optim {

namespace detail {

// Any pytree of Arrays as a dynamic Tree: tuples/pairs/arrays and custom nodes -> tuple,
// vectors -> list, string maps / FrozenDict -> dict, Hana structs -> dict of fields, optional ->
// None or value, arithmetic leaves -> scalar Arrays.
struct ErasedStateStyle {
  template <class X>
  Tree dynamic(const X& x) const {
    if constexpr (std::is_same_v<X, Tree>)
      return x;
    else
      return pytree::tree_map([](const auto& l) { return Array(l); }, x);
  }
  template <class KeyOf>
  Tree sequence(Tree::seq_type items, pytree::SequenceKind kind, const KeyOf&) const {
    return kind == pytree::SequenceKind::List ? Tree::list(std::move(items))
                                              : Tree::tuple(std::move(items));
  }
};
template <class T>
Tree to_tree(const T& x) {
  return pytree::to_dynamic<Array>(x, ErasedStateStyle{});
}

[[noreturn]] void throw_from_tree(const std::string& where, const std::string& want,
                                  const Tree& got);

// The inverse of to_tree: a T read from a dynamic Tree; TypeError naming the place on mismatch.
template <class T>
T from_tree(const Tree& t, const std::string& where = "the root") {
  using pytree::detail::Category;
  constexpr Category c = pytree::detail::category_v<T>;
  auto expect = [&](bool ok, const char* want) {
    if (!ok) throw_from_tree(where, want, t);
  };
  if constexpr (std::is_same_v<T, Array>) {
    expect(t.is_leaf(), "a leaf");
    return t.leaf();
  } else if constexpr (c == Category::Leaf) {
    expect(t.is_leaf(), "a leaf");
    return t.leaf().concrete().template item<T>();
  } else if constexpr (c == Category::Dynamic) {
    if constexpr (std::is_same_v<T, Tree>)
      return t;
    else {
      using L = typename T::leaf_type;
      return pytree::tree_map([](const Array& a) { return a.concrete().template item<L>(); }, t);
    }
  } else if constexpr (c == Category::Frozen) {
    expect(t.is_dict(), "a dict");
    return T(from_tree<pytree::BasicTree<typename T::leaf_type>>(t, where));
  } else if constexpr (c == Category::Optional) {
    if (t.is_none()) return T();
    return T(from_tree<typename T::value_type>(t, where));
  } else if constexpr (c == Category::Tuple) {
    constexpr std::size_t n = std::tuple_size_v<T>;
    expect(t.is_tuple() && t.size() == n, ("a tuple of " + std::to_string(n)).c_str());
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return T{from_tree<std::tuple_element_t<I, T>>(t.items()[I],
                                                     where + "[" + std::to_string(I) + "]")...};
    }
    (std::make_index_sequence<n>{});
  } else if constexpr (c == Category::List) {
    expect(t.is_list() || t.is_tuple(), "a list");
    T out;
    for (std::size_t i = 0; i < t.size(); ++i) {
      out.push_back(
          from_tree<typename T::value_type>(t.items()[i], where + "[" + std::to_string(i) + "]"));
    }
    return out;
  } else if constexpr (c == Category::Dict) {
    expect(t.is_dict(), "a dict");
    T out;
    for (const auto& [k, v] : t.as_dict()) {
      out.insert_or_assign(k, from_tree<typename T::mapped_type>(v, where + "['" + k + "']"));
    }
    return out;
  } else if constexpr (c == Category::Struct) {
    constexpr std::size_t n = pytree::detail::struct_size_v<T>;
    expect(t.is_dict() && t.size() == n, ("a dict of the " + std::to_string(n) + " fields of " +
                                          std::string(pytree::detail::type_name<T>()))
                                             .c_str());
    T out{};
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((pytree::detail::struct_field<I>(out) = from_tree<pytree::detail::struct_field_t<T, I>>(
            t.at(pytree::detail::struct_field_name<I, T>()),
            where + "." + pytree::detail::struct_field_name<I, T>())),
       ...);
    }
    (std::make_index_sequence<n>{});
    return out;
  } else {
    static_assert(c == Category::Custom, "from_tree: not a pytree type");
    constexpr std::size_t n = pytree::detail::custom_size_v<T>;
    expect(t.is_tuple() && t.size() == n, "a tuple of the node's children");
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return pytree::node_traits<T>::from_children(from_tree<pytree::detail::custom_child_t<T, I>>(
          t.items()[I], where + "[" + std::to_string(I) + "]")...);
    }
    (std::make_index_sequence<n>{});
  }
}

}  // namespace detail

// A transformation for params of type P whose concrete kind is chosen at run time:
//   GradientTransformation<Params> tx = use_adam ? GradientTransformation<Params>(adam(1e-3))
//                                                : GradientTransformation<Params>(sgd(0.1));
// Its state is a dynamic Tree (see to_tree); update() converts it back to the concrete state.
template <class P>
class GradientTransformation : public Transformation<GradientTransformation<P>> {
 public:
  using State = Tree;

  template <class Tx>
  requires(!std::is_same_v<std::remove_cvref_t<Tx>, GradientTransformation>) GradientTransformation(
      Tx tx)  // NOLINT(google-explicit-constructor): any transformation converts
      : impl_(std::make_shared<Model<std::remove_cvref_t<Tx>>>(std::move(tx))) {}

  Tree init(const P& params) const { return impl_->init(params); }
  std::pair<P, Tree> update_impl(const P& updates, const Tree& state, const P* params) const {
    return impl_->update(updates, state, params, nullptr);
  }
  std::pair<P, Tree> update_extra(const P& updates, const Tree& state, const P* params,
                                  const ExtraArgs<P>& extra) const {
    return impl_->update(updates, state, params, &extra);
  }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual Tree init(const P& params) const = 0;
    virtual std::pair<P, Tree> update(const P& updates, const Tree& state, const P* params,
                                      const ExtraArgs<P>* extra) const = 0;
  };
  template <class Tx>
  struct Model final : Concept {
    Tx tx;
    explicit Model(Tx t) : tx(std::move(t)) {}
    Tree init(const P& params) const override { return detail::to_tree(tx.init(params)); }
    std::pair<P, Tree> update(const P& updates, const Tree& state, const P* params,
                              const ExtraArgs<P>* extra) const override {
      using S = state_t<Tx, P>;
      S s = detail::from_tree<S>(state, "opt_state");
      auto [u, next] = params && extra ? tx.update(updates, s, *params, *extra)
                       : params        ? tx.update(updates, s, *params)
                                       : tx.update(updates, s);
      return {P(std::move(u)), detail::to_tree(next)};
    }
  };
  std::shared_ptr<const Concept> impl_;
};

// optax.MultiTransformState.
template <class S>
struct MultiTransformState {
  BOOST_HANA_DEFINE_STRUCT(MultiTransformState, (S, inner_states));
};

// optax.multi_transform(transforms, param_labels): each leaf is updated by the transformation of
// its label; label_fn(key_path, leaf) names it (keystr(path, true, "/") gives "Dense_0/kernel").
// The state holds one MaskedState per label. ValueError when a leaf's label has no transformation.
template <class P, class LabelFn>
struct MultiTransform : Transformation<MultiTransform<P, LabelFn>> {
  std::map<std::string, GradientTransformation<P>> transforms;
  LabelFn label_fn;

  using Inner = MaskedState<Tree>;
  using State = MultiTransformState<std::map<std::string, Inner>>;

  State init(const P& params) const {
    check_labels(params);
    State s;
    for (const auto& [label, tx] : transforms) {
      s.inner_states.insert_or_assign(label, masked(tx, mask_of(params, label)).init(params));
    }
    return s;
  }

  std::pair<P, State> update_impl(const P& updates, const State& state, const P* params) const {
    P u = updates;
    State next;
    for (const auto& [label, tx] : transforms) {
      auto it = state.inner_states.find(label);
      if (it == state.inner_states.end()) {
        throw ValueError("multi_transform: the state has no entry for label '" + label +
                         "'; was it created by this transformation's init?");
      }
      auto m = masked(tx, mask_of(updates, label));
      auto [nu, ns] = params ? m.update(u, it->second, *params) : m.update(u, it->second);
      u = std::move(nu);
      next.inner_states.insert_or_assign(label, std::move(ns));
    }
    return {std::move(u), std::move(next)};
  }

 private:
  // A params-typed tree of bool scalars: true where the leaf's label is `label`.
  P mask_of(const P& tree, const std::string& label) const {
    return pytree::tree_map_with_path(
        [&](const pytree::KeyPath& path, const Array& x) -> Array {
          return Array(x.valid() && std::string(label_fn(path, x)) == label);
        },
        tree);
  }
  void check_labels(const P& params) const {
    std::set<std::string> labels;
    for (const auto& [path, x] : pytree::tree_leaves_with_path<Array>(params)) {
      labels.insert(std::string(label_fn(path, x)));
    }
    bool ok = true;
    for (const auto& l : labels) ok = ok && transforms.count(l);
    if (!ok) {
      auto list = [](const auto& xs) {
        std::string s = "[";
        std::size_t n = 0;
        for (const auto& x : xs) s += (n++ ? ", '" : "'") + x + "'";
        return s + "]";
      };
      std::vector<std::string> keys;
      for (const auto& kv : transforms) keys.push_back(kv.first);
      throw ValueError("Some parameters have no corresponding transformation.\nParameter labels: " +
                       list(labels) + " \nTransforms keys: " + list(keys) + " \n");
    }
  }
};

template <class P, class LabelFn>
MultiTransform<P, LabelFn> multi_transform(
    std::map<std::string, GradientTransformation<P>> transforms, LabelFn label_fn) {
  // Aggregate initialisation: a capturing label_fn has no default constructor or assignment.
  return MultiTransform<P, LabelFn>{{}, std::move(transforms), std::move(label_fn)};
}

}  // namespace linum::optim
