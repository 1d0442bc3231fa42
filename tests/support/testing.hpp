// What every test suite needs: an array's values read back as doubles, the message of the
// exception a call throws, and a check that a call throws a given error naming given parts.
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/error.hpp>

namespace linum::testing {

// The elements of a as float64, in row-major order.
inline std::vector<double> values(const Array& a) {
  const Array c = astype(a, float64);
  const double* p = c.data<double>();
  return {p, p + c.size()};
}

// Runs f and returns the what() of the E it throws ("" when it throws nothing).
template <class E = Error, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

// Runs f, which must throw E (or a subclass) whose what() contains every part.
template <class E = Error, class F>
void check_error(F&& f, std::initializer_list<std::string_view> parts) {
  bool thrown = false;
  try {
    f();
  } catch (const E& e) {
    thrown = true;
    const std::string msg = e.what();
    INFO("message: ", msg);
    for (std::string_view p : parts) CHECK(msg.find(p) != std::string::npos);
  }
  CHECK(thrown);
}

}  // namespace linum::testing
