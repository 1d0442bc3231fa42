// optax.losses beyond the fused softmax cross-entropies: regression, classification, KL, CTC,
// self-supervised losses, smooth_labels and make_fenchel_young_loss. Known answers are optax's
// own test and docstring values (optax/losses/*_test.py, the docstrings), closed forms worked
// out in the comments, or NumPy values whose computation each comment states.
#include <cmath>
#include <limits>
#include <numbers>

#include "autodiff/check_grads.hpp"
#include "helpers.hpp"

namespace test_losses_optax {

using namespace linum;
using optim_test::check_close;
using optim_test::f32;
using optim_test::f64;
using optim_test::values;
using testing::check_error;
using testing::check_grads;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
Array mat(const std::vector<double>& v, const Shape& s) { return array(v, s); }
// A bool mask from 0 / 1 entries.
Array mask(const std::vector<double>& v, const Shape& s) { return astype(array(v, s), bool_); }
}  // namespace

TEST_CASE("regression losses: squared_error, l2_loss, huber_loss, log_cosh (closed forms)") {
  Array p = f64({-1.5, 0.5, 2.0, 0.3, 4.0});
  Array t = f64({0.5, 1.0, 2.0, 0.0, 2.5});  // errors -2, -0.5, 0, 0.3, 1.5
  check_close(optim::squared_error(p, t), {4.0, 0.25, 0.0, 0.09, 2.25});
  check_close(optim::squared_error(p), {2.25, 0.25, 4.0, 0.09, 16.0});
  check_close(optim::l2_loss(p, t), {2.0, 0.125, 0.0, 0.045, 1.125});
  // huber, delta 1: 0.5 e**2 for |e| <= 1, |e| - 0.5 beyond; delta 2: all quadratic but -2.
  check_close(optim::huber_loss(p, t), {1.5, 0.125, 0.0, 0.045, 1.0});
  check_close(optim::huber_loss(p, t, 2.0), {2.0, 0.125, 0.0, 0.045, 1.125});
  std::vector<double> lc;
  for (double e : {-2.0, -0.5, 0.0, 0.3, 1.5}) lc.push_back(std::log(std::cosh(e)));
  check_close(optim::log_cosh(p, t), lc, 1e-14, 1e-15);
  // log_cosh stays finite where cosh overflows: log(cosh(1000)) = 1000 - log 2.
  check_close(optim::log_cosh(f64({1000.0, -1000.0})),
              {1000.0 - std::numbers::ln2, 1000.0 - std::numbers::ln2});
  // float32 in, float32 out.
  CHECK(optim::l2_loss(f32({1.0, 2.0})).dtype() == float32);
  check_error<TypeError>(
      [] {
        optim::squared_error(array({1, 2}));
      },
      {"squared_error", "floating", "int32"});
  check_error<ValueError>([&] { optim::l2_loss(p, f64({1.0, 2.0})); }, {"l2_loss", "(5,)", "(2,)"});
  check_error<TypeError>([] { optim::huber_loss(array({1, 2})); }, {"huber_loss"});
}

