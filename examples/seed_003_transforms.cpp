// Seed 003, flax.linen.transforms' docstring examples, line for line: vmap (BatchDense),
// checkpoint (CheckpointedMLP), remat_scan (BigModel), scan (the two LSTM forms, ResidualMLP),
// map_variables (CausalDense), vjp / value_and_grad / grad / jvp (LearnScale), while_loop,
// cond, switch (SwitchExample, MultiHeadSwitchExample), custom_vjp, and jit (whose docstring
// has no example: a jitted MLP). Each result is checked against the untransformed computation.
// custom_vjp's residuals are arrays here, not nn.vjp's vjp_fn, so bwd recomputes the vjp.
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "seed_check.hpp"

using namespace linum;
using namespace seed_check;

namespace {
Array row(const Array& x, std::int64_t i) {
  return squeeze(take(x, Array(static_cast<int>(i)).reshape({1}), 0), 0);
}
Tree sub(const Tree& v, const std::string& name) {
  return Tree::dict({{"params", v["params"][name]}});
}
std::string shape_of(const Tree& t) { return shape_str(t.leaf().shape()); }

// ---- checkpoint ----
struct CheckpointedMLP : nn::Module<CheckpointedMLP> {
  Array call(Array x) {
    auto checkpoint_dense = [](std::int64_t f) { return nn::checkpoint(nn::Dense(f)); };
    x = checkpoint_dense(128)(x);
    x = nn::relu(x);
    x = checkpoint_dense(1)(x);
    return x;
  }
};

// ---- remat_scan ----
struct BigModel : nn::Module<BigModel> {
  Array call(const Array& x) {
    // 100x dense with O(sqrt(N)) memory for gradient computation
    return nn::remat_scan(nn::Dense(8), {10, 10}).named("dense_stack")(x);
  }
};

// ---- scan ----
struct ResidualMLPBlock : nn::Module<ResidualMLPBlock> {
  std::pair<Array, Tree> call(const Array& x, const Tree&) {
    Array h = nn::Dense(2)(x);
    h = nn::relu(h);
    return {x + h, Tree()};
  }
};
struct ResidualMLP : nn::Module<ResidualMLP> {
  std::int64_t n_layers = 4;
  Array call(Array x) {
    auto scan_mlp = nn::scan(ResidualMLPBlock(), {.variable_axes = {{"params", 0}},
                                                  .variable_broadcast = false,
                                                  .split_rngs = {{"params", true}},
                                                  .length = n_layers});
    x = scan_mlp(x, Tree()).first;
    return x;
  }
};

// ---- scan over an LSTMCell, class form and function form ----
struct LSTM : nn::Module<LSTM> {
  std::int64_t features;
  explicit LSTM(std::int64_t f) : features(f) {}
  Array call(const Array& x) {
    auto ScanLSTM = [](std::int64_t features) {
      return nn::scan(nn::LSTMCell(features), {.variable_broadcast = "params",
                                               .split_rngs = {{"params", false}},
                                               .in_axes = {1},
                                               .out_axes = 1});
    };
    auto lstm = ScanLSTM(features);
    Shape input_shape = take(x, Array(0), 1).shape();
    auto carry = lstm.initialize_carry(random::key(0), input_shape);
    auto [carry_out, y] = lstm(carry, x);
    return y;
  }
};
struct LSTMFn : nn::Module<LSTMFn> {
  std::int64_t features;
  explicit LSTMFn(std::int64_t f) : features(f) {}
  Array call(const Array& x) {
    nn::LSTMCell cell(features);
    auto body_fn = [](nn::LSTMCell& cell, const nn::LSTMCell::Carry& carry, const Array& x) {
      return cell(carry, x);
    };
    auto scan = nn::scan(body_fn, {.variable_broadcast = "params",
                                   .split_rngs = {{"params", false}},
                                   .in_axes = {1},
                                   .out_axes = 1});
    Shape input_shape = take(x, Array(0), 1).shape();
    auto carry = cell.initialize_carry(random::key(0), input_shape);
    auto [carry_out, y] = scan(cell, carry, x);
    return y;
  }
};

// ---- map_variables ----
// A dense layer that masks the weights such that the output is causal, i.e. output i only
// depends on input <= i.
struct CausalDense : nn::Module<CausalDense> {
  std::int64_t features;
  std::optional<nn::MapVariables<nn::Dense>> dense;
  explicit CausalDense(std::int64_t f) : features(f) {}
  void setup() override {
    const bool initializing = is_initializing();
    auto apply_mask = [initializing](const Tree& variables) {
      return initializing
                 ? variables
                 : linum::detail::tree_apply(variables, [](const Array& k) { return triu(k); });
    };
    // temporary class
    dense.emplace(nn::map_variables(nn::Dense({.features = features, .use_bias = false}), "params",
                                    apply_mask, nn::identity_variables, {.init = initializing}));
    submodule("dense", *dense);
  }
  Array call(const Array& x) { return (*dense)(x); }
};

// ---- vjp, value_and_grad, grad ----
struct LearnScale : nn::Module<LearnScale> {
  Array call(const Array& x, const Array& y) {
    Array p = param("scale", nn::initializers::zeros_init(), Shape{});
    return p * x * y;
  }
};
struct VjpFoo : nn::Module<VjpFoo> {
  std::tuple<Array, Tree, Array, Array> call(const Array& x, const Array& y) {
    LearnScale ls;
    auto [z, bwd] = nn::vjp(
        [](LearnScale& mdl, const Array& x, const Array& y) { return mdl(x, y); }, ls, x, y);
    auto [params_grad, x_grad, y_grad] = bwd(ones(z.shape()));
    return {z, params_grad, x_grad, y_grad};
  }
};
struct ScalarLearnScale : nn::Module<ScalarLearnScale> {
  Array call(const Array& x, const Array& y) {
    Array p = param("scale", nn::initializers::zeros_init(), Shape{});
    return sum(p * x * y);  // value_and_grad / grad need a scalar output
  }
};
struct ValueAndGradFoo : nn::Module<ValueAndGradFoo> {
  std::tuple<Array, Array, Array> call(const Array& x, const Array& y) {
    ScalarLearnScale ls;
    auto [z, grads] = nn::value_and_grad(
        [](ScalarLearnScale& mdl, const Array& x, const Array& y) { return mdl(x, y); }, ls, x, y);
    auto [x_grad, y_grad] = grads;
    return {z, x_grad, y_grad};
  }
};
struct GradFoo : nn::Module<GradFoo> {
  std::pair<Array, Array> call(const Array& x, const Array& y) {
    ScalarLearnScale ls;
    auto [x_grad, y_grad] = nn::grad(
        [](ScalarLearnScale& mdl, const Array& x, const Array& y) { return mdl(x, y); }, ls, x, y);
    return {x_grad, y_grad};
  }
};

// ---- jvp ----
struct LearnScale1 : nn::Module<LearnScale1> {
  Array call(const Array& x) {
    Array p = param("test", nn::initializers::zeros_init(), Shape{});
    return p * x;
  }
};
struct JvpFoo : nn::Module<JvpFoo> {
  Array call(const Array& x) {
    LearnScale1 scale;
    Tree params = scale.variables().contains("params") ? scale.variables()["params"] : Tree::dict();
    Tree vars_t = linum::detail::tree_apply(params, [](const Array& a) { return ones_like(a); });
    auto [y, out_t] =
        nn::jvp([](LearnScale1& mdl, const Array& x) { return mdl(x); }, scale, std::tuple{x},
                std::tuple{zeros_like(x)}, Tree::dict({{"params", vars_t}}));
    return out_t;
  }
};

// ---- while_loop ----
struct WhileLoopExample : nn::Module<WhileLoopExample> {
  Array call(const Array& x) {
    auto cond_fn = [](WhileLoopExample& mdl, const Array& c) {
      (void)c;
      return less(mdl.variables()["state"]["acc"].leaf(), Array(10));
    };
    auto body_fn = [](WhileLoopExample& mdl, const Array& c) {
      auto acc = mdl.variable("state", "acc", [] { return Array(0); });
      acc.set(Tree(acc.value() + 1));
      Array y = nn::Dense(c.shape(-1))(c);
      return y;
    };
    Array c = x;
    if (is_mutable_collection("params")) return body_fn(*this, c);
    return nn::while_loop(cond_fn, body_fn, *this, c, {.carry_variables = "state"});
  }
};

// ---- cond, switch ----
struct CondExample : nn::Module<CondExample> {
  Array call(const Array& x, const Array& pred) {
    variable("state", "true_count", [] { return Array(0); });
    variable("state", "false_count", [] { return Array(0); });
    auto true_fn = [](CondExample& mdl, const Array& x) {
      auto v = mdl.variable("state", "true_count");
      v.set(Tree(v.value() + 1));
      return nn::Dense(2).named("dense")(x);
    };
    auto false_fn = [](CondExample& mdl, const Array& x) {
      auto v = mdl.variable("state", "false_count");
      v.set(Tree(v.value() + 1));
      return Array(-nn::Dense(2).named("dense")(x));
    };
    return nn::cond(pred, true_fn, false_fn, *this, x);
  }
};
struct SwitchExample : nn::Module<SwitchExample> {
  Array call(const Array& x, const Array& index) {
    variable("state", "a_count", [] { return Array(0); });
    variable("state", "b_count", [] { return Array(0); });
    variable("state", "c_count", [] { return Array(0); });
    auto count = [](SwitchExample& mdl, const char* name) {
      auto v = mdl.variable("state", name);
      v.set(Tree(v.value() + 1));
    };
    std::vector<std::function<Array(SwitchExample&, const Array&)>> branches{
        [&](SwitchExample& mdl, const Array& x) {
          count(mdl, "a_count");
          return nn::Dense(2).named("dense")(x);
        },
        [&](SwitchExample& mdl, const Array& x) {
          count(mdl, "b_count");
          return Array(-nn::Dense(2).named("dense")(x));
        },
        [&](SwitchExample& mdl, const Array& x) {
          count(mdl, "c_count");
          return nn::Dense(2).named("dense")(x);
        }};
    return nn::switch_(index, branches, *this, x);
  }
};

// Every branch runs once at init (when params are mutable), so each head has its parameters.
// Flax's list of heads of different types is three fields here (heads_0, heads_1, heads_2).
struct MultiHeadSwitchExample : nn::Module<MultiHeadSwitchExample> {
  nn::Sequential heads_0{{nn::Dense(10), nn::Dense(7), nn::Dense(5)}};
  nn::Sequential heads_1{{nn::Dense(11), nn::Dense(5)}};
  nn::Dense heads_2{5};
  void setup() override {
    submodule("heads_0", heads_0);
    submodule("heads_1", heads_1);
    submodule("heads_2", heads_2);
  }
  Array call(const Array& x, const Array& index) {
    auto head_fn = [](int i) {
      return [i](MultiHeadSwitchExample& mdl, const Array& x) {
        return i == 0 ? mdl.heads_0(x) : i == 1 ? mdl.heads_1(x) : mdl.heads_2(x);
      };
    };
    std::vector<std::function<Array(MultiHeadSwitchExample&, const Array&)>> branches;
    for (int i = 0; i < 3; ++i) branches.push_back(head_fn(i));

    // run all branches on init
    if (is_mutable_collection("params"))
      for (auto& branch : branches) (void)branch(*this, x);

    return nn::switch_(index, branches, *this, x);
  }
};

// ---- jit ----
struct JitMLP : nn::Module<JitMLP> {
  Array call(Array x) {
    x = nn::jit(nn::Dense(8)).named("layers_0")(x);
    x = nn::relu(x);
    return nn::jit(nn::Dense(2)).named("layers_1")(x);
  }
};

// ---- custom_vjp ----
struct CustomVjpFoo : nn::Module<CustomVjpFoo> {
  Array call(const Array& x) {
    auto f = [](nn::Dense& mdl, const Array& x) { return mdl(x); };
    // The residuals are arrays: the params and x, from which bwd recomputes nn.vjp's vjp_fn.
    auto fwd = [](nn::Dense& mdl, const Array& x) {
      Array y = mdl(x);
      return std::make_pair(y, std::make_pair(mdl.variables()["params"], x));
    };
    auto bwd = [](const std::pair<Tree, Array>& res, const Array& y_t) {
      auto vjp_fn = [&res](const Array& y_t) {
        Tree p = Tree::dict({{"params", res.first}});
        auto [y, pb] = linum::vjp(
            [](const Tree& p, const Array& x) { return nn::Dense(1).apply(p, x); }, p, res.second);
        return pb(y_t);
      };
      auto [params_t, inputs_t] = vjp_fn(y_t);
      params_t = linum::detail::tree_apply(params_t, [](const Array& a) { return sign(a); });
      return std::make_tuple(params_t, inputs_t);
    };
    auto sign_grad = nn::custom_vjp(f, fwd, bwd);
    nn::Dense dense(1);
    return reshape(sign_grad(dense, x), {});
  }
};
}  // namespace

