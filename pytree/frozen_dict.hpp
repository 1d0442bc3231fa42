// flax.core.frozen_dict: FrozenDict<L>, the immutable mapping Flax passes variables in, and the
// module-level helpers freeze, unfreeze, copy, pop and pretty_repr, with Flax's exact semantics
// (mapping equality, shallow copy-merge, sorted-key flattening, Flax's pretty_repr layout).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <linum/error.hpp>
#include <linum/pytree/tree.hpp>

namespace linum::pytree {

namespace detail {

// flax's _indent: every line of `x` (which ends with a newline) gets `n` spaces.
std::string indent_lines(const std::string& x, int n);

// flax's pretty_dict: dicts as indented `key: value,` lines, everything else by repr.
template <class L>
void pretty_dict_into(std::string& out, const BasicTree<L>& x, int num_spaces);

template <class L>
void pretty_dict_entries(std::string& out, const Dict<std::string, BasicTree<L>>& d,
                         int num_spaces) {
  std::string rep;
  for (const auto& [key, val] : d) {
    rep += key;  // keys print with str(), values with repr()
    rep += ": ";
    pretty_dict_into(rep, val, num_spaces);
    rep += ",\n";
  }
  if (rep.empty()) {
    out += "{}";
  } else {
    out += "{\n";
    out += indent_lines(rep, num_spaces);
    out += "}";
  }
}

template <class L>
void pretty_dict_into(std::string& out, const BasicTree<L>& x, int num_spaces) {
  if (x.is_dict()) {
    pretty_dict_entries(out, x.as_dict(), num_spaces);
  } else {
    x.repr_into(out);
  }
}

}  // namespace detail

// Immutable, cheap to copy (the entries are shared), iterated in insertion order, flattened in
// sorted-key order. Values are BasicTree<L>: nested dicts, leaves, tuples (sown values), lists or
// None. A nested dict is held as a plain dict (dict(), begin()/end()) and read back as a Tree
// holding a FrozenDict (fd["a"], at, get, values, items), as Flax's __getitem__ wraps it.
template <class L>
class FrozenDict {
 public:
  using leaf_type = L;
  using Tree = BasicTree<L>;
  using dict_type = typename Tree::dict_type;
  using key_type = std::string;
  using mapped_type = Tree;
  using value_type = std::pair<std::string, Tree>;
  using const_iterator = typename dict_type::const_iterator;

  FrozenDict() : FrozenDict(dict_type{}) {}
  FrozenDict(std::initializer_list<std::pair<std::string, Tree>> items)
      : FrozenDict(dict_type(items)) {}
  explicit FrozenDict(dict_type d) {
    thaw_nested(d);
    auto rep = std::make_shared<Rep>();
    rep->sorted = d.sorted_positions();
    rep->dict = std::move(d);
    for (const auto& kv : rep->dict)
      rep->read.push_back(kv.second.is_dict() ? Tree(FrozenDict(kv.second.as_dict())) : Tree());
    rep_ = std::move(rep);
  }
  // freeze(tree): the tree must be a dict.
  explicit FrozenDict(Tree t) : FrozenDict(take_dict(std::move(t), "FrozenDict")) {}

  std::size_t size() const { return rep_->dict.size(); }
  bool empty() const { return rep_->dict.empty(); }
  // Iteration is in insertion order, like Flax's FrozenDict.items().
  const_iterator begin() const { return rep_->dict.begin(); }
  const_iterator end() const { return rep_->dict.end(); }
  bool contains(std::string_view key) const { return rep_->dict.contains(key); }
  const_iterator find(std::string_view key) const { return rep_->dict.find(key); }

  // fd['key']: KeyError naming the key and the keys present. There is no mutable access:
  // Flax's `fd[k] = v` raises 'FrozenDict is immutable.', here it does not compile.
  const Tree& operator[](std::string_view key) const { return at(key); }
  const Tree& at(std::string_view key) const {
    auto it = rep_->dict.find(key);
    if (it == rep_->dict.end()) {
      throw KeyError(
          detail::cat("FrozenDict: key ", str_repr(key), " not found; keys are ", keys_repr()));
    }
    return read(it);
  }
  Tree get(std::string_view key, Tree default_value = Tree()) const {
    auto it = rep_->dict.find(key);
    return it == rep_->dict.end() ? std::move(default_value) : read(it);
  }

