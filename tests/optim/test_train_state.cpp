// The run-time chosen GradientTransformation (dynamic Tree state), flax's TrainState, and seed
// 002's "Surgery with Optimizers": flatten an Adam state's mu/nu with flatten_dict(..., "/"),
// edit, unflatten, rebuild the state, keep training.
#include <map>
#include <string>
#include <tuple>
#include <type_traits>

#include "helpers.hpp"

namespace test_train_state {

namespace optim = linum::optim;
namespace tu = linum::traverse_util;
using namespace optim_test;
using linum::Array;
using linum::FrozenDict;
using linum::Tree;
using Params = std::map<std::string, Array>;

namespace {

Params quad_grad(const Params& p) {
  return linum::grad([](const Params& q) {
    return linum::sum(q.at("w") * q.at("w")) + 3.0 * linum::sum(q.at("b") * q.at("b"));
  })(p);
}

Params start() { return {{"w", f64({1.0, -2.0})}, {"b", f64({0.5})}}; }

}  // namespace

TEST_SUITE("optim GradientTransformation (run-time choice)") {
  TEST_CASE("an erased optimizer follows its static twin; the state is a dynamic Tree") {
    for (bool use_adam : {true, false}) {
      optim::GradientTransformation<Params> tx =
          use_adam ? optim::GradientTransformation<Params>(optim::adam(0.1))
                   : optim::GradientTransformation<Params>(optim::sgd(0.1, 0.9));
      Params p = start(), q = start();
      Tree state = tx.init(p);
      auto run_static = [&](const auto& twin) {
        auto s = twin.init(q);
        for (int i = 0; i < 3; ++i) {
          auto [u, n] = twin.update(quad_grad(q), s, q);
          s = n;
          q = optim::apply_updates(q, u);
        }
      };
      if (use_adam)
        run_static(optim::adam(0.1));
      else
        run_static(optim::sgd(0.1, 0.9));
      for (int i = 0; i < 3; ++i) {
        auto [u, n] = tx.update(quad_grad(p), state, p);
        state = n;
        p = optim::apply_updates(p, u);
      }
      check_close(p.at("w"), values(q.at("w")));
      check_close(p.at("b"), values(q.at("b")));
      CHECK(state.is_tuple());
      CHECK(state.size() == 2);
      if (use_adam) {
        CHECK(state[0]["count"].leaf().item<int>() == 3);
        CHECK(state[0]["mu"].is_dict());
        CHECK(state[1].is_dict());  // EmptyState(): a dict without fields
        CHECK(state[1].size() == 0);
      } else {
        CHECK(state[0]["trace"]["w"].leaf().shape() == linum::Shape{2});
      }
    }
  }

  TEST_CASE("the dynamic state prints, flattens and is checked on the way back") {
    optim::GradientTransformation<Params> tx = optim::adam(0.1);
    Tree state = tx.init(start());
    CHECK(linum::pytree::repr(state) ==
          "({'count': Array(0, dtype=int32), 'mu': {'b': Array([0.], dtype=float64), "
          "'w': Array([0., 0.], dtype=float64)}, 'nu': {'b': Array([0.], dtype=float64), "
          "'w': Array([0., 0.], dtype=float64)}}, {})");
    CHECK(linum::tree_leaves<Array>(state).size() == 5);
    auto flat = tu::flatten_dict(state[0], "/");
    CHECK(flat.contains("mu/w"));

    Tree broken = state;
    broken[0]["mu"] = Tree(Array(1.0));
    const std::string msg = message_of<linum::TypeError>([&] { tx.update(start(), broken); });
    CHECK(msg.find("opt_state[0].mu") != std::string::npos);
    CHECK(msg.find("should be a dict") != std::string::npos);
  }
}

TEST_SUITE("optim TrainState") {
  TEST_CASE("create, apply_gradients and apply_fn, as flax.training.train_state") {
    auto apply_fn = [](const Params& p, const Array& x) { return p.at("w") * x + p.at("b"); };
    auto state = optim::create_train_state(apply_fn, start(), optim::adam(0.1));
    CHECK(state.step.item<int>() == 0);
    static_assert(std::is_same_v<decltype(state.opt_state),
                                 std::tuple<optim::ScaleByAdamState<Params>, optim::EmptyState>>);
    auto tx = optim::adam(0.1);
    Params q = start();
    auto s = tx.init(q);
    for (int i = 0; i < 3; ++i) {
      state = state.apply_gradients(quad_grad(state.params));
      auto [u, n] = tx.update(quad_grad(q), s, q);
      s = n;
      q = optim::apply_updates(q, u);
    }
    CHECK(state.step.item<int>() == 3);
    CHECK(std::get<0>(state.opt_state).count.item<int>() == 3);
    check_close(state.params.at("w"), values(q.at("w")));
    check_close(
        state.apply_fn(state.params, f64({2.0, 2.0})),
        {2 * values(q.at("w"))[0] + values(q.at("b"))[0], 2 * values(q.at("w"))[1] + values(q.at("b"))[0]});

    // A TrainState is a pytree of step, params and opt_state; apply_fn and tx are static.
    CHECK(linum::tree_leaves<Array>(state).size() == 1 + 2 + 5);
  }

  TEST_CASE("apply_fn and tx are static fields: kept by tree_map, tree_unflatten, grad and vmap") {
    auto apply_fn = [](const Params& p, const Array& x) { return p.at("w") * x + p.at("b"); };
    const auto state = optim::create_train_state(apply_fn, start(), optim::adam(0.1));
    const Array x = f64({2.0, -1.0});
    const Vec y0 = {2 * 1.0 + 0.5, -1 * -2.0 + 0.5};

    // tree_map keeps them: the mapped state still calls apply_fn and trains with tx.
    auto doubled = linum::tree_map([](const Array& a) { return a + a; }, state);
    check_close(doubled.apply_fn(doubled.params, x), {2 * 2.0 + 1.0, -1 * -4.0 + 1.0});
    auto stepped = doubled.apply_gradients(quad_grad(doubled.params));
    CHECK(stepped.step.item<int>() == 1);
    auto tx = optim::adam(0.1);
    auto [u, s] = tx.update(quad_grad(doubled.params), doubled.opt_state, doubled.params);
    check_close(stepped.params.at("w"), values(optim::apply_updates(doubled.params, u).at("w")));

    // tree_unflatten rebuilds them from the treedef, as JAX keeps static fields as aux data.
    auto [leaves, def] = linum::tree_flatten<Array>(state);
    CHECK(def.to_string().find("namedtuple[TrainState; static apply_fn, tx]") != std::string::npos);
    auto rebuilt = linum::tree_unflatten<std::decay_t<decltype(state)>>(def, leaves);
    check_close(rebuilt.apply_fn(rebuilt.params, x), y0);
    CHECK(rebuilt.tx == state.tx);

    // Under grad, the traced state calls apply_fn; the gradient (a TrainState) keeps both.
    auto loss = [&](const auto& st) {
      const Array y = st.apply_fn(st.params, x);
      return linum::sum(y * y);
    };
    auto g = linum::grad(loss, linum::allow_int)(state);
    // d/dw sum((w x + b)^2) = 2 (w x + b) x; d/db = sum 2 (w x + b).
    check_close(g.params.at("w"), {2 * y0[0] * 2.0, 2 * y0[1] * -1.0});
    check_close(g.params.at("b"), {2 * (y0[0] + y0[1])});
    CHECK(g.apply_fn == state.apply_fn);
    CHECK(g.tx == state.tx);
    CHECK(linum::tree_structure(g) == linum::tree_structure(state));

    // Under vmap over per-example params, every example's traced state calls apply_fn.
    auto batched = state;
    batched.params = {{"w", linum::stack({f64({1.0, -2.0}), f64({3.0, 0.5}), f64({0.0, 1.0})})},
                      {"b", linum::stack({f64({0.5}), f64({-1.0}), f64({2.0})})}};
    using linum::AxisSpec;
    auto per_example = linum::vmap(
        [&](const auto& st) { return st.apply_fn(st.params, x); },
        {.in_axes = AxisSpec::seq({AxisSpec::seq({std::nullopt, 0, std::nullopt})})})(batched);
    check_close(per_example, {2.5, 2.5, 5.0, -1.5, 2.0, 1.0});
    auto same =
        linum::vmap([](const auto& st) { return st; },
                    {.in_axes = AxisSpec::seq({AxisSpec::seq({std::nullopt, 0, std::nullopt})}),
                     .out_axes = AxisSpec::seq({std::nullopt, 0, std::nullopt})})(batched);
    check_close(same.apply_fn(state.params, x), y0);
    CHECK(same.tx == state.tx);
  }

  TEST_CASE("grad and vmap accept flatten_dict's tuple-keyed dicts, keeping keys and type") {
    using Path = linum::pytree::Path;
    const Tree params{{"Dense_0", Tree{{"kernel", f64({1.0, -2.0})}, {"bias", f64({0.5})}}}};
    const auto flat = tu::flatten_dict(params);
    const Array x = f64({2.0, -1.0});
    auto loss = [&](const linum::pytree::Dict<Path, Tree>& f) {
      const Array y =
          f.at(Path{"Dense_0", "kernel"}).leaf() * x + f.at(Path{"Dense_0", "bias"}).leaf();
      return linum::sum(y * y);
    };
    auto g = linum::grad(loss)(flat);
    static_assert(std::is_same_v<decltype(g), linum::pytree::Dict<Path, Tree>>);
    // y = (2.5, 2.5): d/dkernel = 2 y x, d/dbias = sum 2 y.
    check_close(g.at(Path{"Dense_0", "kernel"}).leaf(), {10.0, -5.0});
    check_close(g.at(Path{"Dense_0", "bias"}).leaf(), {10.0});
    CHECK(linum::tree_structure(g) == linum::tree_structure(flat));

    // vmap over a batch of flat dicts equals the loop over examples.
    const auto batched = linum::tree_map(
        [](const Array& a) {
          return linum::stack({a, a * 2.0, a * -1.0});
        },
        flat);
    const Array per_example = linum::vmap(loss)(batched);
    Vec expected;
    for (double s : {1.0, 2.0, -1.0}) {
      expected.push_back(
          values(loss(linum::tree_map([&](const Array& a) { return a * s; }, flat)))[0]);
    }
    check_close(per_example, expected);
  }

  TEST_CASE("states from different optimizers differ in their treedef only by tx") {
    auto a = optim::TrainState<Params>::create(
        nullptr, start(), optim::GradientTransformation<Params>(optim::sgd(0.1)));
    optim::TrainState<Params> b = a;
    b.tx = optim::GradientTransformation<Params>(optim::sgd(0.1));
    CHECK(linum::tree_leaves<Array>(a).size() == linum::tree_leaves<Array>(b).size());
    // The same tx object (a copy of the state) is the same structure; another object is not,
    // as Python compares the optimizers of two TrainStates by identity.
    CHECK(linum::tree_structure(a) == linum::tree_structure(optim::TrainState<Params>(a)));
    CHECK_FALSE(linum::tree_structure(a) == linum::tree_structure(b));
    const std::string msg = message_of<linum::ValueError>(
        [&] { linum::tree_map([](const Array& u, const Array&) { return u; }, a, b); });
    CHECK(msg.find("static fields differ") != std::string::npos);
    // A default-constructed state has no tx: a clear error, not a crash.
    optim::TrainState<Params> empty;
    CHECK(message_of<linum::ValueError>([&] {
            empty.apply_gradients(start());
          }).find("has no tx") != std::string::npos);
  }

  TEST_CASE("TrainState<P> holds an optimizer chosen at run time") {
    for (const char* name : {"adam", "sgd"}) {
      optim::GradientTransformation<Params> tx =
          std::string(name) == "adam" ? optim::GradientTransformation<Params>(optim::adam(0.05))
                                      : optim::GradientTransformation<Params>(optim::sgd(0.05));
      auto state = optim::TrainState<Params>::create(nullptr, start(), tx);
      static_assert(std::is_same_v<decltype(state.opt_state), Tree>);
      for (int i = 0; i < 200; ++i) state = state.apply_gradients(quad_grad(state.params));
      CHECK(state.step.item<int>() == 200);
      check_close(state.params.at("w"), {0.0, 0.0}, 0, 1e-2);
    }
  }
}

namespace {

// Seed 002's CNN parameter shapes, created kernel-before-bias as Flax's init does.
FrozenDict<Array> cnn_params() {
  auto z = [](linum::Shape s) { return linum::zeros(s); };
  return FrozenDict<Array>{
      {"Conv_0", Tree{{"kernel", z({3, 3, 1, 32})}, {"bias", z({32})}}},
      {"Conv_1", Tree{{"kernel", z({3, 3, 32, 64})}, {"bias", z({64})}}},
      {"Dense_0", Tree{{"kernel", z({3136, 256})}, {"bias", z({256})}}},
      {"Dense_1", Tree{{"kernel", z({256, 10})}, {"bias", z({10})}}},
  };
}

auto shape_of = [](const Array& a) { return a.shape(); };

const char* kTreeOfShapes = R"({
    Conv_0: {
        bias: (32,),
        kernel: (3, 3, 1, 32),
    },
    Conv_1: {
        bias: (64,),
        kernel: (3, 3, 32, 64),
    },
    Dense_0: {
        bias: (256,),
        kernel: (3136, 256),
    },
    Dense_1: {
        bias: (10,),
        kernel: (256, 10),
    },
})";

}  // namespace

