// BasicTree<L>: the dynamic pytree, for runtime-shaped data (Flax variable collections, sown
// tuples, unflatten_dict results). A value is None, a leaf of type L, a dict (insertion-ordered,
// string keys), a tuple, a list, flax's empty_node, a FrozenDict (a dict that stays frozen:
// {'params': FrozenDict(...)} as a plain dict of Flax holds one), or a metadata box (box.hpp:
// flax.core.meta.AxisMetadata, e.g. Partitioned, around one value). The autodiff layer names
// `using Tree = pytree::BasicTree<Array>`.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <memory>

#include <linum/error.hpp>
#include <linum/pytree/box.hpp>
#include <linum/pytree/dict.hpp>
#include <linum/pytree/repr.hpp>
#include <linum/pytree/traits.hpp>

namespace linum::pytree {

// flax.traverse_util.empty_node: stands for an empty dict in a flat dict (flatten_dict with
// keep_empty_nodes). It is a node with no children, so it holds no leaves.
struct EmptyNode {
  friend bool operator==(EmptyNode, EmptyNode) { return true; }
};
inline constexpr EmptyNode empty_node{};

template <class L>
class BasicTree {
 public:
  using leaf_type = L;
  using dict_type = Dict<std::string, BasicTree>;
  using seq_type = std::vector<BasicTree>;

  // None.
  BasicTree() noexcept = default;
  BasicTree(std::nullopt_t) noexcept {}
  BasicTree(EmptyNode) noexcept : v_(std::in_place_index<kEmpty>) {}

  // A leaf: anything L can be constructed from (so Tree t = 1.0; and {"a", 1} read naturally).
  template <class U>
  requires(!std::is_same_v<std::remove_cvref_t<U>, BasicTree> &&
           !std::is_same_v<std::remove_cvref_t<U>, std::nullopt_t> &&
           !std::is_same_v<std::remove_cvref_t<U>, EmptyNode> &&
           !std::is_same_v<std::remove_cvref_t<U>, dict_type> && std::is_constructible_v<L, U&&>)
      BasicTree(U&& x)
      : v_(std::in_place_index<kLeaf>, std::forward<U>(x)) {}

  // A dict: Tree{{"a", 1}, {"b", Tree{{"c", 2}}}}.
  BasicTree(std::initializer_list<std::pair<std::string, BasicTree>> items)
      : v_(std::in_place_index<kDict>) {
    auto& d = std::get<kDict>(v_);
    for (const auto& kv : items) d.insert_or_assign(kv.first, kv.second);
  }
  BasicTree(dict_type d) : v_(std::in_place_index<kDict>, std::move(d)) {}
  // A FrozenDict node (include <linum/pytree/frozen_dict.hpp>).
  BasicTree(const FrozenDict<L>& d)
      : v_(std::in_place_index<kFrozen>, std::make_shared<const FrozenDict<L>>(d)) {}

  static BasicTree none() { return BasicTree(); }
  static BasicTree dict(dict_type d = {}) { return BasicTree(std::move(d)); }
  static BasicTree dict(std::initializer_list<std::pair<std::string, BasicTree>> items) {
    return BasicTree(items);
  }
  static BasicTree tuple(seq_type items = {}) {
    BasicTree t;
    t.v_.template emplace<kTuple>(std::move(items));
    return t;
  }
  static BasicTree list(seq_type items = {}) {
    BasicTree t;
    t.v_.template emplace<kList>(std::move(items));
    return t;
  }
  // A metadata box around `value` (Partitioned(value, names), a user's AxisMetadata).
  static BasicTree box(std::shared_ptr<const BoxMetadata> meta, BasicTree value) {
    if (!meta) throw ValueError("Tree::box: the metadata is null");
    BasicTree t;
    t.v_.template emplace<kBox>(Box{std::move(meta), seq_type{std::move(value)}});
    return t;
  }

