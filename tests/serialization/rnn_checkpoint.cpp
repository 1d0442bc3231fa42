// The linum half of rnn_checkpoint.py: Flax checkpoints of every recurrent layer. Reads the
// checkpoint Python wrote of each model in Flax's layout (values from a closed formula of the
// path) into linum's init of the same model and checks every value; writes linum's init of each
// model for Python to compare with Flax's layout byte for byte. Needs LINUM_INTEROP_DIR.
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <linum/nn/nn.hpp>

#include "helpers.hpp"
#include "interop_files.hpp"

namespace ser = linum::serialization;
namespace nn = linum::nn;
using namespace ser_test;
using linum::Shape;

namespace {

std::string dir() { return interop_dir("rnn_checkpoint.py"); }

// rnn_checkpoint.py's values: element k of the leaf at `path` is ((k * 37 + h) % 101 - 50) / 8,
// h the sum of the path's characters mod 101.
Vec formula(const std::string& path, std::size_t n) {
  std::size_t h = 0;
  for (unsigned char c : path) h += c;
  h %= 101;
  Vec v;
  for (std::size_t k = 0; k < n; ++k)
    v.push_back((static_cast<double>((k * 37 + h) % 101) - 50) / 8);
  return v;
}

// Checks every leaf of `t` against the formula; returns how many there were.
int check_leaves(const Tree& t, const std::string& path) {
  if (t.is_leaf()) {
    INFO(path);
    CHECK(values(t.leaf()) == formula(path, static_cast<std::size_t>(t.leaf().size())));
    return 1;
  }
  int n = 0;
  for (const auto& [k, v] : t.as_dict()) n += check_leaves(v, path + "/" + k);
  return n;
}

const linum::lift::ScanOptions kScanCell{.variable_broadcast = "params",
                                         .split_rngs = {{"params", false}},
                                         .in_axes = {1},
                                         .out_axes = 1};
Array inputs() { return linum::random::normal(linum::random::key(1), {2, 5, 3}); }
Array first_step(const Array& x) { return linum::squeeze(linum::slice(x, {{}, {0, 1}}), 1); }

struct Tagger : nn::Module<Tagger> {
  Array call(const Array& x) { return nn::Dense(2)(nn::RNN(nn::LSTMCell(4))(x)); }
};
template <class Cell>
struct OneRNN : nn::Module<OneRNN<Cell>> {
  Array call(const Array& x) { return nn::RNN(Cell(4))(x); }
};
struct BiTagger : nn::Module<BiTagger> {
  Array call(const Array& x) {
    return nn::Bidirectional(nn::RNN(nn::LSTMCell(4)), nn::RNN(nn::GRUCell(5)))(x);
  }
};
struct ScanClass : nn::Module<ScanClass> {
  Array call(const Array& x) {
    auto lstm = nn::scan(nn::LSTMCell(4), kScanCell);
    return lstm(lstm.initialize_carry(linum::random::key(0), first_step(x).shape()), x).second;
  }
};
struct ScanFunction : nn::Module<ScanFunction> {
  Array call(const Array& x) {
    nn::LSTMCell cell(4);
    auto body = [](nn::LSTMCell& c, const nn::LSTMCell::Carry& carry, const Array& xt) {
      return c(carry, xt);
    };
    auto carry = cell.initialize_carry(linum::random::key(0), first_step(x).shape());
    return nn::scan(body, kScanCell)(cell, carry, x).second;
  }
};
struct RematCell : nn::Module<RematCell> {
  Array call(const Array& x) {
    nn::LSTMCell::Carry c{linum::zeros({2, 4}), linum::zeros({2, 4})};
    return nn::remat(nn::LSTMCell(4))(c, x).second;
  }
};

// rnn_checkpoint.py's MODELS, by name: linum's init of each from key 0.
std::vector<std::pair<std::string, std::function<Tree()>>> models() {
  const Array x = inputs(), xt = first_step(x);
  const nn::LSTMCell::Carry c0{linum::zeros({2, 4}), linum::zeros({2, 4})};
  return {
      {"rnn_lstm", [=] { return Tagger().init(linum::random::key(0), x); }},
      {"rnn_optimized",
       [=] { return OneRNN<nn::OptimizedLSTMCell>().init(linum::random::key(0), x); }},
      {"rnn_gru", [=] { return OneRNN<nn::GRUCell>().init(linum::random::key(0), x); }},
      {"rnn_simple", [=] { return OneRNN<nn::SimpleCell>().init(linum::random::key(0), x); }},
      {"bidirectional", [=] { return BiTagger().init(linum::random::key(0), x); }},
      {"root_rnn", [=] { return nn::RNN(nn::GRUCell(4)).init(linum::random::key(0), x); }},
      {"root_bidirectional",
       [=] {
         return nn::Bidirectional(nn::RNN(nn::LSTMCell(4)), nn::RNN(nn::LSTMCell(4)))
             .init(linum::random::key(0), x);
       }},
      {"scan_class", [=] { return ScanClass().init(linum::random::key(0), x); }},
      {"scan_function", [=] { return ScanFunction().init(linum::random::key(0), x); }},
      {"remat_cell", [=] { return RematCell().init(linum::random::key(0), xt); }},
      {"cell", [=] { return nn::LSTMCell(4).init(linum::random::key(0), c0, xt); }},
  };
}

}  // namespace

TEST_CASE("linum loads the Flax checkpoint of every recurrent layer that Python wrote") {
  for (const auto& [name, init] : models()) {
    INFO(name);
    const Tree target = init();
    const Tree restored = ser::from_bytes(target, read_file(dir() + "/py_" + name + ".msgpack"));
    // Every leaf of linum's tree was found at its path in Flax's layout, with its value.
    const int n = check_leaves(restored["params"], "params");
    CHECK(n == static_cast<int>(linum::pytree::tree_leaves<Array>(target).size()));
  }
}

TEST_CASE("linum writes its init of every recurrent layer for Python to compare with Flax's") {
  for (const auto& [name, init] : models())
    write_file(dir() + "/linum_" + name + ".msgpack", ser::to_bytes(init()));
}
