// Transforms over pytrees: every transform takes and returns the dynamic Tree (dicts holding
// None and empty dicts included), std::tuples mixing Trees and Arrays and the static containers;
// has_aux, vmap axes given as Trees, Jacobians over pytrees and integer leaves. Numbers are
// checked against closed forms computed with plain ops and explicit loops.
#include <doctest/doctest.h>

#include <string>
#include <tuple>

#include "op_testing.hpp"

namespace test_transform_pytrees {

using linum::Array;
using linum::Arrays;
using linum::AxisSpec;
using linum::Tree;
using linum::VmapOptions;
using linum::optest::check_close;
using linum::optest::data;
using linum::optest::kNone;

namespace {

// A Flax-like params collection: a nested dict with an empty dict and a None beside the arrays.
Tree make_params() {
  return Tree{{"dense", Tree{{"w", data({3, 2}, 1)}, {"b", data({2}, 2)}}},
              {"empty", Tree::dict()},
              {"none", Tree()},
              {"scale", data({}, 3)}};
}

const Array& leaf(const Tree& t, const char* a, const char* b = nullptr) {
  return b ? t[a][b].leaf() : t[a].leaf();
}

// y = x @ w + b for x of shape (n, 3).
Array dense(const Tree& p, const Array& x) {
  return linum::matmul(x, leaf(p, "dense", "w")) + leaf(p, "dense", "b");
}

// loss = scale * sum(y^2).
Array loss(const Tree& p, const Array& x) {
  Array y = dense(p, x);
  return leaf(p, "scale") * linum::sum(y * y);
}

// The closed-form gradient of `loss` with respect to p, as a Tree of p's structure.
Tree loss_grad(const Tree& p, const Array& x) {
  Array y = dense(p, x);
  Array gy = y * 2.0 * leaf(p, "scale");
  return Tree{
      {"dense", Tree{{"w", linum::matmul(linum::transpose(x), gy)}, {"b", linum::sum(gy, {0})}}},
      {"empty", Tree::dict()},
      {"none", Tree()},
      {"scale", linum::sum(y * y)}};
}

// Same structure (dict keys, None, empty dicts) and close leaves.
void check_tree_close(const Tree& got, const Tree& want, double eps = 1e-10) {
  INFO("got structure " << linum::pytree::tree_structure(got).to_string());
  REQUIRE(linum::pytree::tree_structure(got) == linum::pytree::tree_structure(want));
  Arrays g = linum::pytree::tree_leaves<Array>(got), w = linum::pytree::tree_leaves<Array>(want);
  for (std::size_t i = 0; i < g.size(); ++i) check_close(g[i], w[i], eps);
}

}  // namespace

TEST_SUITE("transforms over dynamic Trees") {
  TEST_CASE(
      "grad with respect to a Tree of params keeps None and empty dicts and matches the closed "
      "form") {
    Tree p = make_params();
    Array x = data({4, 3}, 4);
    Tree g = linum::grad(loss)(p, x);
    check_tree_close(g, loss_grad(p, x));
    CHECK(g["none"].is_none());
    CHECK(g["empty"].is_dict());
    CHECK(g["empty"].size() == 0);
  }

  TEST_CASE("grad over (Tree, Array) with argnums<0, 1> returns a tuple of a Tree and an Array") {
    Tree p = make_params();
    Array x = data({4, 3}, 4);
    auto [gp, gx] = linum::grad(loss, linum::argnums<0, 1>)(p, x);
    check_tree_close(gp, loss_grad(p, x));
    Array gy = dense(p, x) * 2.0 * leaf(p, "scale");
    check_close(gx, linum::matmul(gy, linum::transpose(leaf(p, "dense", "w"))));
  }

  TEST_CASE("value_and_grad with has_aux returns a Tree aux of concrete values") {
    Tree p = make_params();
    Array x = data({4, 3}, 4);
    auto f = [](const Tree& p, const Array& x) {
      Array y = dense(p, x);
      Tree aux{{"y", y},
               {"stats", Tree{{"mean", linum::mean(y)}}},
               {"nothing", Tree()},
               {"e", Tree::dict()}};
      return std::make_pair(loss(p, x), aux);
    };
    auto [va, g] = linum::value_and_grad(f, linum::argnums<0>, linum::has_aux)(p, x);
    auto [v, aux] = va;
    check_close(v, loss(p, x));
    check_tree_close(g, loss_grad(p, x));
    Array y = dense(p, x);
    check_tree_close(aux, Tree{{"y", y},
                               {"stats", Tree{{"mean", linum::mean(y)}}},
                               {"nothing", Tree()},
                               {"e", Tree::dict()}});
    CHECK_FALSE(aux["y"].leaf().is_tracer());
    CHECK_FALSE(aux["stats"]["mean"].leaf().is_tracer());
  }

  TEST_CASE("vjp of a Tree -> Tree function returns Tree cotangents") {
    Tree p = make_params();
    Array x = data({4, 3}, 4);
    auto f = [](const Tree& p, const Array& x) {
      return Tree{{"y", dense(p, x)},
                  {"z", leaf(p, "scale") * linum::sum(leaf(p, "dense", "w"))},
                  {"n", Tree()},
                  {"e", Tree::dict()}};
    };
    auto [out, pull] = linum::vjp(f, p, x);
    check_tree_close(out, f(p, x));
    Array u = data({4, 2}, 5), cz = data({}, 6);
    auto [gp, gx] = pull(Tree{{"y", u}, {"z", cz}, {"n", Tree()}, {"e", Tree::dict()}});
    const Array& w = leaf(p, "dense", "w");
    const Array& s = leaf(p, "scale");
    Tree want{
        {"dense", Tree{{"w", linum::matmul(linum::transpose(x), u) + cz * s * linum::ones_like(w)},
                       {"b", linum::sum(u, {0})}}},
        {"empty", Tree::dict()},
        {"none", Tree()},
        {"scale", cz * linum::sum(w)}};
    check_tree_close(gp, want);
    check_close(gx, linum::matmul(u, linum::transpose(w)));
  }

  TEST_CASE("vjp of a function returning a tuple of a Tree and an Array") {
    Tree p = make_params();
    Array x = data({4, 3}, 4);
    auto f = [](const Tree& p, const Array& x) {
      return std::make_tuple(Tree{{"y", dense(p, x)}}, linum::sum(x));
    };
    auto [out, pull] = linum::vjp(f, p, x);
    check_close(std::get<0>(out)["y"].leaf(), dense(p, x));
    Array u = data({4, 2}, 5), c = data({}, 6);
    auto [gp, gx] = pull(std::make_tuple(Tree{{"y", u}}, c));
    check_close(leaf(gp, "dense", "b"), linum::sum(u, {0}));
    check_close(
        gx, linum::matmul(u, linum::transpose(leaf(p, "dense", "w"))) + c * linum::ones_like(x));
  }

  TEST_CASE("jvp with Tree primals and tangents returns Tree outputs and tangents") {
    Tree p = make_params();
    Array x = data({4, 3}, 4);
    Tree tp = linum::pytree::tree_map([](const Array& a) { return a * 0.5 + 1.0; }, p);
    Array tx = data({4, 3}, 7);
    auto f = [](const Tree& p, const Array& x) { return Tree{{"l", loss(p, x)}, {"n", Tree()}}; };
    auto [out, tan] = linum::jvp(f, std::make_tuple(p, x), std::make_tuple(tp, tx));
    check_close(out["l"].leaf(), loss(p, x));
    CHECK(tan["n"].is_none());
    Tree g = loss_grad(p, x);
    Array gy = dense(p, x) * 2.0 * leaf(p, "scale");
    Array want = linum::sum(leaf(g, "dense", "w") * leaf(tp, "dense", "w")) +
                 linum::sum(leaf(g, "dense", "b") * leaf(tp, "dense", "b")) +
                 leaf(g, "scale") * leaf(tp, "scale") +
                 linum::sum(linum::matmul(gy, linum::transpose(leaf(p, "dense", "w"))) * tx);
    check_close(tan["l"].leaf(), want, 1e-9);
  }

  TEST_CASE("vmap over a Tree with in_axes {0, kNone}: an ensemble of params on one input") {
    // Three stacked param sets, mapped on axis 0; x broadcast.
    Tree ps{{"dense", Tree{{"w", data({3, 3, 2}, 8)}, {"b", data({3, 2}, 9)}}},
            {"empty", Tree::dict()},
            {"none", Tree()},
            {"scale", data({3}, 10)}};
    Array x = data({4, 3}, 4);
    VmapOptions o;
    o.in_axes = {0, kNone};
    Tree got = linum::vmap(
        [](const Tree& p, const Array& x) {
          return Tree{{"y", dense(p, x)}, {"n", Tree()}};
        },
        o)(ps, x);
    CHECK(got["n"].is_none());
    Arrays want;
    for (int i = 0; i < 3; ++i) {
      Tree pi = linum::pytree::tree_map(
          [&](const Array& a) { return linum::optest::index_axis(a, 0, i); }, ps);
      want.push_back(dense(pi, x));
    }
    check_close(got["y"].leaf(), linum::optest::stack0(want));
  }

  TEST_CASE("vmap over Trees: per-argument axes, a Tree left unmapped, out_axes per output") {
    Tree p = make_params();
    Tree batch{{"x", data({5, 3}, 11)}, {"mask", Tree()}};  // examples on axis 0
    VmapOptions o;
    o.in_axes = {kNone, 0};
    o.out_axes = {0, kNone};
    auto f = [](const Tree& p, const Tree& b) {
      Array x = linum::reshape(b["x"].leaf(), {1, 3});
      return std::make_tuple(Tree{{"loss", loss(p, x)}}, Tree{{"w2", leaf(p, "dense", "w") * 2.0}});
    };
    auto [per_ex, shared] = linum::vmap(f, o)(p, batch);
    Arrays want;
    for (int i = 0; i < 5; ++i)
      want.push_back(
          loss(p, linum::reshape(linum::optest::index_axis(batch["x"].leaf(), 0, i), {1, 3})));
    check_close(per_ex["loss"].leaf(), linum::optest::stack0(want));
    check_close(shared["w2"].leaf(), leaf(p, "dense", "w") * 2.0);
  }

  TEST_CASE("per-example gradients: vmap of grad over a Tree of params") {
    Tree p = make_params();
    Array xs = data({5, 3}, 12);
    VmapOptions o;
    o.in_axes = {kNone, 0};
    Tree g = linum::vmap(
        [](const Tree& p, const Array& x) {
          return linum::grad(loss)(p, linum::reshape(x, {1, 3}));
        },
        o)(p, xs);
    for (int i = 0; i < 5; ++i) {
      Tree gi = loss_grad(p, linum::reshape(linum::optest::index_axis(xs, 0, i), {1, 3}));
      check_close(linum::optest::index_axis(leaf(g, "dense", "w"), 0, i), leaf(gi, "dense", "w"));
      check_close(linum::optest::index_axis(leaf(g, "scale"), 0, i), leaf(gi, "scale"));
    }
    CHECK(g["none"].is_none());
    CHECK(g["empty"].size() == 0);
  }

  TEST_CASE("scan with a Tree carry, Tree xs and Tree ys, and grad through it") {
    Tree p = make_params();
    Tree xs{{"x", data({4, 2, 3}, 13)}, {"none", Tree()}};
    auto body = [](const Tree& p) {
      return [p](const Tree& c, const Tree& x) {
        Array y = dense(p, x["x"].leaf());
        Tree next{{"acc", c["acc"].leaf() + linum::sum(y * y)}, {"e", Tree::dict()}};
        return std::make_pair(next, Tree{{"y", y}, {"n", Tree()}});
      };
    };
    Tree init{{"acc", linum::zeros({}, linum::float64)}, {"e", Tree::dict()}};
    auto [carry, ys] = linum::scan(body(p), init, xs);
    Array acc = linum::zeros({}, linum::float64);
    Arrays yw;
    for (int t = 0; t < 4; ++t) {
      Array y = dense(p, linum::optest::index_axis(xs["x"].leaf(), 0, t));
      acc = acc + linum::sum(y * y);
      yw.push_back(y);
    }
    check_close(carry["acc"].leaf(), acc);
    CHECK(carry["e"].is_dict());
    CHECK(ys["n"].is_none());
    check_close(ys["y"].leaf(), linum::optest::stack0(yw));

    // d/dscale is 0 here (scan ignores scale); d/db = sum_t sum_rows 2 y_t.
    Tree g = linum::grad(
        [&](const Tree& q) { return linum::scan(body(q), init, xs).first["acc"].leaf(); })(p);
    Array gb = linum::zeros({2}, linum::float64);
    for (const auto& y : yw) gb = gb + linum::sum(y * 2.0, {0});
    check_close(leaf(g, "dense", "b"), gb);
    check_close(leaf(g, "scale"), linum::zeros({}, linum::float64));
    CHECK(g["none"].is_none());
  }

  TEST_CASE("cond and switch with Tree operands and outputs, concrete and batched predicates") {
    Tree p = make_params();
    auto tf = [](const Tree& q) { return Tree{{"v", leaf(q, "scale") * 2.0}, {"n", Tree()}}; };
    auto ff = [](const Tree& q) { return Tree{{"v", leaf(q, "scale") - 1.0}, {"n", Tree()}}; };
    Tree a = linum::cond(linum::array(true), tf, ff, p);
    check_close(a["v"].leaf(), leaf(p, "scale") * 2.0);
    Tree b = linum::cond(linum::array(false), tf, ff, p);
    check_close(b["v"].leaf(), leaf(p, "scale") - 1.0);

    VmapOptions o;
    o.in_axes = {0, kNone};
    Array preds = linum::array({true, false, true});
    Tree r = linum::vmap([&](const Array& pr, const Tree& q) { return linum::cond(pr, tf, ff, q); },
                         o)(preds, p);
    const double s = leaf(p, "scale").item<double>();
    linum::optest::check_array(r["v"].leaf(), {3}, linum::float64, {s * 2, s - 1, s * 2});
    CHECK(r["n"].is_none());

    std::vector<std::function<Tree(const Tree&)>> br{tf, ff};
    Tree c = linum::switch_(linum::array(1), br, p);
    check_close(c["v"].leaf(), leaf(p, "scale") - 1.0);

    Tree g = linum::grad(
        [&](const Tree& q) { return linum::cond(linum::array(true), tf, ff, q)["v"].leaf(); })(p);
    check_close(leaf(g, "scale"), linum::array(2.0));
    check_close(leaf(g, "dense", "w"), linum::zeros({3, 2}, linum::float64));
  }

  TEST_CASE("while_loop and fori_loop carry a Tree") {
    Tree init{{"i", linum::array(0)}, {"x", linum::array(1.0)}, {"n", Tree()}};
    Tree out = linum::while_loop(
        [](const Tree& c) { return linum::less(c["i"].leaf(), linum::array(3)); },
        [](const Tree& c) {
          return Tree{{"i", c["i"].leaf() + 1}, {"x", c["x"].leaf() * 2.0}, {"n", Tree()}};
        },
        init);
    CHECK(out["x"].leaf().item<double>() == 8.0);
    CHECK(out["n"].is_none());
    Tree f = linum::fori_loop(
        linum::array(0), linum::array(4),
        [](const Array&, const Tree& c) {
          return Tree{{"i", c["i"].leaf()}, {"x", c["x"].leaf() + 1.0}, {"n", Tree()}};
        },
        init);
    CHECK(f["x"].leaf().item<double>() == 5.0);
  }

  TEST_CASE("custom_vjp over Trees: Tree arguments, Tree output, Tree residuals") {
    // f(p) = {"y": scale * b}; the custom rule scales the true cotangent by 3 to be observable.
    auto f = [](const Tree& q) {
      return Tree{{"y", leaf(q, "scale") * leaf(q, "dense", "b")}, {"n", Tree()}};
    };
    auto fwd = [&](const Tree& q) {
      return std::make_pair(
          f(q), Tree{{"s", leaf(q, "scale")}, {"b", leaf(q, "dense", "b")}, {"n", Tree()}});
    };
    auto bwd = [](const Tree& res, const Tree& ct) {
      Array c = ct["y"].leaf() * 3.0;
      Tree g{{"dense", Tree{{"w", Array()}, {"b", c * res["s"].leaf()}}},
             {"empty", Tree::dict()},
             {"none", Tree()},
             {"scale", linum::sum(c * res["b"].leaf())}};
      return std::make_tuple(g);
    };
    auto h = linum::custom_vjp(f, fwd, bwd);
    Tree p = make_params();
    check_tree_close(h(p), f(p));
    Tree g = linum::grad([&](const Tree& q) { return linum::sum(h(q)["y"].leaf()); })(p);
    check_close(leaf(g, "dense", "b"),
                linum::ones_like(leaf(p, "dense", "b")) * 3.0 * leaf(p, "scale"));
    check_close(leaf(g, "scale"), linum::sum(leaf(p, "dense", "b")) * 3.0);
    check_close(leaf(g, "dense", "w"), linum::zeros({3, 2}, linum::float64));
    CHECK(g["none"].is_none());
  }

  TEST_CASE("checkpoint over a Tree gives the plain gradient") {
    Tree p = make_params();
    Array x = data({4, 3}, 4);
    auto ck = linum::checkpoint([](const Tree& q, const Array& x) {
      return Tree{{"l", loss(q, x)}, {"n", Tree()}};
    });
    Tree g = linum::grad([&](const Tree& q) { return ck(q, x)["l"].leaf(); })(p);
    check_tree_close(g, loss_grad(p, x));
  }
}

TEST_SUITE("vjp and jvp with has_aux") {
  TEST_CASE("vjp(f, primals..., has_aux) returns (out, vjp_fn, aux) with aux as concrete values") {
    Tree p = make_params();
    Array x = data({4, 3}, 4);
    auto f = [](const Tree& p, const Array& x) {
      Array y = dense(p, x);
      return std::make_pair(linum::sum(y * y), Tree{{"y", y}, {"n", Tree()}});
    };
    auto [out, pull, aux] = linum::vjp(f, p, x, linum::has_aux);
    Array y = dense(p, x);
    check_close(out, linum::sum(y * y));
    check_close(aux["y"].leaf(), y);
    CHECK(aux["n"].is_none());
    CHECK_FALSE(aux["y"].leaf().is_tracer());
    auto [gp, gx] = pull(linum::array(2.0));
    // d(sum y^2)/db = 2 sum_rows y, times the cotangent 2.
    check_close(leaf(gp, "dense", "b"), linum::sum(y, {0}) * 4.0);
    check_close(gx, linum::matmul(y * 4.0, linum::transpose(leaf(p, "dense", "w"))));
  }

  TEST_CASE("jvp(f, primals, tangents, has_aux) returns (out, tangent, aux)") {
    Array x = linum::array({1.0, 2.0, 3.0});
    auto f = [](const Array& x) {
      return std::make_pair(linum::sin(x), std::map<std::string, Array>{{"sq", x * x}});
    };
    auto [y, t, aux] = linum::jvp(f, std::make_tuple(x),
                                  std::make_tuple(linum::array({1.0, 0.0, 2.0})), linum::has_aux);
    check_close(y, linum::sin(x));
    check_close(t, linum::cos(x) * linum::array({1.0, 0.0, 2.0}));
    check_close(aux.at("sq"), x * x);
    CHECK_FALSE(aux.at("sq").is_tracer());
  }

  TEST_CASE("jvp rejects tangents whose tree structure differs from the primals'") {
    Tree p{{"a", linum::array(1.0)}, {"b", linum::array(2.0)}};
    Tree t{{"a", linum::array(1.0)}};
    auto f = [](const Tree& q) { return q["a"].leaf(); };
    LINUM_CHECK_ERROR(linum::jvp(f, std::make_tuple(p), std::make_tuple(t)), linum::ValueError,
                      "primals and tangents must have the same tree structure");
  }

  TEST_CASE("vjp rejects a cotangent whose tree structure differs from the output's") {
    Tree p{{"a", linum::array(1.0)}};
    auto [out, pull] = linum::vjp(
        [](const Tree& q) {
          return Tree{{"y", q["a"].leaf() * 2.0}};
        },
        p);
    LINUM_CHECK_ERROR(pull(Tree{{"z", linum::array(1.0)}}), linum::ValueError,
                      "the cotangent and the primal output");
  }
}

TEST_SUITE("vmap axes from a dynamic Tree") {
  TEST_CASE("in_axes built from a Tree of ints maps each key of a params dict on its own axis") {
    // w mapped on axis 1, b on axis 0, scale not mapped (None), as a dict only known at run time.
    Tree p{
        {"w", data({3, 4}, 20)}, {"b", data({4}, 21)}, {"scale", data({}, 22)}, {"none", Tree()}};
    linum::pytree::BasicTree<int> axes{
        {"w", 1}, {"b", 0}, {"scale", kNone}, {"none", linum::pytree::BasicTree<int>()}};
    VmapOptions o;
    o.in_axes = AxisSpec::seq({axes});
    CHECK(o.in_axes.to_string() == "({'b': 0, 'none': None, 'scale': None, 'w': 1},)");
    Array got = linum::vmap(
        [](const Tree& q) { return linum::sum(q["w"].leaf()) * q["scale"].leaf() + q["b"].leaf(); },
        o)(p);
    Arrays want;
    for (int i = 0; i < 4; ++i)
      want.push_back(linum::sum(linum::optest::index_axis(p["w"].leaf(), 1, i)) *
                         p["scale"].leaf() +
                     linum::optest::index_axis(p["b"].leaf(), 0, i));
    check_close(got, linum::optest::stack0(want));
  }

  TEST_CASE("axes trees built by tree_map over the params, and out_axes from a Tree") {
    Tree p{{"a", data({2, 5}, 23)}, {"b", Tree{{"c", data({5, 2}, 24)}}}};
    // Every leaf mapped on its axis of size 5.
    auto axes = linum::pytree::tree_map([](const Array& a) { return a.shape(0) == 5 ? 0 : 1; }, p);
    VmapOptions o;
    o.in_axes = AxisSpec::seq({axes});
    o.out_axes =
        linum::pytree::BasicTree<int>{{"a", 1}, {"b", linum::pytree::BasicTree<int>{{"c", 0}}}};
    Tree got = linum::vmap(
        [](const Tree& q) {
          return Tree{{"a", q["a"].leaf() * 2.0}, {"b", Tree{{"c", q["b"]["c"].leaf() + 1.0}}}};
        },
        o)(p);
    check_close(got["a"].leaf(), p["a"].leaf() * 2.0);  // out axis 1: back where it came from
    check_close(got["b"]["c"].leaf(), p["b"]["c"].leaf() + 1.0);  // out axis 0
  }

  TEST_CASE("an axes Tree that is not a prefix of the argument is JAX's prefix error") {
    Tree p{{"w", data({3}, 25)}};
    VmapOptions o;
    o.in_axes = AxisSpec::seq({linum::pytree::BasicTree<int>{{"v", 0}}});
    LINUM_CHECK_ERROR(
        linum::vmap([](const Tree& q) { return q["w"].leaf(); }, o)(p), linum::ValueError,
        "vmap in_axes specification must be a tree prefix of the corresponding value");
  }

  TEST_CASE(
      "a whole argument Tree mapped on one axis, the other None, for the lift layer's variable "
      "groups") {
    Tree batched{{"params", Tree{{"k", data({3, 2}, 26)}}}, {"stats", Tree::dict()}};
    Tree broadcast{{"params", Tree{{"k", data({2}, 27)}}}, {"e", Tree()}};
    VmapOptions o;
    o.in_axes = {0, kNone};
    o.out_axes = {0, kNone};
    auto f = [](const Tree& a, const Tree& b) {
      return std::make_tuple(Tree{{"y", a["params"]["k"].leaf() * b["params"]["k"].leaf()}}, b);
    };
    auto [ya, yb] = linum::vmap(f, o)(batched, broadcast);
    check_close(ya["y"].leaf(), batched["params"]["k"].leaf() * broadcast["params"]["k"].leaf());
    check_tree_close(yb, broadcast);
  }
}

TEST_SUITE("Jacobians over pytrees") {
  // f({"a": a (2,), "b": b ()}) = {"u": a * b (2,), "v": sum(a^2) ()}; the closed-form blocks.
  Tree jac_in() { return Tree{{"a", linum::array({1.5, -2.0})}, {"b", linum::array(3.0)}}; }
  Tree jac_f(const Tree& x) {
    const Array& a = x["a"].leaf();
    const Array& b = x["b"].leaf();
    return Tree{{"u", a * b}, {"v", linum::sum(a * a)}};
  }
  void check_jac(const Tree& j) {
    // Output structure outside, input structure inside.
    check_close(j["u"]["a"].leaf(), linum::array(std::vector<double>{3.0, 0.0, 0.0, 3.0}, {2, 2}));
    check_close(j["u"]["b"].leaf(), linum::array({1.5, -2.0}));
    check_close(j["v"]["a"].leaf(), linum::array({3.0, -4.0}));
    CHECK(j["v"]["b"].leaf().ndim() == 0);
    check_close(j["v"]["b"].leaf(), linum::array(0.0));
  }

  TEST_CASE("jacrev and jacfwd of a Tree -> Tree function nest output outside, input inside") {
    Tree jr = linum::jacrev(jac_f)(jac_in());
    Tree jf = linum::jacfwd(jac_f)(jac_in());
    check_jac(jr);
    check_jac(jf);
  }

  TEST_CASE("a FrozenDict node in a Tree output stays a FrozenDict, holding the Jacobian blocks") {
    auto f = [](const Tree& x) {
      return Tree{{"frozen", Tree(linum::pytree::FrozenDict<Array>(jac_f(x).as_dict()))}};
    };
    for (const Tree& j : {linum::jacrev(f)(jac_in()), linum::jacfwd(f)(jac_in())}) {
      REQUIRE(j["frozen"].is_frozen_dict());
      check_jac(j["frozen"]);
    }
  }

  TEST_CASE("Jacobians with argnums over several arguments and static containers") {
    auto f = [](const Array& a, const std::map<std::string, Array>& m) {
      return std::make_tuple(a * m.at("s"), linum::sum(a) + m.at("s"));
    };
    Array a = linum::array({1.0, 2.0, 4.0});
    std::map<std::string, Array> m{{"s", linum::array(0.5)}};
    auto jr = linum::jacrev(f, linum::argnums<0, 1>)(a, m);
    auto jf = linum::jacfwd(f, linum::argnums<0, 1>)(a, m);
    for (const auto& j : {jr, jf}) {
      // std::get<output>(j) is a tuple over the two arguments.
      const auto& [d0a, d0m] = std::get<0>(j);
      const auto& [d1a, d1m] = std::get<1>(j);
      check_close(d0a, linum::eye(3, 3, 0, linum::float64) * 0.5);
      check_close(d0m.at("s"), a);
      check_close(d1a, linum::ones({3}, linum::float64));
      check_close(d1m.at("s"), linum::array(1.0));
    }
  }

  TEST_CASE("hessian over a Tree equals finite differences of the gradient") {
    auto f = [](const Tree& x) {
      const Array& a = x["a"].leaf();
      const Array& b = x["b"].leaf();
      return linum::sum(linum::sin(a) * b) + b * b * linum::sum(a);
    };
    Tree x = jac_in();
    Tree h = linum::hessian(f)(x);
    const double eps = 1e-6;
    auto g = linum::grad(f);
    // Column for each input coordinate: (grad(x + eps e) - grad(x - eps e)) / 2 eps.
    for (const char* k : {"a", "b"}) {
      const Array& xk = x[k].leaf();
      for (std::int64_t c = 0; c < xk.size(); ++c) {
        Array e = linum::reshape(linum::eye(xk.size(), 1, -c, linum::float64), xk.shape());
        Tree xp = x, xm = x;
        xp[k] = xk + e * eps;
        xm[k] = xk - e * eps;
        Tree gp = g(xp), gm = g(xm);
        for (const char* r : {"a", "b"}) {
          Array fd = (gp[r].leaf() - gm[r].leaf()) / (2 * eps);
          Array hr = h[r][k].leaf();  // shape r.shape + k.shape
          Array col = xk.ndim() == 0
                          ? hr
                          : linum::take(hr, linum::array(static_cast<int>(c)), hr.ndim() - 1);
          INFO(r << ", " << k << "[" << c << "]");
          check_close(col, fd, 1e-6);
        }
      }
    }
  }

  TEST_CASE("jacrev and jacfwd with has_aux return (jacobian, aux)") {
    auto f = [](const Array& x) { return std::make_pair(x * x, Tree{{"n", linum::sum(x)}}); };
    Array x = linum::array({1.0, 2.0});
    auto [jr, ar] = linum::jacrev(f, linum::has_aux)(x);
    auto [jf, af] = linum::jacfwd(f, linum::has_aux)(x);
    check_close(jr, linum::array(std::vector<double>{2.0, 0.0, 0.0, 4.0}, {2, 2}));
    check_close(jf, jr);
    check_close(ar["n"].leaf(), linum::array(3.0));
    check_close(af["n"].leaf(), linum::array(3.0));
    CHECK_FALSE(af["n"].leaf().is_tracer());
  }

  TEST_CASE("jacrev and jacfwd reject integer inputs and outputs with JAX's message") {
    auto f = [](const Array& x) { return x * 2; };
    LINUM_CHECK_ERROR(linum::jacrev(f)(linum::array({1, 2})), linum::TypeError,
                      "jacrev requires real-valued inputs");
    LINUM_CHECK_ERROR(linum::jacfwd(f)(linum::array({1, 2})), linum::TypeError,
                      "jacfwd requires real-valued inputs");
    auto g = [](const Array& x) { return linum::astype(x, linum::int32); };
    LINUM_CHECK_ERROR(linum::jacrev(g)(linum::array({1.0})), linum::TypeError,
                      "jacrev requires real-valued outputs");
  }
}

TEST_SUITE("grad with allow_int") {
  TEST_CASE("integer leaves get zero cotangents of their own dtype; float leaves their gradient") {
    Tree p{{"w", linum::array({1.0, 2.0})},
           {"step", linum::array(7)},
           {"mask", linum::array({true, false})}};
    auto f = [](const Tree& q) {
      return linum::sum(q["w"].leaf() * q["w"].leaf() *
                        linum::astype(q["step"].leaf(), linum::float64));
    };
    LINUM_CHECK_ERROR(linum::grad(f)(p), linum::TypeError, "set allow_int to True");
    Tree g = linum::grad(f, linum::allow_int)(p);
    check_close(g["w"].leaf(), linum::array({14.0, 28.0}));
    CHECK(g["step"].leaf().dtype() == linum::int32);
    CHECK(g["step"].leaf().item<int>() == 0);
    CHECK(g["mask"].leaf().dtype() == linum::bool_);
    CHECK(linum::testing::values(g["mask"].leaf()) == std::vector<double>{0, 0});
    auto [v, g2] = linum::value_and_grad(f, linum::argnums<0>, linum::allow_int)(p);
    check_close(v, linum::array(35.0));
    check_close(g2["w"].leaf(), g["w"].leaf());
  }

  TEST_CASE("vjp accepts integer primals (JAX's float0 cotangents, here zeros)") {
    auto f = [](const Array& x, const Array& n) { return x * linum::astype(n, linum::float64); };
    auto [y, pull] = linum::vjp(f, linum::array({1.0, 2.0}), linum::array({3, 4}));
    auto [gx, gn] = pull(linum::array({1.0, 1.0}));
    check_close(gx, linum::array({3.0, 4.0}));
    CHECK(gn.dtype() == linum::int32);
    CHECK(linum::testing::values(gn) == std::vector<double>{0, 0});
  }
}

TEST_SUITE("transforms over static pytrees") {
  TEST_CASE(
      "transforms return pytrees of every kind: vectors, maps, optionals, FrozenDicts, tuples") {
    Array x = linum::array({1.0, 2.0});
    auto f = [](const Array& x) {
      return std::make_tuple(
          std::vector<Array>{x * 2.0, x * x}, std::map<std::string, Array>{{"s", linum::sum(x)}},
          std::optional<Array>(), linum::pytree::FrozenDict<Array>({{"f", x * 3.0}}));
    };
    auto [y, pull] = linum::vjp(f, x);
    auto ct = linum::pytree::tree_map([](const Array& a) { return linum::ones_like(a); }, y);
    auto [gx] = pull(ct);
    check_close(gx, linum::array({2.0 + 2.0 + 1.0 + 3.0, 2.0 + 4.0 + 1.0 + 3.0}));
    auto [y2, t] = linum::jvp(f, std::make_tuple(x), std::make_tuple(linum::ones_like(x)));
    check_close(std::get<0>(t)[1], x * 2.0);
    check_close(std::get<3>(t)["f"].leaf(), linum::array({3.0, 3.0}));
    auto yb = linum::vmap(f)(linum::array(std::vector<double>{1, 2, 3, 4}, {2, 2}));
    check_close(std::get<1>(yb).at("s"), linum::array({3.0, 7.0}));
    CHECK_FALSE(std::get<2>(yb).has_value());
    auto jr = linum::jacrev(f)(x);
    check_close(std::get<1>(jr).at("s"), linum::array({1.0, 1.0}));
    check_close(std::get<3>(jr)["f"].leaf(), linum::eye(2, 2, 0, linum::float64) * 3.0);
  }
}

}  // namespace test_transform_pytrees
