// Probes of the optax names the coverage tables mark present (optax, optax.transforms,
// optax.losses, optax.schedules, optax.contrib, optax.assignment, optax.microbatching, optax.tree
// and optax.tree_utils): every transformation and optimizer is initialised on small params and
// updated once, every state type is checked to be what its transformation's init returns, every
// loss, schedule and tree utility is called once. One probe per optax name, registered under
// each module that exports the name.
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "probes.hpp"

namespace {

using namespace linum;
using namespace linum::coverage;
using Params = std::map<std::string, Array>;

Params params() { return {{"w", array({0.5f, -1.0f, 2.0f})}, {"b", array({0.25f})}}; }
Params grads() { return {{"w", array({0.1f, 0.2f, -0.3f})}, {"b", array({-0.5f})}}; }
// Per-example gradients: a batch axis of 2 on every leaf.
Params per_example() { return {{"w", ones({2, 3})}, {"b", ones({2, 1})}}; }
// Inputs for a linear model with params(): three examples of three features.
Array m3() { return reshape(astype(arange(9), float32), {3, 3}); }
Array quadratic(const Params& p) { return sum(square(p.at("w"))) + sum(square(p.at("b"))); }

// One update of tx from its initial state (with params).
template <class Tx>
Params step(const Tx& tx) {
  auto state = tx.init(params());
  return tx.update(grads(), state, params()).first;
}
// One update with optax's extra arguments (value, grad, value_fn, obj_fn) at params().
template <class Tx>
Params step_extra(const Tx& tx) {
  auto state = tx.init(params());
  auto [value, g] = value_and_grad(quadratic)(params());
  return tx.update(g, state, params(), optim::ExtraArgs<Params>{value, g, quadratic, quadratic})
      .first;
}
// s converted to the type the table names (a compile-time check of the state's layout).
template <class Expected, class S>
Expected as(const S& s) {
  return s;
}

using Table = std::map<std::string, Probe>;
template <class F>
Probe probe(F f) {
  return [f] { (void)f(); };
}

// The probes of optax.tree's names (optax.tree_utils has them as tree_<name>).
Table tree_probes() {
  namespace tu = optim::tree_utils;
  Table t;
  t["add"] = probe([] { return tu::tree_add(params(), grads()); });
  t["add_scale"] = probe([] { return tu::tree_add_scale(params(), 0.5, grads()); });
  t["allclose"] = probe([] { return tu::tree_allclose(params(), params()); });
  t["batch_shape"] = probe([] { return tu::tree_batch_shape(params(), {2}); });
  t["bias_correction"] = probe([] { return tu::tree_bias_correction(params(), 0.9, Array(3)); });
  t["cast"] = probe([] { return tu::tree_cast(params(), float64); });
  t["cast_like"] = probe([] { return tu::tree_cast_like(grads(), params()); });
  t["clip"] = probe([] { return tu::tree_clip(params(), -0.5, 0.5); });
  t["conj"] = probe([] { return tu::tree_conj(params()); });
  t["div"] = probe([] { return tu::tree_div(params(), params()); });
  t["dtype"] = probe([] { return tu::tree_dtype(params()); });
  t["full_like"] = probe([] { return tu::tree_full_like(params(), 3.0); });
  t["get"] = probe([] { return tu::tree_get(optim::adam(0.1).init(params()), "mu"); });
  t["get_all_with_path"] =
      probe([] { return tu::tree_get_all_with_path(optim::adam(0.1).init(params()), "count"); });
  t["map_params"] = probe([] {
    auto tx = optim::adam(0.1);
    return tu::tree_map_params(
        tx, [](const Array& p) { return 2.0 * p; }, tx.init(params()));
  });
  t["max"] = probe([] { return tu::tree_max(params()); });
  t["min"] = probe([] { return tu::tree_min(params()); });
  t["mul"] = probe([] { return tu::tree_mul(params(), grads()); });
  t["norm"] = probe([] { return tu::tree_norm(params()); });
  t["ones_like"] = probe([] { return tu::tree_ones_like(params()); });
  t["random_like"] = probe([] { return tu::tree_random_like(random::PRNGKey(0), params()); });
  t["real"] = probe([] { return tu::tree_real(params()); });
  t["scale"] = probe([] { return tu::tree_scale(2.0, params()); });
  t["set"] = probe([] { return tu::tree_set(optim::adam(0.1).init(params()), "count", Array(4)); });
  t["size"] = probe([] { return tu::tree_size(params()); });
  t["split_key_like"] = probe([] { return tu::tree_split_key_like(random::PRNGKey(0), params()); });
  t["sub"] = probe([] { return tu::tree_sub(params(), grads()); });
  t["sum"] = probe([] { return tu::tree_sum(params()); });
  t["unwrap_random_key_data"] =
      probe([] { return tu::tree_unwrap_random_key_data(random::PRNGKey(0)); });
  t["update_infinity_moment"] =
      probe([] { return tu::tree_update_infinity_moment(grads(), params(), 0.9, 1e-8); });
  t["update_moment"] = probe([] { return tu::tree_update_moment(grads(), params(), 0.9, 2); });
  t["update_moment_per_elem_norm"] =
      probe([] { return tu::tree_update_moment_per_elem_norm(grads(), params(), 0.9, 2); });
  t["vdot"] = probe([] { return tu::tree_vdot(params(), grads()); });
  t["where"] = probe([] { return tu::tree_where(Array(true), params(), grads()); });
  t["zeros_like"] = probe([] { return tu::tree_zeros_like(params()); });
  return t;
}

// The probes of optax's top-level names and of the submodule names that optax re-exports.
Table optax_probes() {
  namespace o = optim;
  Table t;
  // ---- optimizers ----
  t["adabelief"] = probe([] { return step(o::adabelief(0.1)); });
  t["adadelta"] = probe([] { return step(o::adadelta(0.1)); });
  t["adafactor"] = probe([] { return step(o::adafactor(0.1)); });
  t["adagrad"] = probe([] { return step(o::adagrad(0.1)); });
  t["adam"] = probe([] { return step(o::adam(0.1)); });
  t["adamax"] = probe([] { return step(o::adamax(0.1)); });
  t["adamaxw"] = probe([] { return step(o::adamaxw(0.1)); });
  t["adamw"] = probe([] { return step(o::adamw(0.1)); });
  t["adan"] = probe([] { return step(o::adan(0.1)); });
  t["amsgrad"] = probe([] { return step(o::amsgrad(0.1)); });
  t["fromage"] = probe([] { return step(o::fromage(0.1)); });
  t["lamb"] = probe([] { return step(o::lamb(0.1)); });
  t["lars"] = probe([] { return step(o::lars(0.1)); });
  t["lbfgs"] = probe([] { return step_extra(o::lbfgs()); });
  t["lion"] = probe([] { return step(o::lion(0.1)); });
  t["nadam"] = probe([] { return step(o::nadam(0.1)); });
  t["nadamw"] = probe([] { return step(o::nadamw(0.1)); });
  t["noisy_sgd"] = probe([] { return step(o::noisy_sgd(0.1)); });
  t["novograd"] = probe([] { return step(o::novograd(0.1)); });
  t["optimistic_adam"] = probe([] { return step(o::optimistic_adam(0.1)); });
  t["optimistic_adam_v2"] = probe([] { return step(o::optimistic_adam_v2(0.1)); });
  t["optimistic_gradient_descent"] =
      probe([] { return step(o::optimistic_gradient_descent(0.1)); });
  t["polyak_sgd"] = probe([] { return step_extra(o::polyak_sgd()); });
  t["radam"] = probe([] { return step(o::radam(0.1)); });
  t["rmsprop"] = probe([] { return step(o::rmsprop(0.1)); });
  t["rprop"] = probe([] { return step(o::rprop(0.1)); });
  t["sgd"] = probe([] { return step(o::sgd(0.1, 0.9)); });
  t["sign_sgd"] = probe([] { return step(o::sign_sgd(0.1)); });
  t["signum"] = probe([] { return step(o::signum(0.1)); });
  t["sm3"] = probe([] { return step(o::sm3(0.1)); });
  t["yogi"] = probe([] { return step(o::yogi(0.1)); });
  t["dpsgd"] = probe([] {
    auto tx = o::dpsgd(0.1, 1.0, 1.0, 0);
    return tx.update(per_example(), tx.init(params())).first;
  });

  // ---- gradient transformations ----
  t["adaptive_grad_clip"] = probe([] { return step(o::adaptive_grad_clip(0.1)); });
  t["add_decayed_weights"] = probe([] { return step(o::add_decayed_weights(1e-4)); });
  t["add_noise"] = probe([] { return step(o::add_noise(0.01, 0.55, 0)); });
  t["apply_every"] = probe([] { return step(o::apply_every(2)); });
  t["centralize"] = probe([] { return step(o::centralize()); });
  t["chain"] = probe([] { return step(o::chain(o::clip(1.0), o::scale(-0.1))); });
  t["clip"] = probe([] { return step(o::clip(0.2)); });
  t["clip_by_block_rms"] = probe([] { return step(o::clip_by_block_rms(0.1)); });
  t["clip_by_global_norm"] = probe([] { return step(o::clip_by_global_norm(0.1)); });
  t["differentially_private_aggregate"] = probe([] {
    auto tx = o::differentially_private_aggregate(1.0, 1.0, 0);
    return tx.update(per_example(), tx.init(params())).first;
  });
  t["ema"] = probe([] { return step(o::ema(0.9)); });
  t["identity"] = probe([] { return step(o::identity()); });
  t["keep_params_nonnegative"] = probe([] { return step(o::keep_params_nonnegative()); });
  t["normalize_by_update_norm"] = probe([] { return step(o::normalize_by_update_norm()); });
  t["per_example_global_norm_clip"] =
      probe([] { return o::per_example_global_norm_clip(per_example(), 1.0).first; });
  t["per_example_layer_norm_clip"] =
      probe([] { return o::per_example_layer_norm_clip(per_example(), 1.0).first; });
  t["scale"] = probe([] { return step(o::scale(0.5)); });
  t["scale_by_adadelta"] = probe([] { return step(o::scale_by_adadelta()); });
  t["scale_by_adam"] = probe([] { return step(o::scale_by_adam()); });
  t["scale_by_adamax"] = probe([] { return step(o::scale_by_adamax()); });
  t["scale_by_adan"] = probe([] { return step(o::scale_by_adan()); });
  t["scale_by_amsgrad"] = probe([] { return step(o::scale_by_amsgrad()); });
  t["scale_by_backtracking_linesearch"] =
      probe([] { return step_extra(o::scale_by_backtracking_linesearch(5)); });
  t["scale_by_belief"] = probe([] { return step(o::scale_by_belief()); });
  t["scale_by_distance_over_gradients"] =
      probe([] { return step(o::scale_by_distance_over_gradients()); });
  t["scale_by_factored_rms"] = probe([] { return step(o::scale_by_factored_rms()); });
  t["scale_by_lbfgs"] = probe([] { return step(o::scale_by_lbfgs()); });
  t["scale_by_learning_rate"] = probe([] { return step(o::scale_by_learning_rate(0.1)); });
  t["scale_by_lion"] = probe([] { return step(o::scale_by_lion()); });
  t["scale_by_novograd"] = probe([] { return step(o::scale_by_novograd()); });
  t["scale_by_optimistic_gradient"] = probe([] { return step(o::scale_by_optimistic_gradient()); });
  t["scale_by_param_block_norm"] = probe([] { return step(o::scale_by_param_block_norm()); });
  t["scale_by_param_block_rms"] = probe([] { return step(o::scale_by_param_block_rms()); });
  t["scale_by_polyak"] = probe([] { return step_extra(o::scale_by_polyak()); });
  t["scale_by_radam"] = probe([] { return step(o::scale_by_radam()); });
  t["scale_by_rms"] = probe([] { return step(o::scale_by_rms()); });
  t["scale_by_rprop"] = probe([] { return step(o::scale_by_rprop(0.1)); });
  t["scale_by_rss"] = probe([] { return step(o::scale_by_rss()); });
  t["scale_by_schedule"] =
      probe([] { return step(o::scale_by_schedule(o::exponential_decay(0.1, 10, 0.5))); });
  t["scale_by_sign"] = probe([] { return step(o::scale_by_sign()); });
  t["scale_by_sm3"] = probe([] { return step(o::scale_by_sm3()); });
  t["scale_by_stddev"] = probe([] { return step(o::scale_by_stddev()); });
  t["scale_by_trust_ratio"] = probe([] { return step(o::scale_by_trust_ratio()); });
  t["scale_by_yogi"] = probe([] { return step(o::scale_by_yogi()); });
  t["scale_by_zoom_linesearch"] = probe([] { return step_extra(o::scale_by_zoom_linesearch(5)); });
  t["set_to_zero"] = probe([] { return step(o::set_to_zero()); });
  t["stateless"] =
      probe([] { return step(o::stateless([](const Params& u, const Params*) { return u; })); });
  t["stateless_with_tree_map"] = probe([] {
    return step(o::stateless_with_tree_map([](const Array& g, const Array&) { return -g; }));
  });
  t["trace"] = probe([] { return step(o::trace(0.9)); });
  t["zero_nans"] = probe([] { return step(o::zero_nans()); });
  t["unitwise_norm"] = probe([] { return o::unitwise_norm(array({3.0f, 4.0f})); });
  t["unitwise_clip"] =
      probe([] { return o::unitwise_clip(array({5.0f}), array({1.0f}), array({5.0f})); });

  // ---- wrappers and combinators ----
  const Params mask{{"w", Array(true)}, {"b", Array(false)}};
  auto from2 = [](const Array& count) { return count >= 2; };
  t["apply_if_finite"] = probe([] { return step(o::apply_if_finite(o::scale(2.0), 2)); });
  t["conditionally_mask"] =
      probe([from2] { return step(o::conditionally_mask(o::scale(2.0), from2)); });
  t["conditionally_transform"] =
      probe([from2] { return step(o::conditionally_transform(o::scale(2.0), from2)); });
  t["flatten"] = probe([] { return step(o::flatten(o::adam(0.1))); });
  t["freeze"] = probe([mask] { return step(o::freeze(mask)); });
  t["masked"] = probe([mask] { return step(o::masked(o::trace(0.5), mask)); });
  t["MultiSteps"] = probe([] { return step(o::MultiSteps(o::sgd(0.1), 2)); });
  auto label = [](const pytree::KeyPath& path, const Array&) {
    return keystr(path, true, "/") == "w" ? "adam" : "sgd";
  };
  t["partition"] = probe([label] {
    return step(o::partition<Params>({{"adam", o::adam(0.1)}, {"sgd", o::sgd(0.5)}}, label));
  });
  t["multi_transform"] = probe([label] {
    return step(o::multi_transform<Params>({{"adam", o::adam(0.1)}, {"sgd", o::sgd(0.5)}}, label));
  });
  t["named_chain"] = probe([] {
    return step(o::named_chain(std::pair{std::string("clip"), o::clip(1.0)},
                               std::pair{std::string("sgd"), o::sgd(0.1)}));
  });
  t["selective_transform"] =
      probe([mask] { return step(o::selective_transform<Params>(o::sgd(0.5), mask)); });
  t["lookahead"] = probe([] {
    auto tx = o::lookahead(o::sgd(0.1), 2, 0.5);
    auto p = o::LookaheadParams<Params>::init_synced(params());
    return tx.update(grads(), tx.init(p), p).first.fast;
  });
  t["with_extra_args_support"] =
      probe([] { return step_extra(o::with_extra_args_support(o::sgd(0.1))); });
  auto sum_sq = [](const Params& u) { return o::tree_utils::tree_l2_norm(u, true); };
  t["monitor"] = probe([sum_sq] {
    auto tx = o::monitor<Params>({{"sq", sum_sq}});
    return tx.update(grads(), tx.init(params())).second.measurements;
  });
  t["snapshot"] = probe([sum_sq] {
    auto tx = o::snapshot("sq", sum_sq);
    return tx.update(grads(), tx.init(params())).second.measurement;
  });
  t["measure_with_ema"] = probe([sum_sq] {
    auto tx = o::measure_with_ema(sum_sq, 0.5);
    return tx.update(grads(), tx.init(params())).first;
  });
  t["inject_hyperparams"] = probe([] {
    auto tx = o::inject_hyperparams(
        [](const o::Hyperparams& h) { return o::adam(h.at("learning_rate")); },
        {{"learning_rate", 0.1}});
    return step(tx);
  });
  t["inject_stateful_hyperparams"] = probe([] {
    auto tx = o::inject_stateful_hyperparams(
        [](const o::Hyperparams& h) { return o::sgd(h.at("learning_rate")); },
        {{"learning_rate", o::linear_schedule(0.1, 0.0, 10)}});
    return step(tx);
  });
  t["skip_not_finite"] =
      probe([] { return step(o::MultiSteps(o::sgd(0.1), 2, true, o::skip_not_finite)); });
  t["skip_large_updates"] = probe([] {
    o::ShouldSkipUpdateFunction skip = [](const Tree& u, const Array& s, const Tree& p) {
      return o::skip_large_updates(u, s, p, 100.0);
    };
    return step(o::MultiSteps(o::sgd(0.1), 2, true, skip));
  });
  t["value_and_grad_from_state"] = probe([] {
    auto tx = o::chain(o::sgd(1.0), o::scale_by_zoom_linesearch(5));
    auto state = tx.init(params());
    auto [value, g] = value_and_grad(quadratic)(params());
    auto next = tx.update(g, state, params(), o::ExtraArgs<Params>{value, g, quadratic}).second;
    return o::value_and_grad_from_state(quadratic)(params(), next).first;
  });

  // ---- updates, numerics, linear algebra, utilities ----
  t["apply_updates"] = probe([] { return o::apply_updates(params(), grads()); });
  t["incremental_update"] = probe([] { return o::incremental_update(params(), grads(), 0.5); });
  t["periodic_update"] = probe([] { return o::periodic_update(params(), grads(), Array(4), 2); });
  t["init_empty_state"] = probe([] { return o::init_empty_state(params()); });
  t["safe_increment"] = probe([] { return o::safe_increment(Array(1)); });
  t["safe_int32_increment"] = probe([] { return o::safe_int32_increment(Array(1)); });
  t["safe_norm"] = probe([] { return o::safe_norm(x(), 1e-6); });
  t["safe_root_mean_squares"] = probe([] { return o::safe_root_mean_squares(x(), 1e-6); });
  t["global_norm"] = probe([] { return o::tree_utils::tree_l2_norm(params()); });
  t["matrix_inverse_pth_root"] =
      probe([] { return o::matrix_inverse_pth_root(eye(2) * 4.0f, 2).first; });
  t["power_iteration"] = probe([] { return o::power_iteration(m()).first; });
  t["nnls"] = probe([] { return o::nnls(m(), array({1.0f, 2.0f}), 10); });
  t["multi_normal"] =
      probe([] { return o::multi_normal(x(), x()).sample({2}, random::PRNGKey(0)); });
  t["microbatch"] = probe([] {
    auto f = optim::microbatching::microbatch([](const Array& v) { return sum(v); }, argnums<0>, 1);
    return f(x());
  });
  t["scale_gradient"] = probe(
      [] { return grad([](const Array& v) { return sum(o::scale_gradient(v, 0.5)); })(x()); });

  // ---- schedules ----
  t["Schedule"] =
      probe([] { return o::Schedule([](std::int64_t c) { return 1.0 / (1 + c); })(3); });
  t["constant_schedule"] = probe([] { return o::constant_schedule(0.1)(5); });
  t["cosine_decay_schedule"] = probe([] { return o::cosine_decay_schedule(0.1, 10)(5); });
  t["cosine_onecycle_schedule"] = probe([] { return o::cosine_onecycle_schedule(10, 0.1)(5); });
  t["exponential_decay"] = probe([] { return o::exponential_decay(0.1, 10, 0.5)(5); });
  t["join_schedules"] = probe([] {
    return o::join_schedules({o::constant_schedule(1.0), o::constant_schedule(0.5)}, {3})(5);
  });
  t["linear_onecycle_schedule"] = probe([] { return o::linear_onecycle_schedule(10, 0.1)(5); });
  t["linear_schedule"] = probe([] { return o::linear_schedule(0.1, 0.0, 10)(5); });
  t["piecewise_constant_schedule"] = probe([] {
    return o::piecewise_constant_schedule(1.0, {{3, 0.1}})(5);
  });
  t["piecewise_interpolate_schedule"] = probe([] {
    return o::piecewise_interpolate_schedule("linear", 1.0, {{4, 0.1}})(5);
  });
  t["polynomial_schedule"] = probe([] { return o::polynomial_schedule(0.1, 0.0, 2.0, 10)(5); });
  t["sgdr_schedule"] = probe([] { return o::sgdr_schedule({{0.0, 0.1, 2, 10}})(5); });
  t["warmup_constant_schedule"] = probe([] { return o::warmup_constant_schedule(0.0, 0.1, 3)(5); });
  t["warmup_cosine_decay_schedule"] =
      probe([] { return o::warmup_cosine_decay_schedule(0.0, 0.1, 3, 10)(5); });
  t["warmup_exponential_decay_schedule"] =
      probe([] { return o::warmup_exponential_decay_schedule(0.0, 0.1, 3, 10, 0.5)(5); });
  t["WrappedSchedule"] = probe([] {
    o::WrappedSchedule w{o::constant_schedule(0.1)};
    return w(w.update(w.init()));
  });

  // ---- losses ----
  const Array logits = array({{1.0f, 2.0f, 0.5f}, {0.1f, -1.0f, 3.0f}});
  const Array probs = array({{0.2f, 0.5f, 0.3f}, {0.1f, 0.1f, 0.8f}});
  const Array ints = array({1, 2});
  t["binary_dice_loss"] = probe([probs] { return o::binary_dice_loss(probs, probs); });
  t["convex_kl_divergence"] = probe([probs] { return o::convex_kl_divergence(log(probs), probs); });
  t["cosine_distance"] = probe([probs] { return o::cosine_distance(probs, probs); });
  t["cosine_similarity"] = probe([probs] { return o::cosine_similarity(probs, probs); });
  t["ctc_loss"] = probe([] {
    return o::ctc_loss(zeros({1, 4, 3}), zeros({1, 4}), array({{1, 2}}), zeros({1, 2}));
  });
  t["ctc_loss_with_forward_probs"] = probe([] {
    return std::get<0>(o::ctc_loss_with_forward_probs(zeros({1, 4, 3}), zeros({1, 4}),
                                                      array({{1, 2}}), zeros({1, 2})));
  });
  t["dice_loss"] = probe([probs] { return o::dice_loss(probs, probs); });
  t["generalized_kl_divergence"] =
      probe([probs] { return o::generalized_kl_divergence(log(probs), probs); });
  t["hinge_loss"] = probe([] { return o::hinge_loss(x(), array({1.0f, -1.0f, 1.0f})); });
  t["huber_loss"] = probe([] { return o::huber_loss(x(), pos()); });
  t["kl_divergence"] = probe([probs] { return o::kl_divergence(log(probs), probs); });
  t["kl_divergence_with_log_targets"] =
      probe([probs] { return o::kl_divergence_with_log_targets(log(probs), log(probs)); });
  t["l2_loss"] = probe([] { return o::l2_loss(x(), pos()); });
  t["log_cosh"] = probe([] { return o::log_cosh(x(), pos()); });
  t["make_fenchel_young_loss"] = probe([logits, probs] {
    auto loss = o::make_fenchel_young_loss([](const Array& v) { return logsumexp(v); });
    return loss(logits, probs);
  });
  t["multiclass_generalized_dice_loss"] =
      probe([probs] { return o::multiclass_generalized_dice_loss(probs, probs); });
  t["multiclass_hinge_loss"] =
      probe([logits, ints] { return o::multiclass_hinge_loss(logits, ints); });
  t["multiclass_perceptron_loss"] =
      probe([logits, ints] { return o::multiclass_perceptron_loss(logits, ints); });
  t["multiclass_sparsemax_loss"] =
      probe([logits, ints] { return o::multiclass_sparsemax_loss(logits, ints); });
  t["ntxent"] = probe([logits] { return o::ntxent(logits, array({0, 0})); });
  t["perceptron_loss"] = probe([] { return o::perceptron_loss(x(), array({1.0f, -1.0f, 1.0f})); });
  t["poly_loss_cross_entropy"] =
      probe([logits, probs] { return o::poly_loss_cross_entropy(logits, probs); });
  t["ranking_softmax_loss"] =
      probe([logits, probs] { return o::ranking_softmax_loss(logits, probs); });
  t["safe_softmax_cross_entropy"] =
      probe([logits, probs] { return o::safe_softmax_cross_entropy(logits, probs); });
  t["sigmoid_binary_cross_entropy"] =
      probe([logits, probs] { return o::sigmoid_binary_cross_entropy(logits, probs); });
  t["sigmoid_focal_loss"] = probe([logits, probs] { return o::sigmoid_focal_loss(logits, probs); });
  t["smooth_labels"] = probe([probs] { return o::smooth_labels(probs, 0.1); });
  t["softmax_cross_entropy"] =
      probe([logits, probs] { return o::softmax_cross_entropy(logits, probs); });
  t["softmax_cross_entropy_with_integer_labels"] =
      probe([logits, ints] { return o::softmax_cross_entropy_with_integer_labels(logits, ints); });
  t["sparsemax_loss"] = probe([] { return o::sparsemax_loss(x(), array({1.0f, 0.0f, 1.0f})); });
  t["squared_error"] = probe([] { return o::squared_error(x(), pos()); });
  t["triplet_margin_loss"] =
      probe([logits, probs] { return o::triplet_margin_loss(logits, probs, logits); });

  // ---- types: each state is what its transformation's init returns ----
  using P = Params;
  t["EmptyState"] = probe([] { return as<o::EmptyState>(o::identity().init(params())); });
  t["AdaptiveGradClipState"] =
      probe([] { return as<o::AdaptiveGradClipState>(o::adaptive_grad_clip(0.1).init(params())); });
  t["AddDecayedWeightsState"] =
      probe([] { return as<o::AddDecayedWeightsState>(o::AddDecayedWeights{}.init(params())); });
  t["ClipByGlobalNormState"] = probe(
      [] { return as<o::ClipByGlobalNormState>(o::clip_by_global_norm(1.0).init(params())); });
  t["ClipState"] = probe([] { return as<o::ClipState>(o::clip(1.0).init(params())); });
  t["ScaleByTrustRatioState"] =
      probe([] { return as<o::ScaleByTrustRatioState>(o::scale_by_trust_ratio().init(params())); });
  t["ScaleState"] = probe([] { return as<o::ScaleState>(o::scale(2.0).init(params())); });
  t["NonNegativeParamsState"] = probe(
      [] { return as<o::NonNegativeParamsState>(o::keep_params_nonnegative().init(params())); });
  t["AddNoiseState"] = probe(
      [] { return as<o::AddNoiseState<>>(o::add_noise(0.01, 0.55, 0).init(params())).rng_key; });
  t["ApplyEvery"] =
      probe([] { return as<o::ApplyEvery<P>>(o::apply_every(2).init(params())).grad_acc; });
  t["ApplyIfFiniteState"] = probe([] {
    return as<o::ApplyIfFiniteState<o::EmptyState>>(
               o::apply_if_finite(o::scale(2.0), 2).init(params()))
        .notfinite_count;
  });
  t["ConditionallyMaskState"] = probe([from2] {
    return as<o::ConditionallyMaskState<o::EmptyState>>(
               o::conditionally_mask(o::scale(2.0), from2).init(params()))
        .step;
  });
  t["ConditionallyTransformState"] = probe([from2] {
    return as<o::ConditionallyTransformState<o::EmptyState>>(
               o::conditionally_transform(o::scale(2.0), from2).init(params()))
        .step;
  });
  t["ConditionFn"] = probe([from2] { return o::ConditionFn(from2)(Array(3)); });
  t["DifferentiallyPrivateAggregateState"] = probe([] {
    return as<o::DifferentiallyPrivateAggregateState<>>(
               o::differentially_private_aggregate(1.0, 1.0, 0).init(params()))
        .rng_key;
  });
  t["EmaState"] = probe([] { return as<o::EmaState<P>>(o::ema(0.9).init(params())).ema; });
  t["FactoredState"] =
      probe([] { return as<o::FactoredState<P>>(o::scale_by_factored_rms().init(params())).v; });
  t["GradientTransformation"] =
      probe([] { return step(o::GradientTransformation<P>(o::adam(0.1))); });
  t["GradientTransformationExtraArgs"] =
      probe([] { return step_extra(o::GradientTransformation<P>(o::polyak_sgd())); });
  t["InjectStatefulHyperparamsState"] = probe([] {
    auto tx = o::inject_hyperparams([](const o::Hyperparams& h) { return o::sgd(h.at("lr")); },
                                    {{"lr", 0.1}});
    using S = o::InjectStatefulHyperparamsState<o::state_t<decltype(o::sgd(0.1)), P>>;
    return as<S>(tx.init(params())).hyperparams;
  });
  t["LookaheadParams"] = probe([] { return o::LookaheadParams<P>::init_synced(params()).slow; });
  t["LookaheadState"] = probe([] {
    return as<o::LookaheadState<o::state_t<decltype(o::sgd(0.1)), P>>>(
               o::lookahead(o::sgd(0.1), 2, 0.5).init(o::LookaheadParams<P>::init_synced(params())))
        .steps_since_sync;
  });
  t["MaskedNode"] = probe([mask] {
    // trace's state under the mask: an empty Array where the mask is false ('b').
    auto s = o::masked(o::trace(0.5), mask).init(params());
    return s.inner_state.trace.at("b").valid() ? 1 : 0;
  });
  t["MaskedState"] = probe([mask] {
    return as<o::MaskedState<o::TraceState<P>>>(o::masked(o::trace(0.5), mask).init(params()))
        .inner_state.trace;
  });
  t["MonitorState"] = probe([sum_sq] {
    return as<o::MonitorState>(o::monitor<P>({{"sq", sum_sq}}).init(params())).measure_states;
  });
  t["MultiStepsState"] = probe([] {
    using S = o::state_t<decltype(o::sgd(0.1)), P>;
    return as<o::MultiStepsState<S, P>>(o::MultiSteps(o::sgd(0.1), 2).init(params())).acc_grads;
  });
  t["MultiTransformState"] = probe([label] {
    auto tx = o::multi_transform<P>({{"adam", o::adam(0.1)}, {"sgd", o::sgd(0.5)}}, label);
    return tx.init(params()).inner_states;
  });
  t["PartitionState"] = probe([label] {
    auto tx = o::partition<P>({{"adam", o::adam(0.1)}, {"sgd", o::sgd(0.5)}}, label);
    using S = decltype(tx.init(params()).inner_states);
    return as<o::PartitionState<S>>(tx.init(params())).inner_states;
  });
  t["ScaleByAdaDeltaState"] = probe(
      [] { return as<o::ScaleByAdaDeltaState<P>>(o::scale_by_adadelta().init(params())).e_g; });
  t["ScaleByAdamState"] =
      probe([] { return as<o::ScaleByAdamState<P>>(o::scale_by_adam().init(params())).mu; });
  t["ScaleByAdanState"] =
      probe([] { return as<o::ScaleByAdanState<P>>(o::scale_by_adan().init(params())).m; });
  t["ScaleByAmsgradState"] = probe(
      [] { return as<o::ScaleByAmsgradState<P>>(o::scale_by_amsgrad().init(params())).nu_max; });
  t["ScaleByBacktrackingLinesearchState"] = probe([] {
    return as<o::ScaleByBacktrackingLinesearchState<P>>(
               o::scale_by_backtracking_linesearch(5).init(params()))
        .learning_rate;
  });
  t["ScaleByBeliefState"] =
      probe([] { return as<o::ScaleByBeliefState<P>>(o::scale_by_belief().init(params())).nu; });
  t["ScaleByLBFGSState"] =
      probe([] { return as<o::ScaleByLBFGSState<P>>(o::scale_by_lbfgs().init(params())).count; });
  t["ScaleByLionState"] =
      probe([] { return as<o::ScaleByLionState<P>>(o::scale_by_lion().init(params())).mu; });
  t["ScaleByNovogradState"] = probe(
      [] { return as<o::ScaleByNovogradState<P>>(o::scale_by_novograd().init(params())).nu; });
  t["ScaleByRStdDevState"] =
      probe([] { return as<o::ScaleByRStdDevState<P>>(o::scale_by_stddev().init(params())).mu; });
  t["ScaleByRmsState"] =
      probe([] { return as<o::ScaleByRmsState<P>>(o::scale_by_rms().init(params())).nu; });
  t["ScaleByRpropState"] = probe(
      [] { return as<o::ScaleByRpropState<P>>(o::scale_by_rprop(0.1).init(params())).step_sizes; });
  t["ScaleByRssState"] = probe(
      [] { return as<o::ScaleByRssState<P>>(o::scale_by_rss().init(params())).sum_of_squares; });
  t["ScaleBySM3State"] =
      probe([] { return as<o::ScaleBySM3State<P>>(o::scale_by_sm3().init(params())).nu; });
  t["ScaleByScheduleState"] = probe([] {
    return as<o::ScaleByScheduleState<>>(
               o::scale_by_schedule(o::constant_schedule(0.1)).init(params()))
        .count;
  });
  t["ScaleByZoomLinesearchState"] = probe([] {
    return as<o::ScaleByZoomLinesearchState<P>>(o::scale_by_zoom_linesearch(5).init(params()))
        .value;
  });
  t["ZoomLinesearchInfo"] =
      probe([] { return o::scale_by_zoom_linesearch(5).init(params()).info.num_linesearch_steps; });
  t["ShouldSkipUpdateFunction"] = probe([] {
    o::ShouldSkipUpdateFunction f = o::skip_not_finite;
    return f(Tree(x()), Array(0), Tree()).first;
  });
  t["SnapshotState"] = probe([sum_sq] {
    return as<o::SnapshotState>(o::snapshot("sq", sum_sq).init(params())).measurement;
  });
  t["TraceState"] = probe([] { return as<o::TraceState<P>>(o::trace(0.9).init(params())).trace; });
  t["ZeroNansState"] =
      probe([] { return as<o::ZeroNansState<P>>(o::zero_nans().init(params())).found_nan; });

  // ---- tree utilities re-exported at the top level ----
  Table tr = tree_probes();
  t["tree_map_params"] = tr.at("map_params");
  t["bias_correction"] = tr.at("bias_correction");
  t["update_infinity_moment"] = tr.at("update_infinity_moment");
  t["update_moment"] = tr.at("update_moment");
  t["update_moment_per_elem_norm"] = tr.at("update_moment_per_elem_norm");
  return t;
}

// Registers, for each name, the probe of `from` under that name (a name without one is left out,
// and the coverage test reports it as a present name without a probe).
void add_all(Registrar& r, const Table& from, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto it = from.find(n); it != from.end()) r.add(n, it->second);
}

