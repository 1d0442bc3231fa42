// linum::jit: one trace per signature, replays equal to eager bit for bit, composition with
// grad / value_and_grad / vmap inside and outside, static arguments, the concretization errors,
// closed-over constants, the cache, and a train step (value_and_grad + adam) over 10 steps.
#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <utility>

#include <linum/linum.hpp>

#include "transform_testing.hpp"

namespace test_jit {

using namespace linum;
using namespace transform_testing;

namespace {

bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && all(equal(a, b)).item<bool>();
}
Array f32(std::vector<float> v, Shape s) { return array(v, s); }
template <class T>
bool same_leaves(const T& a, const T& b) {
  const Arrays la = linum::detail::tree_arrays(a), lb = linum::detail::tree_arrays(b);
  if (la.size() != lb.size()) return false;
  for (std::size_t i = 0; i < la.size(); ++i)
    if (!same(la[i], lb[i])) return false;
  return true;
}

using Params = std::pair<Array, Array>;
Params params(int seed) {
  return {astype(data({4, 3}, seed), float32), astype(data({3}, seed + 1), float32)};
}
Array batch(std::int64_t n, int seed) { return astype(data({n, 4}, seed), float32); }
Array loss(const Params& p, const Array& x) {
  return mean(square(tanh(matmul(x, p.first) + p.second)));
}

}  // namespace

