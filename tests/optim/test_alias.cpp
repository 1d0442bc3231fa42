// optim optimizers: known answers (optax's adam/sgd docstrings, one float32 adam step, moment
// dtypes, state layouts), every optimizer against a 3-step trajectory computed here in plain double
// arithmetic, the same optimizer over every params container, and Adam fitting a least-squares
// problem with linum::grad.
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>

#include "helpers.hpp"

namespace test_alias {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;
using linum::Tree;
using Params = std::map<std::string, Array>;

namespace {

// f(x) = sum(x**2), the objective of optax's docstring examples.
Array sum_sq(const Array& x) { return linum::sum(x * x); }

// Runs `steps` optimizer steps on f from x0 and returns every iterate.
template <class Tx>
std::vector<Array> run(const Tx& tx, Array x, int steps,
                       const std::function<Array(const Array&)>& f) {
  auto g = linum::grad(f);
  auto state = tx.init(x);
  std::vector<Array> xs;
  for (int i = 0; i < steps; ++i) {
    auto [u, next] = tx.update(g(x), state, x);
    state = next;
    x = optim::apply_updates(x, u);
    xs.push_back(x);
  }
  return xs;
}

// The 3-step test problem: f(x) = 0.5 * sum(a * x**2) from x0, so grad = a * x.
const Vec kA = {1.0, 2.0, 4.0};
const Vec kX0 = {1.0, -2.0, 0.5};
Array quad(const Array& x) { return 0.5 * linum::sum(f64(kA) * x * x); }

// A reference optimizer: step(x, g, t) -> update (t = 1, 2, 3), with its state inside.
using RefStep = std::function<Vec(const Vec& x, const Vec& g, int t)>;

// Three steps of the reference from kX0 on quad.
std::vector<Vec> reference(RefStep step) {
  Vec x = kX0;
  std::vector<Vec> xs;
  for (int t = 1; t <= 3; ++t) {
    Vec g(3);
    for (int i = 0; i < 3; ++i) g[i] = kA[i] * x[i];
    Vec u = step(x, g, t);
    for (int i = 0; i < 3; ++i) x[i] += u[i];
    xs.push_back(x);
  }
  return xs;
}

template <class Tx>
void check_trajectory(const Tx& tx, RefStep ref, double rtol = 1e-13) {
  auto got = run(tx, f64(kX0), 3, quad);
  auto want = reference(std::move(ref));
  for (int t = 0; t < 3; ++t) {
    INFO("step " << t + 1);
    check_close(got[t], want[t], rtol, 1e-15);
  }
}

// Adam's direction m_hat / (sqrt(v_hat + eps_root) + eps), per element, with its moments.
struct AdamRef {
  double b1, b2, eps, eps_root;
  bool nesterov = false;
  Vec m = Vec(3, 0.0), v = Vec(3, 0.0);
  Vec direction(const Vec& g, int t) {
    Vec d(3);
    for (int i = 0; i < 3; ++i) {
      m[i] = (1 - b1) * g[i] + b1 * m[i];
      v[i] = (1 - b2) * g[i] * g[i] + b2 * v[i];
      double mh = m[i] / (1 - std::pow(b1, t));
      if (nesterov)
        mh = b1 * m[i] / (1 - std::pow(b1, t + 1)) + (1 - b1) * g[i] / (1 - std::pow(b1, t));
      const double vh = v[i] / (1 - std::pow(b2, t));
      d[i] = mh / (std::sqrt(vh + eps_root) + eps);
    }
    return d;
  }
};

double norm(const Vec& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

}  // namespace

TEST_SUITE("optim optimizers: known answers") {
  TEST_CASE("state layouts of sgd, adam and adamw (optax's tuples of NamedTuples)") {
    Params p{{"w", f32({1.0, 2.0})}};
    auto s1 = optim::sgd(0.1).init(p);
    static_assert(std::is_same_v<decltype(s1), std::tuple<optim::EmptyState, optim::EmptyState>>);
    auto s2 = optim::sgd(0.1, 0.9).init(p);
    static_assert(
        std::is_same_v<decltype(s2), std::tuple<optim::TraceState<Params>, optim::EmptyState>>);
    auto s3 = optim::adam(0.1).init(p);
    static_assert(std::is_same_v<decltype(s3),
                                 std::tuple<optim::ScaleByAdamState<Params>, optim::EmptyState>>);
    CHECK(std::get<0>(s3).count.dtype() == linum::int32);
    CHECK(std::get<0>(s3).count.shape().empty());
    CHECK(std::get<0>(s3).mu.at("w").dtype() == linum::float32);
    // A schedule learning rate keeps a step count.
    auto s4 = optim::adam(optim::constant_schedule(0.1)).init(p);
    static_assert(
        std::is_same_v<std::tuple_element_t<1, decltype(s4)>, optim::ScaleByScheduleState<>>);
    auto s5 = optim::adamw(0.1).init(p);
    static_assert(std::tuple_size_v<decltype(s5)> == 3);
    std::map<std::string, bool> mask{{"w", true}};
    auto s6 = optim::adamw(0.1, 0.9, 0.999, 1e-8, 0.0, std::nullopt, 1e-4, mask).init(p);
    static_assert(std::is_same_v<std::tuple_element_t<1, decltype(s6)>,
                                 optim::MaskedState<optim::EmptyState>>);
    CHECK(
        linum::pytree::repr(s6) ==
        "(ScaleByAdamState(count=Array(0, dtype=int32), mu={'w': Array([0., 0.], dtype=float32)}, "
        "nu={'w': Array([0., 0.], dtype=float32)}), MaskedState(inner_state=EmptyState()), "
        "EmptyState())");
  }

  TEST_CASE("adam(0.1), one step from [1, 2, 3] with g = 2x (float32)") {
    // Expected: optax's float32 arithmetic emulated op by op (the update is about -0.1 * sign(g)).
    Array x = f32({1.0, 2.0, 3.0});
    auto tx = optim::adam(0.1);
    auto state = tx.init(x);
    auto [u, next] = tx.update(linum::grad(sum_sq)(x), state);
    const auto& s = std::get<0>(next);
    CHECK(s.count.item<int>() == 1);
    CHECK(values(s.mu) == Vec{f32v(0.2), f32v(0.40000001), f32v(0.60000002)});
    CHECK(values(s.nu) == Vec{f32v(0.0040000002), f32v(0.016000001), f32v(0.036000002)});
    Array p = optim::apply_updates(x, u);
    CHECK(p.dtype() == linum::float32);
    CHECK(values(p) == Vec{f32v(0.90000069), f32v(1.9000007), f32v(2.9000006)});
  }

  TEST_CASE("adam(0.003) for 5 steps on sum(x**2): float32 iterates and the docstring's losses") {
    auto xs = run(optim::adam(0.003), f32({1.0, 2.0, 3.0}), 5, sum_sq);
    const std::vector<Vec> o5 = {{0.99700004, 1.997, 2.997},
                                 {0.99400032, 1.9940001, 2.9940002},
                                 {0.99100095, 1.9910004, 2.9910004},
                                 {0.98800218, 1.988001, 2.9880009},
                                 {0.98500413, 1.9850019, 2.9850016}};
    const char* o1[] = {"1.40E+01", "1.39E+01", "1.39E+01", "1.39E+01", "1.38E+01"};
    for (int i = 0; i < 5; ++i) {
      INFO("step " << i + 1);
      Vec want;
      for (double v : o5[i]) want.push_back(f32v(v));
      // float32 arithmetic in optax's order: bit for bit, but for one ulp on element 0 of steps
      // 3-5 (how 0.999**t is rounded: the float32 emulation these iterates come from and XLA's pow
      // may differ there). The losses are those optax's adam docstring prints.
      check_close(xs[i], want, 6.1e-8);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2E", sum_sq(xs[i]).item<double>());
      CHECK(std::string(buf) == o1[i]);
    }
  }

  TEST_CASE("sgd(0.003) for 5 steps on sum(x**2): the losses optax's sgd docstring prints") {
    auto xs = run(optim::sgd(0.003), f32({1.0, 2.0, 3.0}), 5, sum_sq);
    const char* o4[] = {"1.38E+01", "1.37E+01", "1.35E+01", "1.33E+01", "1.32E+01"};
    Vec x = {1.0, 2.0, 3.0};
    for (int i = 0; i < 5; ++i) {
      for (double& v : x) v -= 0.003 * 2 * v;
      check_close(xs[i], x, 1e-6);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2E", sum_sq(xs[i]).item<double>());
      CHECK(std::string(buf) == o4[i]);
    }
  }

  TEST_CASE("accumulator_dtype / mu_dtype choose the dtype of the moments") {
    Params p{{"w", f32({1.0, 2.0})}};
    CHECK(std::get<0>(optim::sgd(0.1, 0.9).init(p)).trace.at("w").dtype() == linum::float32);
    auto s = optim::sgd(0.1, 0.9, false, linum::float64).init(p);
    CHECK(std::get<0>(s).trace.at("w").dtype() == linum::float64);
    auto a = optim::adam(0.1, 0.9, 0.999, 1e-8, 0.0, linum::float64);
    auto as = a.init(p);
    CHECK(std::get<0>(as).mu.at("w").dtype() == linum::float64);
    CHECK(std::get<0>(as).nu.at("w").dtype() == linum::float32);
    auto [u, next] = a.update(p, as, p);
    CHECK(std::get<0>(next).mu.at("w").dtype() == linum::float64);
    CHECK(std::get<0>(next).nu.at("w").dtype() == linum::float32);
    CHECK(optim::apply_updates(p, u).at("w").dtype() == linum::float32);
    auto w = optim::adamw(0.1, 0.9, 0.999, 1e-8, 0.0, linum::float64).init(p);
    CHECK(std::get<0>(w).mu.at("w").dtype() == linum::float64);
  }
}

TEST_SUITE("optim optimizers: 3-step trajectories computed by hand") {
  TEST_CASE("sgd, with momentum, with Nesterov momentum") {
    const double lr = 0.1, mu = 0.9;
    check_trajectory(optim::sgd(lr), [&](const Vec&, const Vec& g, int) {
      Vec u(3);
      for (int i = 0; i < 3; ++i) u[i] = -lr * g[i];
      return u;
    });
    for (bool nesterov : {false, true}) {
      Vec tr(3, 0.0);
      check_trajectory(optim::sgd(lr, mu, nesterov), [&](const Vec&, const Vec& g, int) {
        Vec u(3);
        for (int i = 0; i < 3; ++i) {
          tr[i] = g[i] + mu * tr[i];
          u[i] = -lr * (nesterov ? g[i] + mu * tr[i] : tr[i]);
        }
        return u;
      });
    }
  }

  TEST_CASE("adam, nadam, adam with eps_root") {
    AdamRef ref{0.9, 0.999, 1e-8, 0.0};
    check_trajectory(optim::adam(0.1), [&](const Vec&, const Vec& g, int t) {
      Vec d = ref.direction(g, t);
      for (double& v : d) v *= -0.1;
      return d;
    });
    AdamRef nref{0.8, 0.99, 1e-3, 0.0, true};
    check_trajectory(optim::nadam(0.05, 0.8, 0.99, 1e-3), [&](const Vec&, const Vec& g, int t) {
      Vec d = nref.direction(g, t);
      for (double& v : d) v *= -0.05;
      return d;
    });
    AdamRef rref{0.9, 0.999, 1e-8, 0.5};
    check_trajectory(optim::adam(0.1, 0.9, 0.999, 1e-8, 0.5), [&](const Vec&, const Vec& g, int t) {
      Vec d = rref.direction(g, t);
      for (double& v : d) v *= -0.1;
      return d;
    });
  }

  TEST_CASE("adamw: decoupled weight decay before the learning rate") {
    AdamRef ref{0.9, 0.999, 1e-8, 0.0};
    const double lr = 0.1, wd = 0.05;
    check_trajectory(optim::adamw(lr, 0.9, 0.999, 1e-8, 0.0, std::nullopt, wd),
                     [&](const Vec& x, const Vec& g, int t) {
                       Vec d = ref.direction(g, t);
                       for (int i = 0; i < 3; ++i) d[i] = -lr * (d[i] + wd * x[i]);
                       return d;
                     });
  }

  TEST_CASE("rmsprop: plain, centred, with momentum") {
    const double lr = 0.01, decay = 0.9, eps = 1e-8;
    Vec nu(3, 0.0);
    check_trajectory(optim::rmsprop(lr, decay, eps), [&](const Vec&, const Vec& g, int) {
      Vec u(3);
      for (int i = 0; i < 3; ++i) {
        nu[i] = (1 - decay) * g[i] * g[i] + decay * nu[i];
        u[i] = -lr * g[i] / std::sqrt(nu[i] + eps);
      }
      return u;
    });
    Vec m(3, 0.0), v(3, 0.0);
    check_trajectory(
        optim::rmsprop<true>(lr, decay, eps),
        [&](const Vec&, const Vec& g, int) {
          Vec u(3);
          for (int i = 0; i < 3; ++i) {
            m[i] = (1 - decay) * g[i] + decay * m[i];
            v[i] = (1 - decay) * g[i] * g[i] + decay * v[i];
            u[i] = -lr * g[i] / std::sqrt(v[i] - m[i] * m[i] + eps);
          }
          return u;
        },
        1e-11);
    Vec n2(3, 0.0), tr(3, 0.0);
    check_trajectory(optim::rmsprop(lr, decay, eps, 0.0, true, 0.5),
                     [&](const Vec&, const Vec& g, int) {
                       Vec u(3);
                       for (int i = 0; i < 3; ++i) {
                         n2[i] = (1 - decay) * g[i] * g[i] + decay * n2[i];
                         tr[i] = -lr * g[i] / std::sqrt(n2[i] + eps) + 0.5 * tr[i];
                         u[i] = tr[i];
                       }
                       return u;
                     });
  }

  TEST_CASE("adagrad") {
    const double lr = 0.5;
    Vec s(3, 0.1);
    check_trajectory(optim::adagrad(lr), [&](const Vec&, const Vec& g, int) {
      Vec u(3);
      for (int i = 0; i < 3; ++i) {
        s[i] += g[i] * g[i];
        u[i] = -lr * g[i] / std::sqrt(s[i] + 1e-7);
      }
      return u;
    });
  }

  TEST_CASE("lamb: adam direction plus weight decay, scaled by the trust ratio") {
    AdamRef ref{0.9, 0.999, 1e-6, 0.0};
    const double lr = 0.1, wd = 0.01;
    check_trajectory(optim::lamb(lr, 0.9, 0.999, 1e-6, 0.0, wd),
                     [&](const Vec& x, const Vec& g, int t) {
                       Vec d = ref.direction(g, t);
                       for (int i = 0; i < 3; ++i) d[i] += wd * x[i];
                       const double ratio = norm(x) / norm(d);  // one leaf: the whole vector
                       for (double& e : d) e *= -lr * ratio;
                       return d;
                     });
  }

  TEST_CASE("lion") {
    const double lr = 0.01, b1 = 0.9, b2 = 0.99, wd = 0.1;
    Vec m(3, 0.0);
    check_trajectory(optim::lion(lr, b1, b2, std::nullopt, wd),
                     [&](const Vec& x, const Vec& g, int) {
                       Vec u(3);
                       for (int i = 0; i < 3; ++i) {
                         const double c = (1 - b1) * g[i] + b1 * m[i];
                         u[i] = -lr * ((c > 0) - (c < 0) + wd * x[i]);
                         m[i] = (1 - b2) * g[i] + b2 * m[i];
                       }
                       return u;
                     });
  }

  TEST_CASE("adafactor: a factored (2, 3) leaf and an unfactored (3,) leaf") {
    const double lr = 0.1, eps = 1e-30;
    // Factor leaves with two axes of size >= 2; the loss 0.5 * |p|^2 makes the gradient p.
    auto tx = optim::adafactor(lr, /*min_dim_size_to_factor=*/2);
    Params p{{"k", linum::array({{1.0, -2.0, 0.5}, {0.25, 3.0, -1.0}})},
             {"b", f64({0.5, -1.5, 2.0})}};
    auto state = tx.init(p);
    const auto& fs = std::get<0>(state);
    CHECK(fs.v_row.at("k").shape() == linum::Shape{2});
    CHECK(fs.v_col.at("k").shape() == linum::Shape{3});
    CHECK(fs.v.at("k").shape() == linum::Shape{1});
    CHECK(fs.v.at("b").shape() == linum::Shape{3});
    static_assert(std::tuple_size_v<decltype(state)> == 5);

    Vec k = values(p.at("k")), b = values(p.at("b"));
    Vec vr(2, 0.0), vc(3, 0.0), vb(3, 0.0);
    auto rms = [](const Vec& v) {
      double s = 0;
      for (double x : v) s += x * x;
      return std::sqrt(s / v.size());
    };
    for (int t = 0; t < 3; ++t) {
      auto grads = p;
      auto [u, next] = tx.update(grads, state, p);
      state = next;
      p = optim::apply_updates(p, u);

      const double decay = 1.0 - std::pow(t + 1.0, -0.8);
      Vec uk(6), ub(3);
      for (int i = 0; i < 2; ++i) {
        double m = 0;
        for (int j = 0; j < 3; ++j) m += (k[3 * i + j] * k[3 * i + j] + eps) / 3;
        vr[i] = decay * vr[i] + (1 - decay) * m;
      }
      for (int j = 0; j < 3; ++j) {
        double m = 0;
        for (int i = 0; i < 2; ++i) m += (k[3 * i + j] * k[3 * i + j] + eps) / 2;
        vc[j] = decay * vc[j] + (1 - decay) * m;
      }
      const double rcm = (vr[0] + vr[1]) / 2;
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
          uk[3 * i + j] = k[3 * i + j] / std::sqrt(vr[i] / rcm) / std::sqrt(vc[j]);
      for (int j = 0; j < 3; ++j) {
        vb[j] = decay * vb[j] + (1 - decay) * (b[j] * b[j] + eps);
        ub[j] = b[j] / std::sqrt(vb[j]);
      }
      // clip_by_block_rms(1), learning rate, times rms(param), negated.
      for (Vec* u2 : {&uk, &ub}) {
        const double c = std::max(1.0, rms(*u2));
        for (double& e : *u2) e /= c;
      }
      const double sk = std::max(rms(k), 1e-3), sb = std::max(rms(b), 1e-3);
      for (int i = 0; i < 6; ++i) k[i] -= lr * uk[i] * sk;
      for (int j = 0; j < 3; ++j) b[j] -= lr * ub[j] * sb;
      INFO("step " << t + 1);
      check_close(p.at("k"), k, 1e-6);  // the decay is computed in float32, as optax does
      check_close(p.at("b"), b, 1e-6);
    }
    CHECK(std::get<0>(state).count.item<int>() == 3);
    CHECK_THROWS_AS(tx.update(p, state), linum::ValueError);  // needs params
  }

  TEST_CASE("a schedule learning rate and a clipped chain") {
    // lr(t) = 0.1 / (1 + t), read at the step count before each update.
    check_trajectory(optim::sgd([](std::int64_t t) { return 0.1 / (1.0 + t); }),
                     [&](const Vec&, const Vec& g, int t) {
                       Vec u(3);
                       for (int i = 0; i < 3; ++i) u[i] = -0.1 / t * g[i];
                       return u;
                     });
    check_trajectory(optim::chain(optim::clip_by_global_norm(1.0), optim::sgd(0.5)),
                     [&](const Vec&, const Vec& g, int) {
                       const double n = norm(g);
                       Vec u(3);
                       for (int i = 0; i < 3; ++i) u[i] = -0.5 * (n < 1.0 ? g[i] : g[i] / n);
                       return u;
                     });
  }
}

namespace {

// Params as a Hana struct (a template, so tree_map may re-type it).
template <class A>
struct Linear {
  BOOST_HANA_DEFINE_STRUCT(Linear, (A, kernel), (A, bias));
};

}  // namespace

TEST_SUITE("optim optimizers: params containers") {
  TEST_CASE("adam gives the same iterates over a map, FrozenDict, dynamic Tree, struct and tuple") {
    const Array k0 = linum::array({{0.5, -1.0}, {2.0, 0.25}});
    const Array b0 = f64({0.1, -0.3});
    auto loss = [](const Array& k, const Array& b) {
      Array y = linum::matmul(k, f64({1.0, 2.0})) + b;
      return linum::sum(y * y);
    };
    auto gk = linum::grad([&](const Array& k, const Array& b) { return loss(k, b); },
                          linum::argnums<0, 1>);

    // The reference: a std::tuple of the two arrays.
    auto tx = optim::adam(0.05);
    std::tuple<Array, Array> ref{k0, b0};
    auto sref = tx.init(ref);
    for (int i = 0; i < 4; ++i) {
      auto g = gk(std::get<0>(ref), std::get<1>(ref));
      auto [u, n] = tx.update(g, sref);
      sref = n;
      ref = optim::apply_updates(ref, u);
    }

    auto check = [&](auto params, auto get_k, auto get_b) {
      auto state = tx.init(params);
      for (int i = 0; i < 4; ++i) {
        auto grads = params;
        auto [dk, db] = gk(get_k(params), get_b(params));
        get_k(grads) = dk;
        get_b(grads) = db;
        auto [u, n] = tx.update(grads, state, params);
        state = n;
        params = optim::apply_updates(params, u);
      }
      check_close(get_k(params), values(std::get<0>(ref)));
      check_close(get_b(params), values(std::get<1>(ref)));
    };
    check(
        Params{{"kernel", k0}, {"bias", b0}}, [](auto& p) -> Array& { return p.at("kernel"); },
        [](auto& p) -> Array& { return p.at("bias"); });
    check(
        Tree{{"layer", Tree{{"kernel", k0}, {"bias", b0}}}},
        [](auto& p) -> Array& { return p["layer"]["kernel"].leaf(); },
        [](auto& p) -> Array& { return p["layer"]["bias"].leaf(); });
    check(
        Linear<Array>{k0, b0}, [](auto& p) -> Array& { return p.kernel; },
        [](auto& p) -> Array& { return p.bias; });
    check(
        std::vector<Array>{k0, b0}, [](auto& p) -> Array& { return p[0]; },
        [](auto& p) -> Array& { return p[1]; });

    // FrozenDict is immutable: build the gradient tree with tree_map_with_path.
    linum::FrozenDict<Array> fparams{{"kernel", k0}, {"bias", b0}};
    auto fstate = tx.init(fparams);
    for (int i = 0; i < 4; ++i) {
      auto [dk, db] = gk(fparams["kernel"].leaf(), fparams["bias"].leaf());
      auto grads = linum::tree_map_with_path(
          [&](const linum::pytree::KeyPath& path, const Array&) {
            return linum::keystr(path, true) == "kernel" ? dk : db;
          },
          fparams);
      auto [u, n] = tx.update(grads, fstate, fparams);
      fstate = n;
      fparams = optim::apply_updates(fparams, u);
    }
    check_close(fparams["kernel"].leaf(), values(std::get<0>(ref)));
    check_close(fparams["bias"].leaf(), values(std::get<1>(ref)));
    // The state mirrors the params: mu is a FrozenDict with the same keys (rebuilt in sorted
    // order, as JAX's tree_map rebuilds it).
    CHECK(std::get<0>(fstate).mu.keys() == std::vector<std::string>{"bias", "kernel"});
  }
}

TEST_SUITE("optim optimizers: convergence") {
  TEST_CASE("adam fits a least-squares problem to 1e-4 with linum::grad") {
    // A (6, 3) design matrix and targets b = A w_true: the minimiser of |A w - b|^2 is w_true.
    const Array a = linum::array({{1.0, 0.5, -0.2},
                                  {0.3, -1.0, 0.8},
                                  {-0.7, 0.2, 1.5},
                                  {0.9, 1.1, 0.4},
                                  {-0.4, 0.6, -1.2},
                                  {0.2, -0.3, 0.7}});
    const Vec w_true = {1.5, -2.0, 0.75};
    const Array b = linum::matmul(a, f64(w_true));
    Params params{{"w", linum::zeros({3}, linum::float64)},
                  {"b", linum::zeros({}, linum::float64)}};
    auto loss = [&](const Params& p) {
      Array r = linum::matmul(a, p.at("w")) + p.at("b") - b;
      return linum::mean(r * r);
    };
    auto tx = optim::adam(optim::exponential_decay(0.1, 200, 0.5));
    auto state = tx.init(params);
    auto vg = linum::value_and_grad(loss);
    double first = 0, last = 0;
    for (int i = 0; i < 3000; ++i) {
      auto [l, g] = vg(params);
      if (i == 0) first = l.item<double>();
      last = l.item<double>();
      auto [u, next] = tx.update(g, state, params);
      state = next;
      params = optim::apply_updates(params, u);
    }
    CHECK(last < first * 1e-8);
    check_close(params.at("w"), w_true, 0, 1e-4);
    check_close(params.at("b"), {0.0}, 0, 1e-4);
  }
}

}  // namespace test_alias