// The names of optax_probes() that only submodules export (not optax's top level).
const std::set<std::string> kSubmoduleOnly{"ConditionFn",
                                           "unitwise_clip",
                                           "unitwise_norm",
                                           "binary_dice_loss",
                                           "dice_loss",
                                           "kl_divergence_with_log_targets",
                                           "make_fenchel_young_loss",
                                           "multiclass_generalized_dice_loss",
                                           "multiclass_hinge_loss",
                                           "multiclass_perceptron_loss",
                                           "multiclass_sparsemax_loss",
                                           "perceptron_loss",
                                           "poly_loss_cross_entropy",
                                           "ranking_softmax_loss",
                                           "sparsemax_loss",
                                           "triplet_margin_loss"};

const Probes top("optax", [](Registrar& r) {
  for (const auto& [name, p] : optax_probes())
    if (!kSubmoduleOnly.count(name)) r.add(name, p);
});

const Probes transforms("optax.transforms", [](Registrar& r) {
  add_all(r, optax_probes(),
          {"AddNoiseState",
           "ApplyIfFiniteState",
           "ConditionFn",
           "ConditionallyMaskState",
           "ConditionallyTransformState",
           "EmaState",
           "MaskedNode",
           "MaskedState",
           "MonitorState",
           "MultiSteps",
           "MultiStepsState",
           "NonNegativeParamsState",
           "PartitionState",
           "ShouldSkipUpdateFunction",
           "SnapshotState",
           "TraceState",
           "ZeroNansState",
           "adaptive_grad_clip",
           "add_decayed_weights",
           "add_noise",
           "apply_if_finite",
           "chain",
           "clip",
           "clip_by_block_rms",
           "clip_by_global_norm",
           "conditionally_mask",
           "conditionally_transform",
           "ema",
           "flatten",
           "freeze",
           "keep_params_nonnegative",
           "masked",
           "measure_with_ema",
           "monitor",
           "named_chain",
           "partition",
           "per_example_global_norm_clip",
           "per_example_layer_norm_clip",
           "selective_transform",
           "skip_large_updates",
           "skip_not_finite",
           "snapshot",
           "trace",
           "unitwise_clip",
           "unitwise_norm",
           "zero_nans"});
});

