// optax's CTC loss: the forward (alpha) recursion over time in log space, one linum op graph per
// step as optax's lax.scan body, so the loss differentiates, vmaps and jits like any other code.
#include <string>

#include <linum/autodiff/ops.hpp>
#include <linum/optim/losses.hpp>
#include <linum/optim/losses_detail.hpp>

namespace linum::optim {

namespace {

// concatenate([phi[:, :1], logaddexp(phi[:, 1:], added)]).
Array update_phi_score(const Array& phi, const Array& added) {
  const std::int64_t b = phi.shape()[0], n1 = phi.shape()[1];
  Array head = lax_slice(phi, {0, 0}, {b, 1});
  Array tail = lax_slice(phi, {0, 1}, {b, n1});
  return concatenate({head, logaddexp(tail, added)}, -1);
}

void check_rank(const Array& x, int rank, const char* what) {
  if (x.ndim() != rank)
    throw ValueError(std::string("ctc_loss: Expected ") + what + " to have rank " +
                     std::to_string(rank) + ", got " + std::to_string(x.ndim()) + " instead");
}

}  // namespace

std::tuple<Array, Array, Array> ctc_loss_with_forward_probs(const Array& logits,
                                                            const Array& logit_paddings,
                                                            const Array& labels,
                                                            const Array& label_paddings,
                                                            int blank_id, double log_epsilon) {
  loss_detail::check_floating(logits, "logits", "ctc_loss");
  check_rank(logits, 3, "logits");
  check_rank(labels, 2, "labels");
  loss_detail::check_same_shape(labels, label_paddings, "ctc_loss");
  const std::int64_t B = logits.shape()[0], T = logits.shape()[1], K = logits.shape()[2];
  if (logit_paddings.shape() != Shape{B, T})
    throw ValueError("ctc_loss: Shape mismatch: got logit_paddings of shape " +
                     shape_str(logit_paddings.shape()) + " for logits of shape " +
                     shape_str(logits.shape()) + ".");
  if (labels.shape()[0] != B)
    throw ValueError("ctc_loss: Expected `labels` to have batch size " + std::to_string(B) +
                     ", got " + std::to_string(labels.shape()[0]) + ".");
  if (blank_id < 0 || blank_id >= K)
    throw ValueError("ctc_loss: blank_id " + std::to_string(blank_id) + " is out of range for " +
                     std::to_string(K) + " classes");
  const std::int64_t N = labels.shape()[1];
  const DType dt = logits.dtype();

  Array logprobs = log_softmax(logits, -1);
  Array labellens = full({}, static_cast<double>(N), int32) - astype(sum(label_paddings, 1), int32);
  // repeat[b, n]: labels[b, n] == labels[b, n + 1] (0 for the last).
  Array repeat = zeros({B, N}, float32);
  if (N > 1) {
    Array same = astype(
        equal(lax_slice(labels, {0, 0}, {B, N - 1}), lax_slice(labels, {0, 1}, {B, N})), float32);
    repeat = concatenate({same, zeros({B, 1}, float32)}, 1);
  }
  Array logprobs_phi = transpose(lax_slice(logprobs, {0, 0, blank_id}, {B, T, blank_id + 1}),
                                 {1, 0, 2});      // [T, B, 1]
  Array one_hot_labels = one_hot(labels, K, dt);  // [B, N, K]
  Array logprobs_emit =
      transpose(einsum("btk,bnk->btn", logprobs, one_hot_labels), {1, 0, 2});  // [T, B, N]
  Array pads = transpose(logit_paddings, {1, 0});                              // [T, B]

  Array phi =
      concatenate({zeros({B, 1}, float32), full({B, N}, log_epsilon, float32)}, 1);  // [B, N + 1]
  Array emit = full({B, N}, log_epsilon, float32);
  Arrays phis, emits;
  for (std::int64_t t = 0; t < T; ++t) {
    Array lp_emit = reshape(lax_slice(logprobs_emit, {t, 0, 0}, {t + 1, B, N}), {B, N});
    Array lp_phi = reshape(lax_slice(logprobs_phi, {t, 0, 0}, {t + 1, B, 1}), {B, 1});
    Array pad = reshape(lax_slice(pads, {t, 0}, {t + 1, B}), {B, 1});
    const Array prev_phi_orig = phi;
    Array prev_phi = update_phi_score(phi, emit + log_epsilon * repeat);
    Array next_emit = logaddexp(lax_slice(prev_phi, {0, 0}, {B, N}) + lp_emit, emit + lp_emit);
    Array next_phi = prev_phi + lp_phi;
    next_phi = update_phi_score(next_phi, emit + lp_phi + log_epsilon * (1.0 - repeat));
    next_emit = pad * emit + (1.0 - pad) * next_emit;
    next_phi = pad * prev_phi_orig + (1.0 - pad) * next_phi;
    phi = next_phi, emit = next_emit;
    phis.push_back(phi);
    emits.push_back(emit);
  }
  Array phi_last = update_phi_score(phi, emit);
  if (!phis.empty()) phis.back() = phi_last;
  Array per_seq_loss = -einsum("bn,bn->b", phi_last, one_hot(labellens, N + 1, phi_last.dtype()));
  Array logalpha_phi = phis.empty() ? zeros({0, B, N + 1}, phi.dtype()) : stack(phis, 0);
  Array logalpha_emit = emits.empty() ? zeros({0, B, N}, emit.dtype()) : stack(emits, 0);
  return {per_seq_loss, logalpha_phi, logalpha_emit};
}

Array ctc_loss(const Array& logits, const Array& logit_paddings, const Array& labels,
               const Array& label_paddings, int blank_id, double log_epsilon) {
  return std::get<0>(ctc_loss_with_forward_probs(logits, logit_paddings, labels, label_paddings,
                                                 blank_id, log_epsilon));
}

}  // namespace linum::optim
