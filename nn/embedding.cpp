// Embed, as flax/linen/linear.py (jnp.take with NaN for out-of-range indices).
#include <linum/nn/embedding.hpp>

#include <cmath>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/nn/dtypes.hpp>

namespace linum::nn {

initializers::Initializer default_embed_init() {
  return initializers::variance_scaling(1.0, "fan_in", "normal", -2, 0);
}

void Embed::setup() {
  if (num_embeddings <= 0 || features <= 0) {
    throw ValueError("Embed: num_embeddings and features must be positive, got " +
                     std::to_string(num_embeddings) + " and " + std::to_string(features));
  }
  embedding = param("embedding", embedding_init, Shape{num_embeddings, features}, param_dtype);
}

Array Embed::call(const Array& inputs) {
  if (!is_integer(inputs.dtype())) {
    throw ValueError("Embed: input type must be an integer or unsigned integer, got " +
                     std::string(dtype_name(inputs.dtype())));
  }
  // Flax's promote_dtype(embedding, dtype=self.dtype, inexact=False): the table as dtype.
  const Array table =
      detail::cast(embedding, detail::canonicalize_dtype("Embed", dtype, {embedding}, false));
  if (num_embeddings == 1) {
    // jnp.take would read row 0 for index -1 too; Flax gives NaN for every index but 0.
    Shape out = inputs.shape();
    out.push_back(features);
    Array hit = broadcast_to(expand_dims(equal(inputs, zeros_like(inputs)), -1), out);
    return where(hit, broadcast_to(table, out), full(out, std::nan(""), table.dtype()));
  }
  return take(table, inputs, 0);
}

Array Embed::attend(const Array& query) {
  return method("attend", [&] {
    if (query.ndim() < 1 || query.shape(-1) != features) {
      throw ValueError("Embed.attend: expected a query whose last axis has " +
                       std::to_string(features) + " features, got shape " +
                       linum::detail::aval_str(query));
    }
    const DType d = detail::canonicalize_dtype("Embed.attend", dtype, {query, embedding});
    return matmul(detail::cast(query, d), transpose(detail::cast(embedding, d)));
  });
}

}  // namespace linum::nn
