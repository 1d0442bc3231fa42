// The recurrent cells (Flax's parameter trees, outputs against the gate formulas written out),
// nn::scan over a cell, RNN against a step-by-step loop (reverse, keep_order, seq_lengths,
// time_major), flip_sequences' Flax cases, Bidirectional, and gradients by finite differences.
// Where each layer's params land inside other modules: test_recurrent_layout.cpp.
#include <doctest/doctest.h>

#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../autodiff/check_grads.hpp"
#include "nn_testing.hpp"

namespace test_recurrent {

using namespace linum;
using testing::allclose;
using testing::shape_of;
using testing::sorted_keys;

namespace {
Array P(const Tree& p, const char* mod, const char* name) { return p[mod][name].leaf(); }
// x[:, t] of a (B, T, F) array.
Array at_time(const Array& x, std::int64_t t) { return squeeze(slice(x, {{}, {t, t + 1}}), 1); }
}  // namespace

TEST_CASE("LSTMCell: params ii..io (no bias), hi..ho (bias); output equals the gate formulas") {
  Array x = random::normal(random::key(1), {3, 4});
  nn::LSTMCell cell(5);
  auto carry0 = cell.initialize_carry(random::key(0), x.shape());
  CHECK(carry0.first.shape() == Shape{3, 5});
  CHECK(allclose(carry0.second, zeros({3, 5}), 0.0f));
  // A non-zero carry so the recurrent kernels matter.
  nn::LSTMCell::Carry carry{random::normal(random::key(2), {3, 5}),
                            random::normal(random::key(3), {3, 5})};
  auto [out, v] = cell.init_with_output(random::key(0), carry, x);
  const Tree& p = v["params"];
  // Flax's LSTMCell.__call__ builds each gate's input Dense before its hidden one, gate by gate:
  // the parameter tree holds them in that order (Dense: kernel, then bias).
  CHECK(p.as_dict().keys() ==
        std::vector<std::string>{"ii", "hi", "if", "hf", "ig", "hg", "io", "ho"});
  CHECK(p["hi"].as_dict().keys() == std::vector<std::string>{"kernel", "bias"});
  for (const char* g : {"ii", "if", "ig", "io"}) {
    CHECK(sorted_keys(p[g]) == std::vector<std::string>{"kernel"});
    CHECK(shape_of(p[g]["kernel"]) == Shape{4, 5});
  }
  for (const char* g : {"hi", "hf", "hg", "ho"}) {
    CHECK(shape_of(p[g]["kernel"]) == Shape{5, 5});
    CHECK(shape_of(p[g]["bias"]) == Shape{5});
    // The recurrent kernels are orthogonal.
    CHECK(allclose(matmul(transpose(P(p, g, "kernel")), P(p, g, "kernel")), eye(5), 1e-5f));
  }
  auto [c, h] = carry;
  auto lin = [&](const char* i, const char* hh) {
    return matmul(x, P(p, i, "kernel")) + matmul(h, P(p, hh, "kernel")) + P(p, hh, "bias");
  };
  Array ig = sigmoid(lin("ii", "hi")), fg = sigmoid(lin("if", "hf")), gg = tanh(lin("ig", "hg")),
        og = sigmoid(lin("io", "ho"));
  Array c2 = fg * c + ig * gg, h2 = og * tanh(c2);
  CHECK(allclose(out.first.first, c2));
  CHECK(allclose(out.first.second, h2));
  CHECK(allclose(out.second, h2));
  // OptimizedLSTMCell: the same parameter tree (same init, same order) and the same function.
  auto [out2, v2] = nn::OptimizedLSTMCell(5).init_with_output(random::key(0), carry, x);
  CHECK(v2["params"].as_dict().keys() == p.as_dict().keys());
  for (const char* g : {"ii", "hi", "ho"})
    CHECK(allclose(P(v2["params"], g, "kernel"), P(p, g, "kernel"), 0.0f));
  CHECK(allclose(out2.first.first, c2));
  CHECK(allclose(out2.second, h2));
}

TEST_CASE("GRUCell: params ir/iz/in with bias, hr/hz without, hn with; the GRU formulas") {
  Array x = random::normal(random::key(4), {2, 3});
  Array h = random::normal(random::key(5), {2, 4});
  nn::GRUCell cell(4);
  CHECK(cell.initialize_carry(random::key(0), x.shape()).shape() == Shape{2, 4});
  auto [out, v] = cell.init_with_output(random::key(0), h, x);
  const Tree& p = v["params"];
  // Flax's GRUCell.__call__ order: ir, hr, iz, hz, in, hn.
  CHECK(p.as_dict().keys() == std::vector<std::string>{"ir", "hr", "iz", "hz", "in", "hn"});
  CHECK(sorted_keys(p["hr"]) == std::vector<std::string>{"kernel"});
  CHECK(sorted_keys(p["hz"]) == std::vector<std::string>{"kernel"});
  CHECK(sorted_keys(p["hn"]) == std::vector<std::string>{"bias", "kernel"});
  CHECK(shape_of(p["ir"]["kernel"]) == Shape{3, 4});
  CHECK(shape_of(p["ir"]["bias"]) == Shape{4});
  auto in = [&](const char* n) { return matmul(x, P(p, n, "kernel")) + P(p, n, "bias"); };
  Array r = sigmoid(in("ir") + matmul(h, P(p, "hr", "kernel")));
  Array z = sigmoid(in("iz") + matmul(h, P(p, "hz", "kernel")));
  Array n = tanh(in("in") + r * (matmul(h, P(p, "hn", "kernel")) + P(p, "hn", "bias")));
  Array h2 = (1.0f - z) * n + z * h;
  CHECK(allclose(out.first, h2));
  CHECK(allclose(out.second, h2));
}

TEST_CASE("SimpleCell: params i (bias) and h (no bias); tanh(x Wi + b + h Wh), residual adds h") {
  Array x = random::normal(random::key(6), {2, 3});
  Array h = random::normal(random::key(7), {2, 4});
  auto [out, v] = nn::SimpleCell(4).init_with_output(random::key(0), h, x);
  const Tree& p = v["params"];
  // Flax's SimpleCell: dense_i = Dense(use_bias=True, bias_init), dense_h = Dense(use_bias=False);
  // i is built first.
  CHECK(p.as_dict().keys() == std::vector<std::string>{"i", "h"});
  CHECK(p["i"].as_dict().keys() == std::vector<std::string>{"kernel", "bias"});
  CHECK(p["h"].as_dict().keys() == std::vector<std::string>{"kernel"});
  Array pre = matmul(x, P(p, "i", "kernel")) + P(p, "i", "bias") + matmul(h, P(p, "h", "kernel"));
  CHECK(allclose(out.second, tanh(pre)));
  nn::SimpleCell res({.features = 4, .residual = true});
  CHECK(allclose(res.apply(v, h, x).second, tanh(pre + h)));
}

TEST_CASE("nn::scan(LSTMCell) with broadcast params equals a loop of the cell") {
  Array xs = random::normal(random::key(8), {5, 3, 2});
  nn::LSTMCell::Carry c{zeros({3, 2}), zeros({3, 2})};
  auto scanned =
      nn::scan(nn::LSTMCell(2), {.variable_broadcast = "params", .split_rngs = {{"params", false}}})
          .named("lstm_cell");
  struct Holder : nn::Module<Holder> {
    nn::Scan<nn::LSTMCell> s;
    explicit Holder(nn::Scan<nn::LSTMCell> s) : s(std::move(s)) { this->s.orphan(); }
    void setup() override { submodule("lstm_cell", s); }
    auto call(const nn::LSTMCell::Carry& c, const Array& xs) { return s(c, xs); }
  };
  auto [out, v] = Holder(scanned).init_with_output(random::key(0), c, xs);
  const Tree& params = v["params"]["lstm_cell"];
  CHECK(shape_of(params["ii"]["kernel"]) == Shape{2, 2});  // one copy, broadcast over time
  // The params come out of the scan as out of jax.lax.scan: every dict's keys sorted.
  CHECK(params.as_dict().keys() ==
        std::vector<std::string>{"hf", "hg", "hi", "ho", "if", "ig", "ii", "io"});
  CHECK(params["hi"].as_dict().keys() == std::vector<std::string>{"bias", "kernel"});
  nn::LSTMCell::Carry cc = c;
  for (std::int64_t t = 0; t < 5; ++t) {
    auto [c2, y] =
        nn::LSTMCell(2).apply(Tree{{"params", params}}, cc, squeeze(slice(xs, {{t, t + 1}}), 0));
    CHECK(allclose(squeeze(slice(out.second, {{t, t + 1}}), 0), y, 1e-6f));
    cc = c2;
  }
  CHECK(allclose(out.first.first, cc.first, 1e-6f));
  CHECK(allclose(out.first.second, cc.second, 1e-6f));
}

TEST_CASE("RNN(LSTMCell) as the root: params under its field 'cell'; equals a loop of the cell") {
  const std::int64_t B = 3, T = 4, Fin = 5, Fout = 6;
  Array xs = random::uniform(random::key(9), {B, T, Fin});
  // A cell built outside any module is adopted by RNN as its field `cell` (Flax's
  // _register_submodules), so nn.RNN(nn.LSTMCell(6)).init gives params/cell/...
  nn::RNN rnn{nn::LSTMCell(Fout)};
  auto [out, v] = rnn.init_with_output(random::key(0), xs);
  CHECK(out.shape() == Shape{B, T, Fout});
  CHECK(v["params"].as_dict().keys() == std::vector<std::string>{"cell"});
  const Tree& cp = v["params"]["cell"];
  CHECK(cp.as_dict().keys() ==
        std::vector<std::string>{"hf", "hg", "hi", "ho", "if", "ig", "ii", "io"});
  CHECK(shape_of(cp["ii"]["kernel"]) == Shape{Fin, Fout});
  CHECK(shape_of(cp["hi"]["kernel"]) == Shape{Fout, Fout});
  auto [carry, ys] = rnn.apply(v, xs, nn::RNNArgs{}, &nn::RNN::call_with_carry);
  CHECK(allclose(ys, out));
  nn::LSTMCell cell(Fout);
  auto cc = cell.initialize_carry(random::key(0), {B, Fin});
  for (std::int64_t t = 0; t < T; ++t) {
    auto [c2, y] = cell.apply(Tree{{"params", cp}}, cc, at_time(xs, t));
    CHECK(allclose(at_time(ys, t), y));
    cc = c2;
  }
  CHECK(allclose(carry[0].leaf(), cc.first));
  CHECK(allclose(carry[1].leaf(), cc.second));
  // time_major: the same numbers with time first.
  nn::RNN tm(nn::LSTMCell(Fout), {.time_major = true});
  CHECK(allclose(tm.apply(v, transpose(xs, {1, 0, 2})), transpose(ys, {1, 0, 2})));
}

TEST_CASE("RNN reverse / keep_order run the cell from the last step; seq_lengths pick the carry") {
  const std::int64_t B = 3, T = 4, Fin = 2, Fout = 3;
  Array xs = random::normal(random::key(10), {B, T, Fin});
  Tree v = nn::RNN(nn::GRUCell(Fout)).init(random::key(0), xs);
  const Tree cp{{"params", v["params"]["cell"]}};
  nn::GRUCell cell(Fout);
  // The loop over reversed time.
  Array h = zeros({B, Fout});
  std::vector<Array> rev_ys;
  for (std::int64_t t = T - 1; t >= 0; --t) {
    h = cell.apply(cp, h, at_time(xs, t)).first;
    rev_ys.push_back(h);
  }
  nn::RNN rrev(nn::GRUCell(Fout), {.reverse = true});
  Array yr = rrev.apply(v, xs);
  for (std::int64_t i = 0; i < T; ++i) CHECK(allclose(at_time(yr, i), rev_ys[i]));
  nn::RNN keep(nn::GRUCell(Fout), {.reverse = true, .keep_order = true});
  Array yk = keep.apply(v, xs);
  for (std::int64_t i = 0; i < T; ++i) CHECK(allclose(at_time(yk, T - 1 - i), rev_ys[i]));

  // seq_lengths: the carry of sequence b is the one after step len[b] - 1.
  Array lens = array(std::vector<std::int32_t>{1, 4, 2}, {3});
  auto [carry, ys] = nn::RNN(nn::GRUCell(Fout))
                         .apply(v, xs, nn::RNNArgs{.seq_lengths = lens}, &nn::RNN::call_with_carry);
  std::vector<Array> hs;
  Array hh = zeros({B, Fout});
  for (std::int64_t t = 0; t < T; ++t) hs.push_back(hh = cell.apply(cp, hh, at_time(xs, t)).first);
  const int L[] = {1, 4, 2};
  for (int b = 0; b < 3; ++b)
    CHECK(allclose(slice(carry.leaf(), {{b, b + 1}}), slice(hs[L[b] - 1], {{b, b + 1}})));
  // Without return_carry the outputs are every step's, seq_lengths or not (Flax slices only the
  // carry).
  CHECK(allclose(nn::RNN(nn::GRUCell(Fout)).apply(v, xs, nn::RNNArgs{.seq_lengths = lens}), ys));

  // seq_lengths index time steps: floats are a TypeError (JAX rejects float indices), never
  // truncated to integers.
  Array flens = array(std::vector<float>{1, 4, 2}, {3});
  for (bool rev : {false, true}) {
    CHECK_THROWS_AS(nn::RNN(nn::GRUCell(Fout), {.reverse = rev})
                        .apply(v, xs, nn::RNNArgs{.seq_lengths = flens}, &nn::RNN::call_with_carry),
                    TypeError);
  }
  CHECK_THROWS_WITH_AS(nn::RNN(nn::GRUCell(Fout)).apply(v, xs, nn::RNNArgs{.seq_lengths = flens}),
                       doctest::Contains("seq_lengths must be an integer array"), TypeError);
}

TEST_CASE("flip_sequences: Flax's cases (batch-major, time-major, extra feature dims)") {
  Array lens = array(std::vector<std::int32_t>{4, 2}, {2});
  Array x = reshape(arange(10), {2, 5});
  Array f = nn::flip_sequences(x, lens, 1, false);
  CHECK(allclose(astype(slice(f, {{0, 1}, {0, 4}}), float32),
                 array(std::vector<float>{3, 2, 1, 0}, {1, 4})));
  CHECK(allclose(astype(slice(f, {{1, 2}, {0, 2}}), float32),
                 array(std::vector<float>{6, 5}, {1, 2})));
  Array x3 = reshape(arange(30), {2, 5, 3});
  Array f3 = nn::flip_sequences(x3, lens, 1, false);
  CHECK(allclose(astype(slice(f3, {{1, 2}, {0, 2}}), float32),
                 astype(slice(x3, {{1, 2}, {1, std::nullopt, -1}}), float32)));
  Array xt = reshape(arange(10), {5, 2});
  Array ft = nn::flip_sequences(xt, lens, 1, true);
  CHECK(allclose(astype(slice(ft, {{0, 4}, {0, 1}}), float32),
                 astype(slice(xt, {{3, std::nullopt, -1}, {0, 1}}), float32)));
  // Without lengths, the whole time axis is reversed.
  CHECK(allclose(astype(nn::flip_sequences(x, std::nullopt, 1, false), float32),
                 astype(slice(x, {{}, {std::nullopt, std::nullopt, -1}}), float32)));
}

TEST_CASE("Bidirectional as the root: forward_rnn/cell and backward_rnn/cell; outputs joined") {
  Array xs = random::normal(random::key(11), {3, 4, 5});
  nn::Bidirectional bi(nn::RNN(nn::LSTMCell(6)), nn::RNN(nn::LSTMCell(6)));
  auto [y, v] = bi.init_with_output(random::key(0), xs);
  CHECK(y.shape() == Shape{3, 4, 12});
  // RNNs built outside any module are adopted as Bidirectional's fields, their cells as `cell`.
  CHECK(v["params"].as_dict().keys() == std::vector<std::string>{"forward_rnn", "backward_rnn"});
  CHECK(shape_of(v["params"]["forward_rnn"]["cell"]["ii"]["kernel"]) == Shape{5, 6});
  Tree fv{{"params", v["params"]["forward_rnn"]}}, bv{{"params", v["params"]["backward_rnn"]}};
  CHECK(allclose(slice(y, {{}, {}, {0, 6}}), nn::RNN(nn::LSTMCell(6)).apply(fv, xs)));
  nn::RNN back(nn::LSTMCell(6), {.reverse = true, .keep_order = true});
  CHECK(allclose(slice(y, {{}, {}, {6, 12}}), back.apply(bv, xs)));
}

TEST_CASE(
    "LSTMCell and RNN(GRUCell): gradients w.r.t. inputs and kernels match finite differences") {
  Array x = astype(random::normal(random::key(12), {2, 3}), float64);
  Array c = astype(random::normal(random::key(13), {2, 4}), float64);
  Array h = astype(random::normal(random::key(14), {2, 4}), float64);
  nn::LSTMCell cell({.features = 4, .param_dtype = float64});
  Tree v = cell.init(random::key(0), nn::LSTMCell::Carry{c, h}, x);
  testing::check_grads(
      [&](const Arrays& a) {
        Tree p = v;
        p["params"]["hf"]["kernel"] = Tree(a[3]);
        p["params"]["ig"]["kernel"] = Tree(a[4]);
        auto [carry, y] = cell.apply(p, nn::LSTMCell::Carry{a[1], a[2]}, a[0]);
        return y + carry.first * 0.5;
      },
      {x, c, h, v["params"]["hf"]["kernel"].leaf(), v["params"]["ig"]["kernel"].leaf()});

  Array xs = astype(random::normal(random::key(15), {2, 5, 3}), float64);
  nn::RNN rnn(nn::GRUCell({.features = 3, .param_dtype = float64}));
  Tree rv = rnn.init(random::key(0), xs);
  testing::check_grads(
      [&](const Arrays& a) {
        Tree p = rv;
        p["params"]["cell"]["hn"]["kernel"] = Tree(a[1]);
        return rnn.apply(p, a[0]);
      },
      {xs, rv["params"]["cell"]["hn"]["kernel"].leaf()});
}

}  // namespace test_recurrent