const Probes losses("optax.losses", [](Registrar& r) {
  add_all(r, optax_probes(),
          {"binary_dice_loss",
           "convex_kl_divergence",
           "cosine_distance",
           "cosine_similarity",
           "ctc_loss",
           "ctc_loss_with_forward_probs",
           "dice_loss",
           "generalized_kl_divergence",
           "hinge_loss",
           "huber_loss",
           "kl_divergence",
           "kl_divergence_with_log_targets",
           "l2_loss",
           "log_cosh",
           "make_fenchel_young_loss",
           "multiclass_generalized_dice_loss",
           "multiclass_hinge_loss",
           "multiclass_perceptron_loss",
           "multiclass_sparsemax_loss",
           "ntxent",
           "perceptron_loss",
           "poly_loss_cross_entropy",
           "ranking_softmax_loss",
           "safe_softmax_cross_entropy",
           "sigmoid_binary_cross_entropy",
           "sigmoid_focal_loss",
           "smooth_labels",
           "softmax_cross_entropy",
           "softmax_cross_entropy_with_integer_labels",
           "sparsemax_loss",
           "squared_error",
           "triplet_margin_loss"});
});

const Probes schedules("optax.schedules", [](Registrar& r) {
  add_all(r, optax_probes(),
          {"InjectStatefulHyperparamsState", "Schedule", "WrappedSchedule", "constant_schedule",
           "cosine_decay_schedule", "cosine_onecycle_schedule", "exponential_decay",
           "inject_hyperparams", "inject_stateful_hyperparams", "join_schedules",
           "linear_onecycle_schedule", "linear_schedule", "piecewise_constant_schedule",
           "piecewise_interpolate_schedule", "polynomial_schedule", "sgdr_schedule",
           "warmup_constant_schedule", "warmup_cosine_decay_schedule",
           "warmup_exponential_decay_schedule"});
});

