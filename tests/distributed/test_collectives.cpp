// Under mpirun (2 and 4 processes): the collectives over the process axis against closed forms of
// every process's known contribution, their composition with vmap axes against one process
// computing the same thing on the whole data, their gradients as JAX defines them (psum's
// transpose is psum), and jit replaying the MPI calls.
#include <string>
#include <tuple>

#include <linum/autodiff/random/random.hpp>
#include <linum/distributed/distributed.hpp>
#include <linum/linum.hpp>

#include "../../distributed/runtime.hpp"
#include "dist_testing.hpp"

namespace test_collectives {

using namespace linum;
namespace dist = linum::distributed;
using linum::testing::check_error;
using linum::testing::close;
using linum::testing::values;

namespace {

int rank() { return dist::process_index(); }
int nproc() { return dist::process_count(); }

VmapOptions named(const char* n) {
  VmapOptions o;
  o.axis_name = n;
  return o;
}

// Process q's contribution: [q + 1, 2 (q + 1), -q].
Array contribution(int q) {
  const float a = static_cast<float>(q);
  return array({a + 1, 2 * (a + 1), -a});
}

}  // namespace

TEST_CASE("initialize: one process of the job per rank, and a second initialize is an error") {
  CHECK(dist::is_initialized());
  CHECK(nproc() >= 2);
  CHECK(rank() >= 0);
  CHECK(rank() < nproc());
  check_error<dist::DistributedError>([] { dist::initialize(); }, {"already initialised"});
}

TEST_CASE("psum, pmean, pmax, pmin over the process axis equal the closed forms") {
  auto f = dist::pmap([](const Array& x) {
    return std::make_tuple(psum(x, "devices"), pmean(x, "devices"), pmax(x, "devices"),
                           pmin(x, "devices"));
  });
  auto [s, m, hi, lo] = f(contribution(rank()));
  const double n = nproc(), tri = n * (n + 1) / 2;  // sum of q + 1 over q < n
  CHECK(values(s) == std::vector<double>{tri, 2 * tri, -(tri - n)});
  CHECK(values(m) == std::vector<double>{tri / n, 2 * tri / n, -(tri - n) / n});
  CHECK(values(hi) == std::vector<double>{n, 2 * n, 0});
  CHECK(values(lo) == std::vector<double>{1, 2, -(n - 1)});
  CHECK(s.dtype() == float32);
  // Integer and bool dtypes reduce exactly too.
  auto g = dist::pmap([](const Array& x) { return psum(x, "devices"); });
  CHECK(g(array({rank(), 1})).dtype() == int32);
  CHECK(values(g(array({rank(), 1}))) == std::vector<double>{tri - n, n});
  auto any = dist::pmap([](const Array& x) { return pmax(x, "devices"); });
  auto all = dist::pmap([](const Array& x) { return pmin(x, "devices"); });
  CHECK(any(Array(rank() == 1)).item<bool>());
  CHECK_FALSE(all(Array(rank() == 1)).item<bool>());
  check_error<TypeError>([&] { g(Array(true)); }, {"psum over 'devices'", "bool"});
}

TEST_CASE("all_gather and axis_index over the process axis") {
  auto f = dist::pmap([](const Array& x) {
    return std::make_tuple(all_gather(x, "devices"), all_gather(x, "devices", 1),
                           all_gather(x, "devices", 0, true), axis_index("devices"));
  });
  auto [g0, g1, tiled, idx] = f(contribution(rank()));
  CHECK(g0.shape() == Shape{nproc(), 3});
  CHECK(g1.shape() == Shape{3, nproc()});
  CHECK(tiled.shape() == Shape{3 * nproc()});
  CHECK(idx.item<int>() == rank());
  CHECK(idx.dtype() == int32);
  for (int q = 0; q < nproc(); ++q) {
    CHECK(values(take(g0, Array(q), 0)) == values(contribution(q)));
    CHECK(values(take(g1, Array(q), 1)) == values(contribution(q)));
    CHECK(values(slice(tiled, {{3 * q, 3 * q + 3}})) == values(contribution(q)));
  }
}

TEST_CASE("collectives over (devices, batch) equal one process's over the whole batch") {
  // Every process makes the same global data and takes its rows; one process's vmap over all
  // rows with psum over "batch" is the reference.
  const std::int64_t rows_per = 3, global = rows_per * nproc();
  Array data = random::normal(random::key(7), {global, 4});
  Array local = slice(data, {{rank() * rows_per, (rank() + 1) * rows_per}});
  auto body = [](const Array& x, const std::vector<std::string>& axes) {
    Array centred = x - pmean(x, axes);
    return std::make_tuple(psum(x * x, axes), centred / pmax(abs(centred), axes), pmin(x, axes));
  };
  auto dp = dist::pmap(vmap(
      [&](const Array& x) {
        return body(x, {"devices", "batch"});
      },
      named("batch")));
  auto one = vmap([&](const Array& x) { return body(x, {"batch"}); }, named("batch"));
  auto [s, c, lo] = dp(local);
  auto [rs, rc, rlo] = one(data);
  auto mine = [&](const Array& a) {
    return slice(a, {{rank() * rows_per, (rank() + 1) * rows_per}});
  };
  CHECK(s.shape() == Shape{rows_per, 4});
  CHECK(close(s, mine(rs)));
  CHECK(close(c, mine(rc)));
  CHECK(values(lo) == values(mine(rlo)));  // min is exact whatever the order
  // The order of the names does not matter.
  auto dp2 = dist::pmap(vmap(
      [](const Array& x) {
        return psum(x, {"batch", "devices"});
      },
      named("batch")));
  CHECK(close(dp2(local), broadcast_to(sum(data, 0, true), {rows_per, 4})));
}

TEST_CASE("grad across processes: psum's transpose is psum, pmax routes to the max holder") {
  const double n = nproc(), tri = n * (n + 1) / 2;
  // f_r(x) = sum(psum(x) * c_r) with c_r = r + 1: on every process df/dx = psum(c) = tri.
  auto g = dist::pmap([](const Array& x) {
    const double c = rank() + 1;
    return grad([&](const Array& a) { return sum(psum(a, "devices") * c); })(x);
  });
  for (double v : values(g(contribution(rank())))) CHECK(v == tri);
  // pmean: the transpose is pmean, so df/dx = mean of c = tri / n.
  auto gm = dist::pmap([](const Array& x) {
    const double c = rank() + 1;
    return grad([&](const Array& a) { return sum(pmean(a, "devices") * c); })(x);
  });
  for (double v : values(gm(contribution(rank())))) CHECK(v == doctest::Approx(tri / n));
  // pmax of [q + 1, 2(q + 1), -q]: the last process holds the max of the first two entries,
  // process 0 the third; the holder gets psum(c).
  auto gx = dist::pmap([](const Array& x) {
    const double c = rank() + 1;
    return grad([&](const Array& a) { return sum(pmax(a, "devices") * c); })(x);
  });
  const double last = rank() == nproc() - 1 ? tri : 0, first = rank() == 0 ? tri : 0;
  CHECK(values(gx(contribution(rank()))) == std::vector<double>{last, last, first});
  // all_gather: the transpose sums every process's cotangent of this process's row.
  auto ga = dist::pmap([](const Array& x) {
    Array w = broadcast_to(reshape(arange(1.0f, nproc() + 1.0f), {nproc(), 1}), {nproc(), 3});
    return grad([&](const Array& a) { return sum(all_gather(a, "devices") * w); })(x);
  });
  for (double v : values(ga(contribution(rank())))) CHECK(v == n * (rank() + 1));
  // jvp: the tangent is summed like the primal.
  auto jv = dist::pmap([](const Array& x) {
    return jvp([](const Array& a) { return psum(a * a, "devices"); }, std::make_tuple(x),
               std::make_tuple(ones_like(x)));
  });
  auto [out, tan] = jv(contribution(rank()));
  Array expect = zeros({3});
  for (int q = 0; q < nproc(); ++q) expect = expect + 2.0 * contribution(q);
  CHECK(values(tan) == values(expect));
}

TEST_CASE("vmap(grad) per example inside pmap, and jit(pmap) replays the MPI calls") {
  Array x = contribution(rank()).reshape({3, 1}) * array({1.0f, -1.0f});  // [3, 2]
  // Per-example gradients of psum(v)^2 / 2: psum's transpose sums the cotangent psum(v).
  auto per_example = dist::pmap(vmap(grad([](const Array& v) {
    Array s = psum(v, "devices");
    return 0.5 * sum(s * s);
  })));
  Array g = per_example(x);
  Array total = zeros({3, 2});
  for (int q = 0; q < nproc(); ++q)
    total = total + contribution(q).reshape({3, 1}) * array({1.0f, -1.0f});
  CHECK(values(g) == values(total * static_cast<double>(nproc())));

  auto step = jit(dist::pmap([](const Array& a) { return pmean(a * 2.0, "devices") + a; }));
  Array first = step(contribution(rank()));
  Array second = step(contribution(rank()));  // replayed: MPI runs again, same numbers
  CHECK(step.trace_count() == 1);
  Array eager = dist::pmap([](const Array& a) { return pmean(a * 2.0, "devices") + a; })(
      contribution(rank()));
  CHECK(values(first) == values(eager));
  CHECK(values(second) == values(eager));
  // eval_shape of all_gather inserts the process axis without communicating.
  auto shape = eval_shape(dist::pmap([](const Array& a) { return all_gather(a, "devices", 1); }),
                          ShapeDtype{{3, 2}, float32});
  CHECK(shape.shape == Shape{3, nproc(), 2});
}

TEST_CASE("the collective timeout is an option: read, changed, negative values rejected") {
  // A timeout that fires leaves the job out of step: mpi_fault's runs test it on their own.
  CHECK(dist::collective_timeout() == 30);
  dist::set_collective_timeout(20);
  CHECK(dist::collective_timeout() == 20);
  check_error<dist::DistributedError>([] { dist::set_collective_timeout(-1); }, {">= 0"});
  dist::set_collective_timeout(30);
}

TEST_CASE("an MPI error comes back as DistributedError naming the call, not as an abort") {
  // An invalid root, passed by every process: MPI_ERRORS_RETURN hands each the error code.
  float v = 1;
  check_error<dist::DistributedError>(
      [&] { dist::detail::broadcast(&v, sizeof v, nproc() + 3, "broadcast (test)"); },
      {"broadcast (test) failed on process", "MPI_ERR_ROOT"});
  // The job goes on.
  auto f = dist::pmap([](const Array& x) { return psum(x, "devices"); });
  CHECK(f(Array(1.0f)).item<float>() == static_cast<float>(nproc()));
}

}  // namespace test_collectives
