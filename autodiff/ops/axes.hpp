// Axes: the `axis` argument of reductions, None (all axes), one int, or several ints.
#pragma once

#include <initializer_list>
#include <vector>

namespace linum {

struct Axes {
  std::vector<int> axes;
  bool all = true;  // axis=None
  Axes() = default;
  Axes(int a) : axes{a}, all(false) {}  // NOLINT(google-explicit-constructor)
  Axes(std::initializer_list<int> a) : axes(a), all(false) {}
  Axes(std::vector<int> a) : axes(std::move(a)), all(false) {}  // NOLINT
};

}  // namespace linum
