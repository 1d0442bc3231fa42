// vmap: pytree in_axes/out_axes prefixes, axis_size, nesting, named-axis collectives, JAX's
// errors, and per-example gradients; every result is checked against a loop over examples.
#include <doctest/doctest.h>

#include <map>

#include "check_grads.hpp"
#include "transform_testing.hpp"

namespace test_vmap {

using linum::Array;
using linum::Arrays;
using linum::AxisSpec;
using linum::VmapOptions;
using transform_testing::check_close;
using transform_testing::data;
using transform_testing::row;
using transform_testing::stack_rows;
using linum::testing::values;

namespace {
constexpr int kNone = VmapOptions::kNone;
using Params = std::map<std::string, Array>;
struct Dense {
  BOOST_HANA_DEFINE_STRUCT(Dense, (Array, w), (Array, b));
};
}  // namespace

TEST_CASE("vmap: in_axes is a pytree prefix of the arguments (dict, None, negative axes)") {
  Params p{{"w", data({4, 3}, 1)}, {"b", linum::array(0.5)}};
  Array x = data({3, 4}, 2);  // examples along axis 1
  auto f = [](const Params& p, const Array& x) { return linum::sum(p.at("w") * x) + p.at("b"); };
  VmapOptions o;
  o.in_axes = {AxisSpec::dict({{"w", 0}, {"b", kNone}}), -1};
  Array got = linum::vmap(f, o)(p, x);
  Arrays want;
  Array xt = linum::transpose(x);
  for (int i = 0; i < 4; ++i) want.push_back(f(Params{{"w", row(p["w"], i)}, {"b", p["b"]}}, row(xt, i)));
  check_close(got, stack_rows(want));

  // An int applies to a whole argument; None leaves it unbatched.
  Array y = linum::vmap([](const Array& a, const Array& b) { return a * b; }, {{0, kNone}})(
      data({5, 2}, 3), linum::array({2.0, -1.0}));
  Array want2 = data({5, 2}, 3) * linum::array({2.0, -1.0});
  check_close(y, want2);
}

TEST_CASE("vmap: out_axes is a prefix of the output; None outputs must be unbatched") {
  Array x = data({4, 3}, 4);
  Array c = linum::array({1.0, 2.0, 3.0});
  auto f = [&](const Array& r) { return std::make_pair(r * 2.0, c * 3.0); };
  VmapOptions o;
  o.out_axes = {-1, kNone};
  auto [a, b] = linum::vmap(f, o)(x);
  check_close(a, linum::transpose(x * 2.0));
  check_close(b, c * 3.0);

  VmapOptions o2;
  o2.out_axes = 1;  // a leaf applies to every output
  auto [a2, b2] = linum::vmap(f, o2)(x);
  check_close(a2, linum::transpose(x * 2.0));
  REQUIRE(b2.shape() == linum::Shape{3, 4});  // unbatched outputs are broadcast
  check_close(linum::transpose(b2), stack_rows({c * 3.0, c * 3.0, c * 3.0, c * 3.0}));
}

TEST_CASE("vmap: pytree arguments and results of every container kind") {
  std::tuple<Array, std::vector<Array>> args{data({3, 2}, 5), {data({3}, 6), data({3, 4}, 7)}};
  auto f = [](const std::tuple<Array, std::vector<Array>>& t) {
    const auto& [a, v] = t;
    Params out;
    out["s"] = linum::sum(a) * v[0];
    out["m"] = v[1] * 2.0;
    return out;
  };
  Params got = linum::vmap(f)(args);
  Arrays s, m;
  for (int i = 0; i < 3; ++i) {
    auto r = f({row(std::get<0>(args), i), {row(std::get<1>(args)[0], i), row(std::get<1>(args)[1], i)}});
    s.push_back(r["s"]);
    m.push_back(r["m"]);
  }
  check_close(got["s"], stack_rows(s));
  check_close(got["m"], stack_rows(m));

  linum::Tree t = linum::Tree{{"a", data({2, 3}, 8)}, {"b", data({2}, 9)}};
  linum::Tree r = linum::vmap([](const linum::Tree& x) {
    return linum::Tree{{"c", x["a"].leaf() * x["b"].leaf()}};
  })(t);
  check_close(r["c"].leaf(), data({2, 3}, 8) * linum::reshape(data({2}, 9), {2, 1}));
}

TEST_CASE("vmap: Hana structs and FrozenDicts as arguments, in_axes by field or key") {
  Dense d{data({4, 3}, 14), linum::array(1.5)};
  VmapOptions o;
  o.in_axes = {AxisSpec::seq({0, kNone}), 0};  // struct fields by position
  Array x = data({4, 3}, 15);
  Array got = linum::vmap([](const Dense& l, const Array& v) { return linum::sum(l.w * v) + l.b; }, o)(d, x);
  Arrays want;
  for (int i = 0; i < 4; ++i) want.push_back(linum::sum(row(d.w, i) * row(x, i)) + d.b);
  check_close(got, stack_rows(want));

  linum::FrozenDict<Array> fd{{"k", data({2, 3}, 16)}, {"q", data({3}, 17)}};
  VmapOptions o2;
  o2.in_axes = AxisSpec::seq({AxisSpec::dict({{"k", 0}, {"q", kNone}})});
  Array r = linum::vmap([](const linum::FrozenDict<Array>& f) { return f["k"].leaf() * f["q"].leaf(); }, o2)(fd);
  check_close(r, data({2, 3}, 16) * data({3}, 17));
}

TEST_CASE("vmap: in_axes and out_axes over a tuple-keyed dict (flatten_dict's result), per path") {
  using linum::pytree::Path;
  using Flat = linum::pytree::Dict<Path, linum::Tree>;
  using Axes = linum::pytree::BasicTree<int>;
  linum::Tree params{{"dense", linum::Tree{{"w", data({3, 4}, 30)}, {"b", data({4}, 31)}}},
                     {"scale", data({}, 32)}};
  const Flat flat = linum::traverse_util::flatten_dict(params);
  // The axes tree, flattened the same way: w mapped on axis 1, b on 0, scale not mapped.
  const Axes axes{{"dense", Axes{{"w", 1}, {"b", 0}}}, {"scale", kNone}};
  VmapOptions o;
  o.in_axes = AxisSpec::seq({linum::traverse_util::flatten_dict(axes)});
  CHECK(o.in_axes.to_string() == "({('dense', 'b'): 0, ('dense', 'w'): 1, ('scale',): None},)");
  o.out_axes = AxisSpec::tuple_dict({{Path{"wb"}, 1}, {Path{"s", "b"}, 0}});
  auto f = [](const Flat& q) {
    const Array& w = q.at(Path{"dense", "w"}).leaf();
    const Array& b = q.at(Path{"dense", "b"}).leaf();
    return Flat{{Path{"wb"}, linum::Tree(w * b)}, {Path{"s", "b"}, linum::Tree(b * 2.0)}};
  };
  const Flat got = linum::vmap(f, o)(flat);
  // Example i takes column i of w and entry i of b; out_axes puts wb's examples on axis 1 again.
  const Array& w = params["dense"]["w"].leaf();
  const Array& b = params["dense"]["b"].leaf();
  check_close(got.at(Path{"wb"}).leaf(), w * b);
  check_close(got.at(Path{"s", "b"}).leaf(), b * 2.0);

  // A string-keyed spec does not match tuple keys (nor a tuple-keyed one a nested dict).
  VmapOptions str_keys;
  str_keys.in_axes = AxisSpec::seq({AxisSpec::dict({{"dense", 0}, {"scale", kNone}})});
  CHECK_ERROR_CONTAINS(
      linum::vmap([](const Flat& q) { return q.at(Path{"scale"}).leaf(); }, str_keys)(flat),
      "vmap in_axes specification must be a tree prefix");
  CHECK_ERROR_CONTAINS(
      linum::vmap([](const linum::Tree& q) { return q["scale"].leaf(); }, o)(params),
      "got specification ({('dense', 'b'): 0, ('dense', 'w'): 1, ('scale',): None},)");
  CHECK_ERROR_CONTAINS(AxisSpec::tuple_dict({{Path{"a"}, 0}, {Path{"a"}, 1}}),
                       "AxisSpec::tuple_dict: duplicate key ('a',)");
  // A FrozenDict of axes is a dict spec, as a plain dict of axes is.
  CHECK(AxisSpec(Axes(linum::pytree::FrozenDict<int>{{"w", 1}})).to_string() == "{'w': 1}");
}

TEST_CASE("vmap: axis_size maps a function whose arguments are all unbatched") {
  Array c = linum::array({1.0, 2.0});
  VmapOptions o;
  o.in_axes = kNone;
  o.axis_size = 3;
  Array y = linum::vmap([](const Array& a) { return a * 2.0; }, o)(c);
  check_close(y, stack_rows({c * 2.0, c * 2.0, c * 2.0}));
  VmapOptions o0;
  o0.axis_size = 4;
  o0.axis_name = "i";
  Array idx = linum::vmap([] { return linum::axis_index("i"); }, o0)();
  check_close(idx, linum::array({0, 1, 2, 3}));
}

TEST_CASE("vmap: nested vmaps build an outer product; inner and outer axes stay apart") {
  Array x = linum::array({1.0, 2.0, 3.0}), y = linum::array({10.0, 20.0});
  auto inner = linum::vmap([](const Array& a, const Array& b) { return a * b + b; }, {{0, kNone}});
  Array z = linum::vmap(inner, {{kNone, 0}})(x, y);  // z[j, i] = x[i] * y[j] + y[j]
  REQUIRE(z.shape() == linum::Shape{2, 3});
  auto v = values(z);
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) CHECK(v[j * 3 + i] == values(x)[i] * values(y)[j] + values(y)[j]);
}

