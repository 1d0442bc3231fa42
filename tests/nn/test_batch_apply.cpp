// nn::BatchApply (flax.linen.BatchApply): Flax's docstring example, pytree inputs and outputs,
// inputs with fewer than num_dims axes passed unmerged, which input names the split dims, a module
// as f (its params where the module belongs), gradients and jit through it, and Flax's errors.
// Expected values are f applied to inputs reshaped by hand.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../autodiff/check_grads.hpp"
#include "../support/testing.hpp"
#include "nn_testing.hpp"

namespace test_batch_apply {

using namespace linum;
using testing::allclose;

namespace {

struct DenseOverTime : nn::Module<DenseOverTime> {
  Array call(const Array& x) { return nn::BatchApply(nn::Dense(5))(x); }
};

}  // namespace

TEST_CASE("BatchApply: Flax's example: f sees (2*3, 4) and (4,), the output is split to (2, 3)") {
  Array a = random::normal(random::key(0), {2, 3, 4});
  Array b = random::normal(random::key(1), {4});
  auto raises = [](const Array& x, const Array& y) {
    if (x.ndim() != 2) throw ValueError("a must be shape 2");
    if (y.ndim() != 1) throw ValueError("b must be shape 1");
    return dot(x, y);
  };
  Array out = nn::BatchApply(raises)(a, b);
  Array expected = reshape(raises(reshape(a, {6, 4}), b), {2, 3});
  CHECK(out.shape() == Shape{2, 3});
  CHECK(allclose(out, expected, 0.0f));
}

TEST_CASE("BatchApply: pytrees in and out, num_dims, pass-through arguments, the example input") {
  Array x = random::normal(random::key(2), {2, 3, 4, 5});
  Array w = random::normal(random::key(3), {5, 2});
  // num_dims=3 merges (2, 3, 4) into 24; a pair of outputs is split leaf by leaf.
  auto f = [](const Array& xx, const Array& ww, double scale) {
    CHECK(xx.shape() == Shape{24, 5});
    return std::make_pair(matmul(xx, ww) * scale, sum(xx, {1}));
  };
  auto [y, s] = nn::BatchApply(f, 3)(x, w, 2.0);
  CHECK(allclose(y, reshape(matmul(reshape(x, {24, 5}), w) * 2.0, {2, 3, 4, 2})));
  CHECK(allclose(s, sum(x, {3})));

  // A Tree argument has every leaf merged (those with enough axes); a Tree result is split.
  Tree t{{"u", Tree(x)}, {"v", Tree(random::normal(random::key(4), {2, 3, 5}))}};
  auto g = [](const Tree& tt) {
    CHECK(tt["u"].leaf().shape() == Shape{6, 4, 5});
    CHECK(tt["v"].leaf().shape() == Shape{6, 5});
    return Tree{{"z", Tree(sum(tt["u"].leaf(), {1}) + tt["v"].leaf())}};
  };
  Tree r = nn::BatchApply(g)(t);
  CHECK(allclose(r["z"].leaf(), sum(x, {2}) + t["v"].leaf()));

  // The split dims come from the first input (argument order, then leaf order) that has num_dims
  // axes: here the second argument, as the first has a single axis and passes unmerged.
  Array v1 = random::normal(random::key(5), {7});
  Array m = random::normal(random::key(6), {4, 7});  // leading (4, 7) -> 28
  auto h = [](const Array& a, const Array& bb) {
    CHECK(a.shape() == Shape{7});
    CHECK(bb.shape() == Shape{28});
    return bb * 2.0f;
  };
  CHECK(allclose(nn::BatchApply(h)(v1, m), m * 2.0f));
  // A vector of arrays is a pytree too.
  auto k = [](const std::vector<Array>& xs) { return xs[0] + xs[1]; };
  CHECK(allclose(nn::BatchApply(k)(std::vector<Array>{m, m}), m * 2.0f));
}

TEST_CASE("BatchApply(nn::Dense) in a compact method: Dense_0's kernel (in, out); per-step dense") {
  Array x = random::normal(random::key(7), {3, 2, 4});  // (time, batch, features)
  auto [y, v] = DenseOverTime().init_with_output(random::key(0), x);
  CHECK(v["params"].as_dict().keys() == std::vector<std::string>{"Dense_0"});
  CHECK(v["params"]["Dense_0"]["kernel"].leaf().shape() == Shape{4, 5});
  Tree dv{{"params", v["params"]["Dense_0"]}};
  CHECK(allclose(y, reshape(nn::Dense(5).apply(dv, reshape(x, {6, 4})), {3, 2, 5})));
}

TEST_CASE("BatchApply: gradients and jit through the reshapes") {
  Array x = astype(random::normal(random::key(8), {2, 3, 4}), float64);
  // One axis: w reaches f unmerged (a 2-d w would be merged too, as every input with num_dims
  // axes).
  Array w = astype(random::normal(random::key(9), {12}), float64);
  auto f = [](const Array& xx, const Array& ww) { return tanh(matmul(xx, reshape(ww, {4, 3}))); };
  Array expected = reshape(f(reshape(x, {6, 4}), w), {2, 3, 3});
  CHECK(allclose(nn::BatchApply(f)(x, w), expected, 1e-12f));
  testing::check_grads([&](const Arrays& a) { return nn::BatchApply(f)(a[0], a[1]); }, {x, w});
  auto jf = jit([&](const Array& xx, const Array& ww) { return nn::BatchApply(f)(xx, ww); });
  CHECK(allclose(jf(x, w), expected, 1e-12f));
}

TEST_CASE("BatchApply errors: no input with num_dims axes; outputs that can't be split") {
  auto id = [](const Array& a) { return a; };
  testing::check_error<ValueError>([&] { (void)nn::BatchApply(id)(ones({4})); },
                                   {"BatchApply requires at least one input with ndim >= 2."});
  testing::check_error<ValueError>([&] { nn::BatchApply(id, 3)(ones({2, 3})); }, {"ndim >= 3"});
  // f's output lost the merged axis: (6,) -> sum -> () can't become (2, 3).
  auto total = [](const Array& a) { return sum(a); };
  testing::check_error<ValueError>(
      [&] {
        (void)nn::BatchApply(total)(ones({2, 3, 4}));
      },
      {"BatchApply", "shape ()", "(2, 3)"});
  testing::check_error<ValueError>([&] { nn::BatchApply(id, -1); }, {"BatchApply", "num_dims"});
}

}  // namespace test_batch_apply
