// Under mpirun (2 and 4 processes): data-parallel training as users write it. Every process makes
// the same global batch and trains on its shard (grads pmean'd over "devices", BatchNorm's
// statistics synced through axis_name); one process training on the whole batch with the same
// optimizer is the reference, computed on every process. Also: parameters stay bit-identical
// across processes, initial parameters come from process 0, checkpoints from process 0 only.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>

#include <linum/autodiff/random/random.hpp>
#include <linum/distributed/distributed.hpp>
#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>
#include <linum/optim/optim.hpp>

#include "dist_testing.hpp"

namespace test_data_parallel {

using namespace linum;
namespace dist = linum::distributed;
namespace nn = linum::nn;
using lift::Filter;
using linum::testing::check_error;
using linum::testing::close;
using linum::testing::values;

namespace {

// Dense -> BatchNorm (batch statistics, synced over axis_name when given) -> relu -> Dense.
struct Net : nn::Module<Net> {
  std::string axis_name;
  explicit Net(std::string a = {}) : axis_name(std::move(a)) {}
  Array call(const Array& x) {
    Array h = nn::Dense(16)(x);
    h = nn::BatchNorm({.use_running_average = false, .momentum = 0.9, .axis_name = axis_name})(h);
    return nn::log_softmax(nn::Dense(3)(nn::relu(h)));
  }
};

constexpr std::int64_t kGlobal = 24;  // divisible by 2, 3 and 4 processes

struct Batch {
  Array x, labels;
};

// Step t's global batch: the same on every process.
Batch global_batch(int t) {
  Array x = random::normal(random::key(100 + t), {kGlobal, 5});
  Array y = argmax(slice(x, {{}, {0, 3}}) + 0.3 * slice(x, {{}, {2, 5}}), 1);
  return {x, one_hot(y, 3)};
}

Batch local_part(const Batch& b) {
  const dist::Shard s = dist::shard_range(kGlobal);
  return {slice(b.x, {{s.begin, s.end}}), slice(b.labels, {{s.begin, s.end}})};
}

// One training step: loss, grads (pmean'd over axis_name when given), optimizer update.
template <class Tx, class State>
std::tuple<Tree, Tree, State, Array> train_step(const Tx& tx, const Tree& params, const Tree& stats,
                                                const State& opt_state, const Batch& b,
                                                const std::string& axis_name) {
  auto loss_fn = [&](const Tree& p) {
    auto [logp, mutated] = Net(axis_name).apply(Tree{{"params", p}, {"batch_stats", stats}}, b.x,
                                                {.mutable_ = Filter{"batch_stats"}});
    return std::make_pair(-mean(sum(b.labels * logp, 1)), mutated["batch_stats"]);
  };
  auto [value, grads] = value_and_grad(loss_fn, has_aux)(params);
  auto [loss, new_stats] = value;
  if (!axis_name.empty()) {
    grads = pmean(grads, axis_name);
    loss = pmean(loss, axis_name);
  }
  auto [updates, new_state] = tx.update(grads, opt_state, params);
  return {optim::apply_updates(params, updates), new_stats, new_state, loss};
}

int nproc_last() { return dist::process_count() - 1; }

bool trees_close(const Tree& a, const Tree& b, double rtol, double atol) {
  const Arrays la = detail::tree_arrays(a), lb = detail::tree_arrays(b);
  if (la.size() != lb.size()) return false;
  for (std::size_t i = 0; i < la.size(); ++i)
    if (!close(la[i], lb[i], rtol, atol)) return false;
  return true;
}

}  // namespace

TEST_CASE(
    "a data-parallel step over the processes equals one process training on the whole batch") {
  Tree variables = Net().init(random::key(0), slice(global_batch(0).x, {{0, 2}}));
  auto tx = optim::sgd(0.1, 0.9);
  Tree params = variables["params"], stats = variables["batch_stats"];
  auto opt = tx.init(params);
  Tree rparams = params, rstats = stats;
  auto ropt = opt;
  for (int t = 0; t < 10; ++t) {
    const Batch b = global_batch(t);
    auto [p, s, o, loss] = dist::pmap([&](const Batch& local) {
      return train_step(tx, params, stats, opt, local, "devices");
    })(local_part(b));
    auto [rp, rs, ro, rloss] = train_step(tx, rparams, rstats, ropt, b, "");
    params = p, stats = s, opt = o, rparams = rp, rstats = rs, ropt = ro;
    INFO("step ", t);
    CHECK(close(loss, rloss, 1e-5, 1e-6));
    if (t == 0) {
      CHECK(trees_close(params, rparams, 1e-5, 1e-6));
      CHECK(trees_close(stats, rstats, 1e-5, 1e-6));  // BatchNorm statistics of the whole batch
    }
  }
  CHECK(trees_close(params, rparams, 1e-4, 1e-5));
  CHECK(trees_close(stats, rstats, 1e-4, 1e-5));
  // The data-parallel run really differs from training each shard alone.
  auto [alone, s_alone, o_alone, l_alone] =
      train_step(tx, variables["params"], variables["batch_stats"], tx.init(variables["params"]),
                 local_part(global_batch(0)), "");
  auto [dp1, s1, o1, l1] = dist::pmap([&](const Batch& local) {
    return train_step(tx, variables["params"], variables["batch_stats"],
                      tx.init(variables["params"]), local, "devices");
  })(local_part(global_batch(0)));
  CHECK_FALSE(trees_close(alone, dp1, 1e-3, 1e-4));
}

TEST_CASE(
    "parameters stay bit-identical on every process after 10 adam steps on different shards") {
  Tree variables = Net().init(random::key(0), slice(global_batch(0).x, {{0, 2}}));
  auto tx = optim::adam(1e-2);
  Tree params = variables["params"], stats = variables["batch_stats"];
  auto opt = tx.init(params);
  for (int t = 0; t < 10; ++t) {
    auto [p, s, o, loss] = dist::pmap([&](const Batch& local) {
      return train_step(tx, params, stats, opt, local, "devices");
    })(local_part(global_batch(t)));
    params = p, stats = s, opt = o;
  }
  CHECK(dist::is_replicated(params));
  CHECK(dist::is_replicated(stats));
  CHECK(dist::is_replicated(opt));
  // Without the pmean each process follows its own shard: the check sees it.
  auto [p_own, s_own, o_own, l_own] =
      train_step(tx, params, stats, opt, local_part(global_batch(10)), "");
  CHECK_FALSE(dist::is_replicated(p_own));
}

TEST_CASE("broadcast_one_to_all gives every process process 0's initial parameters") {
  const Array x = slice(global_batch(0).x, {{0, 2}});
  Tree mine = Net().init(random::key(dist::process_index()), x)["params"];
  CHECK(dist::is_replicated(mine) == false);
  Tree params = dist::broadcast_one_to_all(mine);
  CHECK(dist::is_replicated(params));
  const Tree expected = Net().init(random::key(0), x)["params"];
  const Arrays got = detail::tree_arrays(params), want = detail::tree_arrays(expected);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(values(got[i]) == values(want[i]));
  // A single Array, and a structure that differs on one process: an error on every process.
  CHECK(
      dist::broadcast_one_to_all(Array(static_cast<float>(dist::process_index()))).item<float>() ==
      0.0f);
  const Array odd = dist::process_index() == 1 ? zeros({3}) : zeros({2});
  check_error<ValueError>(
      [&] { dist::broadcast_one_to_all(odd); },
      {"broadcast_one_to_all", "different structures", "process 0: float32(2,);"});
}

TEST_CASE("save_checkpoint: process 0 writes, every process restores the same tree") {
  // A directory named after process 0's pid, the same on every process.
  const int pid = dist::broadcast_one_to_all(full(Shape{}, ::getpid(), int32)).item<int>();
  const std::string dir =
      std::filesystem::temp_directory_path() / ("linum_dist_ckpt_" + std::to_string(pid));
  if (dist::process_index() == 0) std::filesystem::create_directories(dir);
  dist::sync_global_devices("mkdir");
  // Each process names its own path: only process 0's file may appear.
  const std::string mine = dir + "/ckpt_" + std::to_string(dist::process_index()) + ".msgpack";
  Tree params = Net().init(random::key(0), slice(global_batch(0).x, {{0, 2}}))["params"];
  const bool wrote = dist::save_checkpoint(mine, params);
  CHECK(wrote == (dist::process_index() == 0));
  CHECK(std::filesystem::exists(mine) == (dist::process_index() == 0));
  CHECK_FALSE(std::filesystem::exists(mine + ".tmp"));
  Tree back = dist::restore_checkpoint(dir + "/ckpt_0.msgpack");
  CHECK(trees_close(back, params, 0, 0));
  check_error<dist::DistributedError>(
      [&] { dist::save_checkpoint(dir + "/no/such/dir/ckpt", params); },
      {"process 0 failed to write", "no/such/dir"});
  dist::sync_global_devices("checked");
  if (dist::process_index() == 0) std::filesystem::remove_all(dir);
}

TEST_CASE(
    "shard_range: the processes' parts tile [0, n) in order, sizes differing by at most one") {
  auto gather = dist::pmap([](const Array& a) { return all_gather(a, "devices"); });
  for (std::int64_t n : {0, 1, 3, 5, 24, 1001}) {
    const dist::Shard s = dist::shard_range(n);
    const std::vector<double> all = values(
        gather(array({static_cast<std::int32_t>(s.begin), static_cast<std::int32_t>(s.end)})));
    INFO("n = ", n);
    CHECK(all.front() == 0);
    CHECK(all.back() == static_cast<double>(n));
    double smallest = n, largest = 0;
    for (int q = 0; q < dist::process_count(); ++q) {
      if (q > 0) CHECK(all[2 * q] == all[2 * q - 1]);  // begins where the previous part ends
      smallest = std::min(smallest, all[2 * q + 1] - all[2 * q]);
      largest = std::max(largest, all[2 * q + 1] - all[2 * q]);
    }
    CHECK(largest - smallest <= 1);
  }
}

TEST_CASE("is_replicated answers false on every process when one differs in shape or value") {
  CHECK(dist::is_replicated(zeros({4})));
  CHECK_FALSE(dist::is_replicated(dist::process_index() == 1 ? zeros({5}) : zeros({4})));
  CHECK_FALSE(dist::is_replicated(dist::process_index() == nproc_last() ? ones({4}) : zeros({4})));
  dist::sync_global_devices("after is_replicated");  // still in step
}

}  // namespace test_data_parallel
