// eval_shape (the abstract level): for every primitive and transform, the shapes and dtypes it
// reports equal those of the eager result, and it allocates no array buffer doing so.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <map>
#include <new>
#include <string>

#include <linum/autodiff/random/random.hpp>
#include <linum/linum.hpp>

#include "support/buffer_counter.hpp"

namespace test_eval_shape {

using linum::Array;
using linum::Arrays;
using linum::ShapeDtype;
using linum::testing::buffer_count;

namespace {

using Fn = std::function<Arrays(const Arrays&)>;

struct Case {
  const char* name;
  Arrays inputs;
  Fn f;
};

Array data(const linum::Shape& s, double scale = 0.1) {
  return linum::astype(
             linum::reshape(linum::arange(0.0, static_cast<double>(linum::shape_size(s))), s),
             linum::float32) *
             scale +
         0.5f;
}

std::vector<ShapeDtype> avals(const Arrays& xs) {
  std::vector<ShapeDtype> r;
  for (const auto& x : xs) r.push_back(linum::shape_dtype(x));
  return r;
}

// eval_shape(f) == the avals of f's eager result, with no buffer allocated by eval_shape.
void check_case(const Case& c) {
  const std::string name = c.name;
  CAPTURE(name);
  const auto want = avals(c.f(c.inputs));
  const long before = buffer_count.load();
  const std::vector<ShapeDtype> got = linum::eval_shape(c.f, c.inputs);
  const long allocated = buffer_count.load() - before;
  CHECK(got == want);
  CHECK(allocated == 0);
}

Arrays one(Array a) { return {std::move(a)}; }

std::vector<Case> op_cases() {
  using namespace linum;
  const Array x = data({3, 4}), y = data({4}), m = data({4, 5}), b3 = data({2, 3, 4});
  const Array img = data({2, 6, 6, 3}), ker = data({3, 3, 3, 8});
  const Array key = random::PRNGKey(0);
  const Array idx = array<int>({2, 0, 1});
  std::vector<Case> cs = {
      {"neg", {x}, [](const Arrays& a) { return one(negative(a[0])); }},
      {"sin exp tanh log sqrt",
       {x},
       [](const Arrays& a) { return one(sqrt(log(tanh(exp(sin(a[0])))) + 2.0f)); }},
      {"isnan (bool out)", {x}, [](const Arrays& a) { return one(isnan(a[0])); }},
      {"relu gelu sigmoid", {x}, [](const Arrays& a) { return one(relu(gelu(sigmoid(a[0])))); }},
      {"add broadcasting", {x, y}, [](const Arrays& a) { return one(a[0] + a[1]); }},
      {"sub mul div pow max",
       {x, y},
       [](const Arrays& a) { return one(maximum(power(a[0] - a[1], a[1]) * a[0] / a[1], a[0])); }},
      {"less (bool) and logical_and",
       {x, y},
       [](const Arrays& a) { return one(logical_and(less(a[0], a[1]), greater(a[0], 0.5f))); }},
      {"integer_pow", {x}, [](const Arrays& a) { return one(power(a[0], 3)); }},
      {"where", {x, y}, [](const Arrays& a) { return one(where(less(a[1], 0.7f), a[0], 0.0f)); }},
      {"astype", {x}, [](const Arrays& a) { return one(astype(a[0], float64)); }},
      {"stop_gradient", {x}, [](const Arrays& a) { return one(stop_gradient(a[0])); }},
      {"reshape transpose",
       {b3},
       [](const Arrays& a) {
         return one(transpose(reshape(a[0], {6, -1})));
       }},
      {"broadcast_to expand_dims",
       {y},
       [](const Arrays& a) {
         return one(broadcast_to(expand_dims(a[0], 0), {7, 4}));
       }},
      {"concatenate stack",
       {x, x},
       [](const Arrays& a) {
         return one(stack({concatenate(a, 1), concatenate(a, 1)}));
       }},
      {"split",
       {x},
       [](const Arrays& a) {
         return split(a[0], std::vector<std::int64_t>{1, 3}, 1);
       }},
      {"slice with steps",
       {x},
       [](const Arrays& a) {
         return one(slice(a[0], {{1, 3, 1}, {std::nullopt, std::nullopt, -2}}));
       }},
      {"dynamic_slice",
       {x},
       [](const Arrays& a) {
         return one(dynamic_slice(a[0], {1, 1}, {2, 2}));
       }},
      {"take (gather)", {x, idx}, [](const Arrays& a) { return one(take(a[0], a[1], 1)); }},
      {"dynamic_update_slice (scatter)",
       {x},
       [](const Arrays& a) {
         return one(dynamic_update_slice(a[0], ones({2, 2}), {1, 1}));
       }},
      {"sum max min prod",
       {b3},
       [](const Arrays& a) {
         return Arrays{sum(a[0], 1), max(a[0], {0, 2}), min(a[0], {}, true), prod(a[0], -1)};
       }},
      {"argmax mean var",
       {b3},
       [](const Arrays& a) {
         return Arrays{argmax(a[0], 1), mean(a[0], 0), var(a[0], 2)};
       }},
      {"logsumexp softmax",
       {x},
       [](const Arrays& a) {
         return Arrays{logsumexp(a[0], 1), softmax(a[0])};
       }},
      {"dot matmul",
       {x, m, b3},
       [](const Arrays& a) {
         return Arrays{dot(a[0], a[1]), matmul(a[2], a[1])};
       }},
      {"dot_general batch",
       {b3},
       [](const Arrays& a) {
         return one(dot_general(a[0], a[0], {{2}, {2}, {0}, {0}}));
       }},
      {"conv_general_dilated",
       {img, ker},
       [](const Arrays& a) {
         return one(conv_general_dilated(a[0], a[1], {{2, 1}, "SAME", {}, {1, 2}}));
       }},
      {"max_pool avg_pool",
       {img},
       [](const Arrays& a) {
         return Arrays{max_pool(a[0], {2, 2}, {2, 2}), avg_pool(a[0], {3, 3}, {1, 2}, "SAME")};
       }},
      {"random split fold_in bits",
       {key},
       [](const Arrays& a) {
         return Arrays{random::split(a[0], 3), random::fold_in(a[0], 7),
                       random::bits(a[0], {2, 3})};
       }},
      {"random uniform normal bernoulli randint",
       {key},
       [](const Arrays& a) {
         return Arrays{random::uniform(a[0], {2, 3}), random::normal(a[0], {4}, float64),
                       random::bernoulli(a[0], 0.3, {5}), random::randint(a[0], {2}, 0, 9)};
       }},
      {"random permutation categorical",
       {key, x},
       [](const Arrays& a) {
         return Arrays{random::permutation(a[0], 6), random::categorical(a[0], a[1])};
       }},
  };
  return cs;
}

std::vector<Case> transform_cases() {
  using namespace linum;
  const Array x = data({3, 4}), v = data({4}), w = data({4, 2}), img = data({1, 5, 5, 2});
  const Array xs = data({6, 4}), key = random::PRNGKey(1);
  auto loss = [](const Array& a) { return sum(tanh(a) * a); };
  std::vector<Case> cs = {
      {"grad", {x}, [=](const Arrays& a) { return one(grad(loss)(a[0])); }},
      {"grad through slice, gather, pool, conv (their transposes)",
       {img, data({3, 3, 2, 4})},
       [](const Arrays& a) {
         auto f = [](const Array& i, const Array& k) {
           Array y = conv_general_dilated(max_pool(i, {2, 2}, {1, 1}) + avg_pool(i, {2, 2}, {1, 1}),
                                          k, {{1, 1}, "SAME", {}, {}, 1});
           return sum(slice(y, {{0, 1}, {1, 3, 1}})) + sum(take(y, array<int>({0, 3}), 2));
         };
         auto [gi, gk] = grad(f, argnums<0, 1>)(a[0], a[1]);
         return Arrays{gi, gk};
       }},
      {"value_and_grad with a dict of params",
       {w, v},
       [](const Arrays& a) {
         using P = std::map<std::string, Array>;
         auto [l, g] = value_and_grad([&](const P& p) { return sum(tanh(dot(a[1], p.at("w")))); })(
             P{{"w", a[0]}});
         return Arrays{l, g.at("w")};
       }},
      {"jvp",
       {x},
       [](const Arrays& a) {
         auto [y, t] = jvp([](const Array& z) { return softmax(z) * z; }, std::tuple{a[0]},
                           std::tuple{ones_like(a[0])});
         return Arrays{y, t};
       }},
      {"vmap with in_axes 1",
       {x, data({3})},
       [](const Arrays& a) {
         return one(vmap([](const Array& c, const Array& z) { return dot(c, z) * c; },
                         {.in_axes = {1, VmapOptions::kNone}})(a[0], a[1]));
       }},
      {"vmap of grad and grad of vmap",
       {x},
       [=](const Arrays& a) {
         Array pe = vmap(grad(loss))(a[0]);
         Array gv = grad([=](const Array& z) { return sum(vmap(loss)(z)); })(a[0]);
         return Arrays{pe, gv};
       }},
      {"vmap with psum and all_gather",
       {x},
       [](const Arrays& a) {
         auto [n, g] = vmap(
             [](const Array& r) {
               return std::make_pair(r / psum(r, "i"), all_gather(sum(r), "i"));
             },
             {.axis_name = "i"})(a[0]);
         return Arrays{n, g};
       }},
      {"scan with stacked ys",
       {v, xs},
       [](const Arrays& a) {
         auto [c, ys] = scan(
             [](const Array& h, const Array& z) { return std::make_pair(tanh(h * z), sum(h)); },
             a[0], a[1]);
         return Arrays{c, ys};
       }},
      {"grad of scan",
       {v, xs},
       [](const Arrays& a) {
         return one(grad([&](const Array& h0) {
           return sum(
               scan([](const Array& h, const Array& z) { return std::make_pair(sin(h) + z, h); },
                    h0, a[1])
                   .first);
         })(a[0]));
       }},
      {"cond on a concrete and on a computed predicate",
       {x},
       [](const Arrays& a) {
         Array c1 = cond(
             true, [](const Array& z) { return z * 2.0f; }, [](const Array& z) { return -z; },
             a[0]);
         Array c2 = cond(
             sum(a[0]) > 0.0f, [](const Array& z) { return exp(z); },
             [](const Array& z) { return z; }, a[0]);
         return Arrays{c1, c2};
       }},
      {"switch_",
       {x},
       [](const Arrays& a) {
         std::vector<std::function<Array(const Array&)>> br = {
             [](const Array& z) { return z; }, [](const Array& z) { return sin(z); }};
         return Arrays{switch_(array(1), br, a[0]), switch_(argmax(sum(a[0], 0)), br, a[0])};
       }},
      {"while_loop and fori_loop",
       {v},
       [](const Arrays& a) {
         Array w1 = while_loop([](const Array& z) { return sum(z) < 100.0f; },
                               [](const Array& z) { return z * 2.0f; }, a[0]);
         Array w2 = fori_loop(
             0, 3, [](const Array& i, const Array& z) { return z + astype(i, float32); }, a[0]);
         return Arrays{w1, w2};
       }},
      {"custom_vjp under grad",
       {v},
       [](const Arrays& a) {
         auto f = custom_vjp([](const Array& z) { return sin(z); },
                             [](const Array& z) { return std::make_pair(sin(z), cos(z)); },
                             [](const Array& c, const Array& g) { return std::make_tuple(g * c); });
         return Arrays{f(a[0]), grad([&](const Array& z) { return sum(f(z)); })(a[0])};
       }},
      {"checkpoint under grad",
       {v},
       [](const Arrays& a) {
         auto f = checkpoint([](const Array& z) { return sin(z) * z; });
         return Arrays{f(a[0]), grad([&](const Array& z) { return sum(f(z)); })(a[0])};
       }},
      {"jvp of max_pool (select_and_gather_add)",
       {data({1, 4, 4, 2})},
       [](const Arrays& a) {
         auto [y, t] = jvp(
             [](const Array& z) {
               return max_pool(z, {2, 2});
             },
             std::tuple{a[0]}, std::tuple{ones_like(a[0])});
         return Arrays{y, t};
       }},
      {"random truncated_normal gumbel, choice with weights, categorical without replacement",
       {key, v},
       [](const Arrays& a) {
         return Arrays{random::truncated_normal(a[0], -1.0, 1.0, {3}),
                       random::gumbel(a[0], {2}, float64),
                       random::choice(a[0], 4, {2}, true, softmax(a[1])),
                       random::categorical(a[0], a[1], -1, Shape{2}, false)};
       }},
      {"random inside vmap",
       {key},
       [](const Arrays& a) {
         Array keys = random::split(a[0], 4);
         return one(vmap([](const Array& k) { return random::normal(k, {3}); })(keys));
       }},
  };
  return cs;
}

}  // namespace

TEST_SUITE("eval_shape") {
  TEST_CASE("the allocation hook counts Array buffers") {
    const long before = buffer_count.load();
    Array big = linum::zeros({64, 64});
    CHECK(buffer_count.load() - before == 1);
  }

  TEST_CASE("eval_shape of every op equals the eager shapes and dtypes and allocates no buffer") {
    for (const auto& c : op_cases()) check_case(c);
  }

  TEST_CASE(
      "eval_shape of every transform equals the eager shapes and dtypes and allocates no buffer") {
    for (const auto& c : transform_cases()) check_case(c);
  }

  TEST_CASE("eval_shape takes ShapeDtype pytrees and returns the output tree") {
    using P = std::map<std::string, Array>;
    const std::map<std::string, ShapeDtype> params = {{"b", {{128}, linum::float32}},
                                                      {"w", {{128, 64}, linum::float32}}};
    const ShapeDtype xin{{1024LL * 1024 * 1024, 128}, linum::float32};
    // A dense layer on 2^30 rows (512 GiB of input) runs abstractly, allocating nothing.
    const long before = buffer_count.load();
    auto out = linum::eval_shape(
        [](const std::map<std::string, Array>& p, const Array& x) {
          Array h = linum::relu(linum::dot(x, p.at("w")) + 1.0f);
          return std::make_pair(h, P{{"mean", linum::mean(h, 0)}, {"argmax", linum::argmax(h, 1)}});
        },
        params, xin);
    CHECK(buffer_count.load() == before);
    CHECK(out.first == ShapeDtype{{1024LL * 1024 * 1024, 64}, linum::float32});
    CHECK(out.second.at("mean") == ShapeDtype{{64}, linum::float32});
    CHECK(out.second.at("argmax") == ShapeDtype{{1024LL * 1024 * 1024}, linum::int32});
    // A bad shape is the op's own error, as in JAX.
    CHECK_THROWS_AS(
        linum::eval_shape([](const Array& a, const Array& b) { return linum::dot(a, b); },
                          ShapeDtype{{3, 4}}, ShapeDtype{{5, 2}}),
        linum::Error);
  }

  TEST_CASE("reading a value inside eval_shape is a ConcretizationTypeError") {
    const ShapeDtype s{{}, linum::float32};
    CHECK_THROWS_AS(linum::eval_shape([](const Array& a) { return Array(a.item<float>()); }, s),
                    linum::ConcretizationTypeError);
    CHECK_THROWS_AS(linum::eval_shape([](const Array& a) { return a.concrete(); }, s),
                    linum::ConcretizationTypeError);
    CHECK_THROWS_AS(
        linum::eval_shape([](const Array& a) { return static_cast<bool>(a) ? a : -a; }, s),
        linum::ConcretizationTypeError);
    try {
      linum::eval_shape([](const Array& a) { return Array(a.item<float>()); }, s);
    } catch (const linum::ConcretizationTypeError& e) {
      CHECK(std::string(e.what()).find(
                "Abstract tracer value encountered where concrete value is expected") !=
            std::string::npos);
      CHECK(std::string(e.what()).find("float32[]") != std::string::npos);
    }
  }

  TEST_CASE("cond and switch check the branch not taken, even with a concrete predicate") {
    using linum::sum;
    auto same = [](const Array& a) { return a; };
    auto reduced = [](const Array& a) { return sum(a); };
    auto to_int = [](const Array& a) { return linum::astype(a, linum::int32); };
    const Array x = data({2});
    for (bool p : {true, false}) {
      CAPTURE(p);
      CHECK_THROWS_WITH_AS(
          linum::cond(p, same, reduced, x),
          doctest::Contains("cond: true_fun and false_fun output must have identical types"),
          linum::TypeError);
      CHECK_THROWS_WITH_AS(linum::cond(p, same, to_int, x),
                           doctest::Contains("so the dtypes do not match"), linum::TypeError);
    }
    std::vector<std::function<Array(const Array&)>> br = {same, same, reduced};
    CHECK_THROWS_WITH_AS(linum::switch_(Array(0), br, x),
                         doctest::Contains("switch: branch outputs must have identical types"),
                         linum::TypeError);
    // Matching branches still run only the taken one for real: the other sees abstract values.
    int real_t = 0, real_f = 0;
    auto t = [&](const Array& a) {
      real_t += !linum::detail::is_abstract(a);
      return a * 2.0f;
    };
    auto f = [&](const Array& a) {
      real_f += !linum::detail::is_abstract(a);
      return a + 1.0f;
    };
    const long before = buffer_count.load();
    Array big = linum::zeros({1000});
    Array r = linum::cond(true, t, f, big);
    CHECK(buffer_count.load() - before == 2);  // `big` and the taken branch's result only
    CHECK(real_t == 1);
    CHECK(real_f == 0);
    CHECK(r.shape() == linum::Shape{1000});
  }

  TEST_CASE("a zero-length scan checks the body abstractly and gives ys of length 0") {
    auto grow = [](const Array& c, const Array& x) {
      return std::make_pair(linum::concatenate({c, x}), x);
    };
    CHECK_THROWS_WITH_AS(
        linum::scan(grow, data({2}), linum::zeros({0, 3})),
        doctest::Contains("scan body function carry input and carry output must have equal types"),
        linum::TypeError);
    auto step = [](const Array& c, const Array& x) {
      return std::make_pair(c + linum::sum(x), x * 2.0f);
    };
    auto [c, ys] = linum::scan(step, data({2}), linum::zeros({0, 3}));
    CHECK(c.shape() == linum::Shape{2});
    CHECK(ys.shape() == linum::Shape{0, 3});
  }

  TEST_CASE("while_loop under eval_shape runs the body once and checks the carry") {
    int calls = 0;
    auto out = linum::eval_shape(
        [&](const Array& v) {
          return linum::while_loop([](const Array& z) { return linum::sum(z) < 10.0f; },
                                   [&](const Array& z) {
                                     ++calls;
                                     return z * 2.0f;
                                   },
                                   v);
        },
        ShapeDtype{{5}});
    CHECK(calls == 1);
    CHECK(out == ShapeDtype{{5}});
    CHECK_THROWS_WITH_AS(
        linum::eval_shape(
            [](const Array& v) {
              return linum::while_loop([](const Array& z) { return linum::sum(z) < 10.0f; },
                                       [](const Array& z) { return linum::sum(z); }, v);
            },
            ShapeDtype{{5}}),
        doctest::Contains("while_loop: body_fun output and input must have identical types"),
        linum::TypeError);
  }

}  // TEST_SUITE

}  // namespace test_eval_shape
