// optax's ranking_softmax_loss and dice losses against closed forms worked out in the comments
// (log-sum-exps and Tversky ratios of small lists and images), and their argument errors.
#include <cmath>
#include <limits>

#include "autodiff/check_grads.hpp"
#include "helpers.hpp"

namespace test_losses_ranking {

using namespace linum;
using optim_test::check_close;
using optim_test::f64;
using optim_test::values;
using testing::check_error;

namespace {
Array mat(const std::vector<double>& v, const Shape& s) { return array(v, s); }
Array mask(const std::vector<double>& v, const Shape& s) { return astype(array(v, s), bool_); }
double lse(std::initializer_list<double> xs) {
  double s = 0;
  for (double x : xs) s += std::exp(x);
  return std::log(s);
}
}  // namespace

TEST_CASE("ranking_softmax_loss: per list, reduced, weighted and masked (closed forms)") {
  Array logits = mat({1.0, 2.0, 3.0, 0.5, 0.5, -1.0}, {2, 3});
  Array labels = mat({0.0, 0.0, 1.0, 1.0, 0.0, 0.0}, {2, 3});
  // -sum(labels * log_softmax): the list's log-sum-exp minus the relevant item's score.
  const double l0 = lse({1.0, 2.0, 3.0}) - 3.0, l1 = lse({0.5, 0.5, -1.0}) - 0.5;
  check_close(optim::ranking_softmax_loss(logits, labels, std::nullopt, std::nullopt, "none"),
              {l0, l1}, 1e-14);
  check_close(optim::ranking_softmax_loss(logits, labels), {(l0 + l1) / 2}, 1e-14);
  check_close(optim::ranking_softmax_loss(logits, labels, std::nullopt, std::nullopt, "sum"),
              {l0 + l1}, 1e-14);
  // Weights multiply the labels: item 2 of list 0 weighs 2.
  Array weights = mat({1.0, 1.0, 2.0, 1.0, 1.0, 1.0}, {2, 3});
  check_close(optim::ranking_softmax_loss(logits, labels, std::nullopt, weights, "none"),
              {2 * l0, l1}, 1e-14);
  // Graded labels (0, 1, 2): -(1 * (2 - lse) + 2 * (3 - lse)) = 3 lse - 8.
  check_close(
      optim::ranking_softmax_loss(mat({1.0, 2.0, 3.0}, {1, 3}), mat({0.0, 1.0, 2.0}, {1, 3}),
                                  std::nullopt, std::nullopt, "none"),
      {3 * lse({1.0, 2.0, 3.0}) - 8.0}, 1e-14);
  // where keeps items 0 and 1 of list 0 (its label on item 2 goes) and nothing of list 1:
  // list 0's loss is lse(1, 2) - 1, list 1's is 0 and the mean is over list 0 alone.
  Array w = mask({1, 1, 0, 0, 0, 0}, {2, 3});
  Array labels2 = mat({1.0, 0.0, 1.0, 1.0, 0.0, 0.0}, {2, 3});
  const double m0 = lse({1.0, 2.0}) - 1.0;
  check_close(optim::ranking_softmax_loss(logits, labels2, w, std::nullopt, "none"), {m0, 0.0},
              1e-14);
  check_close(optim::ranking_softmax_loss(logits, labels2, w), {m0}, 1e-14);
  // Nothing kept anywhere: the mean is 0 rather than NaN.
  check_close(optim::ranking_softmax_loss(logits, labels2, mask({0, 0, 0, 0, 0, 0}, {2, 3})),
              {0.0});
  // The gradient of the unmasked loss in the logits is softmax - labels (sum of labels 1).
  check_close(grad([&](const Array& x) {
                return optim::ranking_softmax_loss(x, labels, std::nullopt, std::nullopt, "sum");
              })(logits),
              values(softmax(logits, -1) - labels), 1e-14, 1e-15);
  check_error<ValueError>([&] { optim::ranking_softmax_loss(logits, labels, {}, {}, "max"); },
                          {"ranking_softmax_loss", "'max'"});
  check_error<TypeError>(
      [] {
        optim::ranking_softmax_loss(array({1, 2}), f64({1.0, 0.0}));
      },
      {"ranking_softmax_loss", "logits", "int32"});
}

TEST_CASE("dice_loss: Tversky ratios per class over the spatial axes (closed forms)") {
  // One image of 2 pixels, 2 classes, probabilities as given. Class 0: intersection
  // 0.1 * 0 + 0.8 * 1 = 0.8, prediction sum 0.9, target sum 1 -> (0.8 + 1) / (0.8 + 0.5 * 0.1 +
  // 0.5 * 0.2 + 1) = 1.8 / 1.95; class 1: 0.9, 1.1, 1 -> 1.9 / 2.05.
  Array probs = mat({0.1, 0.9, 0.8, 0.2}, {1, 2, 2});
  Array targets = mat({0.0, 1.0, 1.0, 0.0}, {1, 2, 2});
  const double d0 = 1 - 1.8 / 1.95, d1 = 1 - 1.9 / 2.05;
  auto dice = [&](auto&&... args) { return optim::dice_loss(probs, targets, args...); };
  check_close(dice(std::nullopt, 1.0, 0.5, 0.5, false), {(d0 + d1) / 2}, 1e-14);
  check_close(dice(std::nullopt, 1.0, 0.5, 0.5, false, "sum"), {d0 + d1}, 1e-14);
  check_close(dice(std::nullopt, 1.0, 0.5, 0.5, false, "none"), {d0, d1}, 1e-14);
  check_close(dice(f64({1.0, 2.0}), 1.0, 0.5, 0.5, false, "none"), {d0, 2 * d1}, 1e-14);
  check_close(dice(std::nullopt, 1.0, 0.5, 0.5, false, "none", true), {d1}, 1e-14);
  // Tversky alpha 0.3, beta 0.7, smooth 0: class 0 0.8 / (0.8 + 0.03 + 0.14), class 1
  // 0.9 / (0.9 + 0.06 + 0.07).
  check_close(dice(std::nullopt, 0.0, 0.3, 0.7, false, "none"), {1 - 0.8 / 0.97, 1 - 0.9 / 1.03},
              1e-14);
  // apply_softmax (the default) takes logits: the same as the given softmax probabilities.
  Array logits = mat({0.3, -1.2, 2.0, 0.4}, {1, 2, 2});
  check_close(
      optim::dice_loss(logits, targets),
      values(optim::dice_loss(softmax(logits, -1), targets, std::nullopt, 1.0, 0.5, 0.5, false)),
      1e-14);
  check_error<ValueError>([&] { dice(std::nullopt, 1.0, 0.5, 0.5, false, "max"); },
                          {"dice_loss", "'max'"});
  check_error<ValueError>(
      [&] { optim::dice_loss(logits, targets, std::nullopt, 1.0, 0.5, 0.5, false); },
      {"dice_loss", "sum to 1"});
  check_error<ValueError>(
      [&] {
        optim::dice_loss(probs, ones({1, 3, 2}, float64));
      },
      {"dice_loss", "(1, 2, 2)", "(1, 3, 2)"});
  check_error<ValueError>(
      [&] {
        dice(ones({2, 2}, float64), 1.0, 0.5, 0.5, false);
      },
      {"dice_loss", "class_weights", "rank 1"});
}

TEST_CASE("multiclass_generalized_dice_loss and binary_dice_loss (closed forms)") {
  // 3 pixels, class frequencies (2, 1): weights 1 / 4 and 1 (the 1e-7 aside), normalised to sum
  // to 2: (0.4, 1.6). Class 0: intersection 0.7 + 0.6 = 1.3, sums 1.5 and 2 ->
  // 2.3 / (1.3 + 0.5 * 0.2 + 0.5 * 0.7 + 1) = 2.3 / 2.75; class 1: intersection 0.8, sums 1.5
  // and 1 -> 1.8 / (0.8 + 0.5 * 0.7 + 0.5 * 0.2 + 1) = 1.8 / 2.25.
  Array probs = mat({0.7, 0.3, 0.6, 0.4, 0.2, 0.8}, {1, 3, 2});
  Array targets = mat({1.0, 0.0, 1.0, 0.0, 0.0, 1.0}, {1, 3, 2});
  const double w0 = 0.25 / (0.25 + 1.0) * 2, w1 = 1.0 / (0.25 + 1.0) * 2;
  const double want = (w0 * (1 - 2.3 / 2.75) + w1 * (1 - 1.8 / 2.25)) / 2;
  check_close(optim::multiclass_generalized_dice_loss(probs, targets, 1.0, false), {want}, 1e-6);
  check_error<ValueError>(
      [&] {
        optim::multiclass_generalized_dice_loss(probs, ones({1, 3}, float64));
      },
      {"multiclass_generalized_dice_loss", "(1, 3, 2)", "(1, 3)"});
  // binary: 2 images of 3 pixels, a class axis of 1 added; sigmoid of the logits, the dice of
  // each image over its pixels, averaged over the (single) class.
  Array logits = mat({0.5, -1.0, 2.0, 0.0, 1.5, -0.5}, {2, 3});
  Array bin = mat({1.0, 0.0, 1.0, 0.0, 1.0, 1.0}, {2, 3});
  std::vector<double> want_bin;
  const std::vector<double> lv = values(logits), tv = values(bin);
  for (int b = 0; b < 2; ++b) {
    double inter = 0, ps = 0, ts = 0;
    for (int i = 0; i < 3; ++i) {
      const double p = 1 / (1 + std::exp(-lv[3 * b + i]));
      inter += p * tv[3 * b + i], ps += p, ts += tv[3 * b + i];
    }
    want_bin.push_back(1 - (inter + 1) / (inter + 0.5 * (ps - inter) + 0.5 * (ts - inter) + 1));
  }
  check_close(optim::binary_dice_loss(logits, bin), want_bin, 1e-14);
}

}  // namespace test_losses_ranking
