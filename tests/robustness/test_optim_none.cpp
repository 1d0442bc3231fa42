// optax treats a None leaf as an empty subtree: apply_updates, incremental_update and every
// optimizer pass std::nullopt (std::optional) and Tree None through untouched, and the other
// leaves get exactly the updates they would get without the None ones.
#include <doctest/doctest.h>

#include <linum/autodiff/ops.hpp>
#include <linum/optim/optim.hpp>

#include <map>
#include <optional>
#include <string>

#include "support.hpp"

namespace test_optim_none {

using namespace linum;

namespace {
using OptParams = std::map<std::string, std::optional<Array>>;
using Params = std::map<std::string, Array>;

bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && max(abs(a - b)).item<double>() < 1e-12;
}

// Three steps of tx on {"w": w, "b": None} (an optional map and a dynamic Tree) against three
// steps on {"w": w} alone.
template <class Tx>
void check_none_passes(const Tx& tx) {
  const Array w0 = array<double>({1.0, -2.0, 0.5});
  auto grad_of = [](const Array& w) { return w * array<double>({1.0, 3.0, -2.0}) + 0.25; };
  Params ref{{"w", w0}};
  OptParams opt{{"w", w0}, {"b", std::nullopt}};
  Tree tree;
  tree["w"] = Tree(w0);
  tree["b"] = Tree::none();
  auto s_ref = tx.init(ref);
  auto s_opt = tx.init(opt);
  auto s_tree = tx.init(tree);
  for (int i = 0; i < 3; ++i) {
    auto [u_ref, n_ref] = tx.update(Params{{"w", grad_of(ref["w"])}}, s_ref, ref);
    auto [u_opt, n_opt] =
        tx.update(OptParams{{"w", grad_of(*opt["w"])}, {"b", std::nullopt}}, s_opt, opt);
    Tree g;
    g["w"] = Tree(grad_of(tree["w"].leaf()));
    g["b"] = Tree::none();
    auto [u_tree, n_tree] = tx.update(g, s_tree, tree);
    s_ref = n_ref;
    s_opt = n_opt;
    s_tree = n_tree;
    CHECK_FALSE(u_opt.at("b").has_value());
    CHECK(u_tree["b"].is_none());
    ref = optim::apply_updates(ref, u_ref);
    opt = optim::apply_updates(opt, u_opt);
    tree = optim::apply_updates(tree, u_tree);
    CHECK(same(*opt.at("w"), ref.at("w")));
    CHECK(same(tree["w"].leaf(), ref.at("w")));
    CHECK_FALSE(opt.at("b").has_value());
    CHECK(tree["b"].is_none());
  }
  // The first step moved w (so the comparison above is not of unchanged values).
  CHECK_FALSE(same(ref.at("w"), w0));
}
}  // namespace

TEST_CASE("apply_updates and incremental_update leave None leaves untouched") {
  const OptParams p{{"w", array<double>({1.0, 2.0})}, {"b", std::nullopt}};
  const OptParams u{{"w", array<double>({0.5, -1.0})}, {"b", std::nullopt}};
  const OptParams a = optim::apply_updates(p, u);
  CHECK(same(*a.at("w"), array<double>({1.5, 1.0})));
  CHECK_FALSE(a.at("b").has_value());
  const OptParams inc = optim::incremental_update(u, p, 0.25);
  CHECK(same(*inc.at("w"), array<double>({0.875, 1.25})));
  CHECK_FALSE(inc.at("b").has_value());
  Tree tp, tu;
  tp["w"] = Tree(array<double>({1.0, 2.0}));
  tp["b"] = Tree::none();
  tu["w"] = Tree(array<double>({0.5, -1.0}));
  tu["b"] = Tree::none();
  const Tree ta = optim::apply_updates(tp, tu);
  CHECK(same(ta["w"].leaf(), array<double>({1.5, 1.0})));
  CHECK(ta["b"].is_none());
  CHECK(optim::incremental_update(tu, tp, 0.25)["b"].is_none());
}

TEST_CASE("every optimizer passes None leaves through and updates the others as without them") {
  SUBCASE("sgd") { check_none_passes(optim::sgd(0.1)); }
  SUBCASE("sgd momentum nesterov") { check_none_passes(optim::sgd(0.1, 0.9, true)); }
  SUBCASE("adam") { check_none_passes(optim::adam(0.1)); }
  SUBCASE("nadam") { check_none_passes(optim::nadam(0.1)); }
  SUBCASE("adamw") { check_none_passes(optim::adamw(0.1)); }
  SUBCASE("nadamw") { check_none_passes(optim::nadamw(0.1)); }
  SUBCASE("rmsprop") { check_none_passes(optim::rmsprop(0.1)); }
  SUBCASE("adagrad") { check_none_passes(optim::adagrad(0.1)); }
  SUBCASE("lamb") { check_none_passes(optim::lamb(0.1)); }
  SUBCASE("lion") { check_none_passes(optim::lion(0.1)); }
  SUBCASE("adafactor") { check_none_passes(optim::adafactor(0.1)); }
  SUBCASE("MultiSteps of adam") { check_none_passes(optim::MultiSteps(optim::adam(0.1), 2)); }
  SUBCASE("apply_every, sign, clip, stddev, centralize") {
    check_none_passes(optim::chain(optim::apply_every(2), optim::scale_by_sign(), optim::clip(0.3),
                                   optim::scale_by_stddev(), optim::centralize(),
                                   optim::scale(-0.1)));
  }
  SUBCASE("clip_by_global_norm then adam") {
    check_none_passes(optim::chain(optim::clip_by_global_norm(0.5), optim::adam(0.1)));
  }
}

}  // namespace test_optim_none
