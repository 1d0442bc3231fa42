// The transform gaps the Flax scope layer needs (issue 10 §3): every transform takes and returns
// the dynamic Tree (dicts holding None and empty dicts included) and std::tuples mixing Trees and
// Arrays. Numbers are checked against closed forms computed with plain ops and explicit loops.
#include <doctest/doctest.h>

#include <string>
#include <tuple>

#include "op_testing.hpp"

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
