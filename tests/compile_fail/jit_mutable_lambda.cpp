// jit of a `mutable` lambda: jit calls f as a const function object (only when it traces).
// expected-error: jit: f is not const-callable
#include <linum/autodiff/jit.hpp>

int main() {
  auto f = linum::jit([calls = 0](const linum::Array& x) mutable {
    ++calls;
    return x;
  });
  f(linum::Array(1.0f));
}