TEST_CASE("cosine_similarity and cosine_distance: axis, where, epsilon (closed forms)") {
  // a = (1, 2, 2), b = (2, 0, 1): <a, b> = 4, |a| = 3, |b| = sqrt 5.
  Array a = mat({1.0, 2.0, 2.0, 0.0, 3.0, 4.0}, {2, 3});
  Array b = mat({2.0, 0.0, 1.0, 0.0, 6.0, 8.0}, {2, 3});
  const double s0 = 4.0 / (3.0 * std::sqrt(5.0));
  check_close(optim::cosine_similarity(a, b), {s0, 1.0}, 1e-14);
  check_close(optim::cosine_distance(a, b), {1.0 - s0, 0.0}, 1e-14, 1e-15);
  // where drops the last entry: (1, 2) . (2, 0) / (sqrt 5 * 2) = 1 / sqrt 5; (0, 3) . (0, 6) = 1.
  Array w = mask({1, 1, 0, 1, 1, 0}, {2, 3});
  check_close(optim::cosine_similarity(a, b, 0.0, -1, w), {1.0 / std::sqrt(5.0), 1.0}, 1e-14);
  // Over axis 0: columns (1, 0) . (2, 0) = 1, (2, 3) . (0, 6) / (sqrt 13 * 6), (2, 4) . (1, 8).
  check_close(optim::cosine_similarity(a, b, 0.0, 0),
              {1.0, 18.0 / (std::sqrt(13.0) * 6.0), 34.0 / (std::sqrt(20.0) * std::sqrt(65.0))},
              1e-14);
  // A zero vector: 0 / sqrt(epsilon) = 0 rather than NaN.
  check_close(optim::cosine_similarity(f64({0.0, 0.0}), f64({1.0, 2.0}), 1e-12), {0.0});
  check_error<TypeError>(
      [] {
        optim::cosine_similarity(array({1, 2}), array({1, 2}));
      },
      {"cosine_similarity", "predictions", "int32"});
}

TEST_CASE("softmax cross-entropies with where, safe and poly variants (optax's test values)") {
  Array ys = mat({10.0, 1.0, -2.0, 1.0, 4.0, 0.2}, {2, 3});
  Array ts = mat({0.0, 1.0, 0.0, 1.0, 0.0, 0.0}, {2, 3});
  Array all = ones({2, 3}, bool_);
  // optax SoftmaxCrossEntropyTest: [9.00013, 3.0696733]; an all-true where changes nothing.
  check_close(optim::softmax_cross_entropy(ys, ts, -1, all), {9.00013, 3.0696733}, 0, 1e-5);
  // where drops class 0 of row 0: log_softmax over {1, -2} at 1 is -log(1 + e**-3); row 1's
  // mask is empty, so its loss is 0.
  Array w = mask({0, 1, 1, 0, 0, 0}, {2, 3});
  const double masked = std::log1p(std::exp(-3.0));
  check_close(optim::softmax_cross_entropy(ys, ts, -1, w), {masked, 0.0}, 1e-14);
  check_close(optim::softmax_cross_entropy_with_integer_labels(ys, array({1, 0}), -1, w),
              {masked, 0.0}, 1e-14);
  check_close(optim::softmax_cross_entropy_with_integer_labels(ys, array({1, 0}), -1, all),
              {9.00013, 3.0696733}, 0, 1e-5);

  // optax SafeSoftmaxCrossEntropyTest: -inf logits with 0 labels stay harmless.
  Array sy =
      mat({10.0, 1.0, -2.0, 1.0, 4.0, 0.2, -kInf, 0.0, 0.0, -kInf, 0.0, 0.0, -kInf, 0.0, -kInf},
          {5, 3});
  Array st =
      mat({0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.4, 0.3, 0.3, 0.0, 1.0, 0.0}, {5, 3});
  std::vector<double> safe = values(optim::safe_softmax_cross_entropy(sy, st));
  check_close(std::vector<double>(safe.begin(), safe.begin() + 3), {9.00013, 3.0696733, 0.693147},
              0, 1e-5);
  CHECK(safe[3] == kInf);
  CHECK(safe[4] == 0.0);
  Array g = grad([&](const Array& x) {
    return sum(optim::safe_softmax_cross_entropy(x, lax_slice(st, {4, 0}, {5, 3})));
  })(lax_slice(sy, {4, 0}, {5, 3}));
  for (double v : values(g)) CHECK(std::isfinite(v));

  // optax PolyLossTest (values from the TF reference of poly1_cross_entropy).
  Array pl = f64({0.14, 1.456, 2.356, -0.124, -2.47});
  Array pt = f64({0.1, 0.15, 0.2, 0.25, 0.3});
  check_close(optim::poly_loss_cross_entropy(pl, pt, 2.0), {4.5317}, 0, 1e-4);
  check_close(optim::poly_loss_cross_entropy(pl, pt, -1.0), {2.0827}, 0, 1e-4);
  check_close(optim::poly_loss_cross_entropy(pl, pt, 5.45), {7.3480}, 0, 1e-4);
  Array bl = mat({4.0, 2.0, 1.0, 0.0, 5.0, 1.0}, {2, 3});
  Array bt = mat({1.0, 0.0, 0.0, 0.0, 0.8, 0.2}, {2, 3});
  check_close(optim::poly_loss_cross_entropy(bl, bt, 2.0), {0.4823, 1.2567}, 0, 1e-4);
  check_close(optim::poly_loss_cross_entropy(bl, bt, -0.5), {0.0917, 0.7168}, 0, 1e-4);
  check_error<TypeError>(
      [] {
        optim::poly_loss_cross_entropy(array({1, 2}), f64({1.0, 0.0}));
      },
      {"poly_loss_cross_entropy", "logits"});
}