const Probes contrib("optax.contrib", [](Registrar& r) {
  add_all(r, optax_probes(),
          {"DifferentiallyPrivateAggregateState", "differentially_private_aggregate", "dpsgd"});
  namespace o = optim;
  using P = Params;
  r.add("schedule_free", [] { return step(o::schedule_free(o::sgd(0.1), 0.1)); });
  r.add("schedule_free_sgd", [] { return step(o::schedule_free_sgd(0.1)); });
  r.add("schedule_free_adamw", [] { return step(o::schedule_free_adamw(0.1)); });
  r.add("schedule_free_eval_params", [] {
    auto tx = o::schedule_free_sgd(0.1);
    return o::schedule_free_eval_params(tx.init(params()), params());
  });
  r.add("ScheduleFreeState", [] {
    auto tx = o::schedule_free_sgd(0.1);
    using S = o::state_t<decltype(o::sgd(0.1)), P>;
    return as<o::ScheduleFreeState<S, P>>(tx.init(params())).z;
  });
  // Muon orthogonalizes matrices: a 2 x 3 leaf beside the 1-D ones (which muon gives to AdamW).
  auto matrix_params = [] {
    P p = params();
    p["k"] = array({{0.5f, -1.0f, 2.0f}, {0.25f, 1.5f, -0.75f}});
    return p;
  };
  r.add("muon", [matrix_params] {
    auto tx = o::muon<P>(0.1);
    return tx.update(matrix_params(), tx.init(matrix_params()), matrix_params()).first;
  });
  r.add("scale_by_muon", [] {
    auto tx = o::scale_by_muon();
    Array g = array({{0.5f, -1.0f, 2.0f}, {0.25f, 1.5f, -0.75f}});
    return tx.update(g, tx.init(g)).first;
  });
  r.add("MuonState", [] {
    Array g = array({{0.5f, -1.0f}, {0.25f, 1.5f}});
    return as<o::MuonState<Array>>(o::scale_by_muon().init(g)).ns_coeffs;
  });
  r.add("MuonDimensionNumbers", [] {
    return o::orthogonalize_via_newton_schulz(ones({2, 2, 3}), array({3.4445, -4.7750, 2.0315}), 5,
                                              "frobenius", 1e-8, o::MuonDimensionNumbers{{1}, {2}});
  });
  r.add("adopt", [] { return step(o::adopt(0.1)); });
  r.add("scale_by_adopt", [] { return step(o::scale_by_adopt()); });
  r.add("ademamix", [] { return step(o::ademamix(0.1)); });
  r.add("scale_by_ademamix", [] { return step(o::scale_by_ademamix()); });
  r.add("ScaleByAdemamixState",
        [] { return as<o::ScaleByAdemamixState<P>>(o::scale_by_ademamix().init(params())).m2; });
  r.add("simplified_ademamix", [] { return step(o::simplified_ademamix(0.1)); });
  r.add("scale_by_simplified_ademamix", [] { return step(o::scale_by_simplified_ademamix()); });
  r.add("ScaleBySimplifiedAdEMAMixState", [] {
    return as<o::ScaleBySimplifiedAdEMAMixState<P>>(
               o::scale_by_simplified_ademamix().init(params()))
        .n;
  });
  r.add("prodigy", [] { return step(o::prodigy()); });
  r.add("ProdigyState",
        [] { return as<o::ProdigyState<P>>(o::prodigy().init(params())).estim_lr; });
  r.add("dadapt_adamw", [] { return step(o::dadapt_adamw()); });
  r.add("DAdaptAdamWState",
        [] { return as<o::DAdaptAdamWState<P>>(o::dadapt_adamw().init(params())).grad_sum; });
  r.add("dog", [] { return step(o::dog()); });
  r.add("DoGState", [] {
    return as<o::DoGState<P>>(o::scale_by_dog({"distance", 0.1}).init(params())).max_dist;
  });
  r.add("dowg", [] { return step(o::dowg()); });
  r.add("DoWGState",
        [] { return as<o::DoWGState<P>>(o::scale_by_dowg().init(params())).estim_sq_dist; });
  r.add("cocob", [] { return step(o::cocob()); });
  r.add("scale_by_cocob", [] { return step(o::scale_by_cocob()); });
  r.add("COCOBState",
        [] { return as<o::COCOBState<P>>(o::scale_by_cocob().init(params())).reward; });
  r.add("mechanize", [] { return step(o::mechanize(o::sgd(0.1))); });
  r.add("MechanicState", [] {
    using S = o::state_t<decltype(o::sgd(0.1)), P>;
    return as<o::MechanicState<S, P>>(o::mechanize(o::sgd(0.1)).init(params())).s;
  });
  r.add("madgrad", [] { return step(o::madgrad(0.1)); });
  r.add("scale_by_madgrad", [] { return step(o::scale_by_madgrad(0.1)); });
  r.add("MadgradState",
        [] { return as<o::MadgradState<P>>(o::scale_by_madgrad(0.1).init(params())).x0; });
  r.add("acprop", [] { return step(o::acprop(0.1)); });
  r.add("scale_by_acprop", [] { return step(o::scale_by_acprop()); });
  // Sophia's default Hessian estimate differentiates obj_fn (step_extra passes it).
  r.add("sophia", [] { return step_extra(o::sophia(0.1)); });
  r.add("hutchinson_estimator_diag_hessian",
        [] { return step_extra(o::hutchinson_estimator_diag_hessian()); });
  r.add("HutchinsonState", [] {
    return as<o::HutchinsonState<>>(o::hutchinson_estimator_diag_hessian().init(params())).key;
  });
  r.add("SophiaState", [] {
    return as<o::SophiaState<P, o::HutchinsonState<>>>(o::scale_by_sophia().init(params())).nu;
  });
  r.add("reduce_on_plateau",
        [] { return step_extra(o::chain(o::sgd(0.1), o::reduce_on_plateau())); });
  r.add("ReduceLROnPlateauState", [] {
    return as<o::ReduceLROnPlateauState<>>(o::reduce_on_plateau().init(params())).scale;
  });
  r.add("normalize", [] { return step(o::normalize()); });
  r.add("NormalizeState", [] { return as<o::NormalizeState>(o::normalize().init(params())); });
  r.add("sam", [] { return step(o::sam(o::sgd(0.1), o::chain(o::normalize(), o::sgd(0.05)))); });
  r.add("SAMState", [] {
    using S = o::state_t<decltype(o::sgd(0.1)), P>;
    return as<o::SAMState<S, S, P>>(o::sam(o::sgd(0.1), o::sgd(0.05)).init(params())).cache;
  });
  r.add("momo", [] { return step_extra(o::momo()); });
  r.add("momo_adam", [] { return step_extra(o::momo_adam()); });
  r.add("MomoState", [] { return as<o::MomoState<P>>(o::momo().init(params())).lb; });
  r.add("MomoAdamState",
        [] { return as<o::MomoAdamState<P>>(o::momo_adam().init(params())).exp_avg_sq; });
  // GaLore projects matrices: a 2 x 3 leaf beside the 1-D ones (which go through Adam whole).
  r.add("galore", [matrix_params] {
    auto tx = o::galore(0.1, 1);
    return tx.update(matrix_params(), tx.init(matrix_params()), matrix_params()).first;
  });
  r.add("scale_by_galore", [matrix_params] {
    auto tx = o::scale_by_galore(1);
    return tx.update(matrix_params(), tx.init(matrix_params())).first;
  });
  r.add("GaLoreState", [matrix_params] {
    using S = o::state_t<o::ScaleByAdam, P>;
    return as<o::GaLoreState<S, P>>(o::scale_by_galore(1).init(matrix_params())).projector;
  });
  r.add("GaLoreDimensionNumbers", [] {
    auto tx =
        o::scale_by_galore(1, 200, 1.0, o::scale_by_adam(), o::GaLoreDimensionNumbers{{1}, {0, 2}});
    return tx.init(ones({2, 3, 2})).projector;
  });
  r.add("split_real_and_imaginary", [] {
    auto tx = o::split_real_and_imaginary(o::adam(0.1));
    Array z = complex(x(), x());
    return tx.update(z, tx.init(z), z).first;
  });
  r.add("SplitRealAndImaginaryState", [] {
    using S = o::state_t<o::ScaleByAdam, Tree>;  // the inner sees a split leaf as a Tree
    return as<o::SplitRealAndImaginaryState<S>>(
               o::split_real_and_imaginary(o::scale_by_adam()).init(x()))
        .inner_state.mu;
  });
});