TEST_CASE("vmap errors: inconsistent sizes, axes out of range, prefixes, None outputs") {
  auto add = [](const Array& a, const Array& b) { return a + linum::sum(b); };
  const std::string e = linum::testing::message_of([&] { linum::vmap(add)(data({3}), data({4, 2})); });
  CHECK(e.find("vmap got inconsistent sizes for the mapped axis:") != std::string::npos);
  CHECK(e.find("one axis had size 3: axis 0 of args[0] of type float64[3]") != std::string::npos);
  CHECK(e.find("one axis had size 4: axis 0 of args[1] of type float64[4,2]") != std::string::npos);

  Params p{{"w", data({3})}, {"b", data({4})}};
  CHECK_ERROR_CONTAINS(linum::vmap([](const Params& q) { return q.at("w"); })(p),
                       "axis 0 of args[0]['b'] of type float64[4]");

  CHECK_ERROR_CONTAINS(linum::vmap([](const Array& a) { return a; }, {{2}})(data({3, 4})),
                       "vmap was requested to map its argument along axis 2, which implies that "
                       "its rank should be at least 3, but is only 2 (its shape is (3, 4))");
  CHECK_ERROR_CONTAINS(linum::vmap([](const Array& a) { return a; }, {{-3}})(data({3, 4})),
                       "along axis -3");
  CHECK_ERROR_CONTAINS(linum::vmap([](const Array& a) { return a; }, {{0, 0}})(data({3})),
                       "len(in_axes)=2, len(args)=1");
  VmapOptions bad;
  bad.in_axes = AxisSpec::seq({AxisSpec::dict({{"w", 0}})});
  CHECK_ERROR_CONTAINS(linum::vmap([](const Params& q) { return q.at("w"); }, bad)(p),
                       "vmap in_axes specification must be a tree prefix of the corresponding value, "
                       "got specification ({'w': 0},) for value tree");
  bad.in_axes = AxisSpec::dict({{"w", 0}, {"b", 0}});
  CHECK_ERROR_CONTAINS(linum::vmap([](const Params& q) { return q.at("w"); }, bad)(p),
                       "a tuple of entries corresponding to the positional arguments passed to the "
                       "function, but got {'b': 0, 'w': 0}");
  VmapOptions none_out;
  none_out.out_axes = kNone;
  CHECK_ERROR_CONTAINS(linum::vmap([](const Array& a) { return a; }, none_out)(data({3})),
                       "vmap has mapped output but out_axes is None");
  VmapOptions far;
  far.out_axes = 2;
  CHECK_ERROR_CONTAINS(linum::vmap([](const Array& a) { return a; }, far)(data({3})),
                       "out_axes 2 is out of bounds");
  CHECK_ERROR_CONTAINS(linum::vmap([](const Array& a) { return a; }, {{kNone}})(data({3})),
                       "vmap must have at least one non-None value in in_axes");
  VmapOptions sz;
  sz.axis_size = 5;
  CHECK_ERROR_CONTAINS(linum::vmap([](const Array& a) { return a; }, sz)(data({3})),
                       "the axis_size argument is 5");
  CHECK_THROWS_AS(linum::vmap([](const Array& a) { return a; }, {{2}})(data({3})), linum::ValueError);
}

