// MGUCell and ConvLSTMCell (flax.linen.recurrent): Flax's parameter trees (names, shapes, order,
// bias initializers, the same rng path as plain layers at those paths), each cell's output
// against its step written out here from Flax's equations with the cell's own params,
// initialize_carry, nn::RNN over a sequence against a loop of the cell and under jit
// (num_feature_axes of the conv cell: len(kernel_size) + 1), gradients by finite differences, and
// the errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../autodiff/check_grads.hpp"
#include "../support/testing.hpp"
#include "nn_testing.hpp"

namespace test_recurrent_cells {

using namespace linum;
using testing::allclose;
using testing::at_time;
using testing::keys;
using testing::shape_of;
using Keys = std::vector<std::string>;

namespace {

Array P(const Tree& p, const char* mod, const char* name) { return p[mod][name].leaf(); }
// Gate k of the four along the last axis: z[..., k*n:(k+1)*n].
Array gate(const Array& z, std::size_t k) { return split(z, 4, -1)[k]; }

// Plain Denses / Convs named as the cell's, at the root: their params come from the same keys.
struct MGUProbe : nn::Module<MGUProbe> {
  Array call(const Array& x, const Array& h) {
    Array a = nn::Dense({.features = 4, .name = "if"})(x);
    return a + nn::Dense({.features = 4,
                          .use_bias = false,
                          .kernel_init = nn::initializers::orthogonal(),
                          .name = "hf"})(h);
  }
};
struct ConvProbe : nn::Module<ConvProbe> {
  Array call(const Array& x) {
    return nn::Conv({.features = 16, .kernel_size = {3, 3}, .name = "ih"})(x);
  }
};

struct MGUTagger : nn::Module<MGUTagger> {
  Array call(const Array& x) { return nn::RNN(nn::MGUCell(4))(x); }
};
struct ConvLSTMTagger : nn::Module<ConvLSTMTagger> {
  std::vector<std::int64_t> ks;
  explicit ConvLSTMTagger(std::vector<std::int64_t> k) : ks(std::move(k)) {}
  Array call(const Array& x) {
    return nn::RNN(nn::ConvLSTMCell({.features = 3, .kernel_size = ks}))(x);
  }
};

Array conv_same(const Array& x, const Array& k) {
  ConvOptions o;
  o.padding = "SAME";
  return conv_general_dilated(x, k, o);
}

}  // namespace

TEST_CASE("MGUCell: params if, hf, hn, in (Flax's order and biases); the MGU step") {
  Array x = random::normal(random::key(1), {2, 3});
  Array h = random::normal(random::key(2), {2, 4});
  nn::MGUCell cell(4);
  auto [out, v] = cell.init_with_output(random::key(0), h, x);
  const Tree& p = v["params"];
  // Flax's MGUCell.__call__: dense_i 'if' (bias: forget_bias_init), dense_h 'hf' (no bias),
  // dense_h 'hn' (use_bias=reset_gate), dense_i 'in' (bias: activation_bias_init).
  CHECK(keys(p) == Keys{"if", "hf", "hn", "in"});
  CHECK(keys(p["if"]) == Keys{"kernel", "bias"});
  CHECK(keys(p["hf"]) == Keys{"kernel"});
  CHECK(keys(p["hn"]) == Keys{"kernel", "bias"});
  CHECK(keys(p["in"]) == Keys{"kernel", "bias"});
  CHECK(shape_of(p["if"]["kernel"]) == Shape{3, 4});
  CHECK(shape_of(p["in"]["kernel"]) == Shape{3, 4});
  for (const char* g : {"hf", "hn"}) {
    CHECK(shape_of(p[g]["kernel"]) == Shape{4, 4});
    CHECK(allclose(matmul(transpose(P(p, g, "kernel")), P(p, g, "kernel")), eye(4), 1e-5f));
  }
  CHECK(allclose(P(p, "if", "bias"), ones({4}), 0.0f));  // forget_bias_init = ones_init()
  CHECK(allclose(P(p, "in", "bias"), zeros({4}), 0.0f));
  CHECK(allclose(P(p, "hn", "bias"), zeros({4}), 0.0f));
  // The same keys as plain Denses at those paths (lecun_normal and orthogonal, bit for bit).
  Tree probe = MGUProbe().init(random::key(0), x, h)["params"];
  CHECK(allclose(P(p, "if", "kernel"), P(probe, "if", "kernel"), 0.0f));
  CHECK(allclose(P(p, "hf", "kernel"), P(probe, "hf", "kernel"), 0.0f));

  // Biases that matter, then Flax's equations: f = gate(x W_if + b_if + h W_hf),
  // n = act(x W_in + b_in + f (h W_hn + b_hn)), h' = (1 - f) n + f h.
  Tree v2 = v;
  v2["params"]["if"]["bias"] = Tree(random::normal(random::key(3), {4}));
  v2["params"]["hn"]["bias"] = Tree(random::normal(random::key(4), {4}));
  v2["params"]["in"]["bias"] = Tree(random::normal(random::key(5), {4}));
  const Tree& q = v2["params"];
  auto in = [&](const char* n) { return matmul(x, P(q, n, "kernel")) + P(q, n, "bias"); };
  Array f = sigmoid(in("if") + matmul(h, P(q, "hf", "kernel")));
  Array n = tanh(in("in") + f * (matmul(h, P(q, "hn", "kernel")) + P(q, "hn", "bias")));
  Array h2 = (1.0f - f) * n + f * h;
  auto [carry, y] = cell.apply(v2, h, x);
  CHECK(allclose(carry, h2));
  CHECK(allclose(y, h2));
  CHECK(allclose(out.second, cell.apply(v, h, x).second, 0.0f));
}

TEST_CASE("MGUCell: reset_gate=false (hn without bias, not gated), custom fns and initializers") {
  Array x = random::normal(random::key(6), {2, 3});
  Array h = random::normal(random::key(7), {2, 5});
  auto half = [](const Array& a) { return a * 0.5f; };
  nn::MGUCell cell({.features = 5,
                    .activation_fn = half,
                    .forget_bias_init = nn::initializers::constant(0.3),
                    .activation_bias_init = nn::initializers::constant(-0.2),
                    .reset_gate = false});
  auto [out, v] = cell.init_with_output(random::key(0), h, x);
  const Tree& p = v["params"];
  CHECK(keys(p) == Keys{"if", "hf", "hn", "in"});
  CHECK(keys(p["hn"]) == Keys{"kernel"});
  CHECK(allclose(P(p, "if", "bias"), full({5}, 0.3), 1e-7f));
  CHECK(allclose(P(p, "in", "bias"), full({5}, -0.2), 1e-7f));
  // n = act(x W_in + b_in + h W_hn), act here x / 2.
  Array f = sigmoid(matmul(x, P(p, "if", "kernel")) + P(p, "if", "bias") +
                    matmul(h, P(p, "hf", "kernel")));
  Array n = 0.5f * (matmul(x, P(p, "in", "kernel")) + P(p, "in", "bias") +
                    matmul(h, P(p, "hn", "kernel")));
  CHECK(allclose(out.second, (1.0f - f) * n + f * h));

  // dtype is the Denses' computation dtype, param_dtype the params'.
  nn::MGUCell mixed({.features = 5, .dtype = float32, .param_dtype = float64});
  auto [mo, mv] = mixed.init_with_output(random::key(0), h, x);
  CHECK(mv["params"]["in"]["kernel"].leaf().dtype() == float64);
  CHECK(mo.second.dtype() == float32);
}

TEST_CASE("MGUCell.initialize_carry: carry_init of batch dims + (features,); errors") {
  nn::MGUCell cell({.features = 4, .carry_init = nn::initializers::normal(1.0)});
  Array c = cell.initialize_carry(random::key(9), {2, 7, 3});
  CHECK(c.shape() == Shape{2, 7, 4});
  CHECK(allclose(c, nn::initializers::normal(1.0)(random::key(9), {2, 7, 4}, float32), 0.0f));
  CHECK(allclose(nn::MGUCell(4).initialize_carry(random::key(9), {3}), zeros({4}), 0.0f));
  testing::check_error<ValueError>([] { nn::MGUCell(4).initialize_carry(random::key(0), {}); },
                                   {"MGUCell.initialize_carry", "feature axis"});
  testing::check_error<ValueError>(
      [] {
        nn::MGUCell(0).initialize_carry(random::key(0), {2, 3});
      },
      {"MGUCell", "features must be positive", "got 0"});
  testing::check_error<ValueError>(
      [] {
        nn::MGUCell(4).init(random::key(0), zeros({2, 4}), Array(1.0f));
      },
      {"MGUCell", "feature axis"});
}

TEST_CASE("RNN(MGUCell): params/MGUCell_0/... in a compact parent; equals a loop of the cell") {
  Array xs = random::normal(random::key(10), {2, 5, 3});
  auto [ys, v] = MGUTagger().init_with_output(random::key(0), xs);
  CHECK(ys.shape() == Shape{2, 5, 4});
  CHECK(keys(v["params"]) == Keys{"MGUCell_0"});
  const Tree& cp = v["params"]["MGUCell_0"];
  // Out of the scan the dict keys are sorted, as jax's pytree flattening leaves them.
  CHECK(keys(cp) == Keys{"hf", "hn", "if", "in"});
  CHECK(keys(cp["if"]) == Keys{"bias", "kernel"});
  nn::MGUCell cell(4);
  Array h = cell.initialize_carry(random::key(0), {2, 3});
  for (std::int64_t t = 0; t < 5; ++t) {
    auto [h2, y] = cell.apply(Tree{{"params", cp}}, h, at_time(xs, t));
    CHECK(allclose(at_time(ys, t), y));
    h = h2;
  }
  // Under jit: the same outputs.
  auto jrun = jit([&](const Array& x) { return MGUTagger().apply(v, x); });
  CHECK(allclose(jrun(xs), ys, 1e-6f));
  // A root RNN adopts the cell as its field `cell`; reverse runs from the last step.
  nn::RNN root(nn::MGUCell(4), {.reverse = true, .keep_order = true});
  Tree rv{{"params", Tree{{"cell", cp}}}};
  Array r = root.apply(rv, xs);
  h = cell.initialize_carry(random::key(0), {2, 3});
  for (std::int64_t t = 4; t >= 0; --t) {
    auto [h2, y] = cell.apply(Tree{{"params", cp}}, h, at_time(xs, t));
    CHECK(allclose(at_time(r, t), y));
    h = h2;
  }
}

TEST_CASE("MGUCell: gradients w.r.t. inputs, carry and kernels match finite differences") {
  Array x = astype(random::normal(random::key(11), {2, 3}), float64);
  Array h = astype(random::normal(random::key(12), {2, 4}), float64);
  nn::MGUCell cell({.features = 4, .param_dtype = float64});
  Tree v = cell.init(random::key(0), h, x);
  testing::check_grads(
      [&](const Arrays& a) {
        Tree p = v;
        p["params"]["hn"]["kernel"] = Tree(a[2]);
        p["params"]["if"]["kernel"] = Tree(a[3]);
        return cell.apply(p, a[1], a[0]).second;
      },
      {x, h, v["params"]["hn"]["kernel"].leaf(), v["params"]["if"]["kernel"].leaf()});
}

TEST_CASE("ConvLSTMCell: convs ih and hh with 4 * features filters; gates i, g, f, o; f + 1") {
  Array x = random::normal(random::key(13), {2, 5, 5, 3});
  nn::ConvLSTMCell cell({.features = 4, .kernel_size = {3, 3}});
  CHECK(cell.num_feature_axes() == 3);
  nn::ConvLSTMCell::Carry carry{random::normal(random::key(14), {2, 5, 5, 4}),
                                random::normal(random::key(15), {2, 5, 5, 4})};
  auto [out, v] = cell.init_with_output(random::key(0), carry, x);
  const Tree& p = v["params"];
  CHECK(keys(p) == Keys{"ih", "hh"});
  CHECK(keys(p["ih"]) == Keys{"kernel", "bias"});
  CHECK(shape_of(p["ih"]["kernel"]) == Shape{3, 3, 3, 16});
  CHECK(shape_of(p["hh"]["kernel"]) == Shape{3, 3, 4, 16});
  CHECK(shape_of(p["hh"]["bias"]) == Shape{16});
  // Conv's defaults (lecun_normal) from the same key as a plain Conv named ih at the root.
  CHECK(allclose(P(p, "ih", "kernel"),
                 P(ConvProbe().init(random::key(0), x)["params"], "ih", "kernel"), 0.0f));

  // Flax's step with biases that matter: gates = ih(x) + hh(h), split (i, g, f, o);
  // c' = sigmoid(f + 1) c + sigmoid(i) tanh(g), h' = sigmoid(o) tanh(c').
  Tree v2 = v;
  v2["params"]["ih"]["bias"] = Tree(random::normal(random::key(16), {16}));
  v2["params"]["hh"]["bias"] = Tree(random::normal(random::key(17), {16}));
  const Tree& q = v2["params"];
  const auto& [c, h] = carry;
  Array z = conv_same(x, P(q, "ih", "kernel")) + P(q, "ih", "bias") +
            conv_same(h, P(q, "hh", "kernel")) + P(q, "hh", "bias");
  Array i = gate(z, 0), g = gate(z, 1), f = gate(z, 2), o = gate(z, 3);
  Array c2 = sigmoid(f + 1.0f) * c + sigmoid(i) * tanh(g);
  Array h2 = sigmoid(o) * tanh(c2);
  auto [new_carry, y] = cell.apply(v2, carry, x);
  CHECK(allclose(new_carry.first, c2));
  CHECK(allclose(new_carry.second, h2));
  CHECK(allclose(y, h2));

  // use_bias=false: kernels only; 1-D kernels work on (batch, length, features).
  Tree nb = nn::ConvLSTMCell({.features = 2, .kernel_size = {3}, .use_bias = false})
                .init(random::key(0), nn::ConvLSTMCell::Carry{zeros({2, 6, 2}), zeros({2, 6, 2})},
                      zeros({2, 6, 5}))["params"];
  CHECK(keys(nb["ih"]) == Keys{"kernel"});
  CHECK(shape_of(nb["ih"]["kernel"]) == Shape{3, 5, 8});
  CHECK(shape_of(nb["hh"]["kernel"]) == Shape{3, 2, 8});
}

TEST_CASE("ConvLSTMCell.initialize_carry: (c, h) from the two keys of split(rng); errors") {
  nn::ConvLSTMCell cell(
      {.features = 4, .kernel_size = {2, 2}, .carry_init = nn::initializers::normal(1.0)});
  // Flax's docstring input (3, 5, 5) with a 2-D kernel: num_feature_axes 3, so no batch dims,
  // signal dims (3, 5), and the carry (3, 5, 4).
  auto [c, h] = cell.initialize_carry(random::key(4), {3, 5, 5});
  CHECK(c.shape() == Shape{3, 5, 4});
  Array keys2 = random::split(random::key(4));
  auto init = nn::initializers::normal(1.0);
  auto key_at = [&](std::int64_t i) { return squeeze(slice(keys2, {{i, i + 1}}), 0); };
  CHECK(allclose(c, init(key_at(0), {3, 5, 4}, float32), 0.0f));
  CHECK(allclose(h, init(key_at(1), {3, 5, 4}, float32), 0.0f));
  CHECK_FALSE(allclose(c, h));
  auto [c0, h0] = nn::ConvLSTMCell({.features = 2, .kernel_size = {3}})
                      .initialize_carry(random::key(0), {4, 2, 6, 5});
  CHECK(c0.shape() == Shape{4, 2, 6, 2});
  CHECK(allclose(h0, zeros({4, 2, 6, 2}), 0.0f));

  testing::check_error<ValueError>(
      [] {
        nn::ConvLSTMCell({.features = 2, .kernel_size = {3, 3}})
            .initialize_carry(random::key(0), {6, 5});
      },
      {"ConvLSTMCell.initialize_carry", "rank at least 3", "(6, 5)"});
  // Strides shrink ih(x) but hh(h) shrinks the carry again: the shapes disagree, as in Flax.
  testing::check_error<ValueError>(
      [] {
        nn::ConvLSTMCell s({.features = 2, .kernel_size = {3, 3}, .strides = {2, 2}});
        s.init(random::key(0), nn::ConvLSTMCell::Carry{zeros({1, 3, 3, 2}), zeros({1, 3, 3, 2})},
               zeros({1, 6, 6, 1}));
      },
      {"ConvLSTMCell", "'ih' gives shape (1, 3, 3, 8)", "'hh' gives (1, 2, 2, 8)"});
  testing::check_error<ValueError>(
      [] {
        nn::ConvLSTMCell({.features = 2})
            .init(random::key(0), nn::ConvLSTMCell::Carry{zeros({1, 3, 2}), zeros({1, 3, 2})},
                  zeros({1, 3, 1}));
      },
      {"ConvLSTMCell", "kernel_size"});
}

TEST_CASE(
    "RNN(ConvLSTMCell): 3 feature axes (H, W, C); params/ConvLSTMCell_0; a loop of the cell") {
  Array xs = random::normal(random::key(18), {2, 4, 5, 5, 2});  // (batch, time, H, W, C)
  auto [ys, v] = ConvLSTMTagger({3, 3}).init_with_output(random::key(0), xs);
  CHECK(ys.shape() == Shape{2, 4, 5, 5, 3});
  CHECK(keys(v["params"]) == Keys{"ConvLSTMCell_0"});
  const Tree& cp = v["params"]["ConvLSTMCell_0"];
  CHECK(keys(cp) == Keys{"hh", "ih"});
  CHECK(shape_of(cp["ih"]["kernel"]) == Shape{3, 3, 2, 12});
  nn::ConvLSTMCell cell({.features = 3, .kernel_size = {3, 3}});
  auto carry = cell.initialize_carry(random::key(0), {2, 5, 5, 2});
  for (std::int64_t t = 0; t < 4; ++t) {
    auto [c2, y] = cell.apply(Tree{{"params", cp}}, carry, at_time(xs, t));
    CHECK(allclose(at_time(ys, t), y));
    carry = c2;
  }
  // time_major: time first, the same numbers; the final carry is the loop's.
  nn::RNN tm(nn::ConvLSTMCell({.features = 3, .kernel_size = {3, 3}}), {.time_major = true});
  Tree rv{{"params", Tree{{"cell", cp}}}};
  auto [last, tys] = tm.apply(rv, moveaxis(xs, 1, 0), nn::RNNArgs{}, &nn::RNN::call_with_carry);
  CHECK(allclose(tys, moveaxis(ys, 1, 0)));
  CHECK(allclose(last[0].leaf(), carry.first));
  CHECK(allclose(last[1].leaf(), carry.second));
  auto jrun = jit([&](const Array& x) { return ConvLSTMTagger({3, 3}).apply(v, x); });
  CHECK(allclose(jrun(xs), ys, 1e-6f));
  // A 1-D kernel: (batch, time, length, channels), two feature axes.
  Array x1 = random::normal(random::key(19), {2, 3, 6, 2});
  CHECK(ConvLSTMTagger({3}).init_with_output(random::key(0), x1).first.shape() ==
        Shape{2, 3, 6, 3});
}

TEST_CASE("RNN(ConvLSTMCell): gradients w.r.t. inputs and a kernel match finite differences") {
  Array xs = astype(random::normal(random::key(20), {1, 3, 4, 4, 2}), float64);
  nn::RNN rnn(nn::ConvLSTMCell({.features = 2, .kernel_size = {2, 2}, .param_dtype = float64}));
  Tree v = rnn.init(random::key(0), xs);
  testing::check_grads(
      [&](const Arrays& a) {
        Tree p = v;
        p["params"]["cell"]["hh"]["kernel"] = Tree(a[1]);
        return rnn.apply(p, a[0]);
      },
      {xs, v["params"]["cell"]["hh"]["kernel"].leaf()});
}

}  // namespace test_recurrent_cells