TEST_CASE("sigmoid_binary_cross_entropy and sigmoid_focal_loss (NumPy values, optax's test)") {
  // NumPy, float64: p = 1 / (1 + exp(-x)), ce = -y log p - (1 - y) log(1 - p),
  // p_t = p y + (1 - p)(1 - y), focal = ce (1 - p_t)**gamma, alpha weight a y + (1 - a)(1 - y).
  Array x = f64({-2.0, -0.3, 0.0, 0.7, 3.0});
  Array y = f64({1.0, 0.0, 0.3, 1.0, 0.0});
  check_close(optim::sigmoid_binary_cross_entropy(x, y),
              {2.1269280110429727, 0.5543552444685272, 0.6931471805599453, 0.403186048885458,
               3.048587351573745},
              1e-13);
  check_close(optim::sigmoid_focal_loss(x, y),
              {1.650078179421409, 0.10039327548859713, 0.17328679513998632, 0.0443905237413077,
               2.7662804410252657},
              1e-12);
  check_close(optim::sigmoid_focal_loss(x, y, 0.25, 1.5),
              {0.4395482925028107, 0.11542151527937242, 0.14703872152028205, 0.01926566855822589,
               2.1257298879734976},
              1e-12);
  // optax SigmoidCrossEntropyTest: mean over preds (-1e9, -1e-9), labels (1, 0) is 5e8.
  CHECK(mean(optim::sigmoid_binary_cross_entropy(f64({-1e9, -1e-9}), f64({1.0, 0.0})))
            .item<double>() == doctest::Approx(5e8).epsilon(1e-6));
  // Integer labels are cast to the logits' dtype.
  check_close(optim::sigmoid_binary_cross_entropy(f64({0.0}), array({1})), {std::numbers::ln2});
  check_error<TypeError>([] { optim::sigmoid_binary_cross_entropy(array({1}), f64({1.0})); },
                         {"sigmoid_binary_cross_entropy", "logits", "int32"});
}