int main() {
  auto key = random::key(0);

  std::cout << "vmap: BatchDense without and with parameter sharing\n";
  auto batch_dense = nn::vmap(nn::Dense(2), {.variable_axes = {{"params", 0}},
                                             .split_rngs = {{"params", true}},
                                             .in_axes = 0,
                                             .out_axes = 0});
  Array xb = random::normal(random::key(1), {3, 4});
  auto [yb, vb] = batch_dense.init_with_output(key, xb);
  std::cout << "  kernel " << shape_of(vb["params"]["kernel"]) << "\n";
  check(vb["params"]["kernel"].leaf().shape() == Shape{3, 4, 2}, "one (4, 2) kernel per row");
  bool rows_ok = true;
  for (std::int64_t i = 0; i < 3; ++i) {
    Tree p = Tree::dict({{"params", Tree::dict({{"kernel", row(vb["params"]["kernel"].leaf(), i)},
                                                {"bias", row(vb["params"]["bias"].leaf(), i)}})}});
    rows_ok = rows_ok && allclose(row(yb, i), nn::Dense(2).apply(p, row(xb, i)));
  }
  check(rows_ok, "row i of y is Dense with kernel i applied to row i of x");
  auto shared_dense = nn::vmap(nn::Dense(2), {.variable_axes = {{"params", std::nullopt}},
                                              .split_rngs = {{"params", false}},
                                              .in_axes = 0,
                                              .out_axes = 0});
  auto [ys, vs] = shared_dense.init_with_output(key, xb);
  check(vs["params"]["kernel"].leaf().shape() == Shape{4, 2}, "shared: one (4, 2) kernel");
  check(allclose(ys, nn::Dense(2).apply(vs, xb)), "shared: y == Dense over the whole batch");

  std::cout << "checkpoint: CheckpointedMLP\n";
  CheckpointedMLP model;
  Array x16 = ones({1, 16});
  Tree variables = model.init(key, x16);
  std::cout << "  CheckpointDense_0 kernel "
            << shape_of(variables["params"]["CheckpointDense_0"]["kernel"])
            << ", CheckpointDense_1 kernel "
            << shape_of(variables["params"]["CheckpointDense_1"]["kernel"]) << "\n";
  check(variables["params"]["CheckpointDense_0"]["kernel"].leaf().shape() == Shape{16, 128} &&
            variables["params"]["CheckpointDense_1"]["kernel"].leaf().shape() == Shape{128, 1},
        "params live under CheckpointDense_0 / CheckpointDense_1");
  auto plain_mlp = [&](const Tree& v, const Array& x) {
    Array h = nn::relu(nn::Dense(128).apply(sub(v, "CheckpointDense_0"), x));
    return nn::Dense(1).apply(sub(v, "CheckpointDense_1"), h);
  };
  Array xr = random::normal(random::key(2), {1, 16});
  check(allclose(model.apply(variables, xr), plain_mlp(variables, xr)), "y == the plain MLP");
  auto gx_remat = linum::grad([&](const Array& x) { return sum(model.apply(variables, x)); })(xr);
  auto gx_plain = linum::grad([&](const Array& x) { return sum(plain_mlp(variables, x)); })(xr);
  check(allclose(gx_remat, gx_plain), "grad through checkpoint == grad of the plain MLP");

  std::cout << "remat_scan: BigModel (lengths (10, 10))\n";
  Array x8 = ones({2, 8});
  auto [ybig, vbig] = BigModel().init_with_output(key, x8);
  Array k = vbig["params"]["dense_stack"]["kernel"].leaf();
  Array b = vbig["params"]["dense_stack"]["bias"].leaf();
  std::cout << "  dense_stack kernel " << shape_str(k.shape()) << ", bias " << shape_str(b.shape())
            << "\n";
  check(k.shape() == Shape{10, 10, 8, 8} && b.shape() == Shape{10, 10, 8}, "stacked (10, 10, ...)");
  Array c = x8;
  Array kf = reshape(k, {100, 8, 8}), bf = reshape(b, {100, 8});
  for (int i = 0; i < 100; ++i) c = matmul(c, row(kf, i)) + row(bf, i);
  check(allclose(ybig, c, 1e-4f), "y == 100 dense layers applied in a loop");

  std::cout << "scan: ResidualMLP(n_layers=4)\n";
  Array x2 = ones({1, 2});
  auto [yr, vr] = ResidualMLP().init_with_output(random::key(42), x2);
  Array rk = vr["params"]["ScanResidualMLPBlock_0"]["Dense_0"]["kernel"].leaf();
  Array rb = vr["params"]["ScanResidualMLPBlock_0"]["Dense_0"]["bias"].leaf();
  std::cout << "  ScanResidualMLPBlock_0/Dense_0 kernel " << shape_str(rk.shape()) << "\n";
  check(rk.shape() == Shape{4, 2, 2}, "one (2, 2) kernel per layer");
  Array cr = x2;
  for (int i = 0; i < 4; ++i) cr = cr + nn::relu(matmul(cr, row(rk, i)) + row(rb, i));
  check(allclose(yr, cr), "y == the 4 residual blocks in a loop");

  std::cout << "scan: LSTM(features=32) over (4, 12, 7), class and function forms\n";
  Array xl = ones({4, 12, 7});
  auto [yl, vl] = LSTM(32).init_with_output(key, xl);
  const Tree& cellp = vl["params"]["ScanLSTMCell_0"];
  std::cout << "  y " << shape_str(yl.shape()) << ", ScanLSTMCell_0/ii kernel "
            << shape_of(cellp["ii"]["kernel"]) << "\n";
  check(yl.shape() == Shape{4, 12, 32}, "ys stacked on axis 1: (4, 12, 32)");
  check(cellp["ii"]["kernel"].leaf().shape() == Shape{7, 32} &&
            cellp["hi"]["kernel"].leaf().shape() == Shape{32, 32},
        "params broadcast: one (7, 32) input and one (32, 32) hidden kernel per gate");
  nn::LSTMCell::Carry cl = nn::LSTMCell(32).initialize_carry(random::key(0), Shape{4, 7});
  Tree cell_vars = Tree::dict({{"params", cellp}});
  bool steps_ok = true;
  for (std::int64_t t = 0; t < 12; ++t) {
    auto [next, yt] =
        nn::LSTMCell(32).apply(cell_vars, cl, take(xl, Array(static_cast<int>(t)), 1));
    cl = next;
    steps_ok = steps_ok && allclose(yt, take(yl, Array(static_cast<int>(t)), 1));
  }
  check(steps_ok, "y[:, t] == the cell applied step by step");
  Tree vlf = LSTMFn(32).init(key, xl);
  check(vlf["params"]["LSTMCell_0"]["ii"]["kernel"].leaf().shape() == Shape{7, 32},
        "function form: the cell's params under LSTMCell_0");
  check(allclose(LSTMFn(32).apply(vlf, xl),
                 LSTM(32).apply(
                     Tree::dict({{"params",
                                  Tree::dict({{"ScanLSTMCell_0", vlf["params"]["LSTMCell_0"]}})}}),
                     xl)),
        "function form == class form over the same params");

  std::cout << "map_variables: CausalDense(features=5)\n";
  CausalDense causal(5);
  Tree vc = causal.init(key, ones({1, 5}));
  Array ck = vc["params"]["dense"]["kernel"].leaf();
  std::cout << "  dense kernel " << shape_str(ck.shape()) << "\n";
  check(ck.shape() == Shape{5, 5}, "the Dense's (5, 5) kernel, stored unmasked");
  Array xc = random::normal(random::key(3), {1, 5});
  check(allclose(CausalDense(5).apply(vc, xc), matmul(xc, triu(ck))), "y == x @ triu(kernel)");

  std::cout << "vjp / value_and_grad / grad: LearnScale\n";
  Array x = random::uniform(random::key(1), {4}), y = random::uniform(random::key(2), {4});
  // At init the scale is created inside the vjp, so its gradient shows up from apply on.
  Tree vv = VjpFoo().init(key, x, y);
  auto [z, params_grad, x_grad, y_grad] = VjpFoo().apply(vv, x, y);
  std::cout << "  params_grad['params']['scale'] = "
            << params_grad["params"]["scale"].leaf().item<float>() << "\n";
  check(allclose(params_grad["params"]["scale"].leaf(), sum(x * y)), "d(sum p*x*y)/dp == sum(x*y)");
  check(allclose(x_grad, zeros({4})) && allclose(y_grad, zeros({4})), "p = 0: x_grad, y_grad == 0");
  Tree scaled = vv;
  scaled["params"]["LearnScale_0"]["scale"] = Tree(full({}, 2.0f));
  auto [z2, pg2, xg2, yg2] = VjpFoo().apply(scaled, x, y);
  check(allclose(z2, 2.0f * x * y) && allclose(xg2, 2.0f * y) && allclose(yg2, 2.0f * x),
        "p = 2: z == 2xy, x_grad == 2y, y_grad == 2x");
  auto [vz, vgx, vgy] = ValueAndGradFoo().init_with_output(key, x, y).first;
  check(allclose(vz, zeros({})) && allclose(vgx, zeros({4})) && allclose(vgy, zeros({4})),
        "value_and_grad at p = 0: z == 0, grads == 0");
  Tree vg = ValueAndGradFoo().init(key, x, y);
  vg["params"]["ScalarLearnScale_0"]["scale"] = Tree(full({}, 3.0f));
  auto [gx3, gy3] = GradFoo().apply(
      Tree::dict(
          {{"params", Tree::dict({{"ScalarLearnScale_0", vg["params"]["ScalarLearnScale_0"]}})}}),
      x, y);
  check(allclose(gx3, 3.0f * y) && allclose(gy3, 3.0f * x), "grad at p = 3: 3y and 3x");

  std::cout << "jvp: variable tangents\n";
  Array out_t = JvpFoo().apply(JvpFoo().init(key, x), x);  // scale exists from apply on
  check(allclose(out_t, x), "tangent 1 for p, 0 for x: out_t == x");

  std::cout << "while_loop: WhileLoopExample\n";
  Array xw = ones({2, 2});
  Tree initial_vars = WhileLoopExample().init(key, xw);
  auto [result, state] = WhileLoopExample().apply(initial_vars, xw, {.mutable_ = "state"});
  std::cout << "  acc = " << state["state"]["acc"].leaf().item<int>() << "\n";
  check(state["state"]["acc"].leaf().item<int>() == 10, "acc counts from 1 (init) to 10");
  Array cw = xw;
  for (int i = 0; i < 9; ++i) cw = nn::Dense(2).apply(sub(initial_vars, "Dense_0"), cw);
  check(allclose(result, cw), "result == Dense_0 applied 9 times");

  std::cout << "cond: CondExample\n";
  Array xcnd = random::normal(random::key(4), {1, 3});
  auto [yt, vcnd] = CondExample().init_with_output(key, xcnd, Array(true));
  check(vcnd["state"]["true_count"].leaf().item<int>() == 1 &&
            vcnd["state"]["false_count"].leaf().item<int>() == 0,
        "init (pred true): true_count 1, false_count 0");
  auto [yf, sf] = CondExample().apply(vcnd, xcnd, Array(false), {.mutable_ = "state"});
  check(sf["state"]["false_count"].leaf().item<int>() == 1 && allclose(yt, -yf),
        "pred false: false_count 1, y == -y(true)");

  std::cout << "switch: SwitchExample\n";
  auto [y1, vsw] = SwitchExample().init_with_output(key, xcnd, Array(0));
  auto [y2, s2] = SwitchExample().apply(vsw, xcnd, Array(1), {.mutable_ = "state"});
  auto [y3, s3] = SwitchExample().apply(vsw, xcnd, Array(2), {.mutable_ = "state"});
  check(vsw["state"]["a_count"].leaf().item<int>() == 1 &&
            s2["state"]["b_count"].leaf().item<int>() == 1 &&
            s3["state"]["c_count"].leaf().item<int>() == 1,
        "each index counts its own branch");
  check(allclose(y1, -y2) && allclose(y1, y3), "y(0) == -y(1) == y(2): one shared 'dense'");

  std::cout << "switch: MultiHeadSwitchExample\n";
  Array xh = random::normal(random::key(5), {1, 3});
  Tree vh = MultiHeadSwitchExample().init(key, xh, Array(0));
  const Tree& heads = vh["params"];
  std::cout << "  heads_0/layers_2 kernel " << shape_of(heads["heads_0"]["layers_2"]["kernel"])
            << ", heads_1/layers_0 kernel " << shape_of(heads["heads_1"]["layers_0"]["kernel"])
            << ", heads_2 kernel " << shape_of(heads["heads_2"]["kernel"]) << "\n";
  check(heads["heads_0"]["layers_2"]["kernel"].leaf().shape() == Shape{7, 5} &&
            heads["heads_1"]["layers_0"]["kernel"].leaf().shape() == Shape{3, 11} &&
            heads["heads_2"]["kernel"].leaf().shape() == Shape{3, 5},
        "every head initialized (all branches ran at init)");
  auto dense_chain = [&](const Tree& head, Array h) {
    if (head.contains("kernel"))
      return Array(matmul(h, head["kernel"].leaf()) + head["bias"].leaf());
    for (const auto& [layer, p] : head.as_dict())
      h = matmul(h, p["kernel"].leaf()) + p["bias"].leaf();
    return h;
  };
  bool heads_ok = true;
  for (int i = 0; i < 3; ++i)
    heads_ok = heads_ok && allclose(MultiHeadSwitchExample().apply(vh, xh, Array(i)),
                                    dense_chain(heads["heads_" + std::to_string(i)], xh));
  check(heads_ok, "index i applies head i");

  std::cout << "jit: JitMLP\n";
  Array xj = random::normal(random::key(6), {3, 4});
  Tree vj = JitMLP().init(key, xj);
  auto plain_jit_mlp = [&](const Array& x) {
    Array h = nn::relu(nn::Dense(8).apply(sub(vj, "layers_0"), x));
    return nn::Dense(2).apply(sub(vj, "layers_1"), h);
  };
  check(all(equal(JitMLP().apply(vj, xj), plain_jit_mlp(xj))).item<bool>(),
        "jitted layers == the plain MLP, bit for bit");
  Array xj2 = random::normal(random::key(7), {3, 4});
  check(all(equal(JitMLP().apply(vj, xj2), plain_jit_mlp(xj2))).item<bool>(),
        "a second input (a replay of the trace) too");

  std::cout << "custom_vjp: sign_grad\n";
  Array xv = ones({2});
  Tree vcv = CustomVjpFoo().init(key, xv);
  Tree grad = linum::grad([&](const Tree& v) { return CustomVjpFoo().apply(v, xv); })(vcv);
  Array gk = grad["params"]["Dense_0"]["kernel"].leaf();
  Array gb = grad["params"]["Dense_0"]["bias"].leaf();
  std::cout << "  grad kernel " << shape_str(gk.shape()) << ", bias " << shape_str(gb.shape())
            << "\n";
  check(allclose(gk, ones({2, 1})) && allclose(gb, ones({1})),
        "the true grads (x = 1, 1) are positive: their signs are all 1");
  Array x3 = full({2}, 3.0f);
  Tree grad3 = linum::grad([&](const Tree& v) { return CustomVjpFoo().apply(v, x3); })(vcv);
  check(allclose(grad3["params"]["Dense_0"]["kernel"].leaf(), ones({2, 1})),
        "at x = (3, 3) the true kernel grad is 3: the custom rule gives its sign, 1");

  std::cout << (failures ? "FAILED\n" : "all checks passed\n");
  return failures ? 1 : 0;
}
