// optax.contrib's GaLore (contrib_galore.hpp): trajectories of
// tests/optim/reference_optax_contrib_more.py (an independent NumPy implementation of optax
// 0.2.8, whose projector SVD runs in float32 as optax's: hence the tolerance; run it with
// /usr/bin/python3 to reprint these values), the objective values galore's docstring prints, the
// projection in closed form (full rank and rank 1), optax's tests of the state's shapes and of the
// projector, dimension numbers for a 3-D weight, and the errors.
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "trajectory.hpp"

namespace test_contrib_galore {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;
using linum::Shape;
using linum::testing::check_error;

TEST_SUITE("optim contrib galore: trajectories of the NumPy reference (float64)") {
  TEST_CASE("galore: galore(0.1, 1)") {
    // w (2 x 3) is projected on its top right singular vector; b goes through Adam whole.
    check_reference(optim::galore(0.1, 1),
                    {{0.40000000199999997, -1.4000000013333334, 1.9000000002499999,
                      0.99349291251659022, -1.9178999366330887, 0.4432793082157262,
                      0.25650708748797652, 2.9178999365754699, -0.94327930817591898},
                     {0.30118742373064028, -1.3002390643206105, 1.8001664861157012,
                      0.98699806361550957, -1.8359542877238442, 0.38666529716349063,
                      0.2630062350295263, 2.835900051626552, -0.88662782692495579},
                     {0.20487125573945103, -1.2009028735999021, 1.7006233920464653,
                      0.98052468356959621, -1.754279511824091, 0.33023842487648808,
                      0.26949169556638164, 2.7540728559115788, -0.83009565194991175}},
                    false, 2e-6);
  }

  TEST_CASE("galore gap wd: galore(0.05, 2, 2, 0.5, scale_by_adam(0.8, 0.99), 0.01)") {
    // The projector is recomputed at the third step.
    check_reference(optim::galore(0.05, 2, 2, 0.5, optim::scale_by_adam(0.8, 0.99), 0.01),
                    {{0.44975000099999995, -1.4492500006666666, 1.9490000001250001,
                      0.98355937247467229, -1.9676044694338326, 0.50294640477118291,
                      0.23718791626465235, 2.9888454988325122, -0.96794324938394694},
                     {0.39987532463434333, -1.3986240479834915, 1.8980981718427463,
                      0.96715682555617544, -1.935260218346875, 0.50586547573162044,
                      0.2244750239448722, 2.9776415132065792, -0.93602806590885601},
                     {0.3506616898815369, -1.3481913555674954, 1.8473445861142168,
                      0.94977669247821583, -1.9035970955363253, 0.5085464355219711,
                      0.21076054669129632, 2.9654464223843879, -0.90495298309471073}},
                    false, 2e-6);
  }
}

TEST_SUITE("optim contrib galore: behaviour, states and errors") {
  TEST_CASE("galore: the docstring's objective values (float32)") {
    // f = sum(w**2), w = ones((100, 100)) (a rank-1 gradient), b = ones(100) not in f.
    using P = std::map<std::string, Array>;
    P p{{"w", linum::ones({100, 100})}, {"b", linum::ones({100})}};
    auto f = [](const P& q) { return linum::sum(linum::square(q.at("w"))); };
    auto tx = optim::galore(0.01, 16);
    auto s = tx.init(p);
    std::vector<std::string> got;
    for (int i = 0; i < 5; ++i) {
      auto [u, next] = tx.update(linum::grad(f)(p), s, p);
      s = next;
      p = optim::apply_updates(p, u);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2E", f(p).item<double>());
      got.emplace_back(buf);
    }
    CHECK(got ==
          std::vector<std::string>{"9.98E+03", "9.96E+03", "9.94E+03", "9.92E+03", "9.90E+03"});
  }

  TEST_CASE("scale_by_galore: full rank gives the gradient back, rank 1 its best rank-1 part") {
    // With the identity as base optimizer the update is scale * P P^T G (or G P P^T): G itself
    // at full rank (up to the float32 SVD), and sigma_1 u_1 v_1^T at rank 1.
    Array g = linum::array({{1.0, -2.0, 0.5, 3.0}, {0.25, 1.5, -1.0, 2.0}, {2.0, 0.0, 1.0, -1.0}});
    auto full = optim::scale_by_galore(3, 200, 2.0, optim::identity());
    check_close(full.update(g, full.init(g)).first, values(2.0 * g), 1e-5, 1e-6);
    auto one = optim::scale_by_galore(1, 200, 1.0, optim::identity());
    auto svd = linum::linalg::svd(g, false);
    Array best = linum::outer(svd.U.T()[0], svd.Vh[0]) * svd.S[0];
    check_close(one.update(g, one.init(g)).first, values(best), 1e-5, 1e-6);
    // Leaves that are not matrices go through the base optimizer whole.
    Array b = f64({1.0, -2.0});
    check_close(one.update(b, one.init(b)).first, {1.0, -2.0}, 0.0, 0.0);
  }

  TEST_CASE("dimension numbers: a 3-D weight as a (reduction, output) matrix") {
    // (2, 3, 2) with reduction axis 1 and output axes (0, 2): the (3, 4) matrix of
    // transpose(x, (1, 0, 2)). Full rank gives g back; rank 1 gives that matrix's rank-1 part,
    // reshaped back.
    Array g = linum::reshape(linum::astype(linum::arange(12), linum::float64), {2, 3, 2});
    g = g * g - 3.0 * g;
    optim::GaLoreDimensionNumbers d{{1}, {0, 2}};
    auto full = optim::scale_by_galore(3, 200, 1.0, optim::identity(), d);
    check_close(full.update(g, full.init(g)).first, values(g), 1e-5, 1e-5);
    auto one = optim::scale_by_galore(1, 200, 1.0, optim::identity(), d);
    auto s = one.init(g);
    CHECK(s.projector.shape() == Shape{4, 1});  // 3 < 4: projected on the right
    Array u = one.update(g, s).first;
    CHECK(u.shape() == Shape{2, 3, 2});
    Array m = linum::transpose(g, {1, 0, 2}).reshape({3, 4});
    auto svd = linum::linalg::svd(m, false);
    Array best = linum::outer(svd.U.T()[0], svd.Vh[0]) * svd.S[0];
    check_close(linum::transpose(u, {1, 0, 2}).reshape({3, 4}), values(best), 1e-5, 1e-5);
    // A function choosing per leaf: only "k" is projected.
    std::map<std::string, Array> p{{"k", g}, {"m", linum::ones({2, 2})}};
    optim::GaLoreDimNumsFn fn = [](const linum::pytree::KeyPath& path, const Array&) {
      return linum::pytree::keystr(path) == "['k']"
                 ? std::optional<optim::GaLoreDimensionNumbers>(
                       optim::GaLoreDimensionNumbers{{1}, {0, 2}})
                 : std::nullopt;
    };
    auto by_fn = optim::scale_by_galore(1, 200, 1.0, optim::identity(), fn);
    auto sp = by_fn.init(p);
    CHECK(sp.projector.at("k").shape() == Shape{4, 1});
    CHECK(sp.projector.at("m").shape() == Shape{0, 0});
  }

  TEST_CASE("optax: the state's shapes (left and right projections, rank clipped)") {
    struct Case {
      Shape shape;
      std::int64_t rank;
      Shape projector, mu;
    };
    for (const Case& c :
         {Case{{32, 64}, 8, {64, 8}, {32, 8}}, Case{{64, 32}, 8, {64, 8}, {8, 32}},
          Case{{64, 64}, 8, {64, 8}, {8, 64}}, Case{{10, 3}, 999, {10, 3}, {3, 3}}}) {
      auto tx = optim::galore(0.1, c.rank, 10);
      auto s = std::get<0>(tx.init(linum::zeros(c.shape)));
      CHECK(s.projector.shape() == c.projector);
      CHECK(s.base_optimizer_state.mu.shape() == c.mu);
      CHECK(s.base_optimizer_state.nu.shape() == c.mu);
    }
  }

  TEST_CASE("optax: the projector is orthonormal and recomputed every update_proj_gap steps") {
    auto key = linum::random::PRNGKey(0);
    auto keys = linum::random::split(key, 3);
    Array p = linum::random::normal(keys[0], {16, 32});
    auto tx = optim::scale_by_galore(4, 2);
    auto s = tx.init(p);
    Array g1 = linum::random::normal(keys[1], {16, 32}),
          g2 = linum::random::normal(keys[2], {16, 32});
    auto s1 = tx.update(g1, s).second;
    Array q = s1.projector;
    check_close(linum::matmul(q.T(), q), values(linum::identity(4)), 0.0, 1e-5);
    auto s2 = tx.update(g2, s1).second;
    CHECK(values(s2.projector) == values(q));  // count 1: kept
    auto s3 = tx.update(g2, s2).second;
    CHECK(values(s3.projector) != values(q));  // count 2: from g2's SVD
    CHECK(s3.count.item<int>() == 3);
  }

  TEST_CASE("errors") {
    check_error<linum::ValueError>([] { optim::scale_by_galore(0); }, {"rank", "positive", "0"});
    check_error<linum::ValueError>([] { optim::scale_by_galore(4, 0); },
                                   {"update_proj_gap", "positive"});
    Array g = linum::zeros({2, 3, 2});
    auto overlap = optim::scale_by_galore(1, 200, 1.0, optim::identity(),
                                          optim::GaLoreDimensionNumbers{{0}, {0, 2}});
    check_error<linum::ValueError>([&] { overlap.init(g); }, {"must be disjoint"});
    auto missing = optim::scale_by_galore(1, 200, 1.0, optim::identity(),
                                          optim::GaLoreDimensionNumbers{{0}, {2}});
    check_error<linum::ValueError>([&] { missing.init(g); }, {"All axes must be specified"});
    optim::GaLoreDimNumsFn all = [](const linum::pytree::KeyPath&, const Array&) {
      return std::optional<optim::GaLoreDimensionNumbers>(optim::GaLoreDimensionNumbers{});
    };
    auto vec = optim::scale_by_galore(1, 200, 1.0, optim::identity(), all);
    check_error<linum::ValueError>([&] { vec.init(f64({1.0})); }, {"rank >= 2", "(1,)"});
  }
}

}  // namespace test_contrib_galore