  NodeKind kind() const { return kinds_by_index(v_.index()); }
  bool is_none() const { return v_.index() == kNone; }
  bool is_leaf() const { return v_.index() == kLeaf; }
  bool is_dict() const { return v_.index() == kDict; }
  bool is_tuple() const { return v_.index() == kTuple; }
  bool is_list() const { return v_.index() == kList; }
  bool is_empty_node() const { return v_.index() == kEmpty; }
  bool is_frozen_dict() const { return v_.index() == kFrozen; }
  bool is_box() const { return v_.index() == kBox; }

  const L& leaf() const { return std::get<kLeaf>(expect(kLeaf, "leaf")); }
  L& leaf() { return std::get<kLeaf>(expect(kLeaf, "leaf")); }
  const dict_type& as_dict() const { return std::get<kDict>(expect(kDict, "as_dict")); }
  dict_type& as_dict() { return std::get<kDict>(expect(kDict, "as_dict")); }
  const seq_type& as_tuple() const { return std::get<kTuple>(expect(kTuple, "as_tuple")); }
  seq_type& as_tuple() { return std::get<kTuple>(expect(kTuple, "as_tuple")); }
  const seq_type& as_list() const { return std::get<kList>(expect(kList, "as_list")); }
  const FrozenDict<L>& as_frozen_dict() const {
    return *std::get<kFrozen>(expect(kFrozen, "as_frozen_dict"));
  }
  seq_type& as_list() { return std::get<kList>(expect(kList, "as_list")); }
  // A box's metadata and its boxed value (Flax's box.value).
  const std::shared_ptr<const BoxMetadata>& box_metadata() const {
    return std::get<kBox>(expect(kBox, "box_metadata")).meta;
  }
  const BasicTree& box_value() const {
    return std::get<kBox>(expect(kBox, "box_value")).value.front();
  }
  BasicTree& box_value() { return std::get<kBox>(expect(kBox, "box_value")).value.front(); }
  // The entries of a dict or of a FrozenDict node: code that reads a mapping takes either.
  const dict_type& as_mapping() const {
    if (is_frozen_dict()) return std::get<kFrozen>(v_)->dict();
    if (!is_dict()) {
      throw TypeError(detail::cat("Tree::as_mapping: expected a dict or a FrozenDict, got a ",
                                  kind_name(kind())));
    }
    return std::get<kDict>(v_);
  }

  // The elements of a tuple or a list.
  const seq_type& items() const {
    if (is_tuple()) return std::get<kTuple>(v_);
    if (is_list()) return std::get<kList>(v_);
    throw TypeError(
        detail::cat("Tree::items: expected a tuple or a list, got ", kind_name(kind())));
  }
  seq_type& items() { return const_cast<seq_type&>(static_cast<const BasicTree&>(*this).items()); }

  // len(): entries of a dict, elements of a tuple or list, 0 for None and empty_node.
  std::size_t size() const {
    switch (v_.index()) {
      case kDict:
        return std::get<kDict>(v_).size();
      case kTuple:
        return std::get<kTuple>(v_).size();
      case kList:
        return std::get<kList>(v_).size();
      case kFrozen:
        return std::get<kFrozen>(v_)->size();
      case kLeaf:
        throw TypeError("Tree::size: a leaf has no size");
      case kBox:
        throw TypeError("Tree::size: a box has no size; read box_value()");
      default:
        return 0;
    }
  }

  bool contains(std::string_view key) const {
    return (is_dict() || is_frozen_dict()) && lookup_dict("Tree::contains", key).contains(key);
  }

  // d['key'] on a dict: KeyError when missing.
  const BasicTree& operator[](std::string_view key) const { return at(key); }
  const BasicTree& operator[](const char* key) const { return at(std::string_view(key)); }
  const BasicTree& at(std::string_view key) const {
    const auto& d = lookup_dict("Tree::operator[]", key);
    auto it = d.find(key);
    if (it == d.end()) {
      throw KeyError(detail::cat("Tree::operator[]: key ", str_repr(key),
                                 " not found; the dict has keys ", keys_repr(d)));
    }
    return it->second;
  }
  // Assignment through t["a"]["b"] = x creates the missing dicts (a None becomes an empty dict).
  BasicTree& operator[](std::string_view key) {
    if (is_none()) v_.template emplace<kDict>();
    if (is_frozen_dict()) {
      throw TypeError(
          detail::cat("Tree::operator[]: cannot assign to key ", str_repr(key),
                      " of a FrozenDict: FrozenDict is immutable (read it with at(key), or "
                      "through a const Tree)"));
    }
    auto& d = const_cast<dict_type&>(expect_dict("Tree::operator[]", key));
    auto it = d.find(key);
    if (it != d.end()) return it->second;
    return d[std::string(key)];
  }
  BasicTree& operator[](const char* key) { return (*this)[std::string_view(key)]; }

