// optax.contrib.split_real_and_imaginary (contrib_complex_valued.hpp): optax's test (an
// optimizer on complex params behaves as on the pairs of their real and imaginary parts, with
// the gradients conjugated after jax.grad), real leaves passed through, a dynamic Tree, and the
// state's layout.
#include <map>
#include <string>
#include <utility>

#include "helpers.hpp"

namespace test_contrib_complex_valued {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

namespace {

Array loss_complex(const Array& z) { return linum::sum(linum::real(linum::conj(z) * z)); }
Array loss_pair(const std::pair<Array, Array>& xy) {
  return loss_complex(linum::complex(xy.first, xy.second));
}

// optax's check: three steps of inner on the pair (x, y) and of split_real_and_imaginary(inner)
// on z = x + iy agree in loss, gradient and params.
template <class Inner>
void check_split_matches_pair(const Inner& inner) {
  Array x = linum::array({{0.1f, 0.2f, 0.3f}, {-0.1f, -0.2f, -0.3f}});
  Array y = linum::array({{0.5f, -0.5f, 0.0f}, {0.1f, 0.3f, -0.2f}});
  Array z = linum::complex(x, y);
  CHECK(z.dtype() == linum::complex64);
  auto tx = optim::split_real_and_imaginary(inner);
  std::pair<Array, Array> xy{x, y};
  auto s_pair = inner.init(xy);
  auto s_z = tx.init(z);
  for (int step = 0; step < 3; ++step) {
    INFO("step " << step);
    auto [loss, g] = linum::value_and_grad(loss_pair)(xy);
    auto [u, s2] = inner.update(g, s_pair, xy);
    s_pair = s2;
    xy = optim::apply_updates(xy, u);
    auto [loss_z, gz] = linum::value_and_grad(loss_complex)(z);
    gz = linum::conj(gz);  // JAX's gradient in a complex input is conjugated
    auto [uz, sz2] = tx.update(gz, s_z, z);
    s_z = sz2;
    z = optim::apply_updates(z, uz);
    check_close(loss_z, values(loss), 1e-6, 0.0);
    check_close(linum::real(gz), values(g.first), 1e-6, 1e-7);
    check_close(linum::imag(gz), values(g.second), 1e-6, 1e-7);
    check_close(linum::real(z), values(xy.first), 1e-6, 1e-7);
    check_close(linum::imag(z), values(xy.second), 1e-6, 1e-7);
    CHECK(z.dtype() == linum::complex64);
  }
}

}  // namespace

TEST_CASE("split_real_and_imaginary: complex params behave as pairs of real ones (optax's test)") {
  SUBCASE("scale_by_adam") { check_split_matches_pair(optim::scale_by_adam()); }
  SUBCASE("scale_by_param_block_norm") {
    check_split_matches_pair(optim::scale_by_param_block_norm());
  }
}

TEST_CASE("split_real_and_imaginary: real leaves pass through; a dynamic Tree; the state") {
  using P = std::map<std::string, Array>;
  P p{{"c", linum::complex(f32({1.0, -2.0}), f32({0.5, 0.0}))}, {"r", f32({3.0})}};
  auto tx = optim::split_real_and_imaginary(optim::scale_by_adam());
  auto s = tx.init(p);
  // The inner state sees the complex leaf as the pair of its parts.
  CHECK(linum::pytree::repr(s.inner_state.mu) ==
        "{'c': (Array([0., 0.], dtype=float32), Array([0., 0.], dtype=float32)), 'r': "
        "Array([0.], dtype=float32)}");
  auto [u, s2] = tx.update(p, s, p);
  // Adam's first step is g / (|g| + eps) (up to float32's bias corrections): for each part.
  check_close(linum::real(u.at("c")), {1.0, -1.0}, 1e-4, 0.0);
  check_close(linum::imag(u.at("c")), {1.0, 0.0}, 1e-4, 0.0);
  check_close(u.at("r"), {1.0}, 1e-4, 0.0);
  CHECK(s2.inner_state.count.item<int>() == 1);
  // The same on a dynamic Tree.
  linum::Tree t{{"c", p.at("c")}, {"r", p.at("r")}};
  auto [ut, st] = tx.update(t, tx.init(t), t);
  check_close(linum::imag(ut["c"].leaf()), {1.0, 0.0}, 1e-4, 0.0);
  check_close(ut["r"].leaf(), {1.0}, 1e-4, 0.0);
  CHECK(linum::pytree::repr(tx.init(Array(f32({1.0})))) ==
        "SplitRealAndImaginaryState(inner_state=ScaleByAdamState(count=Array(0, dtype=int32), "
        "mu=Array([0.], dtype=float32), nu=Array([0.], dtype=float32)))");
}

}  // namespace test_contrib_complex_valued
