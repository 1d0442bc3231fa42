// One process, no mpirun: collectives over several axis names at once (JAX's tuple axis_name),
// the routing of a name no vmap owns to an AxisProvider (distributed::pmap's hook), and the
// errors of linum::distributed used before initialize() (or in a build without MPI).
#include <memory>

#include <linum/distributed/distributed.hpp>
#include <linum/linum.hpp>

#include "support/testing.hpp"

namespace test_axis_names {

using namespace linum;
using linum::testing::check_error;
using linum::testing::values;

namespace {

VmapOptions named(const char* n) {
  VmapOptions o;
  o.axis_name = n;
  return o;
}

// A stand-in for the process axis: `size` members that all hold the caller's value.
struct MirrorAxis final : detail::AxisProvider {
  std::int64_t size;
  explicit MirrorAxis(std::int64_t n) : size(n) {}
  std::int64_t axis_size() const override { return size; }
  Array psum(const Array& x) const override { return x * static_cast<double>(size); }
  Array pmax(const Array& x) const override { return x; }
  Array pmin(const Array& x) const override { return x; }
  Array all_gather(const Array& x, int axis) const override {
    Shape s = x.shape();
    s.insert(s.begin() + axis, size);
    return broadcast_to(expand_dims(x, axis), s);
  }
  Array axis_index() const override { return full(Shape{}, 2.0, int32); }
};

}  // namespace

TEST_CASE("psum/pmean/pmax/pmin over two vmap axes at once reduce over both") {
  // x[i, j] = 10 i + j for i < 3, j < 4.
  Array x = reshape(arange(12.0f), {3, 4}) + reshape(arange(3.0f), {3, 1}) * 6.0;
  auto both = [&](auto op) {
    return vmap(vmap([&](const Array& v) { return op(v); }, named("j")), named("i"))(x);
  };
  Array s = both([](const Array& v) { return psum(v, {"i", "j"}); });
  Array m = both([](const Array& v) { return pmean(v, {"j", "i"}); });
  Array hi = both([](const Array& v) { return pmax(v, {"i", "j"}); });
  Array lo = both([](const Array& v) { return pmin(v, {"i", "j"}); });
  const double total = values(sum(x))[0];
  CHECK(s.shape() == Shape{3, 4});
  for (double v : values(s)) CHECK(v == total);
  for (double v : values(m)) CHECK(v == doctest::Approx(total / 12));
  for (double v : values(hi)) CHECK(v == values(max(x))[0]);
  for (double v : values(lo)) CHECK(v == values(min(x))[0]);
  // One name of the list is the single-name collective.
  Array si = both([](const Array& v) { return psum(v, {"i"}); });
  CHECK(values(si) == values(broadcast_to(sum(x, 0, true), {3, 4})));
  // Pytrees take the list too; an empty list is an error.
  auto [a, b] = vmap([](const Array& v) { return psum(std::make_pair(v, v * 2.0), {"i"}); },
                     named("i"))(arange(3.0f));
  CHECK(values(a) == std::vector<double>{3, 3, 3});
  CHECK(values(b) == std::vector<double>{6, 6, 6});
  check_error<ValueError>(
      [&] {
        vmap([](const Array& v) { return psum(v, std::vector<std::string>{}); }, named("i"))(x);
      },
      {"psum", "at least one axis name"});
}

TEST_CASE("grad of psum over two vmap axes is psum of the cotangent over both") {
  Array x = arange(6.0f).reshape({2, 3});
  // f = sum_ij S * x_ij = S^2 with S the total: df/dx = 2 S, half of it through psum's transpose.
  Array g = grad([](const Array& a) {
    return sum(vmap(vmap(
                        [](const Array& v) {
                          return psum(v, {"i", "j"}) * v;
                        },
                        named("j")),
                    named("i"))(a));
  })(x);
  for (double v : values(g)) CHECK(v == doctest::Approx(15.0 * 2));
}

TEST_CASE("a name no vmap owns goes to the AxisProvider bound to it; a vmap of that name wins") {
  auto mirror = std::make_shared<const MirrorAxis>(4);
  Array x = array({1.0f, 2.0f});
  {
    detail::AxisProviderScope scope("devices", mirror);
    CHECK(values(psum(x, "devices")) == std::vector<double>{4, 8});
    CHECK(values(pmean(x, "devices")) == std::vector<double>{1, 2});  // pmean uses its size
    CHECK(values(pmax(x, "devices")) == std::vector<double>{1, 2});
    CHECK(all_gather(x, "devices").shape() == Shape{4, 2});
    CHECK(all_gather(x, "devices", 0, true).shape() == Shape{8});
    CHECK(axis_index("devices").item<int>() == 2);
    // Composition with a vmap axis: the vmap's sum, then the provider's.
    Array y = vmap([](const Array& v) { return psum(v, {"batch", "devices"}); }, named("batch"))(x);
    CHECK(values(y) == std::vector<double>{12, 12});
    Array ym = vmap(
        [](const Array& v) {
          return pmean(v, {"batch", "devices"});
        },
        named("batch"))(x);
    CHECK(values(ym) == std::vector<double>{1.5, 1.5});
    // A vmap named "devices" shadows the provider.
    Array z = vmap([](const Array& v) { return psum(v, "devices"); }, named("devices"))(x);
    CHECK(values(z) == std::vector<double>{3, 3});
    // The error for an unbound name lists the provider's name too.
    check_error<ValueError>([&] { psum(x, "nope"); }, {"unbound axis name: nope", "devices"});
  }
  check_error<ValueError>([&] { psum(x, "devices"); }, {"psum: unbound axis name: devices"});
}

TEST_CASE("linum::distributed before initialize(): one process, and pmap says what is missing") {
  CHECK_FALSE(distributed::is_initialized());
  CHECK(distributed::process_index() == 0);
  CHECK(distributed::process_count() == 1);
  auto f = distributed::pmap([](const Array& a) { return psum(a, "devices"); });
#ifdef LINUM_TEST_HAS_MPI
  check_error<distributed::DistributedError>([&] { f(Array(1.0f)); },
                                             {"pmap(axis_name='devices')", "initialize()"});
  check_error<distributed::DistributedError>([] { distributed::finalize(); },
                                             {"finalize", "not initialised"});
#else
  // Built without MPI: every entry point says so and what to install.
  check_error<distributed::DistributedError>([&] { f(Array(1.0f)); },
                                             {"pmap(axis_name='devices')", "built without MPI"});
  check_error<distributed::DistributedError>([] { distributed::finalize(); },
                                             {"finalize", "built without MPI"});
  check_error<distributed::DistributedError>([] { distributed::initialize(); },
                                             {"built without MPI", "libopenmpi-dev"});
  check_error<distributed::DistributedError>([] { distributed::is_replicated(Array(1.0f)); },
                                             {"is_replicated", "built without MPI"});
#endif
}

TEST_CASE("shard_range splits n items into contiguous, nearly equal parts (one process: all)") {
  CHECK(distributed::shard_range(10).begin == 0);
  CHECK(distributed::shard_range(10).end == 10);
  check_error<ValueError>([] { distributed::shard_range(-1); }, {"shard_range", "-1"});
}

}  // namespace test_axis_names
