// Helpers shared by the M-case suites: exact array and tree equality, sorted dict keys, and
// printing of key lists in failed checks.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <linum/linum.hpp>

template <>
struct doctest::StringMaker<std::vector<std::string>> {
  static doctest::String convert(const std::vector<std::string>& v) {
    std::string s = "{";
    for (const auto& x : v) s += (s.size() > 1 ? ", " : "") + x;
    return (s + "}").c_str();
  }
};

namespace mcases {

using Keys = std::vector<std::string>;

inline bool same(const linum::Array& a, const linum::Array& b) {
  return a.shape() == b.shape() && all(equal(a, b)).item<bool>();
}
// A dict's keys in sorted order (Flax compares dicts regardless of insertion order).
inline Keys keys(const linum::Tree& t) {
  auto k = t.as_dict().keys();
  std::sort(k.begin(), k.end());
  return k;
}
// Same number of leaves and every leaf equal.
inline bool tree_same(const linum::Tree& a, const linum::Tree& b) {
  auto la = linum::pytree::tree_leaves<linum::Array>(a);
  auto lb = linum::pytree::tree_leaves<linum::Array>(b);
  if (la.size() != lb.size()) return false;
  for (std::size_t i = 0; i < la.size(); ++i)
    if (!same(la[i], lb[i])) return false;
  return true;
}

}  // namespace mcases
