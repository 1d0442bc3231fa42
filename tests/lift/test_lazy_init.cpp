// lift::lazy_init (flax/core/scope.py): init on ShapeDtype inputs computes the variables, which do
// not depend on the inputs, and nothing that does; a variable that depends on one is LazyInitError.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/initializers.hpp>

#include "lift_testing.hpp"
#include "support/buffer_counter.hpp"

namespace test_lazy_init {

using namespace linum;
using namespace linum::lift::testing;
namespace init = linum::nn::initializers;
using lift::Scope;

using linum::testing::buffer_count;
using linum::testing::largest_buffer;

TEST_SUITE("lift.lazy_init") {
  // The function of core_scope_test's lazy_init case: a square kernel from the input's last
  // dimension, then the product with the input.
  Array square(Scope & scope, const Array& x) {
    Array k = scope.param("kernel", init::lecun_normal(), Shape{x.shape(-1), x.shape(-1)});
    return matmul(x, k);
  }

  TEST_CASE("the allocation hook sees Array buffers") {
    largest_buffer = 0;
    Array a = zeros({64, 64});
    CHECK(largest_buffer.load() >= 64 * 64 * sizeof(float));
  }

  TEST_CASE("a (2^30, 128) ShapeDtype input makes a (128, 128) kernel and allocates no input") {
    const ShapeDtype x{{1024LL * 1024 * 1024, 128}, float32};
    largest_buffer = 0;
    Tree vars = lift::lazy_init(square)(random::key(0), x);
    const std::size_t largest = largest_buffer.load();
    Array k = vars["params"]["kernel"].leaf();
    CHECK(k.shape() == Shape{128, 128});
    CHECK(k.dtype() == float32);
    // Nothing near the 512 GiB input (or the (2^30, 128) product) was requested.
    CHECK(largest < std::size_t{1} << 20);
    // The kernel is concrete and equals the one init draws for a real input of that width.
    auto [y, eager] = lift::init(square)(random::key(0), ones({2, 128}));
    CHECK(close(k, eager["params"]["kernel"].leaf(), 0));
  }

  TEST_CASE("lazy_init: a dense scope function's variables equal init's; known inputs are used") {
    // state/mean is computed from the concrete Array argument (a known value, as in Flax).
    auto f = [](Scope& scope, const Array& x, const Array& stats) {
      if (scope.is_mutable_collection("state"))
        scope.variable("state", "mean", [&] { return mean(stats); });
      Scope d = scope.push("dense");
      return dense(d, x, 3);
    };
    lift::Rngs rngs{{"params", random::key(1)}};
    Array stats = f32({1, 2, 3, 6}, {4});
    Tree lazy = lift::lazy_init(f)(rngs, ShapeDtype{{5, 4}, float32}, stats);
    auto [y, eager] = lift::init(f)(rngs, ones({5, 4}), stats);
    CHECK(close(lazy["params"]["dense"]["kernel"].leaf(), eager["params"]["dense"]["kernel"].leaf(),
                0));
    CHECK(close(lazy["params"]["dense"]["bias"].leaf(), zeros({3}), 0));
    CHECK(lazy["state"]["mean"].leaf().item<float>() == 3.0f);
    // The mutable filter narrows what comes back, as init's does.
    Tree only_params = lift::lazy_init(f, "params")(rngs, ShapeDtype{{5, 4}, float32}, stats);
    CHECK_FALSE(only_params.contains("state"));
    CHECK(only_params["params"]["dense"]["kernel"].leaf().shape() == Shape{4, 3});
  }

  TEST_CASE("lazy_init: a variable that depends on an abstract input is LazyInitError") {
    auto f = [](Scope& scope, const Array& x) {
      Array k = scope.param("kernel", [&](const Array&) { return x; });
      return x * k;
    };
    const std::string msg = error_of<lift::LazyInitError>([&] {
      lift::lazy_init(f)(random::key(0), ShapeDtype{{8, 4}, float32});
    });
    CHECK(msg.find("Lazy init encountered a value that could with the given inputs (shape: "
                   "ShapedArray(float32[8,4])).") == 0);
  }

}  // TEST_SUITE

}  // namespace test_lazy_init
