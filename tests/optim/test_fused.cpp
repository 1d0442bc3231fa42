// The one-pass optimizer updates (optim/fused.cpp) against the linum-op path they replace: five
// steps of each optimizer on a random params tree give bit-identical params and state (the
// kernels do the same float operations in the same order), every leaf takes the kernel when it
// can and none does under grad / vmap, and updates under grad stay differentiable.
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>

#include "helpers.hpp"

namespace test_fused {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;
using linum::DType;
using Params = std::map<std::string, Array>;

namespace {

// Normal(0, 1) values of `shape` in dtype, from seed.
Array random_array(const linum::Shape& shape, DType dtype, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(static_cast<std::size_t>(linum::shape_size(shape)));
  for (double& x : v) x = dist(rng);
  return linum::astype(linum::array(v, shape), dtype);
}

// Odd sizes so that the kernels' xsimd loop and its scalar tail both run.
Params random_tree(DType dtype, unsigned seed) {
  return {{"a", random_array({5, 3}, dtype, seed)},
          {"b", random_array({37}, dtype, seed + 1)},
          {"c", random_array({2, 3, 4}, dtype, seed + 2)},
          {"d", random_array({}, dtype, seed + 3)}};
}
constexpr int kLeaves = 4, kSteps = 5;

// Same dtype, shape and bytes (NaNs included).
void check_same_bits(const Array& a, const Array& b) {
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.shape() == b.shape());
  CHECK(a.weak_type() == b.weak_type());
  if (!linum::is_floating(a.dtype())) {  // step counters
    CHECK(values(a) == values(b));
    return;
  }
  const bool f32 = a.dtype() == linum::float32;
  const void* pa = f32 ? static_cast<const void*>(a.data<float>()) : a.data<double>();
  const void* pb = f32 ? static_cast<const void*>(b.data<float>()) : b.data<double>();
  const std::size_t bytes = static_cast<std::size_t>(a.size()) * (f32 ? 4 : 8);
  CHECK(std::memcmp(pa, pb, bytes) == 0);
}
template <class T>
void check_same_tree(const T& a, const T& b) {
  const linum::Arrays la = linum::detail::tree_arrays(a), lb = linum::detail::tree_arrays(b);
  REQUIRE(la.size() == lb.size());
  for (std::size_t i = 0; i < la.size(); ++i) {
    INFO("leaf " << i);
    REQUIRE(la[i].valid() == lb[i].valid());
    if (la[i].valid()) check_same_bits(la[i], lb[i]);
  }
}

// kSteps steps of tx on a random tree with random gradients; params, state and how many leaves
// the kernels updated.
template <class Tx>
auto run(const Tx& tx, DType dtype, bool fused) {
  optim::detail::FusedUpdates mode(fused);
  Params p = random_tree(dtype, 1);
  auto state = tx.init(p);
  const auto before = optim::detail::fused_leaf_count();
  for (int step = 0; step < kSteps; ++step) {
    auto [u, next] = tx.update(random_tree(dtype, 100 + 10 * step), state, p);
    state = next;
    p = optim::apply_updates(p, u);
  }
  return std::tuple{p, state, optim::detail::fused_leaf_count() - before};
}

// Fused and linum-op runs agree bit for bit; `kernels` fused passes per leaf and step.
template <class Tx>
void check_fused_matches(const Tx& tx, DType dtype, int kernels) {
  auto [pf, sf, nf] = run(tx, dtype, true);
  auto [pu, su, nu] = run(tx, dtype, false);
  CHECK(nf == static_cast<std::uint64_t>(kernels * kLeaves * kSteps));
  CHECK(nu == 0);
  check_same_tree(pf, pu);
  check_same_tree(su, sf);
}

// kSteps update steps under linum::jit against eager ones: equal bit for bit, and every leaf of
// every replay runs the kernel (recorded in the program as a primitive).
template <class Tx>
void check_jit_matches(const Tx& tx, DType dtype) {
  using State = decltype(tx.init(std::declval<const Params&>()));
  auto step = [&](const Params& p, const State& s, const Params& g) {
    auto [u, next] = tx.update(g, s, p);
    return std::make_pair(optim::apply_updates(p, u), next);
  };
  auto jstep = linum::jit(step);
  Params pe = random_tree(dtype, 1), pj = pe;
  State se = tx.init(pe), sj = tx.init(pj);
  for (int k = 0; k < kSteps; ++k) {
    const Params g = random_tree(dtype, 100 + 10 * static_cast<unsigned>(k));
    auto [p1, s1] = step(pe, se, g);
    const auto before = optim::detail::fused_leaf_count();
    auto [p2, s2] = jstep(pj, sj, g);
    CHECK(optim::detail::fused_leaf_count() - before == kLeaves);
    pe = p1, se = s1, pj = p2, sj = s2;
  }
  check_same_tree(pe, pj);
  check_same_tree(se, sj);
  CHECK(jstep.trace_count() == 1);
}

}  // namespace