const Probes assignment("optax.assignment", [](Registrar& r) {
  r.add("hungarian_algorithm", [] { return optim::assignment::hungarian_algorithm(m()); });
  r.add("base_hungarian_algorithm",
        [] { return optim::assignment::base_hungarian_algorithm(m()); });
});

const Probes microbatching("optax.microbatching", [](Registrar& r) {
  namespace mb = optim::microbatching;
  add_all(r, optax_probes(), {"microbatch"});
  r.add("reshape_batch_axis", [] { return mb::reshape_batch_axis(ones({4, 2}), 2); });
  r.add("AccumulationType", [] {
    return mb::microbatch([](const Array& v) { return v * 2.0f; }, argnums<0>, 1,
                          mb::AccumulationType::CONCAT)(x());
  });
  r.add("Accumulator", [] {
    mb::Accumulator last{[](const ShapeDtype& s) { return Tree(zeros(s.shape, s.dtype)); },
                         [](const Tree&, const Array& v, const Array&) { return Tree(v); },
                         [](const Tree& c) { return c.leaf(); },
                         [](const Array& v) { return v[-1]; }};
    return mb::microbatch([](const Array& v) { return sum(v); }, argnums<0>, 1, last)(x());
  });
  r.add("micro_vmap",
        [] { return mb::micro_vmap([](const Array& v) { return v * v; }, 0, 0, 1)(x()); });
  r.add("micro_grad", [] {
    auto loss = [](const Array& w, const Array& v) { return sum(w * v); };
    return mb::micro_grad(loss, argnums<0>, argnums<1>)(x(), ones({2, 3})).first;
  });
});

