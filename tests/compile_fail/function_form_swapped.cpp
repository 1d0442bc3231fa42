// nn::apply(module, fn): Flax's order is nn.apply(fn, module).
// expected-error: nn::apply(fn, module): the function comes first
#include <linum/nn/module.hpp>

struct Scale : linum::nn::Module<Scale> {
  linum::Array call(const linum::Array& x) { return x; }
};

int main() {
  auto fn = [](Scale& m, const linum::Array& x) { return m(x); };
  linum::nn::apply(Scale(), fn);
}
