// Module::apply with the input first and the variables second.
// expected-error: apply: the first argument must be the variables
#include <linum/nn/module.hpp>

struct Scale : linum::nn::Module<Scale> {
  linum::Array call(const linum::Array& x) { return x; }
};

int main() {
  linum::Array x(1.0f);
  linum::Tree variables = Scale().init(linum::random::key(0), x);
  Scale().apply(x, variables);
}