  std::vector<std::string> keys() const { return rep_->dict.keys(); }
  std::vector<Tree> values() const {
    std::vector<Tree> vs;
    for (auto it = begin(); it != end(); ++it) vs.push_back(read(it));
    return vs;
  }
  std::vector<value_type> items() const {
    std::vector<value_type> out;
    for (auto it = begin(); it != end(); ++it) out.emplace_back(it->first, read(it));
    return out;
  }

  // The plain nested dict inside (Flax's _dict).
  const dict_type& dict() const { return rep_->dict; }
  // Entry positions in sorted-key order: the order FrozenDict flattens in.
  const std::vector<std::size_t>& sorted_positions() const { return rep_->sorted; }

  // Flax's FrozenDict.copy: a shallow merge; a key in add_or_replace replaces the whole entry.
  FrozenDict copy(const FrozenDict& add_or_replace) const { return copy(add_or_replace.dict()); }
  FrozenDict copy(const Tree& add_or_replace) const {
    return copy(expect_dict(add_or_replace, "FrozenDict::copy"));
  }
  FrozenDict copy(std::initializer_list<std::pair<std::string, Tree>> add_or_replace = {}) const {
    return copy(dict_type(add_or_replace));
  }
  FrozenDict copy(const dict_type& add_or_replace) const {
    dict_type d = rep_->dict;
    for (const auto& [k, v] : add_or_replace) d.insert_or_assign(k, v);
    return FrozenDict(std::move(d));
  }

  // Flax's FrozenDict.pop: (the dict without key, the value at key); KeyError when missing.
  std::pair<FrozenDict, Tree> pop(std::string_view key) const {
    Tree value = at(key);
    dict_type rest = rep_->dict;
    rest.erase(key);
    return {FrozenDict(std::move(rest)), std::move(value)};
  }

  // A deep, mutable copy as a plain dict tree.
  Tree unfreeze() const { return Tree(rep_->dict); }

  // FrozenDict({\n    a: 1,\n    b: {\n        c: 2,\n    },\n}) exactly as Flax prints.
  std::string pretty_repr(int num_spaces = 4) const {
    std::string out = "FrozenDict(";
    detail::pretty_dict_entries(out, rep_->dict, num_spaces);
    out += ")";
    return out;
  }
  void repr_into(std::string& out) const { out += pretty_repr(); }
  friend std::ostream& operator<<(std::ostream& os, const FrozenDict& d) {
    return os << d.pretty_repr();
  }

  // Mapping equality, as collections.abc.Mapping: order-independent, and equal to a plain dict
  // tree with the same items.
  friend bool operator==(const FrozenDict& a,
                         const FrozenDict& b) requires std::equality_comparable<Tree> {
    return a.rep_ == b.rep_ || a.rep_->dict == b.rep_->dict;
  }
  friend bool operator==(const FrozenDict& a,
                         const Tree& b) requires std::equality_comparable<Tree> {
    return (b.is_dict() || b.is_frozen_dict()) && a.rep_->dict == b.as_mapping();
  }

  // Equal to the hash of the equal plain dict tree.
  std::size_t hash() const requires requires(const Tree& t) { t.hash(); }
  { return Tree::hash_dict(rep_->dict); }

 private:
  struct Rep {
    dict_type dict;
    std::vector<std::size_t> sorted;
    // Per entry, in dict order: a nested dict as a FrozenDict (what reading it gives), else None.
    std::vector<Tree> read;
  };

  // The value an entry reads as: Flax's __getitem__ wraps a nested dict in a FrozenDict.
  const Tree& read(const_iterator it) const {
    const Tree& frozen = rep_->read[static_cast<std::size_t>(it - begin())];
    return it->second.is_dict() ? frozen : it->second;
  }

  static const dict_type& expect_dict(const Tree& t, const char* fn) {
    if (!t.is_dict()) {
      throw TypeError(std::string(fn) + ": expected a dict, got a " +
                      std::string(kind_name(t.kind())));
    }
    return t.as_dict();
  }
  static dict_type take_dict(Tree t, const char* fn) {
    if (t.is_frozen_dict()) return t.as_frozen_dict().dict();
    expect_dict(t, fn);
    return std::move(t.as_dict());
  }
  // Flax's _prepare_freeze: a FrozenDict nested in a FrozenDict is held as a plain dict (it
  // reads back frozen through the outer one), so a FrozenDict's children are plain dicts.
  static void thaw_nested(dict_type& d) {
    for (auto& kv : d) {
      if (kv.second.is_frozen_dict()) {
        kv.second = Tree(kv.second.as_frozen_dict().dict());
      } else if (kv.second.is_dict()) {
        thaw_nested(kv.second.as_dict());
      }
    }
  }
  std::string keys_repr() const {
    std::string s = "[";
    std::size_t n = 0;
    for (const auto& kv : rep_->dict) {
      s += n++ ? ", " : "";
      s += str_repr(kv.first);
    }
    return s + "]";
  }