TEST_CASE("collectives: psum, pmean, pmax, pmin, all_gather, axis_index match manual reductions") {
  Array x = data({5, 3}, 11);
  VmapOptions o;
  o.axis_name = "i";
  // pmean in vmap matches a manual mean over examples.
  Array centered = linum::vmap([](const Array& r) { return r - linum::pmean(r, "i"); }, o)(x);
  check_close(centered, x - linum::mean(x, 0, true));
  Array s = linum::vmap([](const Array& r) { return linum::psum(r, "i"); }, o)(x);
  check_close(s, linum::broadcast_to(linum::sum(x, 0), {5, 3}));

  auto col = [&](int j, bool want_max) {
    double m = want_max ? -1e300 : 1e300;
    for (int i = 0; i < 5; ++i) {
      const double v = values(x)[i * 3 + j];
      m = want_max ? std::max(m, v) : std::min(m, v);
    }
    return m;
  };
  Array mx = linum::vmap([](const Array& r) { return linum::pmax(r, "i"); }, o)(x);
  Array mn = linum::vmap([](const Array& r) { return linum::pmin(r, "i"); }, o)(x);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) {
      CHECK(values(mx)[i * 3 + j] == col(j, true));
      CHECK(values(mn)[i * 3 + j] == col(j, false));
    }

  Array g = linum::vmap([](const Array& r) { return linum::all_gather(r, "i"); }, o)(x);
  REQUIRE(g.shape() == linum::Shape{5, 5, 3});
  for (int i = 0; i < 5; ++i) check_close(row(g, i), x);
  Array g1 = linum::vmap([](const Array& r) { return linum::all_gather(r, "i", 1); }, o)(x);
  REQUIRE(g1.shape() == linum::Shape{5, 3, 5});
  check_close(row(g1, 2), linum::transpose(x));
  Array gt = linum::vmap([](const Array& r) { return linum::all_gather(r, "i", 0, true); }, o)(x);
  REQUIRE(gt.shape() == linum::Shape{5, 15});
  check_close(row(gt, 4), linum::reshape(x, {15}));

  Array idx = linum::vmap([](const Array& r) { return r * linum::axis_index("i"); }, o)(x);
  check_close(idx, x * linum::reshape(linum::arange(5).astype(linum::float64), {5, 1}));
  // A value the same for every example: psum is size * x, pmax is x.
  Array c = linum::array({1.0, -2.0});
  Array pc = linum::vmap([&](const Array& r) { return linum::psum(c, "i") + 0.0 * linum::sum(r); }, o)(x);
  check_close(row(pc, 3), c * 5.0);
  // Pytrees of arrays.
  auto [pa, pb] = linum::vmap([](const Array& r) { return linum::psum(std::make_pair(r, r * 2.0), "i"); }, o)(x);
  check_close(row(pb, 0), linum::sum(x, 0) * 2.0);
}

