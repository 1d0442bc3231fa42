// User-defined RNN cells (subclasses of flax.linen.RNNCellBase): a cell with a dict carry and one
// with a typed tuple carry over two feature axes run through nn::RNN and nn::Bidirectional. Their
// outputs match a loop of the cell over time, their params sit where Flax puts a custom cell's
// (cell/..., or <Cell>_0/... in a compact parent, keys sorted by the scan), and their carries
// round-trip through initial_carry.
#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../support/testing.hpp"
#include "nn_testing.hpp"

namespace test_rnn_cell_base {

using namespace linum;
using testing::allclose;
using testing::at_time;
using testing::check_error;
using testing::keys;
using Keys = std::vector<std::string>;

namespace {

// h' = tanh(Dense 'i'(x) + Dense 'h'(h)), the carry a dict {'h': h, 'steps': steps + 1}: Flax's
// default Tree carry, with a leaf that counts the steps taken.
struct CountingCell : nn::RNNCellBase<CountingCell> {
  std::int64_t features;
  explicit CountingCell(std::int64_t f) : features(f) {}
  static constexpr int num_feature_axes = 1;
  std::pair<Tree, Array> call(const Tree& carry, const Array& x) {
    Array h =
        tanh(nn::Dense(features).named("i")(x) +
             nn::Dense({.features = features, .use_bias = false, .name = "h"})(carry["h"].leaf()));
    return {Tree{{"h", h}, {"steps", carry["steps"].leaf() + 1.0f}}, h};
  }
  Tree initialize_carry(const Array&, const Shape& input_shape) const {
    Shape batch(input_shape.begin(), input_shape.end() - 1);
    Shape hs = batch;
    hs.push_back(features);
    return Tree{{"h", zeros(hs)}, {"steps", zeros(batch)}};
  }
};

// Inputs with two feature axes (batch..., a, b), flattened into one Dense 'in'; the carry a typed
// tuple (h, running sum of the inputs), num_feature_axes a method as in ConvLSTMCell.
struct GridCell : nn::RNNCellBase<GridCell> {
  using Carry = std::tuple<Array, Array>;
  std::int64_t features;
  explicit GridCell(std::int64_t f) : features(f) {}
  int num_feature_axes() const { return 2; }
  std::pair<Carry, Array> call(const Carry& carry, const Array& x) {
    const auto& [h, total] = carry;
    Shape flat(x.shape().begin(), x.shape().end() - 2);
    flat.push_back(x.shape(-2) * x.shape(-1));
    Array h2 = nn::Dense(features).named("in")(reshape(x, flat)) + h;
    return {{h2, total + sum(x, {-2, -1})}, h2};
  }
  Carry initialize_carry(const Array&, const Shape& input_shape) const {
    Shape batch(input_shape.begin(), input_shape.end() - 2);
    Shape hs = batch;
    hs.push_back(features);
    return {zeros(hs), zeros(batch)};
  }
};

struct Tagger : nn::Module<Tagger> {
  Array call(const Array& x) { return nn::Dense(2)(nn::RNN(CountingCell(4))(x)); }
};

}  // namespace

TEST_CASE(
    "a user cell derived from RNNCellBase: is a Module, and Flax's cells derive from it too") {
  static_assert(std::derived_from<CountingCell, nn::ModuleBase>);
  static_assert(std::is_same_v<CountingCell::Carry, Tree>);  // the default carry
  static_assert(std::derived_from<nn::LSTMCell, nn::RNNCellBase<nn::LSTMCell>>);
  static_assert(std::derived_from<nn::GRUCell, nn::RNNCellBase<nn::GRUCell>>);
  static_assert(std::derived_from<nn::MGUCell, nn::RNNCellBase<nn::MGUCell>>);
  static_assert(std::derived_from<nn::ConvLSTMCell, nn::RNNCellBase<nn::ConvLSTMCell>>);
  static_assert(std::is_same_v<nn::LSTMCell::Carry, std::pair<Array, Array>>);  // unchanged
  CHECK(CountingCell(3).type_name() == "CountingCell");
}

TEST_CASE("nn::RNN over a user cell: params at cell/..., outputs a loop of the cell, the carry") {
  const std::int64_t B = 2, T = 5, Fin = 3, F = 4;
  Array xs = random::normal(random::key(1), {B, T, Fin});
  nn::RNN rnn{CountingCell(F)};
  Tree v = rnn.init(random::key(0), xs);
  // Flax: {'params': {'cell': {'h': {'kernel'}, 'i': {'bias', 'kernel'}}}}, sorted by the scan.
  CHECK(keys(v["params"]) == Keys{"cell"});
  CHECK(keys(v["params"]["cell"]) == Keys{"h", "i"});
  CHECK(keys(v["params"]["cell"]["h"]) == Keys{"kernel"});
  CHECK(v["params"]["cell"]["i"]["kernel"].leaf().shape() == Shape{Fin, F});
  CHECK(v["params"]["cell"]["h"]["kernel"].leaf().shape() == Shape{F, F});

  auto [carry, ys] = rnn.apply(v, xs, nn::RNNArgs{}, &nn::RNN::call_with_carry);
  CHECK(ys.shape() == Shape{B, T, F});
  // The same cell stepped by hand with the RNN's params.
  const Tree cell_vars{{"params", v["params"]["cell"]}};
  CountingCell cell(F);
  Tree c = cell.initialize_carry(random::key(0), {B, Fin});
  for (std::int64_t t = 0; t < T; ++t) {
    auto [c2, y] = cell.apply(cell_vars, c, at_time(xs, t));
    CHECK(allclose(at_time(ys, t), y));
    c = c2;
  }
  CHECK(allclose(carry["h"].leaf(), c["h"].leaf()));
  CHECK(allclose(carry["steps"].leaf(), full({B}, float(T)), 0.0f));

  // seq_lengths: each sequence's carry is the one after its last valid step.
  Array lens = astype(array({3, 5}), int32);
  auto [cl, yl] = rnn.apply(v, xs, nn::RNNArgs{.seq_lengths = lens}, &nn::RNN::call_with_carry);
  CHECK(allclose(cl["steps"].leaf(), array({3.0f, 5.0f}), 0.0f));

  // Continuing from a carry: two halves equal the whole sequence.
  Array first = slice(xs, {{}, {0, 2}}), rest = slice(xs, {{}, {2, T}});
  auto [c1, y1] = rnn.apply(v, first, nn::RNNArgs{}, &nn::RNN::call_with_carry);
  auto [cend, y2] = rnn.apply(v, rest, nn::RNNArgs{.initial_carry = c1}, &nn::RNN::call_with_carry);
  CHECK(allclose(concatenate({y1, y2}, 1), ys));
  CHECK(allclose(cend["steps"].leaf(), full({B}, float(T)), 0.0f));
}

TEST_CASE("a user cell built in a compact method is that module's child <Cell>_0") {
  Array xs = random::normal(random::key(2), {2, 5, 3});
  auto [y, v] = Tagger().init_with_output(random::key(0), xs);
  CHECK(y.shape() == Shape{2, 5, 2});
  CHECK(keys(v["params"]) == Keys{"CountingCell_0", "Dense_0"});
  CHECK(keys(v["params"]["CountingCell_0"]) == Keys{"h", "i"});
  // The same params under a top-level RNN's `cell` give the same hidden states.
  const Tree rnn_vars{{"params", Tree{{"cell", v["params"]["CountingCell_0"]}}}};
  Array h = nn::RNN(CountingCell(4)).apply(rnn_vars, xs);
  const Tree dense_vars{{"params", v["params"]["Dense_0"]}};
  CHECK(allclose(y, nn::Dense(2).apply(dense_vars, h)));
}

TEST_CASE("nn::RNN over a cell with two feature axes and a tuple carry; Bidirectional of them") {
  const std::int64_t B = 2, T = 4, F = 3;
  Array xs = random::normal(random::key(3), {B, T, 2, 3});
  nn::RNN rnn{GridCell(F)};
  Tree v = rnn.init(random::key(0), xs);
  CHECK(v["params"]["cell"]["in"]["kernel"].leaf().shape() == Shape{6, F});
  auto [carry, ys] = rnn.apply(v, xs, nn::RNNArgs{}, &nn::RNN::call_with_carry);
  CHECK(ys.shape() == Shape{B, T, F});
  // The carry is the tuple (h, total); total sums every input of the sequence.
  REQUIRE(carry.is_tuple());
  CHECK(allclose(carry[1].leaf(), sum(xs, {1, 2, 3}), 1e-5f));
  // h accumulates Dense(x_t): the sum over t of x_t W + b.
  Array w = v["params"]["cell"]["in"]["kernel"].leaf(),
        b = v["params"]["cell"]["in"]["bias"].leaf();
  Array flat = reshape(xs, {B, T, 6});
  CHECK(allclose(carry[0].leaf(), sum(matmul(flat, w), {1}) + b * float(T), 1e-4f));
  CHECK(allclose(slice(ys, {{}, {T - 1, T}}), expand_dims(carry[0].leaf(), 1)));
  // time_major puts time first; the cell sees the same steps.
  CHECK(allclose(nn::RNN(GridCell(F), {.time_major = true}).apply(v, moveaxis(xs, 1, 0)),
                 moveaxis(ys, 1, 0)));
  // initial_carry in the cell's tuple structure continues the sequence ...
  auto [c1, y1] = rnn.apply(v, slice(xs, {{}, {0, 1}}), nn::RNNArgs{}, &nn::RNN::call_with_carry);
  auto [c2, y2] = rnn.apply(v, slice(xs, {{}, {1, T}}), nn::RNNArgs{.initial_carry = c1},
                            &nn::RNN::call_with_carry);
  CHECK(allclose(concatenate({y1, y2}, 1), ys));
  // ... a carry of another structure is an error naming both.
  check_error<ValueError>(
      [&] {
        rnn.apply(v, xs, nn::RNNArgs{.initial_carry = Tree(zeros({B, F}))},
                  &nn::RNN::call_with_carry);
      },
      {"RNN: initial_carry", "structure of the cell's carry"});

  // Bidirectional: the forward and backward RNNs' cells as its fields.
  nn::Bidirectional bi(nn::RNN(GridCell(F)), nn::RNN(GridCell(2)));
  Tree bv = bi.init(random::key(0), xs);
  CHECK(keys(bv["params"]) == Keys{"forward_rnn", "backward_rnn"});
  CHECK(bv["params"]["backward_rnn"]["cell"]["in"]["kernel"].leaf().shape() == Shape{6, 2});
  Array by = bi.apply(bv, xs);
  CHECK(by.shape() == Shape{B, T, F + 2});
  const Tree fwd{{"params", bv["params"]["forward_rnn"]}};
  CHECK(allclose(slice(by, {{}, {}, {0, F}}), rnn.apply(fwd, xs)));
  // The backward half runs the sequence reversed and puts its outputs back in order.
  const Tree bwd{{"params", bv["params"]["backward_rnn"]}};
  Array back = nn::RNN(GridCell(2)).apply(bwd, flip(xs, {1}));
  CHECK(allclose(slice(by, {{}, {}, {F, F + 2}}), flip(back, {1})));
}

}  // namespace test_rnn_cell_base
