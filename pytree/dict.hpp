// Dict<K, V>: an insertion-ordered mapping, Python dict semantics (iteration in insertion order,
// assignment to an existing key keeps its position, equality ignores order). It is the dict node
// of the dynamic Tree and the result of traverse_util::flatten_dict.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <linum/error.hpp>
#include <linum/pytree/repr.hpp>

namespace linum::pytree {

// A flatten_dict key without `sep`: the tuple of nested keys.
using Path = std::vector<std::string>;

namespace detail {

struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  std::size_t operator()(const std::string& s) const { return (*this)(std::string_view(s)); }
  std::size_t operator()(const char* s) const { return (*this)(std::string_view(s)); }
  std::size_t operator()(const Path& p) const {
    std::size_t h = p.size();
    for (const auto& s : p) h = h * 1000003u ^ std::hash<std::string_view>{}(s);
    return h;
  }
};

struct KeyEq {
  using is_transparent = void;
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    return a == b;
  }
};

}  // namespace detail

template <class K, class V>
class Dict {
 public:
  using key_type = K;
  using mapped_type = V;
  using value_type = std::pair<K, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  Dict() = default;
  Dict(std::initializer_list<value_type> items) {
    for (const auto& kv : items) insert_or_assign(kv.first, kv.second);
  }
  Dict(const Dict& o) : entries_(o.entries_) { rebuild_index(); }
  Dict(Dict&&) noexcept = default;
  Dict& operator=(const Dict& o) {
    if (this != &o) {
      entries_ = o.entries_;
      rebuild_index();
    }
    return *this;
  }
  Dict& operator=(Dict&&) noexcept = default;

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }

  template <class Key>
  const_iterator find(const Key& k) const {
    return entries_.begin() + static_cast<std::ptrdiff_t>(position(k));
  }
  template <class Key>
  iterator find(const Key& k) {
    return entries_.begin() + static_cast<std::ptrdiff_t>(position(k));
  }
  template <class Key>
  bool contains(const Key& k) const {
    return position(k) != entries_.size();
  }

  // Throws KeyError naming the key, like a Python dict lookup.
  template <class Key>
  const V& at(const Key& k) const {
    auto it = find(k);
    if (it == end()) throw KeyError(detail::cat("Dict::at: key ", key_repr(k), " not found"));
    return it->second;
  }
  template <class Key>
  V& at(const Key& k) {
    auto it = find(k);
    if (it == end()) throw KeyError(detail::cat("Dict::at: key ", key_repr(k), " not found"));
    return it->second;
  }

  // Python's d[k] on the left of an assignment: inserts a default value when missing.
  V& operator[](const K& k) {
    auto it = find(k);
    if (it != end()) return it->second;
    return emplace_new(K(k), V()).second;
  }
  V& operator[](K&& k) {
    auto it = find(k);
    if (it != end()) return it->second;
    return emplace_new(std::move(k), V()).second;
  }

  // d[k] = v: replaces in place (keeping the position) or appends.
  template <class VV>
  V& insert_or_assign(const K& k, VV&& v) {
    auto it = find(k);
    if (it != end()) return it->second = std::forward<VV>(v);
    return emplace_new(K(k), V(std::forward<VV>(v))).second;
  }

  // Removes k; returns whether it was there.
  template <class Key>
  bool erase(const Key& k) {
    const std::size_t pos = position(k);
    if (pos == entries_.size()) return false;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(pos));
    rebuild_index();
    return true;
  }

  std::vector<K> keys() const {
    std::vector<K> ks;
    ks.reserve(entries_.size());
    for (const auto& kv : entries_) ks.push_back(kv.first);
    return ks;
  }

  // Positions of the entries in sorted-key order (JAX's flattening order).
  std::vector<std::size_t> sorted_positions() const {
    std::vector<std::size_t> order(entries_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    bool sorted = true;
    for (std::size_t i = 1; i < entries_.size() && sorted; ++i) {
      sorted = entries_[i - 1].first < entries_[i].first;
    }
    if (!sorted) {
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return entries_[a].first < entries_[b].first;
      });
    }
    return order;
  }

  // Mapping equality: same keys, equal values, any order.
  friend bool operator==(const Dict& a, const Dict& b) requires requires(const V& x) {
    { x == x } -> std::convertible_to<bool>;
  }
  {
    if (a.size() != b.size()) return false;
    for (const auto& kv : a) {
      auto it = b.find(kv.first);
      if (it == b.end() || !(it->second == kv.second)) return false;
    }
    return true;
  }

  // Python's dict repr: {'a': 1, ('b', 'c'): 2}.
  void repr_into(std::string& out) const { detail::repr_map_into(out, *this); }
  friend std::ostream& operator<<(std::ostream& os, const Dict& d) { return os << repr(d); }

 private:
  // Lookups are a linear scan for small dicts (the common case: a module's params) and go
  // through a hash index once a dict is large (flat dicts of a whole model).
  static constexpr std::size_t kIndexThreshold = 16;

  template <class Key>
  std::size_t position(const Key& k) const {
    if (index_) {
      auto it = index_->find(k);
      return it == index_->end() ? entries_.size() : it->second;
    }
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].first == k) return i;
    }
    return entries_.size();
  }

  value_type& emplace_new(K&& k, V&& v) {
    entries_.emplace_back(std::move(k), std::move(v));
    if (index_) {
      index_->emplace(entries_.back().first, entries_.size() - 1);
    } else if (entries_.size() > kIndexThreshold) {
      rebuild_index();
    }
    return entries_.back();
  }

  void rebuild_index() {
    if (entries_.size() <= kIndexThreshold) {
      index_.reset();
      return;
    }
    index_ = std::make_unique<Index>();
    index_->reserve(entries_.size());
    for (std::size_t i = 0; i < entries_.size(); ++i) index_->emplace(entries_[i].first, i);
  }

  template <class Key>
  static std::string key_repr(const Key& k) {
    std::string s;
    detail::repr_key_into(s, K(k));
    return s;
  }

  using Index = std::unordered_map<K, std::size_t, detail::KeyHash, detail::KeyEq>;
  std::vector<value_type> entries_;
  std::unique_ptr<Index> index_;
};

}  // namespace linum::pytree