TEST_SUITE("jit") {
  TEST_CASE("the first call traces, later calls with the same signature replay, bit for bit") {
    int runs = 0;
    auto f = [&](const Params& p, const Array& x) {
      ++runs;  // a side effect: it happens when the function is traced, not per call
      return std::make_pair(Array(tanh(matmul(x, p.first) + p.second)), Array(sum(x) * 2.0f));
    };
    auto jf = jit(f, {}, "f");
    auto y1 = jf(params(1), batch(2, 3));
    CHECK(runs == 1);
    CHECK(jf.trace_count() == 1);
    CHECK(jf.program_size() > 0);
    CHECK(same_leaves(y1, f(params(1), batch(2, 3))));
    runs = 0;
    for (int s = 4; s < 8; ++s) {
      auto y = jf(params(s), batch(2, s));
      CHECK(same_leaves(y, f(params(s), batch(2, s))));
    }
    CHECK(runs == 4);  // only the eager calls ran f
    CHECK(jf.trace_count() == 1);
    // A new shape or dtype is a new signature.
    CHECK(same_leaves(jf(params(1), batch(5, 3)), f(params(1), batch(5, 3))));
    CHECK(jf.trace_count() == 2);
    Params p64{astype(params(1).first, float64), astype(params(1).second, float64)};
    CHECK(same_leaves(jf(p64, astype(batch(2, 3), float64)), f(p64, astype(batch(2, 3), float64))));
    CHECK(jf.trace_count() == 3);
    CHECK(jf.cache_size() == 3);
    jf(params(2), batch(2, 9));
    CHECK(jf.trace_count() == 3);
  }

  TEST_CASE("the cache keeps cache_size programs, dropping the least recently used") {
    auto jf = jit([](const Array& x) { return x * 2.0f; }, {.cache_size = 2});
    jf(zeros({1}));
    jf(zeros({2}));
    jf(zeros({1}));  // hit: {1} is now the most recent
    jf(zeros({3}));  // evicts {2}
    CHECK(jf.trace_count() == 3);
    CHECK(jf.cache_size() == 2);
    jf(zeros({1}));
    CHECK(jf.trace_count() == 3);
    jf(zeros({2}));
    CHECK(jf.trace_count() == 4);
    CHECK_THROWS_AS(jit([](const Array& x) { return x; }, {.cache_size = 0}), ValueError);
  }

  TEST_CASE("ints, bools and strings are static: their values are part of the signature") {
    auto f = [](const Array& x, int n, bool neg, const std::string& op) {
      Array y = x;
      for (int i = 0; i < n; ++i) y = op == "sin" ? sin(y) : cos(y);
      return neg ? -y : y;
    };
    auto jf = jit(f);
    Array x = batch(2, 1);
    CHECK(same(jf(x, 2, false, std::string("sin")), f(x, 2, false, "sin")));
    CHECK(same(jf(x, 3, false, std::string("sin")), f(x, 3, false, "sin")));
    CHECK(same(jf(x, 3, true, std::string("sin")), f(x, 3, true, "sin")));
    CHECK(same(jf(x, 3, true, std::string("cos")), f(x, 3, true, "cos")));
    CHECK(jf.trace_count() == 4);
    CHECK(same(jf(x + 1.0f, 2, false, std::string("sin")), f(x + 1.0f, 2, false, "sin")));
    CHECK(jf.trace_count() == 4);
    // An Array cannot be a static argument: it has no ==.
    auto bad = jit([](const Array& a, const Array& b) { return a + b; }, {.static_argnums = {1}});
    CHECK_ERROR_CONTAINS(bad(x, x), "static argument 1");
  }

  TEST_CASE("static_argnums: negative entries count from the end, out of range is an error") {
    struct Reps {
      int n;
      bool operator==(const Reps&) const = default;
    };
    auto f = [](const Array& x, Reps r) {
      Array y = x;
      for (int i = 0; i < r.n; ++i) y = sin(y);
      return y;
    };
    const Array x = batch(2, 3);
    auto jf = jit(f, {.static_argnums = {-1}});  // the last argument, as JAX resolves i % nargs
    CHECK(same(jf(x, Reps{2}), f(x, Reps{2})));
    CHECK(same(jf(x, Reps{3}), f(x, Reps{3})));
    CHECK(jf.trace_count() == 2);
    // JAX raises at jax.jit for a function with fewer positional parameters; C++ knows the
    // count at the call.
    CHECK_THROWS_WITH_AS(jit(f, {.static_argnums = {2}})(x, Reps{1}),
                         "jit(fn): Jitted function has static_argnums=(2,), but only accepts 2 "
                         "positional arguments.",
                         ValueError);
    CHECK_THROWS_WITH_AS(jit(f, {.static_argnums = {1, -3}})(x, Reps{1}),
                         "jit(fn): Jitted function has static_argnums=(1, -3), but only accepts 2 "
                         "positional arguments.",
                         ValueError);
  }

  TEST_CASE("jit of grad, value_and_grad and vmap equals the eager transforms bit for bit") {
    auto g = grad(loss);
    auto jg = jit(g);
    auto vg = value_and_grad(loss);
    auto jvg = jit(vg);
    auto per_example = vmap([](const Params& p, const Array& x) { return loss(p, x); },
                            {.in_axes = AxisSpec::seq({std::nullopt, 0})});
    auto jpe = jit(per_example);
    for (int s = 1; s <= 3; ++s) {
      const Params p = params(s);
      const Array x = batch(6, s + 10);
      CHECK(same_leaves(jg(p, x), g(p, x)));
      CHECK(same_leaves(jvg(p, x), vg(p, x)));
      const Array xs = reshape(x, {6, 1, 4});
      CHECK(same(jpe(p, xs), per_example(p, xs)));
    }
    CHECK(jg.trace_count() == 1);
    CHECK(jvg.trace_count() == 1);
    CHECK(jpe.trace_count() == 1);
    // Second order: jit of the Hessian-vector product.
    auto hvp = [](const Params& p, const Array& x, const Params& v) {
      return jvp([&](const Params& q) { return grad(loss)(q, x); }, std::make_tuple(p),
                 std::make_tuple(v))
          .second;
    };
    CHECK(same_leaves(jit(hvp)(params(1), batch(3, 2), params(5)),
                      hvp(params(1), batch(3, 2), params(5))));
  }

  TEST_CASE("grad and vmap of a jitted function run it under the transform: eager results") {
    auto jl = jit(loss);
    const Params p = params(2);
    const Array x = batch(4, 7);
    CHECK(same_leaves(grad(jl)(p, x), grad(loss)(p, x)));
    auto batched = vmap([&](const Array& xi) { return jl(p, reshape(xi, {1, 4})); });
    auto eager = vmap([&](const Array& xi) { return loss(p, reshape(xi, {1, 4})); });
    CHECK(same(batched(x), eager(x)));
    CHECK(jl.trace_count() == 0);
    // Finite differences of the jitted loss's gradient through grad(jit(.)).
    const Params gp = grad(jl)(p, x);
    const double h = 1e-3;
    Params pp{astype(p.first, float64), astype(p.second, float64)};
    Params pm = pp;
    pp.second = pp.second + array<double>({h, 0, 0});
    pm.second = pm.second - array<double>({h, 0, 0});
    const Array x64 = astype(x, float64);
    const double fd = (loss(pp, x64).item<double>() - loss(pm, x64).item<double>()) / (2 * h);
    CHECK(values(gp.second)[0] == doctest::Approx(fd).epsilon(1e-4));
  }

  TEST_CASE("reading a traced value on the host is a ConcretizationTypeError naming the function") {
    auto reads = jit([](const Array& x) { return x * x.item<float>(); }, {}, "reads");
    CHECK_THROWS_AS(reads(ones({})), ConcretizationTypeError);
    CHECK_ERROR_CONTAINS(reads(ones({})), "jit(reads)");
    // Under grad inside jit, reading a value on the host is the same error.
    auto grad_of_read = jit(linum::grad([](const Array& x) { return sum(x) * x.item<float>(); }));
    CHECK_THROWS_AS(grad_of_read(ones({})), ConcretizationTypeError);
    auto truth = jit([](const Array& x) { return x ? x : -x; }, {}, "truth");
    CHECK_THROWS_AS(truth(ones({})), ConcretizationTypeError);
    // A predicate from a static argument is a host value: fine.
    auto by_flag = jit([](const Array& x, bool up) {
      return cond(
          Array(up), [](const Array& a) { return a + 1.0f; },
          [](const Array& a) { return a - 1.0f; }, x);
    });
    CHECK(same(by_flag(ones({2}), true), full({2}, 2.0f)));
    CHECK(same(by_flag(ones({2}), false), zeros({2})));
    CHECK(reads.trace_count() == 0);  // failed traces are not cached
  }

  TEST_CASE("arrays the function closes over are constants of the trace, as in JAX") {
    Array w = ones({3});
    auto jf = jit([&](const Array& x) { return x * w; });
    CHECK(same(jf(full({3}, 2.0f)), full({3}, 2.0f)));
    w = full({3}, 5.0f);
    CHECK(same(jf(full({3}, 2.0f)), full({3}, 2.0f)));  // replay: the traced w
    // Closing over a value traced by an enclosing grad is an error that says what to do.
    CHECK_ERROR_CONTAINS(grad([](const Array& y) {
                           auto inner = jit([&](const Array& z) { return z * y; }, {}, "inner");
                           return sum(inner(ones({2})));
                         })(ones({2})),
                         "pass it to the jitted function as an argument");
  }

  TEST_CASE("random draws inside jit equal eager draws") {
    auto draw = [](const Array& key, const Array& x) {
      return x + random::normal(random::fold_in(key, 3), x.shape());
    };
    auto jd = jit(draw);
    for (int s = 0; s < 3; ++s)
      CHECK(same(jd(random::key(s), zeros({5})), draw(random::key(s), zeros({5}))));
    CHECK(jd.trace_count() == 1);
  }

  TEST_CASE("a train step (value_and_grad + adam) under jit equals the eager step for 10 steps") {
    auto tx = optim::adam(1e-2);
    auto step = [&](const Params& p, const decltype(tx.init(params(1)))& s, const Array& x) {
      auto [l, g] = value_and_grad(loss)(p, x);
      auto [u, next] = tx.update(g, s, p);
      return std::make_tuple(optim::apply_updates(p, u), next, l);
    };
    auto jstep = jit(step);
    Params pe = params(1), pj = params(1);
    auto se = tx.init(pe);
    auto sj = tx.init(pj);
    for (int i = 0; i < 10; ++i) {
      const Array x = batch(8, 20 + i);
      auto [p1, s1, l1] = step(pe, se, x);
      auto [p2, s2, l2] = jstep(pj, sj, x);
      CHECK(same(l1, l2));
      pe = p1, se = s1, pj = p2, sj = s2;
    }
    CHECK(same_leaves(pe, pj));
    CHECK(same_leaves(se, sj));
    CHECK(jstep.trace_count() == 1);
  }

  TEST_CASE("replay releases each value after its last reader") {
    auto chain = [](const Array& x) {
      Array y = x;
      for (int i = 0; i < 50; ++i) y = sin(y) * 1.0001f + 0.5f * y;
      return y;
    };
    auto jc = jit(chain);
    const Array x = batch(256, 1);  // 4 KB per value
    jc(x);
    reset_peak_memory_stats();
    const std::size_t base = memory_stats().bytes_in_use;
    const Array y = jc(x);
    const std::size_t extra = memory_stats().peak_bytes_in_use - base;
    CHECK(same(y, chain(x)));
    // 200 primitives; without release the peak would hold all of their outputs.
    CHECK(extra < 8 * static_cast<std::size_t>(x.size()) * sizeof(float));
  }

  TEST_CASE("cond and switch_ on a traced predicate are staged: one trace, each call's branch") {
    auto f = [](const Array& x, const Array& y) {
      // The branches close over y (a traced argument): it becomes an input of each branch.
      return cond(
          sum(x) > 0.0f, [&](const Array& a) { return a * y; },
          [&](const Array& a) { return a - y; }, x);
    };
    auto jf = jit(f);
    Array y = f32({2, 3}, {2});
    for (float s : {1.0f, -1.0f, 0.5f, -4.0f}) {
      Array x = f32({s, 2 * s}, {2});
      CHECK(same(jf(x, y), f(x, y)));
    }
    CHECK(jf.trace_count() == 1);
    auto g = [](const Array& i, const Array& x) {
      auto b0 = [](const Array& a) { return a + 1.0f; };
      auto b1 = [](const Array& a) { return a * 10.0f; };
      auto b2 = [](const Array& a) { return exp(a); };
      return switch_(i, std::make_tuple(b0, b1, b2), x);
    };
    auto jg = jit(g);
    Array x = f32({0.5f, -1.0f}, {2});
    for (int i : {-3, 0, 1, 2, 7}) {  // out of range clamps, as eagerly
      CHECK(same(jg(Array(i), x), g(Array(i), x)));
    }
    CHECK(jg.trace_count() == 1);
    // Branches whose outputs differ are the eager error, raised at trace time.
    auto bad = jit([](const Array& x) {
      return cond(
          sum(x) > 0.0f, [](const Array& a) { return a; },
          [](const Array& a) { return concatenate({a, a}, 0); }, x);
    });
    CHECK_THROWS_AS(bad(ones({2})), TypeError);
    CHECK_ERROR_CONTAINS(bad(ones({2})), "cond: true_fun and false_fun output must have identical types");
  }

  TEST_CASE("while_loop and fori_loop with traced bounds are staged: the trip count per call") {
    // Halve until below a traced threshold, counting steps; a cond nested in the body.
    // The inner branch closes over `half`, an argument two staging levels up.
    auto f = [](const Array& x, const Array& limit, const Array& half) {
      using C = std::pair<Array, Array>;
      return while_loop([&](const C& c) { return sum(c.first) > limit; },
                        [&](const C& c) {
                          Array next = cond(
                              c.second < 2, [&](const Array& a) { return a * half; },
                              [&](const Array& a) { return a * half * half; }, c.first);
                          return C(next, c.second + 1);
                        },
                        C(x, Array(0)));
    };
    auto jf = jit(f);
    Array x = f32({8, 24}, {2});
    for (float limit : {100.0f, 10.0f, 1.0f, 0.01f}) {
      auto got = jf(x, Array(limit), Array(0.5f)), want = f(x, Array(limit), Array(0.5f));
      CHECK(same(got.first, want.first));
      CHECK(same(got.second, want.second));
    }
    CHECK(jf.trace_count() == 1);
    // sums 32 -> 16 -> 8 -> 2 -> 0.5: four steps
    CHECK(jf(x, Array(1.0f), Array(0.5f)).second.item<int>() == 4);
    CHECK(jf(x, Array(1.0f), Array(0.25f)).second.item<int>() == 3);  // 32 -> 8 -> 2 -> 0.125
    auto sum_to = [](const Array& n, const Array& x) {
      return fori_loop(Array(0), n, [&](const Array& i, const Array& acc) {
        return acc + x * astype(i, float32);
      }, zeros({2}));
    };
    auto js = jit(sum_to);
    Array v = f32({1, -2}, {2});
    for (int n : {0, 1, 4, 9}) CHECK(same(js(Array(n), v), sum_to(Array(n), v)));
    CHECK(js.trace_count() == 1);
    CHECK(values(js(Array(4), v)) == std::vector<double>{6, -12});
  }

  TEST_CASE("elementwise chains replay fused: a pass per block, eager results bit for bit") {
    auto chain = [](const Array& x, const Array& y) {
      Array z = x;
      for (int i = 0; i < 20; ++i) z = tanh(sin(z) * 1.5f + y) / (exp(-(z * z)) + 2.0f) - 0.25f * z;
      return std::make_pair(z, z * y);
    };
    // Scalars, a SIMD tail only, several blocks plus a tail; y full-size or a rank-0 scalar.
    for (const Shape& shape : {Shape{}, Shape{7}, Shape{1000}, Shape{3, 333}}) {
      for (DType dt : {float32, float64}) {
        for (bool scalar_y : {false, true}) {
          const Array x = astype(data(shape, 1), dt);
          const Array y = astype(scalar_y ? data({}, 2) : data(shape, 2), dt);
          auto jc = jit(chain);
          jc(x, y);  // trace
          const std::uint64_t before = memory_stats().num_allocs;
          auto got = jc(x, y);
          const std::uint64_t allocs = memory_stats().num_allocs - before;
          auto want = chain(x, y);
          INFO("shape " << shape_str(shape) << " " << dtype_name(dt) << " scalar y " << scalar_y);
          CHECK(same(got.first, want.first));
          CHECK(same(got.second, want.second));
          CHECK(jc.program_size() == 20 * 11 + 1);  // primitives, fused or not
          // 221 primitives, one buffer per output: the intermediates live in block registers.
          if (!shape.empty()) CHECK(allocs == 2);
        }
      }
    }
    // The backward pass's chains too: jit(grad) equals grad.
    auto loss = [&](const Array& x, const Array& y) { return sum(chain(x, y).second); };
    const Array x = astype(data({1000}, 3), float32), y = astype(data({1000}, 4), float32);
    CHECK(same(jit(linum::grad(loss))(x, y), linum::grad(loss)(x, y)));
  }
}

}  // namespace test_jit