TEST_SUITE("optim fused updates") {
  // Every case below: the same float32/float64 operations in the same order on both paths, so
  // the comparison is exact (bit-for-bit), not a tolerance.
  TEST_CASE("adam, nadam and scale_by_adam match the linum-op path bit for bit") {
    for (DType dt : {linum::float32, linum::float64}) {
      INFO(linum::dtype_name(dt));
      check_fused_matches(optim::adam(1e-2), dt, 1);
      check_fused_matches(optim::adam(0.1, 0.8, 0.95, 1e-6, 1e-4), dt, 1);  // eps_root
      check_fused_matches(optim::nadam(1e-2), dt, 1);
      check_fused_matches(optim::adam(1e-2, 0.9, 0.999, 1e-8, 0.0, dt), dt, 1);  // mu_dtype
      check_fused_matches(optim::scale_by_adam(), dt, 1);
      check_fused_matches(optim::lamb(1e-2, 0.9, 0.999, 1e-6, 0.0, 0.01), dt, 1);
    }
  }

  TEST_CASE("adamw and nadamw fold weight decay and the learning rate bit for bit") {
    for (DType dt : {linum::float32, linum::float64}) {
      INFO(linum::dtype_name(dt));
      check_fused_matches(optim::adamw(1e-2, 0.9, 0.999, 1e-8, 0.0, std::nullopt, 0.1), dt, 1);
      check_fused_matches(optim::nadamw(1e-2, 0.9, 0.999, 1e-8, 0.0, std::nullopt, 0.1), dt, 1);
      // A masked weight decay is not folded; adam's own pass still is one kernel per leaf.
      std::map<std::string, bool> mask{{"a", true}, {"b", false}, {"c", true}, {"d", false}};
      check_fused_matches(optim::adamw(1e-2, 0.9, 0.999, 1e-8, 0.0, std::nullopt, 0.1, mask), dt,
                          1);
    }
  }

  TEST_CASE("sgd with momentum and nesterov matches the linum-op path bit for bit") {
    for (DType dt : {linum::float32, linum::float64}) {
      INFO(linum::dtype_name(dt));
      check_fused_matches(optim::sgd(0.1, 0.9), dt, 1);
      check_fused_matches(optim::sgd(0.1, 0.9, true), dt, 1);
      check_fused_matches(optim::sgd(0.1), dt, 0);  // no momentum: nothing to fuse
    }
  }

  TEST_CASE("rmsprop in every variant matches the linum-op path bit for bit") {
    for (DType dt : {linum::float32, linum::float64}) {
      INFO(linum::dtype_name(dt));
      check_fused_matches(optim::rmsprop(1e-2), dt, 1);
      check_fused_matches(optim::rmsprop(1e-2, 0.9, 1e-8, 0.0, false), dt, 1);  // eps outside
      check_fused_matches(optim::rmsprop<true>(1e-2), dt, 1);                   // centered
      check_fused_matches(optim::rmsprop<false, true>(1e-2, 0.9, 1e-8, 0.1), dt, 1);
      check_fused_matches(optim::rmsprop<true, true>(1e-2, 0.9, 1e-6, 0.1, false), dt, 1);
      // With momentum: the trace after the learning rate is a second kernel.
      check_fused_matches(optim::rmsprop(1e-2, 0.9, 1e-8, 0.0, true, 0.9, true), dt, 2);
    }
  }

  TEST_CASE("leaves the kernels cannot take use the linum-op path with the same result") {
    // float32 params with a float64 mu: mixed dtypes, no kernel; the state keeps its dtypes.
    auto tx = optim::adam(1e-2, 0.9, 0.999, 1e-8, 0.0, linum::float64);
    check_fused_matches(tx, linum::float32, 0);
    auto [p, state, n] = run(tx, linum::float32, true);
    CHECK(std::get<0>(state).mu.at("a").dtype() == linum::float64);
    CHECK(std::get<0>(state).nu.at("a").dtype() == linum::float32);
    // A learning-rate schedule is not folded, but the moments are still one pass.
    check_fused_matches(optim::adam([](std::int64_t c) { return 0.1 / (1.0 + c); }), linum::float32,
                        1);
  }

  TEST_CASE("the fused adam step equals Adam's formula computed in double") {
    // One float64 leaf, two steps: mu, nu and the update from the textbook recursion.
    const Array g1 = f64({0.5, -2.0, 3.0}), g2 = f64({-1.0, 0.25, 2.0});
    const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
    auto tx = optim::adam(lr, b1, b2, eps);
    Array p = f64({1.0, 2.0, 3.0});
    auto s = tx.init(p);
    const auto before = optim::detail::fused_leaf_count();
    auto [u1, s1] = tx.update(g1, s, p);
    auto [u2, s2] = tx.update(g2, s1, p);
    CHECK(optim::detail::fused_leaf_count() - before == 2);
    Vec m(3, 0.0), v(3, 0.0), want(3);
    for (const Array& g : {g1, g2}) {
      const Vec gv = values(g);
      for (int i = 0; i < 3; ++i) {
        m[i] = b1 * m[i] + (1 - b1) * gv[i];
        v[i] = b2 * v[i] + (1 - b2) * gv[i] * gv[i];
      }
    }
    for (int i = 0; i < 3; ++i) {
      const double m_hat = m[i] / (1 - b1 * b1), v_hat = v[i] / (1 - b2 * b2);
      want[i] = -lr * m_hat / (std::sqrt(v_hat) + eps);
    }
    check_close(u2, want, 1e-14, 1e-15);
    check_close(std::get<0>(s2).mu, m, 1e-14, 1e-15);
    check_close(std::get<0>(s2).nu, v, 1e-14, 1e-15);
  }

  TEST_CASE("grad through an optimizer update takes the linum-op path and is correct") {
    // f(p) = sum(sin(p + adamw_update(g = p * p, state, p))): params and gradients are tracers.
    auto tx = optim::adamw(0.1, 0.9, 0.999, 1e-8, 0.0, std::nullopt, 0.05);
    const Array p0 = f64({0.3, -1.2, 0.8, 2.0});
    auto state = tx.init(p0);
    std::tie(std::ignore, state) = tx.update(f64({0.1, 0.2, -0.3, 0.4}), state, p0);
    auto f = [&](const Array& p) {
      auto [u, s] = tx.update(p * p, state, p);
      return linum::sum(linum::sin(optim::apply_updates(p, u)));
    };
    const auto before = optim::detail::fused_leaf_count();
    const Array g = linum::grad(f)(p0);
    CHECK(optim::detail::fused_leaf_count() == before);
    // Central differences (the concrete evaluations do take the kernel).
    const Vec pv = values(p0), gv = values(g);
    const double h = 1e-6;
    for (int i = 0; i < 4; ++i) {
      Vec plus = pv, minus = pv;
      plus[i] += h;
      minus[i] -= h;
      const double fd = (f(f64(plus)).item<double>() - f(f64(minus)).item<double>()) / (2 * h);
      INFO("element " << i);
      CHECK(std::abs(gv[i] - fd) <= 1e-6 * (1 + std::abs(fd)));
    }
  }

  TEST_CASE("vmap over an update takes the linum-op path and matches per-example kernels") {
    auto tx = optim::rmsprop<true>(0.05, 0.9, 1e-6, 0.1, true, 0.9);
    const Array p = random_array({11}, linum::float32, 7);
    auto state = tx.init(p);
    std::tie(std::ignore, state) = tx.update(random_array({11}, linum::float32, 8), state, p);
    auto update = [&](const Array& g) { return tx.update(g, state, p).first; };
    const Array gs = random_array({3, 11}, linum::float32, 9);
    const auto before = optim::detail::fused_leaf_count();
    const Array batched = linum::vmap(update)(gs);
    CHECK(optim::detail::fused_leaf_count() == before);
    for (int i = 0; i < 3; ++i) {
      INFO("example " << i);
      const Array gi = linum::reshape(linum::slice(gs, {{i, i + 1}}), {11});
      const Array one = update(gi);
      check_same_bits(linum::reshape(linum::slice(batched, {{i, i + 1}}), {11}), one);
    }
    CHECK(optim::detail::fused_leaf_count() == before + 6);  // rms and trace, 3 examples
  }

  TEST_CASE("FusedUpdates restores the previous mode when it goes out of scope") {
    CHECK(optim::detail::fused_updates_enabled());
    {
      optim::detail::FusedUpdates off(false);
      CHECK_FALSE(optim::detail::fused_updates_enabled());
      {
        optim::detail::FusedUpdates on(true);
        CHECK(optim::detail::fused_updates_enabled());
      }
      CHECK_FALSE(optim::detail::fused_updates_enabled());
    }
    CHECK(optim::detail::fused_updates_enabled());
  }

  TEST_CASE("under jit the adam kernels run as a primitive of the program, bit for bit") {
    for (DType dt : {linum::float32, linum::float64}) {
      INFO("dtype " << linum::dtype_name(dt));
      check_jit_matches(optim::adam(1e-2), dt);
      check_jit_matches(optim::adamw(1e-2, 0.9, 0.999, 1e-8, 0.0, std::nullopt, 0.1), dt);
      check_jit_matches(optim::nadamw(1e-2, 0.9, 0.999, 1e-8, 0.0, std::nullopt, 0.1), dt);
    }
  }
}

}  // namespace test_fused