TEST_CASE("hinge, perceptron and sparsemax losses (closed forms, optax's tests)") {
  // max(0, 1 - o t): (1 - 0.5, 1 + 2, 1 + 3); perceptron max(0, -o t): (0, 2, 3).
  Array o = f64({0.5, -2.0, 3.0}), t = f64({1.0, 1.0, -1.0});
  check_close(optim::hinge_loss(o, t), {0.5, 3.0, 4.0});
  check_close(optim::perceptron_loss(o, t), {0.0, 2.0, 3.0});
  check_error<ValueError>([&] { optim::perceptron_loss(o, f64({1.0})); },
                          {"perceptron_loss", "(3,)", "(1,)"});
  // optax PerceptronTest / HingeTest scores: max(s + 1 - onehot) - s[label]: row 0
  // max(11, 3) - 3 = 8, row 1 max(11, -1) - 11 = 0; perceptron max(s) - s[label]: 7, 0.
  Array s = mat({10.0, 3.0, 11.0, -2.0}, {2, 2});
  check_close(optim::multiclass_hinge_loss(s, array({1, 0})), {8.0, 0.0});
  check_close(optim::multiclass_perceptron_loss(s, array({1, 0})), {7.0, 0.0});
  // Binary sparsemax: sparse_plus(label ? -x : x) at -0.5, -2, -3, 0.2: (x + 1)**2 / 4 inside
  // [-1, 1], 0 below.
  check_close(optim::sparsemax_loss(f64({0.5, -2.0, 3.0, 0.2}), f64({1.0, 0.0, 1.0, 0.0})),
              {0.0625, 0.0, 0.0, 0.36});
  // Multiclass sparsemax of z = (0.5, 0.2, -1), label 0: the simplex projection keeps the top
  // two (1 + 2 * 0.2 > 0.7, 1 - 3 < -0.3), tau = (0.7 - 1) / 2 = -0.15, p = (0.65, 0.35, 0);
  // loss = -z_y + 0.5 * sum_{support}(z**2 - tau**2) + 0.5 = -0.5 + 0.1225 + 0.5 = 0.1225,
  // gradient p - onehot(y) = (-0.35, 0.35, 0).
  Array z = mat({0.5, 0.2, -1.0}, {1, 3});
  check_close(optim::multiclass_sparsemax_loss(z, array({0})), {0.1225}, 1e-13);
  check_close(
      grad([](const Array& a) { return sum(optim::multiclass_sparsemax_loss(a, array({0}))); })(z),
      {-0.35, 0.35, 0.0}, 1e-13, 1e-15);
  // optax SparsemaxTest: a dominant score on the label costs nothing.
  Array big = mat({0.0, 1e5, 0.0, 1e5, 0.0, 0.0, 0.0, 0.0, 1e5}, {3, 3});
  check_close(optim::multiclass_sparsemax_loss(big, array({1, 0, 2})), {0.0, 0.0, 0.0}, 0, 1e-4);
  check_error<ValueError>(
      [] {
        optim::multiclass_sparsemax_loss(f64({1.0, 2.0}), array({0}));
      },
      {"multiclass_sparsemax_loss", "(2,)"});
}

TEST_CASE("kl_divergence, generalized and log-target forms (optax's test values)") {
  Array log_ps = mat({-2.9957, -3.5066, -3.9120, -1.2040, -0.6931, -2.3026, -1.6094, -1.6094,
                      -1.6094, -2.3026, -1.8971, -1.8971},
                     {2, 6});
  Array qs = mat({0.2, 0.2, 0.2, 0.1, 0.15, 0.15, 0.05, 0.03, 0.02, 0.3, 0.5, 0.0}, {2, 6});
  check_close(optim::kl_divergence(log_ps, qs), {0.8875577, 0.7592807}, 0, 1e-4);
  check_close(optim::generalized_kl_divergence(log_ps, qs), {0.88757247, 0.859308}, 0, 1e-4);
  check_close(optim::convex_kl_divergence(log_ps, qs),
              values(optim::generalized_kl_divergence(log_ps, qs)));
  Array log_qs =
      concatenate({lax_slice(log_ps, {1, 0}, {2, 6}), lax_slice(log_ps, {0, 0}, {1, 6})}, 0);
  check_close(optim::kl_divergence_with_log_targets(log_ps, log_qs),
              {0.8875625, 0.7187435584901326}, 0, 1e-4);
  // where equals dropping the masked entries (optax's test_mask); axis 0 equals the transpose.
  Array w = mask({1, 0, 1, 1, 0, 1}, {6});
  Array row = lax_slice(log_ps, {0, 0}, {1, 6}).reshape({6});
  Array q0 = lax_slice(qs, {0, 0}, {1, 6}).reshape({6});
  Array keep = array({0, 2, 3, 5});
  check_close(optim::kl_divergence(row, q0, -1, w),
              values(optim::kl_divergence(take(row, keep), take(q0, keep))), 1e-14);
  check_close(optim::generalized_kl_divergence(row, q0, -1, w),
              values(optim::generalized_kl_divergence(take(row, keep), take(q0, keep))), 1e-14);
  check_close(optim::kl_divergence(transpose(log_ps, {1, 0}), transpose(qs, {1, 0}), 0),
              values(optim::kl_divergence(log_ps, qs)), 1e-14);
  check_error<TypeError>(
      [&] {
        optim::kl_divergence(log_ps, array({1, 2}));
      },
      {"kl_divergence", "targets", "int32"});
}