const Probes tree("optax.tree", [](Registrar& r) {
  for (const auto& [name, p] : tree_probes()) r.add(name, p);
});

const Probes tree_utils("optax.tree_utils", [](Registrar& r) {
  for (const auto& [name, p] : tree_probes()) r.add("tree_" + name, p);
  namespace tu = optim::tree_utils;
  r.add("tree_l2_norm", [] { return tu::tree_l2_norm(params()); });
  r.add("tree_l1_norm", [] { return tu::tree_norm(params(), "1"); });
  r.add("tree_linf_norm", [] { return tu::tree_norm(params(), "inf"); });
  r.add("tree_scalar_mul", [] { return tu::tree_scale(2.0, params()); });
  r.add("tree_add_scalar_mul", [] { return tu::tree_add_scale(params(), 2.0, grads()); });
  r.add("NamedTupleKey", [] {
    auto is_adam = [](const tu::StateKeyPath& path, const Tree&) {
      return path.back() == tu::StateKeyEntry(tu::NamedTupleKey{"ScaleByAdamState", "count"});
    };
    return tu::tree_get(optim::adam(0.1).init(params()), "count", is_adam);
  });
});

// optax.projections, optax.second_order and optax.perturbations: each function called once.
const Probes projections("optax.projections", [](Registrar& r) {
  namespace pj = optim::projections;
  r.add("projection_box", [] { return pj::projection_box(x(), -0.5, 0.5); });
  r.add("projection_halfspace", [] { return pj::projection_halfspace(params(), grads(), 0.1); });
  r.add("projection_hypercube", [] { return pj::projection_hypercube(x()); });
  r.add("projection_hyperplane", [] { return pj::projection_hyperplane(params(), grads(), 0.1); });
  r.add("projection_l1_ball", [] { return pj::projection_l1_ball(params()); });
  r.add("projection_l1_sphere", [] { return pj::projection_l1_sphere(params(), 2.0); });
  r.add("projection_l2_ball", [] { return pj::projection_l2_ball(params()); });
  r.add("projection_l2_sphere", [] { return pj::projection_l2_sphere(params(), 2.0); });
  r.add("projection_linf_ball", [] { return pj::projection_linf_ball(params()); });
  r.add("projection_non_negative", [] { return pj::projection_non_negative(params()); });
  r.add("projection_simplex", [] { return pj::projection_simplex(params()); });
  r.add("projection_vector", [] { return pj::projection_vector(params(), grads()); });
});

