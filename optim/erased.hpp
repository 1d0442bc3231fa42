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
#include <linum/pytree/from_dynamic.hpp>
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

using pytree::detail::Category;

// to_tree's inverse as a from_dynamic Style: a T read from the Tree alone (no target), a
// TypeError naming the place (root, then [i], .field, ['key'] as keystr prints) on mismatch.
struct FromTreeStyle {
  std::string root;
  std::vector<pytree::ChildKey> path;  // its names point into the walk's own strings

  [[noreturn]] void mismatch(const std::string& want, const Tree& got) const;
  void expect(bool ok, const char* want, const Tree& t) const {
    if (!ok) mismatch(want, t);
  }

  template <class T>
  T leaf(const T*, const Tree& t) const {
    expect(t.is_leaf(), "a leaf", t);
    if constexpr (std::is_same_v<T, Array>)
      return t.leaf();
    else
      return t.leaf().concrete().template item<T>();
  }
  template <class T>
  T dynamic(const T*, const Tree& t) const {
    using L = typename T::leaf_type;
    if constexpr (pytree::detail::category_v<T> == Category::Frozen) {
      expect(t.is_dict(), "a dict", t);
      return T(dynamic<pytree::BasicTree<L>>(nullptr, t));
    } else if constexpr (std::is_same_v<T, Tree>) {
      return t;
    } else {
      return pytree::tree_map([](const Array& a) { return a.concrete().template item<L>(); }, t);
    }
  }
  template <class T, class KeyOf>
  std::size_t node(const Tree& t, std::size_t size, const KeyOf&) const {
    constexpr Category c = pytree::detail::category_v<T>;
    if constexpr (c == Category::List) {
      expect(t.is_list() || t.is_tuple(), "a list", t);
      return t.size();
    } else if constexpr (c == Category::Struct) {
      if (!t.is_dict() || t.size() != size) {
        mismatch(pytree::detail::cat("a dict of the ", size, " fields of ",
                                     pytree::detail::type_name<T>()),
                 t);
      }
    } else if (!t.is_tuple() || t.size() != size) {
      mismatch(c == Category::Tuple ? pytree::detail::cat("a tuple of ", size)
                                    : "a tuple of the node's children",
               t);
    }
    return size;
  }
  std::vector<std::string> dict(const Tree& t, const std::vector<std::string>&) const {
    expect(t.is_dict(), "a dict", t);
    std::vector<std::string> keys;
    for (const auto& kv : t.as_dict()) keys.push_back(kv.first);
    return keys;
  }
  template <class Read>
  auto child(const Tree& t, const pytree::ChildKey& key, const Read& read) {
    path.push_back(key);
    const bool named = key.parent == Category::Dict || key.parent == Category::Struct;
    auto out = read(named ? t.at(key.name) : t.items()[key.index]);
    path.pop_back();
    return out;
  }
};

// The inverse of to_tree: a T read from a dynamic Tree; TypeError naming the place on mismatch.
template <class T>
T from_tree(const Tree& t, const std::string& where = "the root") {
  FromTreeStyle style{where, {}};
  return pytree::from_dynamic<T>(nullptr, t, style);
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
