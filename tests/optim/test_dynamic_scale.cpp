// flax.training.dynamic_scale.DynamicScale: the scale's growth and back-off as Flax's update
// rule writes them, the gradients unscaled in float32, and float16 gradients that underflow to
// zero without scaling but survive with it.
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include <linum/optim/dynamic_scale.hpp>

#include "helpers.hpp"

namespace test_dynamic_scale {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;
using Params = std::map<std::string, Array>;

namespace {

Array sum_of_squares(const Params& p) { return linum::sum(p.at("w") * p.at("w")); }

}  // namespace

TEST_SUITE("optim DynamicScale") {
  TEST_CASE("defaults are Flax's; the loss and gradients come back unscaled, in float32") {
    optim::DynamicScale ds;
    CHECK(ds.scale.item<double>() == 65536.0);
    CHECK(ds.fin_steps.item<std::int32_t>() == 0);
    CHECK(ds.growth_interval == 2000);
    CHECK(*ds.minimum_scale == static_cast<double>(std::numeric_limits<float>::min()));
    Params p{{"w", f32({1.5, -2.0})}};
    auto r = ds.value_and_grad(sum_of_squares)(p);
    CHECK(r.finite.item<bool>());
    CHECK(r.value.item<double>() == 6.25);  // powers of two: scaling is exact
    CHECK(r.grad.at("w").dtype() == linum::float32);
    check_close(r.grad.at("w"), {3.0, -4.0});
    CHECK(r.dynamic_scale.fin_steps.item<std::int32_t>() == 1);
    CHECK(r.dynamic_scale.scale.item<double>() == 65536.0);
  }

  TEST_CASE("growth_interval finite steps in a row double the scale and restart the count") {
    optim::DynamicScale ds;
    ds.growth_interval = 2;
    ds.scale = Array(4.0f);
    Params p{{"w", f32({1.0})}};
    // fin_steps 0 -> 1 -> 2; at 2 (== growth_interval) the scale grows and the count restarts.
    const double scales[] = {4.0, 4.0, 8.0, 8.0, 8.0, 16.0};
    const int counts[] = {1, 2, 0, 1, 2, 0};
    for (int step = 0; step < 6; ++step) {
      ds = ds.value_and_grad(sum_of_squares)(p).dynamic_scale;
      INFO("step " << step);
      CHECK(ds.scale.item<double>() == scales[step]);
      CHECK(ds.fin_steps.item<std::int32_t>() == counts[step]);
    }
  }

  TEST_CASE("the scale stops growing at float32's largest value") {
    optim::DynamicScale ds;
    ds.growth_interval = 0;
    ds.scale = Array(3e38f);
    Params p{{"w", f32({0.0})}};
    ds = ds.value_and_grad(sum_of_squares)(p).dynamic_scale;
    CHECK(ds.scale.item<double>() == static_cast<double>(std::numeric_limits<float>::max()));
  }

  TEST_CASE("a non-finite gradient backs the scale off, down to minimum_scale") {
    // A float16 loss times Flax's default scale 65536 overflows float16 (its max is 65504), so
    // Flax's first float16 steps are not finite and halve the scale until the scaled loss fits:
    // 5 * 32768 and 5 * 16384 overflow, 5 * 8192 does not.
    auto f16_loss = [](const Params& p) {
      Array h = linum::astype(p.at("w"), linum::float16);
      return linum::sum(h * h);
    };
    optim::DynamicScale ds;
    ds.fin_steps = Array(5);
    Params p{{"w", f32({1.0, 2.0})}};
    for (double expected : {32768.0, 16384.0, 8192.0}) {
      auto r = ds.value_and_grad(f16_loss)(p);
      CHECK_FALSE(r.finite.item<bool>());
      ds = r.dynamic_scale;
      CHECK(ds.scale.item<double>() == expected);
      CHECK(ds.fin_steps.item<std::int32_t>() == 0);
    }
    auto r = ds.value_and_grad(f16_loss)(p);
    CHECK(r.finite.item<bool>());
    CHECK(r.value.item<double>() == 5.0);
    check_close(r.grad.at("w"), {2.0, 4.0});

    optim::DynamicScale tiny;
    tiny.scale = Array(1.0f);
    tiny.minimum_scale = 0.75;
    auto inf_loss = [](const Params& q) { return linum::sum(q.at("w") * INFINITY); };
    CHECK(tiny.value_and_grad(inf_loss)(p).dynamic_scale.scale.item<double>() == 0.75);
    tiny.minimum_scale = std::nullopt;
    CHECK(tiny.value_and_grad(inf_loss)(p).dynamic_scale.scale.item<double>() == 0.5);
  }

  TEST_CASE("a float16 gradient that underflows to zero unscaled survives scaling") {
    // d/dw of 1e-4 * sum(w^2) at w = 1e-4 is 2e-8: under half of float16's smallest subnormal
    // (5.96e-8), so the float16 cotangent rounds to 0. Scaled by 1024 it is 2.05e-5, and
    // unscaled in float32 it keeps float16's relative precision.
    auto small_loss = [](const Params& p) {
      Array h = linum::astype(p.at("w"), linum::float16);
      return linum::sum(h * h) * 1e-4;
    };
    Params p{{"w", f32({1e-4})}};
    const double w16 = linum::astype(p.at("w"), linum::float16).item<double>();
    const double expected = 2.0 * w16 * 1e-4;
    CHECK(linum::grad(small_loss)(p).at("w").item<double>() == 0.0);
    optim::DynamicScale ds;
    ds.scale = Array(1024.0f);
    auto r = ds.value_and_grad(small_loss)(p);
    CHECK(r.finite.item<bool>());
    check_close(r.grad.at("w"), {expected}, 2e-3);
  }

  TEST_CASE("has_aux: fun's aux passes through, its loss is unscaled") {
    optim::DynamicScale ds;
    Params p{{"w", f32({3.0})}};
    auto r = ds.value_and_grad(
        [](const Params& q) { return std::make_pair(sum_of_squares(q), q.at("w") + 1.0); },
        linum::has_aux)(p);
    CHECK(r.value.first.item<double>() == 9.0);
    CHECK(r.value.second.item<double>() == 4.0);
    check_close(r.grad.at("w"), {6.0});
  }

  TEST_CASE("a DynamicScale is a pytree: its two arrays are the leaves, the rest static") {
    optim::DynamicScale ds;
    CHECK(linum::pytree::tree_leaves<Array>(ds).size() == 2);
    optim::DynamicScale other = ds;
    other.growth_interval = 7;
    CHECK_FALSE(linum::pytree::tree_structure(ds) == linum::pytree::tree_structure(other));
  }

  TEST_CASE("integer gradients are refused with the function's name") {
    optim::DynamicScale ds;
    CHECK(message_of([&] { ds.unscale(Array(3)); }).find("DynamicScale.value_and_grad") !=
          std::string::npos);
  }
}

}  // namespace test_dynamic_scale