// A loss(params, inputs, targets) for optax.second_order: squared error of a linear model.
Array linear_loss(const Params& p, const Array& inputs, const Array& targets) {
  return sum(square(matmul(inputs, p.at("w")) + p.at("b") - targets));
}

const Probes second_order("optax.second_order", [](Registrar& r) {
  namespace so = optim::second_order;
  r.add("fisher_diag", [] { return so::fisher_diag(linear_loss, params(), m3(), x()); });
  r.add("hessian_diag", [] { return so::hessian_diag(linear_loss, params(), m3(), x()); });
  r.add("hvp", [] {
    return so::hvp(linear_loss, array({1.0f, 0.0f, 0.0f, 0.0f}), params(), m3(), x());
  });
});

const Probes perturbations("optax.perturbations", [](Registrar& r) {
  namespace pt = optim::perturbations;
  r.add("Gumbel", [] { return pt::Gumbel().sample(random::PRNGKey(0), {3}); });
  r.add("Normal", [] { return pt::Normal().log_prob(x()); });
  r.add("make_perturbed_fun", [] {
    auto f = [](const Array& v) { return sum(maximum(v, 0.0f)); };
    return grad(optim::perturbations::make_perturbed_fun(f, 8), argnums<1>)(random::PRNGKey(0),
                                                                            x());
  });
});

}  // namespace