TEST_CASE("collectives resolve the named axis among nested vmaps") {
  Array x = data({2, 3}, 12);  // outer "i" of size 2, inner "j" of size 3
  VmapOptions oi, oj;
  oi.axis_name = "i";
  oj.axis_name = "j";
  Array si = linum::vmap(linum::vmap([](const Array& v) { return linum::psum(v, "i"); }, oj), oi)(x);
  Array sj = linum::vmap(linum::vmap([](const Array& v) { return linum::psum(v, "j"); }, oj), oi)(x);
  check_close(si, linum::broadcast_to(linum::sum(x, 0, true), {2, 3}));
  check_close(sj, linum::broadcast_to(linum::sum(x, 1, true), {2, 3}));
  Array ij = linum::vmap(
      linum::vmap([](const Array&) { return linum::axis_index("i") * 10 + linum::axis_index("j"); }, oj),
      oi)(x);
  check_close(ij, linum::array({{0, 1, 2}, {10, 11, 12}}));
  Array gi = linum::vmap(linum::vmap([](const Array& v) { return linum::all_gather(v, "i"); }, oj), oi)(x);
  REQUIRE(gi.shape() == linum::Shape{2, 3, 2});  // [i, j] holds x[:, j]
  check_close(row(row(gi, 1), 2), linum::array({values(x)[2], values(x)[5]}));
  // Shadowing: the innermost vmap with the name wins.
  Array inner = linum::vmap(linum::vmap([](const Array& v) { return linum::psum(v, "i"); }, oi), oi)(x);
  check_close(inner, linum::broadcast_to(linum::sum(x, 1, true), {2, 3}));

  CHECK_ERROR_CONTAINS(
      linum::vmap([](const Array& v) { return linum::psum(v, "k"); }, oi)(data({3})),
      "unbound axis name: k. The following axis names (e.g. defined by vmap) are available to "
      "collective operations: [i]");
  CHECK_ERROR_CONTAINS(linum::psum(data({3}), "i"), "unbound axis name: i");
  CHECK_ERROR_CONTAINS(linum::axis_index("z"), "unbound axis name: z");
}