  std::shared_ptr<const Rep> rep_;
};

// --- flax.core.frozen_dict module functions -----------------------------------------------------

template <class L>
FrozenDict<L> freeze(const BasicTree<L>& xs) {
  return FrozenDict<L>(xs);
}
template <class L>
FrozenDict<L> freeze(const FrozenDict<L>& xs) {
  return xs;
}

// FrozenDict -> plain dict tree (deep copy); a Tree is copied with its FrozenDict nodes made
// plain dicts (Flax's unfreeze of a dict); anything else returned unchanged.
template <class L>
BasicTree<L> unfreeze(const FrozenDict<L>& x) {
  return x.unfreeze();
}
template <class L>
BasicTree<L> unfreeze(const BasicTree<L>& x) {
  if (x.is_frozen_dict()) return x.as_frozen_dict().unfreeze();
  if (!x.is_dict()) return x;
  typename BasicTree<L>::dict_type out;
  for (const auto& [k, v] : x.as_dict()) out.insert_or_assign(k, unfreeze(v));
  return BasicTree<L>(std::move(out));
}
template <class T>
T unfreeze(const T& x) {
  return x;
}

// flax.core.copy: FrozenDict -> x.copy(add_or_replace); dict -> a copy updated (shallowly) with
// add_or_replace; anything else -> TypeError('Expected FrozenDict or dict, got ...').
template <class L>
FrozenDict<L> copy(const FrozenDict<L>& x, const FrozenDict<L>& add_or_replace = {}) {
  return x.copy(add_or_replace);
}
template <class L>
FrozenDict<L> copy(const FrozenDict<L>& x, const BasicTree<L>& add_or_replace) {
  return x.copy(add_or_replace);
}
template <class L>
BasicTree<L> copy(const BasicTree<L>& x,
                  const BasicTree<L>& add_or_replace = BasicTree<L>::dict()) {
  if (!x.is_dict()) {
    throw TypeError(detail::cat("copy: Expected FrozenDict or dict, got ", kind_name(x.kind())));
  }
  if (!add_or_replace.is_dict()) {
    throw TypeError("copy: add_or_replace must be a FrozenDict or dict, got " +
                    std::string(kind_name(add_or_replace.kind())));
  }
  BasicTree<L> out = x;
  for (const auto& [k, v] : add_or_replace.as_dict()) out.as_dict().insert_or_assign(k, v);
  return out;
}
template <class L>
BasicTree<L> copy(const BasicTree<L>& x, const FrozenDict<L>& add_or_replace) {
  return copy(x, add_or_replace.unfreeze());
}

// flax.core.pop: (x without key, x[key]); the rest keeps x's type.
template <class L>
std::pair<FrozenDict<L>, BasicTree<L>> pop(const FrozenDict<L>& x, std::string_view key) {
  return x.pop(key);
}
template <class L>
std::pair<BasicTree<L>, BasicTree<L>> pop(const BasicTree<L>& x, std::string_view key) {
  if (!x.is_dict()) {
    throw TypeError(detail::cat("pop: Expected FrozenDict or dict, got ", kind_name(x.kind())));
  }
  BasicTree<L> value = x.at(key);
  BasicTree<L> rest = x;
  rest.as_dict().erase(key);
  return {std::move(rest), std::move(value)};
}

// flax.core.pretty_repr: a FrozenDict prints with its own pretty_repr (Flax ignores num_spaces
// there), a plain dict with pretty_dict, anything else with repr.
template <class L>
std::string pretty_repr(const FrozenDict<L>& x, int /*num_spaces*/ = 4) {
  return x.pretty_repr();
}
template <class L>
std::string pretty_repr(const BasicTree<L>& x, int num_spaces = 4) {
  std::string out;
  detail::pretty_dict_into(out, x, num_spaces);
  return out;
}
template <class T>
std::string pretty_repr(const T& x, int /*num_spaces*/ = 4) {
  return repr(x);
}

}  // namespace linum::pytree

template <class L>
struct std::hash<linum::pytree::FrozenDict<L>> {
  std::size_t operator()(const linum::pytree::FrozenDict<L>& d) const { return d.hash(); }
};