  // t[i] on a tuple or list: IndexError when out of range.
  const BasicTree& operator[](std::size_t i) const { return at(i); }
  const BasicTree& operator[](int i) const { return at(static_cast<std::size_t>(i)); }
  BasicTree& operator[](std::size_t i) {
    return const_cast<BasicTree&>(std::as_const(*this).at(i));
  }
  BasicTree& operator[](int i) { return (*this)[static_cast<std::size_t>(i)]; }
  const BasicTree& at(std::size_t i) const {
    const auto& s = items();
    if (i >= s.size()) {
      throw IndexError(detail::cat("Tree::operator[]: index ", i, " out of range for a ",
                                   kind_name(kind()), " of ", s.size()));
    }
    return s[i];
  }

  // Appends to a tuple or a list (how Module.sow accumulates).
  void append(BasicTree x) { items().push_back(std::move(x)); }

  friend bool operator==(const BasicTree& a, const BasicTree& b) requires requires(const L& x) {
    { x == x } -> std::convertible_to<bool>;
  }
  {
    // Mapping equality, as Flax's FrozenDict: a plain dict equals a FrozenDict of the same items.
    if ((a.is_dict() || a.is_frozen_dict()) && (b.is_dict() || b.is_frozen_dict()))
      return a.as_mapping() == b.as_mapping();
    if (a.v_.index() != b.v_.index()) return false;
    switch (a.v_.index()) {
      case kLeaf:
        return static_cast<bool>(std::get<kLeaf>(a.v_) == std::get<kLeaf>(b.v_));
      case kDict:
        return std::get<kDict>(a.v_) == std::get<kDict>(b.v_);
      case kTuple:
        return std::get<kTuple>(a.v_) == std::get<kTuple>(b.v_);
      case kList:
        return std::get<kList>(a.v_) == std::get<kList>(b.v_);
      case kBox:
        return detail::BoxRef{a.box_metadata()} == detail::BoxRef{b.box_metadata()} &&
               a.box_value() == b.box_value();
      default:
        return true;
    }
  }

  // Order-independent for dicts, so that equal trees hash equal (FrozenDict's __hash__).
  std::size_t hash() const requires requires(const L& x) { std::hash<L>{}(x); }
  {
    switch (v_.index()) {
      case kLeaf:
        return mix(1, std::hash<L>{}(std::get<kLeaf>(v_)));
      case kDict:
        return hash_dict(std::get<kDict>(v_));
      case kFrozen:
        return hash_dict(std::get<kFrozen>(v_)->dict());
      case kBox:
        return mix(std::hash<std::string>{}(box_metadata()->type_name()), box_value().hash());
      case kTuple:
      case kList: {
        std::size_t h = v_.index();
        for (const auto& e : items()) h = mix(h, e.hash());
        return h;
      }
      default:
        return v_.index() * 0x51ed27u;
    }
  }

  static std::size_t hash_dict(const dict_type& d) requires requires(const L& x) {
    std::hash<L>{}(x);
  }
  {
    std::size_t h = 2;
    for (const auto& [k, v] : d) h ^= mix(std::hash<std::string>{}(k), v.hash());
    return h;
  }

