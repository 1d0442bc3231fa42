// Shared checks of the robustness suite: an error of a given type whose message holds given parts.
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>

namespace robust {

// Runs f, which must throw E (or a subclass) whose what() contains every part.
template <class E, class F>
void check_error(F&& f, std::initializer_list<const char*> parts) {
  bool thrown = false;
  try {
    f();
  } catch (const E& e) {
    thrown = true;
    const std::string msg = e.what();
    for (const char* p : parts) {
      INFO("message: ", msg);
      CHECK(msg.find(p) != std::string::npos);
    }
  }
  CHECK(thrown);
}

}  // namespace robust