TEST_CASE("ctc_loss equals the brute-force sum over alignments") {
  // NumPy brute force: -log of the sum, over all length-T paths whose collapse (merge repeats,
  // then drop blanks) is the label sequence, of the product of softmax probabilities.
  Array logits = mat({0.3,  -1.2, 0.8, 1.1, 0.4,  -0.5, -0.7, 0.9, 0.2,  0.5, -0.3, 1.4,
                      -0.2, 0.6,  0.1, 0.9, -1.0, 0.3,  0.0,  0.2, -0.4, 2.0, 2.0,  2.0},
                     {2, 4, 3});
  // Sequence 0: labels (1, 2), all 4 frames; sequence 1: label (2), its last frame padded.
  Array logit_pad = mat({0, 0, 0, 0, 0, 0, 0, 1}, {2, 4});
  Array labels = astype(mat({1, 2, 2, 0}, {2, 2}), int32);
  Array label_pad = mat({0, 0, 0, 1}, {2, 2});
  Array loss = optim::ctc_loss(logits, logit_pad, labels, label_pad);
  check_close(loss, {1.7062579073909536, 1.6832812048353514}, 1e-12);
  // Repeated labels (1, 1) need a blank between them: 4.3971566256064865; blank_id 2 with
  // labels (0, 1): 1.0573350704405018.
  Array seq0 = lax_slice(logits, {0, 0, 0}, {1, 4, 3});
  Array nopad = zeros({1, 4}, float64), nolabelpad = zeros({1, 2}, float64);
  check_close(optim::ctc_loss(seq0, nopad, array({1, 1}).reshape({1, 2}), nolabelpad),
              {4.3971566256064865}, 1e-12);
  check_close(optim::ctc_loss(seq0, nopad, array({0, 1}).reshape({1, 2}), nolabelpad, 2),
              {1.0573350704405018}, 1e-12);
  auto [l, phi, emit] = optim::ctc_loss_with_forward_probs(logits, logit_pad, labels, label_pad);
  CHECK(phi.shape() == Shape{4, 2, 3});
  CHECK(emit.shape() == Shape{4, 2, 2});
  check_close(l, values(loss));
  // The gradient in the logits matches finite differences.
  check_grads([&](const Array& x) { return sum(optim::ctc_loss(x, logit_pad, labels, label_pad)); },
              logits);
  check_error<ValueError>([&] { optim::ctc_loss(seq0, nopad, labels, label_pad); },
                          {"ctc_loss", "batch size 1"});
  check_error<ValueError>(
      [&] {
        optim::ctc_loss(seq0, nopad, array({0, 1}).reshape({1, 2}), nolabelpad, 3);
      },
      {"ctc_loss", "blank_id 3"});
  check_error<ValueError>(
      [&] {
        optim::ctc_loss(logits, logit_pad, array({1, 2}), label_pad);
      },
      {"ctc_loss", "labels", "rank 2"});
}

