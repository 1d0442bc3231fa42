// flax.core.scope's collection filters: which variable collections (or rng streams) a scope may
// mutate, and which ones a lifted transform sees, splits or broadcasts (flax/core/scope.py).
#pragma once

#include <initializer_list>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <linum/autodiff/tree_bridge.hpp>

namespace linum::lift {

// Filter = bool | str | Collection[str] | DenyList. Flax checks a filter's type when it is used;
// here the compiler does (no constructor from numbers: in_filter(1, "a") does not compile), but a
// null const char* (Python's None) throws InvalidFilterError('Invalid Filter: "None"').
class Filter {
 public:
  enum class Kind { Bool, Str, Set, Deny };

  Filter(bool b) : kind_(Kind::Bool), value_(b) {}  // NOLINT(google-explicit-constructor)
  Filter(const char* name);                         // NOLINT
  Filter(std::string name) : kind_(Kind::Str), names_{std::move(name)} {}  // NOLINT
  Filter(std::initializer_list<std::string> names) : kind_(Kind::Set), names_(names) {}
  Filter(std::set<std::string> names) : kind_(Kind::Set), names_(std::move(names)) {}  // NOLINT
  Filter(const std::vector<std::string>& names)  // NOLINT(google-explicit-constructor)
      : kind_(Kind::Set), names_(names.begin(), names.end()) {}
  Filter(int) = delete;

  // DenyList(deny): every collection except those `deny` matches.
  static Filter deny_list(Filter deny);

  Kind kind() const { return kind_; }
  bool value() const { return value_; }                          // a Bool filter's value
  const std::set<std::string>& names() const { return names_; }  // a Str (one name) or Set filter
  const Filter& deny() const { return *deny_; }                  // a DenyList's inner filter

  friend bool operator==(const Filter& a, const Filter& b);
  // Python's repr: True, 'a', {'a', 'b'}, DenyList(deny='a').
  friend std::ostream& operator<<(std::ostream& os, const Filter& f);

 private:
  Filter() = default;
  Kind kind_ = Kind::Bool;
  bool value_ = false;
  std::set<std::string> names_;
  std::shared_ptr<const Filter> deny_;
};

inline Filter DenyList(Filter deny) { return Filter::deny_list(std::move(deny)); }

bool in_filter(const Filter& f, const std::string& col);
bool is_filter_empty(const Filter& f);
Filter union_filters(const Filter& a, const Filter& b);
Filter subtract_filters(const Filter& a, const Filter& b);
Filter intersect_filters(const Filter& a, const Filter& b);

// group_collections(xs, filters): each collection of the dict `xs` lands in the group of the first
// filter that matches it, in xs's key order; the result has one dict per filter.
std::vector<Tree> group_collections(const Tree& xs, const std::vector<Filter>& filters);

}  // namespace linum::lift
