// parallel_for and the kernels it splits (elementwise, the optimizers' one-pass updates, im2col):
// each part exactly once, errors rethrown, nested and concurrent calls safe, and every threaded
// kernel bitwise equal to the same kernel on one thread.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <linum/autodiff/ops/backends.hpp>
#include <linum/autodiff/parallel.hpp>
#include <linum/linum.hpp>

namespace test_parallel {

using namespace linum;
using linum::detail::parallel_for;

namespace {

// Sets BLAS/kernel threads for the scope and restores the previous count.
struct Threads {
  int before = num_threads();
  explicit Threads(int n) { set_num_threads(n); }
  ~Threads() {
    set_num_threads(before);
    detail::set_parallel_kernels(true);
  }
};

Array ramp(const Shape& s, double scale) {
  const std::int64_t n = shape_size(s);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(scale * std::sin(0.001 * i + scale));
  return array(v, s);
}

bool bitwise_equal(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.data<float>(), b.data<float>(), sizeof(float) * a.size()) == 0;
}

// f() with kernels split over 2 threads and on one thread: bitwise equal, and the first run
// went through the workers (so the comparison is not of one path with itself).
void check_threaded_equals_serial(const std::function<std::vector<Array>()>& f) {
  Threads two(2);
  const auto jobs = detail::parallel_jobs();
  const std::vector<Array> threaded = f();
  CHECK(detail::parallel_jobs() > jobs);
  detail::set_parallel_kernels(false);
  const auto jobs_serial = detail::parallel_jobs();
  const std::vector<Array> serial = f();
  CHECK(detail::parallel_jobs() == jobs_serial);
  REQUIRE(threaded.size() == serial.size());
  for (std::size_t i = 0; i < serial.size(); ++i) CHECK(bitwise_equal(threaded[i], serial[i]));
}

}  // namespace

TEST_CASE("parallel_for runs every index once, in aligned chunks, on more than one thread") {
  Threads two(2);
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{5}, std::int64_t{1} << 17,
                         (std::int64_t{1} << 20) + 37}) {
    std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
    std::atomic<bool> misaligned{false};
    std::mutex m;
    std::vector<std::thread::id> ids;
    parallel_for(n, [&](std::int64_t b, std::int64_t e) {
      if (b % 64 != 0) misaligned = true;
      for (std::int64_t i = b; i < e; ++i) seen[i].fetch_add(1);
      std::lock_guard<std::mutex> lock(m);
      ids.push_back(std::this_thread::get_id());
    });
    CHECK(std::all_of(seen.begin(), seen.end(), [](auto& c) { return c.load() == 1; }));
    CHECK_FALSE(misaligned.load());
    if (n >= 2 * detail::kParallelGrain) CHECK(ids.size() >= 2);  // cut into chunks
    if (n < 2 * detail::kParallelGrain && n > 0) CHECK(ids.size() == 1);
  }
}

TEST_CASE("parallel_for rethrows a part's exception and stays usable") {
  Threads two(2);
  const std::int64_t n = std::int64_t{1} << 20;
  CHECK_THROWS_WITH_AS(parallel_for(n,
                                    [&](std::int64_t b, std::int64_t) {
                                      if (b > 0) throw std::runtime_error("part failed");
                                    }),
                       "part failed", std::runtime_error);
  std::atomic<std::int64_t> total{0};
  parallel_for(n, [&](std::int64_t b, std::int64_t e) { total += e - b; });
  CHECK(total.load() == n);
}

TEST_CASE("parallel_for inside a part and from two threads at once gives every index once") {
  Threads two(2);
  const std::int64_t n = std::int64_t{1} << 18;
  // Nested: the inner call runs inline on the part's thread.
  std::atomic<std::int64_t> inner{0};
  std::atomic<int> outer_parts{0};
  parallel_for(n, [&](std::int64_t, std::int64_t) {
    ++outer_parts;
    parallel_for(n, [&](std::int64_t ib, std::int64_t ie) { inner += ie - ib; });
  });
  CHECK(outer_parts.load() >= 2);
  CHECK(inner.load() == outer_parts.load() * n);
  // Concurrent callers: one gets the workers, the other runs inline; both see every index.
  auto count = [&](std::vector<int>& out) {
    for (int rep = 0; rep < 50; ++rep)
      parallel_for(n, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) ++out[i];
      });
  };
  std::vector<int> a(static_cast<std::size_t>(n)), c(static_cast<std::size_t>(n));
  std::thread t([&] { count(a); });
  count(c);
  t.join();
  CHECK(std::all_of(a.begin(), a.end(), [](int v) { return v == 50; }));
  CHECK(std::all_of(c.begin(), c.end(), [](int v) { return v == 50; }));
}

TEST_CASE("threaded elementwise kernels are bitwise those of one thread") {
  const Array x = ramp({1000, 999}, 1.5), y = ramp({1000, 999}, -0.7);
  check_threaded_equals_serial([&] {
    return std::vector<Array>{sin(x), tanh(y), exp(x), add(x, y), multiply(x, 0.5f),
                              subtract(2.0f, y), maximum(x, y), relu(x)};
  });
  // The relu VJP (the fused mask) and tanh's VJP through grad.
  check_threaded_equals_serial([&] {
    auto g = grad([](const Array& a) { return sum(tanh(relu(a)) * a); });
    return std::vector<Array>{g(x)};
  });
}

TEST_CASE("threaded adam and sgd-with-momentum updates are bitwise those of one thread") {
  const Array p = ramp({512, 1024}, 0.3), g = ramp({512, 1024}, -1.1);
  check_threaded_equals_serial([&] {
    auto tx = optim::adam(1e-3);
    auto state = tx.init(p);
    auto [u1, s1] = tx.update(g, state, p);
    auto [u2, s2] = tx.update(multiply(g, 0.5f), s1, p);
    auto sgd = optim::sgd(0.1, 0.9);
    auto ss = sgd.init(p);
    auto [v1, t1] = sgd.update(g, ss, p);
    return std::vector<Array>{u1, u2, v1};
  });
}

TEST_CASE("threaded im2col gives the convolution and its gradients of one thread") {
  const ConvBackend saved = conv_backend();  // oneDNN, where built in, has its own threads
  set_conv_backend(ConvBackend::im2col);
  const Array x = ramp({16, 28, 28, 8}, 0.9), w = ramp({3, 3, 8, 16}, 0.2);
  check_threaded_equals_serial([&] {
    ConvOptions o;
    o.padding = "SAME";
    auto loss = [&](const Array& a, const Array& k) { return sum(conv_general_dilated(a, k, o)); };
    auto [gx, gw] = grad(loss, argnums<0, 1>)(x, w);
    return std::vector<Array>{conv_general_dilated(x, w, o), gx, gw};
  });
  set_conv_backend(saved);
}

}  // namespace test_parallel