TEST_CASE("ntxent and triplet_margin_loss (optax's test and docstring values)") {
  // optax _self_supervised_test.py NtxentTest: 14.01032, 8.968544, 9.2889 (float32).
  Array ys =
      f32({-1.9540, 1.0780, 0.2380, -0.5703, 1.8745, -0.0195, -0.6719, -1.9210}).reshape({4, 2});
  Array ys2 = f32({0.0, 0.0, 0.2380, -0.5703, 1.8745, -0.0195, -0.6719, -1.9210}).reshape({4, 2});
  check_close(optim::ntxent(ys, array({0, 0, 1, 1})), {14.01032}, 0, 1e-4);
  check_close(optim::ntxent(ys, array({0, 0, 0, 1})), {8.968544}, 0, 1e-4);
  check_close(optim::ntxent(ys2, array({0, 0, 1, 1})), {9.2889}, 0, 1e-4);
  // optax's docstring: 1-d embeddings, labels (0, 0, 1, 1): log 3 = 1.0986123.
  Array e = f32({0.08969027, 1.6291292, 0.8622629, 0.13612625}).reshape({4, 1});
  check_close(optim::ntxent(e, array({0, 0, 1, 1})), {1.0986123}, 0, 1e-6);
  check_error<ValueError>(
      [&] {
        optim::ntxent(ys, array({0, 1}));
      },
      {"ntxent", "2 for labels", "4 for embeddings"});

  // optax's docstring: [0.1414 0.1414]; closed form sqrt(0.02 + eps) - sqrt(1 + eps) + 1.
  Array anchors = mat({0.0, 0.0, 1.0, 1.0}, {2, 2});
  Array positives = mat({0.1, 0.1, 1.1, 1.1}, {2, 2});
  Array negatives = mat({1.0, 0.0, 0.0, 1.0}, {2, 2});
  const double want = std::sqrt(0.02 + 1e-6) - std::sqrt(1.0 + 1e-6) + 1.0;
  check_close(optim::triplet_margin_loss(anchors, positives, negatives), {want, want}, 1e-12);
  CHECK(want == doctest::Approx(0.1414).epsilon(1e-3));
  // norm_degree 1, margin 0.5: optax raises the signed differences to norm_degree (no abs),
  // so row 0 gives (-0.2 + eps) - (-1 + eps) + 0.5 = 1.3, row 1 (-0.2 + eps) - (1 + eps) + 0.5
  // < 0, so 0.
  check_close(optim::triplet_margin_loss(anchors, positives, negatives, -1, 1.0, 0.5), {1.3, 0.0},
              1e-12);
  check_error<TypeError>(
      [&] {
        optim::triplet_margin_loss(array({1, 2}), positives, negatives);
      },
      {"triplet_margin_loss", "anchors"});
}

TEST_CASE("smooth_labels and make_fenchel_young_loss") {
  // (1 - alpha) * labels + alpha / K: alpha 0.1, K = 4.
  Array l = mat({0.0, 1.0, 0.0, 0.0}, {1, 4});
  check_close(optim::smooth_labels(l, 0.1), {0.025, 0.925, 0.025, 0.025}, 1e-14);
  // where counts 2 classes: 0.9 * labels + 0.05.
  Array w = mask({1, 1, 0, 0}, {1, 4});
  check_close(optim::smooth_labels(l, 0.1, -1, w), {0.05, 0.95, 0.05, 0.05}, 1e-14);
  check_error<TypeError>(
      [] {
        optim::smooth_labels(array({0, 1}), 0.1);
      },
      {"smooth_labels", "labels", "int32"});
  // With max_fun = logsumexp the Fenchel-Young loss is the softmax cross-entropy
  // (logsumexp(s) - <onehot, s>), here on (2, 3, 4) scores, vmapped over the leading axes.
  Array s = random::normal(random::key(3), {2, 3, 4}, float64);
  Array t = one_hot(array({0, 3, 1, 2, 2, 0}).reshape({2, 3}), 4, float64);
  auto fy = optim::make_fenchel_young_loss([](const Array& v) { return logsumexp(v); });
  Array got = fy(s, t);
  CHECK(got.shape() == Shape{2, 3});
  check_close(got, values(optim::softmax_cross_entropy(s, t)), 1e-13);
}

}  // namespace test_losses_optax
