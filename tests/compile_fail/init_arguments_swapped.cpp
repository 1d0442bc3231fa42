// Module::init given the variables of an earlier init where the PRNG key goes.
// expected-error: init: the first argument must be a PRNG key or nn::Rngs
#include <linum/nn/module.hpp>

struct Scale : linum::nn::Module<Scale> {
  linum::Array call(const linum::Array& x) { return x; }
};

int main() {
  linum::Array x(1.0f);
  linum::Tree variables = Scale().init(linum::random::key(0), x);
  Scale().init(variables, x);
}
