// A user RNN cell (an RNNCellBase subclass) that forgot initialize_carry, scanned by nn::RNN.
// expected-error: the cell needs `Carry initialize_carry
#include <linum/nn/recurrent.hpp>

struct EchoCell : linum::nn::RNNCellBase<EchoCell> {
  static constexpr int num_feature_axes = 1;
  std::pair<linum::Tree, linum::Array> call(const linum::Tree& c, const linum::Array& x) {
    return {c, x};
  }
};

int main() { linum::nn::RNN rnn{EchoCell()}; }
