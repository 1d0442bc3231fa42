// A module class that defines no `call` (Python's __call__), initialized as if it had one.
// expected-error: this module has no `call`
#include <linum/nn/module.hpp>

struct Encoder : linum::nn::Module<Encoder> {
  linum::Array encode(const linum::Array& x) { return x; }
};

int main() { Encoder().init(linum::random::key(0), linum::Array(1.0f)); }
