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

using linum::Array;
using linum::Arrays;
using linum::ShapeDtype;

// Array buffers are the library's only aligned heap allocations (array.cpp): counting aligned
// operator new counts them. The eager runs below check that the hook sees them.
namespace {
std::atomic<long> g_buffers{0};
}  // namespace

void* operator new(std::size_t n, std::align_val_t al) {
  g_buffers.fetch_add(1, std::memory_order_relaxed);
  const auto a = static_cast<std::size_t>(al);
  void* p = std::aligned_alloc(a, (n + a - 1) / a * a);
  if (!p) throw std::bad_alloc();
  return p;
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

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
  CAPTURE(c.name);
  const auto want = avals(c.f(c.inputs));
  const long before = g_buffers.load();
  const std::vector<ShapeDtype> got = linum::eval_shape(c.f, c.inputs);
  const long allocated = g_buffers.load() - before;
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

}  // namespace

TEST_SUITE("eval_shape") {
  TEST_CASE("the allocation hook counts Array buffers") {
    const long before = g_buffers.load();
    Array big = linum::zeros({64, 64});
    CHECK(g_buffers.load() - before == 1);
  }

  TEST_CASE("eval_shape of every op equals the eager shapes and dtypes and allocates no buffer") {
    for (const auto& c : op_cases()) check_case(c);
  }

}  // TEST_SUITE