  // Python repr: None, 1.5, {'a': 1}, (1,), [1, 2], _EmptyNode().
  void repr_into(std::string& out) const {
    switch (v_.index()) {
      case kNone:
        out += "None";
        break;
      case kLeaf:
        detail::repr_into(out, std::get<kLeaf>(v_));
        break;
      case kDict:
        std::get<kDict>(v_).repr_into(out);
        break;
      case kTuple:
        detail::repr_seq_into(out, std::get<kTuple>(v_), '(', ')', true);
        break;
      case kList:
        detail::repr_seq_into(out, std::get<kList>(v_), '[', ']', false);
        break;
      case kFrozen:
        std::get<kFrozen>(v_)->repr_into(out);
        break;
      case kBox:
        out += box_metadata()->type_name();
        out += "(value=";
        box_value().repr_into(out);
        out += box_metadata()->repr_fields();
        out += ')';
        break;
      default:
        out += "_EmptyNode()";
        break;
    }
  }
  friend std::ostream& operator<<(std::ostream& os, const BasicTree& t) { return os << repr(t); }

  detail::PNode to_pnode() const {
    using detail::PNode;
    switch (v_.index()) {
      case kDict: {
        const auto& d = std::get<kDict>(v_);
        PNode n;
        n.kind = PNode::Dict;
        for (std::size_t pos : d.sorted_positions()) {
          const auto& kv = *(d.begin() + static_cast<std::ptrdiff_t>(pos));
          n.keys.push_back(str_repr(kv.first));
          n.items.push_back(kv.second.to_pnode());
        }
        return n;
      }
      case kTuple:
        return detail::seq_pnode(std::get<kTuple>(v_), PNode::Tuple);
      case kList:
        return detail::seq_pnode(std::get<kList>(v_), PNode::List);
      default:
        return PNode{PNode::Atom, repr(*this), {}, {}};
    }
  }

 private:
  static std::size_t mix(std::size_t h, std::size_t v) {
    return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  }

  enum : std::size_t { kNone, kLeaf, kDict, kTuple, kList, kEmpty, kFrozen, kBox };
  // A box node: its metadata and a one-element vector holding the value (a vector because
  // BasicTree is incomplete here).
  struct Box {
    std::shared_ptr<const BoxMetadata> meta;
    seq_type value;
  };

  const auto& expect(std::size_t index, const char* what) const {
    if (v_.index() != index) {
      throw TypeError(detail::cat("Tree::", what, ": expected a ", kind_name(kinds_by_index(index)),
                                  ", got a ", kind_name(kind())));
    }
    return v_;
  }
  auto& expect(std::size_t index, const char* what) {
    return const_cast<Variant&>(std::as_const(*this).expect(index, what));
  }
  const dict_type& expect_dict(const char* fn, std::string_view key) const {
    if (!is_dict()) {
      throw TypeError(detail::cat(fn, ": cannot look up key ", str_repr(key), " in a ",
                                  kind_name(kind()), "; expected a dict"));
    }
    return std::get<kDict>(v_);
  }
  // The entries of a dict or a FrozenDict node, for lookups.
  const dict_type& lookup_dict(const char* fn, std::string_view key) const {
    return is_frozen_dict() ? as_mapping() : expect_dict(fn, key);
  }
  static NodeKind kinds_by_index(std::size_t i) {
    static constexpr NodeKind kinds[] = {NodeKind::None,      NodeKind::Leaf, NodeKind::Dict,
                                         NodeKind::Tuple,     NodeKind::List, NodeKind::EmptyNode,
                                         NodeKind::FrozenDict, NodeKind::Box};
    return kinds[i];
  }
  static std::string keys_repr(const dict_type& d) {
    std::string s = "[";
    std::size_t n = 0;
    for (const auto& kv : d) {
      s += n++ ? ", " : "";
      s += str_repr(kv.first);
    }
    return s + "]";
  }

  using Variant = std::variant<std::monostate, L, dict_type, seq_type, seq_type, EmptyNode,
                               std::shared_ptr<const FrozenDict<L>>, Box>;
  Variant v_;
};

}  // namespace linum::pytree

template <class L>
struct std::hash<linum::pytree::BasicTree<L>> {
  std::size_t operator()(const linum::pytree::BasicTree<L>& t) const { return t.hash(); }
};
