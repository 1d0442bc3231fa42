// optim with bfloat16 / float16 params and grads, as optax: updates in the grads' dtype, states
// in the params' dtype (mu in mu_dtype when given, counts int32), apply_updates keeping each
// param's dtype; one bfloat16 adam step against optax's op sequence rounded per op and against
// the float32 step.
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace test_optim_dtypes {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;
using linum::BFloat16;
using linum::DType;
using Params = std::map<std::string, Array>;
using Erased = optim::GradientTransformation<Params>;

namespace {

Params params_in(DType dtype) {
  return {{"b", linum::array({0.25f, -1.5f}).astype(dtype)},
          {"w", linum::array({1.0f, -2.0f, 0.5f}).astype(dtype)}};
}
Params grads_of(const Params& p) {
  // grad of 0.5 * sum(a * w^2) + sum(b^2): leaves in the params' dtype.
  return {{"b", 2.0 * p.at("b")},
          {"w", linum::array({1.0f, 2.0f, 4.0f}).astype(p.at("w").dtype()) * p.at("w")}};
}

// Every float leaf of a state has `dtype`; the others are int32 counts, bool flags or uint32
// PRNG keys.
void check_state_dtypes(const linum::Tree& state, DType dtype, const std::string& name) {
  for (const Array& x : linum::detail::tree_arrays(state)) {
    if (!x.valid()) continue;
    INFO(name << ": state leaf of dtype " << linum::dtype_name(x.dtype()) << ", shape "
              << linum::shape_str(x.shape()));
    if (linum::is_floating(x.dtype()))
      CHECK(x.dtype() == dtype);
    else
      CHECK((x.dtype() == linum::int32 || x.dtype() == linum::bool_ || x.dtype() == linum::uint32));
  }
}

// A float rounded to bfloat16, as float.
float bf(double x) { return static_cast<float>(BFloat16(static_cast<float>(x))); }

// |a - b| in units of bfloat16's spacing at b.
double bf16_ulps(double a, double b) {
  const double spacing = std::ldexp(1.0, std::ilogb(b) - 7);
  return std::abs(a - b) / spacing;
}

}  // namespace

TEST_SUITE("optim.dtypes") {
  TEST_CASE("every optimizer keeps 2-byte params, updates and states in their dtype") {
    const std::vector<std::pair<std::string, Erased>> txs = {
        {"sgd", optim::sgd(0.1)},
        {"sgd momentum", optim::sgd(0.1, 0.9)},
        {"sgd nesterov", optim::sgd(0.1, 0.9, true)},
        {"adam", optim::adam(0.1)},
        {"adam with a schedule", optim::adam(optim::linear_schedule(0.1, 0.01, 10))},
        {"adamw", optim::adamw(0.1)},
        {"nadam", optim::nadam(0.1)},
        {"nadamw", optim::nadamw(0.1)},
        {"adamax", optim::adamax(0.1)},
        {"adamaxw", optim::adamaxw(0.1)},
        {"amsgrad", optim::amsgrad(0.1)},
        {"adabelief", optim::adabelief(0.1)},
        {"adagrad", optim::adagrad(0.1)},
        {"adadelta", optim::adadelta(0.1)},
        {"adan", optim::adan(0.1)},
        {"rmsprop", optim::rmsprop(0.1)},
        {"rmsprop centered momentum", optim::rmsprop<true, true>(0.1, 0.9, 1e-8, 0.0, true, 0.9)},
        {"lion", optim::lion(0.1)},
        {"lamb", optim::lamb(0.1)},
        {"lars", optim::lars(0.1)},
        {"yogi", optim::yogi(0.1)},
        {"radam", optim::radam(0.1)},
        {"novograd", optim::novograd(0.1)},
        {"fromage", optim::fromage(0.1)},
        {"sign_sgd", optim::sign_sgd(0.1)},
        {"signum", optim::signum(0.1)},
        {"sm3", optim::sm3(0.1)},
        {"optimistic_gradient_descent", optim::optimistic_gradient_descent(0.1)},
        {"optimistic_adam", optim::optimistic_adam(0.1)},
        {"rprop", optim::rprop(0.1)},
        {"adafactor", optim::adafactor(0.1)},
        {"noisy_sgd", optim::noisy_sgd(0.1)},
        {"clip_by_global_norm, adam",
         optim::chain(optim::clip_by_global_norm(1.0), optim::adam(0.1))},
        {"clip, sgd", optim::chain(optim::clip(0.5), optim::sgd(0.1))},
    };
    for (const DType dtype : {linum::bfloat16, linum::float16}) {
      for (const auto& [name, tx] : txs) {
        INFO(name << " with " << linum::dtype_name(dtype));
        Params p = params_in(dtype);
        linum::Tree state = tx.init(p);
        check_state_dtypes(state, dtype, name);
        for (int step = 0; step < 3; ++step) {
          auto [u, next] = tx.update(grads_of(p), state, p);
          for (const auto& [k, leaf] : u) {
            INFO("update " << k << " at step " << step);
            CHECK(leaf.dtype() == dtype);
          }
          check_state_dtypes(next, dtype, name);
          state = next;
          p = optim::apply_updates(p, u);
          for (const auto& [k, leaf] : p) CHECK(leaf.dtype() == dtype);
          // float16 is left out: eps = 1e-8 underflows to 0 in it, so a centered rmsprop may
          // divide by a zero variance there (as in optax).
          if (dtype == linum::bfloat16)
            for (const auto& [k, leaf] : p) CHECK(linum::all(linum::isfinite(leaf)).item<bool>());
        }
      }
    }
  }

  TEST_CASE("optax.contrib optimizers give updates in the grads' dtype") {
    // Their states may hold float32 scalars (learning-rate estimates, distances) as optax's do;
    // the updates and the params stay 2-byte.
    const std::vector<std::pair<std::string, Erased>> txs = {
        {"adopt", optim::adopt(0.1)},
        {"ademamix", optim::ademamix(0.1)},
        {"simplified_ademamix", optim::simplified_ademamix(0.1)},
        {"madgrad", optim::madgrad(0.1)},
        {"acprop", optim::acprop(0.1)},
        {"cocob", optim::cocob()},
        {"dog", optim::dog()},
        {"dowg", optim::dowg()},
        {"dadapt_adamw", optim::dadapt_adamw()},
        {"prodigy", optim::prodigy()},
        {"schedule_free_adamw", optim::schedule_free_adamw()},
    };
    for (const DType dtype : {linum::bfloat16, linum::float16}) {
      for (const auto& [name, tx] : txs) {
        INFO(name << " with " << linum::dtype_name(dtype));
        Params p = params_in(dtype);
        linum::Tree state = tx.init(p);
        for (int step = 0; step < 3; ++step) {
          auto [u, next] = tx.update(grads_of(p), state, p);
          for (const auto& [k, leaf] : u) CHECK(leaf.dtype() == dtype);
          state = next;
          p = optim::apply_updates(p, u);
          for (const auto& [k, leaf] : p) CHECK(leaf.dtype() == dtype);
        }
      }
    }
  }

  TEST_CASE("apply_updates casts p + u back to each param's dtype") {
    const Params p = params_in(linum::bfloat16);
    const Params u = {{"b", linum::array({0.001f, 0.5f})}, {"w", linum::array({1.0f, 1.0f, 1.0f})}};
    const Params q = optim::apply_updates(p, u);
    CHECK(q.at("b").dtype() == linum::bfloat16);
    CHECK(q.at("w").dtype() == linum::bfloat16);
    // float32 sums rounded once: 0.25 + 0.001 = 0.251 -> 0.25097656 in bfloat16.
    check_close(q.at("b"), {bf(0.25f + 0.001f), bf(-1.5f + 0.5f)}, 0, 0);
    check_close(q.at("w"), {2.0, -1.0, 1.5}, 0, 0);
  }

  TEST_CASE("one bfloat16 adam step: optax's ops rounded per op, and the float32 step") {
    const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
    const std::vector<float> g0 = {0.3f, -1.7f, 2.5e-3f, 40.0f};
    const Array g = linum::array(g0).astype(linum::bfloat16);
    const std::vector<double> gv = values(g);
    const auto tx = optim::adam(lr, b1, b2, eps);
    const Array p = linum::zeros({4}, linum::bfloat16);
    auto state = tx.init(p);
    auto [u, next] = tx.update(g, state, p);
    REQUIRE(u.dtype() == linum::bfloat16);
    CHECK(std::get<0>(next).mu.dtype() == linum::bfloat16);
    CHECK(std::get<0>(next).nu.dtype() == linum::bfloat16);
    CHECK(std::get<0>(next).count.dtype() == linum::int32);
    const std::vector<double> got = values(u);

    // optax's op sequence, each jnp op rounding to bfloat16 and each Python float scalar taken
    // as bfloat16; decay**count is float32, cast to bfloat16 before the division.
    const float den1 = bf(1.0f - static_cast<float>(b1)), den2 = bf(1.0f - static_cast<float>(b2));
    for (std::size_t i = 0; i < gv.size(); ++i) {
      INFO("element " << i);
      const float gi = static_cast<float>(gv[i]);
      const float m = bf(bf(bf(1.0 - b1) * gi) + bf(bf(b1) * 0.0f));
      const float v = bf(bf(bf(1.0 - b2) * bf(gi * gi)) + bf(bf(b2) * 0.0f));
      const float m_hat = bf(m / den1), v_hat = bf(v / den2);
      const float upd = bf(m_hat / bf(bf(std::sqrt(bf(v_hat + 0.0f))) + bf(eps)));
      const float expected = bf(bf(-lr) * upd);
      CHECK(got[i] == expected);
      // The wide step from the same bfloat16 grads, rounded once: within one bfloat16 ulp (the
      // per-op roundings of bf16(0.1), bf16(0.001) and of the chain nearly cancel).
      const double m32 = (1.0 - b1) * gi, v32 = (1.0 - b2) * gi * gi;
      const double u32 = -lr * (m32 / (1.0 - b1)) / (std::sqrt(v32 / (1.0 - b2)) + eps);
      CHECK(bf16_ulps(got[i], bf(u32)) <= 1.0);
    }
    // mu and nu hold the rounded moments.
    check_close(
        std::get<0>(next).mu,
        {bf(bf(bf(0.1) * static_cast<float>(gv[0]))), bf(bf(bf(0.1) * static_cast<float>(gv[1]))),
         bf(bf(bf(0.1) * static_cast<float>(gv[2]))), bf(bf(bf(0.1) * static_cast<float>(gv[3])))},
        0, 0);
  }

  TEST_CASE("a jitted bfloat16 adam step is the eager one") {
    const auto tx = optim::adam(0.01);
    const Array p = linum::array({0.5f, -1.0f, 2.0f}).astype(linum::bfloat16);
    const Array g = linum::array({0.3f, -1.7f, 0.02f}).astype(linum::bfloat16);
    auto step = [&](const Array& params, const Array& grads) {
      auto [u, s] = tx.update(grads, tx.init(params), params);
      return optim::apply_updates(params, u);
    };
    const Array jitted = linum::jit(step)(p, g);
    REQUIRE(jitted.dtype() == linum::bfloat16);
    CHECK(values(jitted) == values(step(p, g)));
  }

  TEST_CASE("mu_dtype=bfloat16 with float32 params: mu rounded between steps") {
    const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
    const auto tx = optim::adam(lr, b1, b2, eps, 0.0, linum::bfloat16);
    Array p = linum::array({1.0f, -2.0f, 0.5f});
    auto state = tx.init(p);
    CHECK(std::get<0>(state).mu.dtype() == linum::bfloat16);
    CHECK(std::get<0>(state).nu.dtype() == linum::float32);
    double mu[3] = {0, 0, 0}, nu[3] = {0, 0, 0};
    std::vector<double> x = values(p);
    for (int t = 1; t <= 3; ++t) {
      INFO("step " << t);
      const Array g = 2.0 * p;
      auto [u, next] = tx.update(g, state, p);
      CHECK(u.dtype() == linum::float32);
      CHECK(std::get<0>(next).mu.dtype() == linum::bfloat16);
      CHECK(std::get<0>(next).nu.dtype() == linum::float32);
      // Float32 arithmetic except on the bfloat16 mu, which is rounded when stored.
      std::vector<double> expected(3);
      for (int i = 0; i < 3; ++i) {
        const float gi = static_cast<float>(2.0 * x[i]);
        // decay * mu is a bfloat16 product (the weak 0.9 taken as bfloat16), then float32.
        const float m = static_cast<float>(1.0 - b1) * gi + bf(bf(b1) * static_cast<float>(mu[i]));
        const float v = static_cast<float>(1.0 - b2) * (gi * gi) +
                        static_cast<float>(b2) * static_cast<float>(nu[i]);
        const float c1 = 1.0f - std::pow(0.9f, static_cast<float>(t));
        const float c2 = 1.0f - std::pow(0.999f, static_cast<float>(t));
        expected[i] =
            static_cast<float>(-lr) * ((m / c1) / (std::sqrt(v / c2) + static_cast<float>(eps)));
        mu[i] = bf(m);
        nu[i] = v;
      }
      check_close(u, expected, 2e-6, 1e-7);
      check_close(std::get<0>(next).mu, {mu[0], mu[1], mu[2]}, 0, 0);
      state = next;
      p = optim::apply_updates(p, u);
      CHECK(p.dtype() == linum::float32);
      x = values(p);
    }
  }

  TEST_CASE("mu_dtype on adamw, nadam, lion and amsgrad casts the first moment only") {
    const Array p = linum::array({1.0f, -2.0f, 0.5f}), g = linum::array({0.1f, 0.2f, -0.3f});
    auto check = [&](const auto& tx, const char* name) {
      INFO(name);
      auto [u, s] = tx.update(g, tx.init(p), p);
      CHECK(u.dtype() == linum::float32);
      CHECK(std::get<0>(s).mu.dtype() == linum::bfloat16);
      CHECK(std::get<0>(s).nu.dtype() == linum::float32);
    };
    check(optim::adamw(0.1, 0.9, 0.999, 1e-8, 0.0, linum::bfloat16), "adamw");
    check(optim::nadam(0.1, 0.9, 0.999, 1e-8, 0.0, linum::bfloat16), "nadam");
    check(optim::amsgrad(0.1, 0.9, 0.999, 1e-8, 0.0, linum::bfloat16), "amsgrad");
    const auto lion = optim::lion(0.1, 0.9, 0.99, linum::bfloat16);
    auto [u, s] = lion.update(g, lion.init(p), p);
    CHECK(u.dtype() == linum::float32);
    CHECK(std::get<0>(s).mu.dtype() == linum::bfloat16);
  }

  TEST_CASE("sgd's accumulator_dtype and adamw's decay in bfloat16") {
    const auto tx = optim::sgd(0.1, 0.9, false, linum::bfloat16);
    const Array p = linum::array({1.0f, -2.0f});
    auto state = tx.init(p);
    CHECK(std::get<0>(state).trace.dtype() == linum::bfloat16);
    auto [u, next] = tx.update(linum::array({0.3f, 0.7f}), state, p);
    CHECK(u.dtype() == linum::float32);
    CHECK(std::get<0>(next).trace.dtype() == linum::bfloat16);

    // adamw: u + wd * p in bfloat16, then -lr * that.
    const Array pb = linum::array({4.0f, -8.0f}).astype(linum::bfloat16);
    const auto aw = optim::adamw(0.5, 0.9, 0.999, 1e-8, 0.0, std::nullopt, 0.25);
    auto [ua, sa] = aw.update(linum::array({1.0f, -1.0f}).astype(linum::bfloat16), aw.init(pb), pb);
    REQUIRE(ua.dtype() == linum::bfloat16);
    // The first adam step of +-1 is about +-1 (m_hat / sqrt(v_hat) with bf16 rounding):
    // recompute it from scale_by_adam alone.
    const auto sa_only = optim::scale_by_adam();
    const Array ub =
        sa_only.update(linum::array({1.0f, -1.0f}).astype(linum::bfloat16), sa_only.init(pb)).first;
    const std::vector<double> ubv = values(ub), pbv = values(pb);
    check_close(ua,
                {bf(bf(-0.5) * bf(ubv[0] + bf(0.25) * pbv[0])),
                 bf(bf(-0.5) * bf(ubv[1] + bf(0.25) * pbv[1]))},
                0, 0);
  }
}

}  // namespace test_optim_dtypes