TEST_SUITE("optim seed 002: surgery with optimizers") {
  TEST_CASE("In[9]: the Adam state is a tuple of transformation states mirroring the params") {
    auto params = cnn_params();
    auto tx = optim::adam(1.0);
    auto opt_state = tx.init(params);
    auto shapes = linum::tree_map(shape_of, opt_state);
    const std::string fd = std::string("FrozenDict(") + kTreeOfShapes + ")";
    CHECK(linum::pytree::repr(shapes) ==
          "(ScaleByAdamState(count=(), mu=" + fd + ", nu=" + fd + "), EmptyState())");
  }

  TEST_CASE("In[10]/In[11]: flatten mu and nu, edit, unflatten, rebuild, keep training") {
    auto params = cnn_params();
    auto tx = optim::adam(1.0);
    auto opt_state = tx.init(params);
    // One step so that the moments are not zero.
    auto grads = linum::tree_map([](const Array& p) { return linum::ones_like(p); }, params);
    opt_state = tx.update(grads, opt_state, params).second;

    auto flat_mu = tu::flatten_dict(std::get<0>(opt_state).mu, "/");
    auto flat_nu = tu::flatten_dict(std::get<0>(opt_state).nu, "/");
    CHECK(linum::pytree::pformat(linum::tree_map(shape_of, flat_mu)) ==
          R"({'Conv_0/bias': (32,),
 'Conv_0/kernel': (3, 3, 1, 32),
 'Conv_1/bias': (64,),
 'Conv_1/kernel': (3, 3, 32, 64),
 'Dense_0/bias': (256,),
 'Dense_0/kernel': (3136, 256),
 'Dense_1/bias': (10,),
 'Dense_1/kernel': (256, 10)})");

    // Edit: reset the moments of the last layer.
    flat_mu["Dense_1/kernel"] = Tree(linum::zeros({256, 10}));
    flat_nu["Dense_1/kernel"] = Tree(linum::zeros({256, 10}));

    // Rebuild the state: a FrozenDict params tree needs the unflattened dicts frozen again.
    auto adam_state = std::get<0>(opt_state);
    adam_state.mu = linum::freeze(tu::unflatten_dict(flat_mu, "/"));
    adam_state.nu = linum::freeze(tu::unflatten_dict(flat_nu, "/"));
    auto new_state = std::tuple{adam_state, std::get<1>(opt_state)};
    CHECK(linum::pytree::repr(linum::tree_map(shape_of, new_state)) ==
          linum::pytree::repr(linum::tree_map(shape_of, opt_state)));
    CHECK(values(std::get<0>(new_state).mu["Dense_1"]["kernel"].leaf()) == Vec(2560, 0.0));
    check_close(std::get<0>(new_state).mu["Dense_0"]["bias"].leaf(),
                Vec(256, f32v(0.1)));  // untouched

    // Training continues from the edited state.
    auto [u, next] = tx.update(grads, new_state, params);
    CHECK(std::get<0>(next).count.item<int>() == 2);
    // Dense_1/kernel restarted: mu = 0.1, nu = 0.001 after this step, bias-corrected with t=2.
    const double mu = 0.1, nu = 0.001;
    const double want = -1.0 * (mu / (1 - 0.81)) / (std::sqrt(nu / (1 - 0.999 * 0.999)) + 1e-8);
    // float32 state: 1 - 0.999**2 loses ~5 digits to cancellation.
    check_close(u["Dense_1"]["kernel"].leaf(), Vec(2560, want), 5e-5);
  }

  TEST_CASE("with dynamic Tree params the rebuilt state prints as model surgery's Out[11]") {
    Tree params = cnn_params().unfreeze();
    auto tx = optim::adam(1.0);
    auto opt_state = tx.init(params);
    auto flat_mu = tu::flatten_dict(std::get<0>(opt_state).mu, "/");
    auto flat_nu = tu::flatten_dict(std::get<0>(opt_state).nu, "/");
    auto s0 = std::get<0>(opt_state);
    s0.mu = tu::unflatten_dict(flat_mu, "/");
    s0.nu = tu::unflatten_dict(flat_nu, "/");
    auto rebuilt = std::tuple{s0, std::get<1>(opt_state)};
    const std::string d =
        "{'Conv_0': {'bias': (32,), 'kernel': (3, 3, 1, 32)}, 'Conv_1': {'bias': (64,), 'kernel': "
        "(3, 3, 32, 64)}, 'Dense_0': {'bias': (256,), 'kernel': (3136, 256)}, 'Dense_1': {'bias': "
        "(10,), 'kernel': (256, 10)}}";
    CHECK(linum::pytree::pformat(linum::tree_map(shape_of, rebuilt)) ==
          "(ScaleByAdamState(count=(), mu=" + d + ", nu=" + d + "),\n EmptyState())");
  }
}

}  // namespace test_train_state