TEST_CASE("collectives differentiate: grad(vmap), vmap(grad), jvp agree with the batch total") {
  Array x = data({4, 3}, 13);
  VmapOptions o;
  o.axis_name = "i";
  auto per = [](const Array& r) {
    Array c = r - linum::pmean(r, "i");
    return linum::sum(c * c) + linum::sum(linum::pmax(r, "i") * r) +
           linum::sum(linum::all_gather(linum::sin(r), "i") * 0.3) + linum::sum(linum::psum(r * r, "i"));
  };
  auto total = [&](const Array& X) { return linum::sum(linum::vmap(per, o)(X)); };
  linum::testing::check_grads([&](const Array& X) { return linum::vmap(per, o)(X); }, x);
  // vmap(grad(f)) is the gradient of the sum over examples (collectives transpose to collectives).
  Array per_example = linum::vmap(linum::grad(per), o)(x);
  check_close(per_example, linum::grad(total)(x), 1e-9);
  // Closed form for the centring term alone: d/dx sum_b |x_b - mean|^2 = 2 (x_b - mean).
  auto centre = [&](const Array& X) {
    return linum::sum(linum::vmap([](const Array& r) {
      Array c = r - linum::pmean(r, "i");
      return linum::sum(c * c);
    }, o)(X));
  };
  check_close(linum::grad(centre)(x), (x - linum::mean(x, 0, true)) * 2.0);
}

TEST_CASE("per-example gradients: vmap(grad) over a pytree of params equals the loop") {
  Params p{{"w1", data({3, 4}, 21)}, {"b1", data({4}, 22)}, {"w2", data({4}, 23)}};
  Array xs = data({6, 3}, 24), ys = data({6}, 25);
  auto loss = [](const Params& p, const Array& x, const Array& y) {
    Array h = linum::tanh(linum::matmul(x, p.at("w1")) + p.at("b1"));
    return linum::square(linum::sum(h * p.at("w2")) - y);
  };
  Params g = linum::vmap(linum::grad(loss), {{kNone, 0, 0}})(p, xs, ys);
  for (int i = 0; i < 6; ++i) {
    Params gi = linum::grad(loss)(p, row(xs, i), row(ys, i));
    for (const auto& [k, v] : gi) check_close(row(g[k], i), v);
  }
}

}  // namespace test_vmap
