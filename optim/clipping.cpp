// Leaf math of clipping.hpp: unitwise norms, unitwise clipping and per-example clipping.
#include <cmath>
#include <string>

#include <linum/optim/clipping.hpp>

namespace linum::optim {

Array unitwise_norm(const Array& x, const std::optional<Axes>& axis) {
  Array sq = x * x;
  Array norm2;
  if (axis) {
    norm2 = sum(sq, *axis, true);
  } else {
    int squeezed = 0;  // jnp.squeeze(x).ndim: the axes of size other than 1
    for (std::int64_t d : x.shape()) squeezed += d != 1;
    if (squeezed <= 1)
      norm2 = sum(sq, Axes{}, true);
    else if (x.ndim() == 2 || x.ndim() == 3)
      norm2 = sum(sq, Axes(0), true);
    else if (x.ndim() == 4)
      norm2 = sum(sq, Axes({0, 1, 2}), true);
    else if (x.ndim() == 5)
      norm2 = sum(sq, Axes({0, 1, 2, 3}), true);
    else
      throw ValueError("unitwise_norm: Expected parameter with shape in {1, 2, 3, 4, 5}, got " +
                       shape_str(x.shape()) +
                       ". Use axis parameter to specify reduction axes for other shapes.");
  }
  return broadcast_to(sqrt(norm2), x.shape());
}

Array unitwise_clip(const Array& g_norm, const Array& max_norm, const Array& grad, double div_eps) {
  if (g_norm.shape() != max_norm.shape() || g_norm.shape() != grad.shape())
    throw ValueError("unitwise_clip: Shape mismatch: got " + shape_str(g_norm.shape()) + ", " +
                     shape_str(max_norm.shape()) + " and " + shape_str(grad.shape()) + ".");
  Array clipped = grad * (max_norm / maximum(g_norm, div_eps));
  return where(g_norm < max_norm, grad, clipped);
}

namespace detail {

void check_batch_dims(const Arrays& grads, const char* fn) {
  bool ok = !grads.empty() && grads[0].ndim() >= 1;
  for (const Array& g : grads) ok = ok && g.ndim() >= 1 && g.shape()[0] == grads[0].shape()[0];
  if (!ok)
    throw ValueError(std::string("Unlike other transforms, `") + fn +
                     "` expects `grads` to have a batch dimension in the 0th axis.");
}

std::pair<Arrays, Array> per_example_clip(const Arrays& grads, double l2_norm_clip) {
  Array norm2;
  for (const Array& g : grads) {
    std::vector<int> axes;
    for (int d = 1; d < g.ndim(); ++d) axes.push_back(d);
    Array s = sum(g * g, Axes(axes));
    norm2 = norm2.valid() ? norm2 + s : s;
  }
  Array mult = minimum(l2_norm_clip / sqrt(norm2), 1.0);
  mult = where(isnan(mult), ones_like(mult), mult);  // jnp.nan_to_num(..., nan=1.0)
  Array clipped = sum(astype(mult < 1.0, int32));
  Arrays sums;
  for (const Array& g : grads) {
    Shape s(g.ndim(), 1);
    s[0] = g.shape()[0];
    sums.push_back(sum(mult.reshape(s) * g, Axes(0)));
  }
  return {std::move(sums), clipped};
}

}  // namespace detail
}  // namespace linum::optim
