// linum against Flax's fixtures (fixture_suite.hpp): for each model of the zoo and each threefry
// mode, linum's init from PRNGKey(0) has the fixture's params to 0 ulps and writes the fixture's
// checkpoint bytes exactly; from_bytes loads the fixture; apply, grad and captured intermediates
// give the fixture's to float32 rounding; optax trajectories follow the fixture's step by step;
// nn::tabulate prints the fixture's text; capture_intermediates through lifted modules captures
// what the real Flax's does.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include <linum/nn/serialization.hpp>
#include <linum/optim/optim.hpp>

#include "fixture_suite.hpp"

namespace test_fidelity {

namespace nn = linum::nn;
namespace ser = linum::serialization;
using fidelity::Model;
using linum::Array;
using linum::Shape;
using linum::Tree;
using Inputs = std::vector<Array>;

namespace {

// The zoo's composite models, as scripts/flax_fixtures.py writes them in Flax.
struct MLP : nn::Module<MLP> {
  Array call(const Array& x) {
    const Array h = nn::relu(nn::Dense(5)(x));
    return nn::Dense(3)(h);
  }
};
template <class Cell>
struct RNNModel : nn::Module<RNNModel<Cell>> {
  Array call(const Array& x) { return nn::RNN(Cell(4))(x); }
  // One Python class with a cell_type field: Flax prints "RNNModel" (its auto-name prefix too).
  std::string type_name() const override { return "RNNModel"; }
};
struct BidirectionalModel : nn::Module<BidirectionalModel> {
  Array call(const Array& x) {
    return nn::Bidirectional(nn::RNN(nn::LSTMCell(4)), nn::RNN(nn::GRUCell(5)))(x);
  }
};
struct ScanLSTM : nn::Module<ScanLSTM> {
  Array call(const Array& x) {
    auto lstm = nn::scan(nn::LSTMCell(4), {.variable_broadcast = "params",
                                           .split_rngs = {{"params", false}},
                                           .in_axes = {1},
                                           .out_axes = 1});
    const Shape step = {x.shape(0), x.shape(2)};
    return lstm(lstm.initialize_carry(linum::random::key(0), step), x).second;
  }
};
struct RematDense : nn::Module<RematDense> {
  Array call(const Array& x) { return nn::remat(nn::Dense(3))(x); }
};
struct JitDense : nn::Module<JitDense> {
  Array call(const Array& x) { return nn::jit(nn::Dense(3))(x); }
};
struct VmapDense : nn::Module<VmapDense> {
  Array call(const Array& x) {
    return nn::vmap(
        nn::Dense(3),
        {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}, .in_axes = 0})(x);
  }
};
struct ResidualBlock : nn::Module<ResidualBlock> {
  std::pair<Array, Tree> call(const Array& c) { return {c + nn::relu(nn::Dense(4)(c)), Tree()}; }
};
struct ScanResidual : nn::Module<ScanResidual> {
  Array call(const Array& x) {
    return nn::scan(
               ResidualBlock(),
               {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}, .length = 3})(x)
        .first;
  }
};

struct SpectralDense : nn::Module<SpectralDense> {
  Array call(const Array& x) { return nn::SpectralNorm(nn::Dense(3))(x, true); }
};
struct ConvLSTMModel : nn::Module<ConvLSTMModel> {
  Array call(const Array& x) {
    return nn::RNN(nn::ConvLSTMCell({.features = 3, .kernel_size = {3, 3}}))(x);
  }
};
// nn.remat inside nn.scan's neighbour: a remat Dense feeding the scanned residual block.
struct RematScanDense : nn::Module<RematScanDense> {
  Array call(const Array& x) { return ScanResidual()(nn::remat(nn::Dense(4))(x)); }
};

// A layer with one positional input: init(key, x) / apply(variables, x).
template <class M>
Model unary(std::string name, M m, std::set<std::string> rounded_leaves = {}) {
  return {std::move(name),
          [m](const Array& key, const Inputs& in) { return m.init(key, in.at(0)); },
          [m](const Tree& v, const Inputs& in) { return m.apply(v, in.at(0)); },
          std::move(rounded_leaves)};
}

// The recurrent kernels of a cell under params/<cell>: orthogonal, drawn through a QR.
std::set<std::string> recurrent_kernels(const std::string& cell,
                                        const std::vector<std::string>& denses) {
  std::set<std::string> s;
  for (const auto& d : denses) s.insert("/params/" + cell + "/" + d + "/kernel");
  return s;
}
const std::vector<std::string> kLSTMh = {"hi", "hf", "hg", "ho"};
const std::vector<std::string> kGRUh = {"hr", "hz", "hn"};

// The MLP also captures its intermediates.
Model mlp() {
  Model m = unary("mlp", MLP());
  m.intermediates = [](const Tree& v, const Inputs& in) {
    return MLP().apply(v, in.at(0), {.capture_intermediates = true}).second["intermediates"];
  };
  return m;
}

struct DropoutMLP : nn::Module<DropoutMLP> {
  Array call(const Array& x) {
    const Array h = nn::Dropout(0.5)(nn::relu(nn::Dense(5)(x)), false);
    return nn::Dense(3)(h);
  }
};
// Applied with rngs={'dropout': PRNGKey(1)}, as scripts/flax_fixtures.py does.
Model dropout_mlp() {
  return {"dropout_mlp",
          [](const Array& key, const Inputs& in) { return DropoutMLP().init(key, in.at(0)); },
          [](const Tree& v, const Inputs& in) {
            return DropoutMLP().apply(v, in.at(0),
                                      linum::lift::Rngs{{"dropout", linum::random::key(1)}});
          }};
}

// BatchNorm in training mode: applied with mutable=['batch_stats'], the output alone.
Model batch_norm() {
  const nn::BatchNorm bn({.use_running_average = false});
  return {"batch_norm", [bn](const Array& key, const Inputs& in) { return bn.init(key, in.at(0)); },
          [bn](const Tree& v, const Inputs& in) {
            return bn.apply(v, in.at(0), {.mutable_ = linum::lift::Filter{"batch_stats"}}).first;
          }};
}

// SpectralNorm(Dense) called with update_stats=True: applied with mutable=['batch_stats'].
Model spectral_norm() {
  const std::set<std::string> normalized = {"/params/Dense_0/kernel",
                                            "/batch_stats/SpectralNorm_0/Dense_0/kernel/u",
                                            "/batch_stats/SpectralNorm_0/Dense_0/kernel/sigma"};
  return {"spectral_norm",
          [](const Array& key, const Inputs& in) { return SpectralDense().init(key, in.at(0)); },
          [](const Tree& v, const Inputs& in) {
            return SpectralDense()
                .apply(v, in.at(0), {.mutable_ = linum::lift::Filter{"batch_stats"}})
                .first;
          },
          normalized};
}

std::vector<Model> zoo() {
  return {
      unary("dense", nn::Dense(3)),
      mlp(),
      unary("conv", nn::Conv({.features = 4, .kernel_size = {3, 3}})),
      unary("conv_circular",
            nn::Conv({.features = 3, .kernel_size = {3, 3}, .padding = "CIRCULAR"})),
      unary("embed", nn::Embed(7, 3)),
      unary("layer_norm", nn::LayerNorm()),
      unary("sequential", nn::Sequential({nn::Dense(5), nn::relu, nn::Dense(3)})),
      dropout_mlp(),
      unary("prelu", nn::PReLU()),
      unary("dense_general", nn::DenseGeneral({.features = {2, 5}, .axis = {-2, -1}})),
      unary("einsum", nn::Einsum({.shape = {4, 2, 3}, .einsum_str = "btc,cde->btde"})),
      unary("conv_transpose",
            nn::ConvTranspose({.features = 3, .kernel_size = {3, 3}, .strides = {2, 2}})),
      unary("group_norm", nn::GroupNorm({.num_groups = 2})),
      unary("rms_norm", nn::RMSNorm()),
      batch_norm(),
      unary("remat_dense", RematDense()),
      unary("attention", nn::MultiHeadDotProductAttention({.num_heads = 2, .qkv_features = 4})),
      unary("jit_dense", JitDense()),
      unary("vmap_dense", VmapDense()),
      unary("scan_residual", ScanResidual()),
      unary("rnn_lstm", RNNModel<nn::LSTMCell>(), recurrent_kernels("LSTMCell_0", kLSTMh)),
      unary("rnn_optimized_lstm", RNNModel<nn::OptimizedLSTMCell>(),
            recurrent_kernels("OptimizedLSTMCell_0", kLSTMh)),
      unary("rnn_gru", RNNModel<nn::GRUCell>(), recurrent_kernels("GRUCell_0", kGRUh)),
      unary("rnn_simple", RNNModel<nn::SimpleCell>(), recurrent_kernels("SimpleCell_0", {"h"})),
      unary("scan_lstm", ScanLSTM(), recurrent_kernels("ScanLSTMCell_0", kLSTMh)),
      unary("bidirectional", BidirectionalModel(),
            [] {
              auto s = recurrent_kernels("LSTMCell_0", kLSTMh);
              s.merge(recurrent_kernels("GRUCell_0", kGRUh));
              return s;
            }()),
      // Written by the real Flax only (scripts/flax_fixtures.py's EXTRA_MODELS).
      unary("conv_local", nn::ConvLocal({.features = 3, .kernel_size = {3, 3}})),
      unary("conv_batch_dims", nn::Conv({.features = 2, .kernel_size = {3}})),
      unary("instance_norm", nn::InstanceNorm()),
      spectral_norm(),
      unary("weight_norm", nn::WeightNorm(nn::Dense(3)), {"/params/layer_instance/kernel"}),
      unary("rnn_mgu", RNNModel<nn::MGUCell>(), recurrent_kernels("MGUCell_0", {"hf", "hn"})),
      unary("conv_lstm", ConvLSTMModel()),
      unary("remat_scan_dense", RematScanDense()),
  };
}

}  // namespace

TEST_CASE(
    "fidelity: linum's init of every zoo model is the fixture's, bit for bit and byte for byte") {
  for (const auto& mode : fidelity::kModes) {
    linum::random::ThreefryPartitionableScope scope(mode.partitionable);
    for (const Model& m : zoo()) {
      INFO(m.name, " (", std::string(mode.name), ")");
      const fidelity::Fixture f = fidelity::read_fixture(m.name, mode);
      const Tree init = m.init(linum::random::key(0), f.inputs());
      fidelity::check_bit_identical(init, ser::msgpack_restore(f.variables_bytes),
                                    m.rounded_leaves);
      // The fixture loads into linum's init (same structure, values within rounding) and linum
      // writes it back byte for byte; without rounded leaves linum's init is those bytes.
      const Tree loaded = ser::from_bytes(init, f.variables_bytes);
      fidelity::check_bit_identical(loaded, init, m.rounded_leaves);
      CHECK(ser::to_bytes(loaded) == f.variables_bytes);
      if (m.rounded_leaves.empty()) CHECK(ser::to_bytes(init) == f.variables_bytes);
    }
  }
}

TEST_CASE(
    "fidelity: outputs and grads of every zoo model match the fixture's to float32 rounding") {
  for (const auto& mode : fidelity::kModes) {
    linum::random::ThreefryPartitionableScope scope(mode.partitionable);
    for (const Model& m : zoo()) {
      INFO(m.name, " (", std::string(mode.name), ")");
      const fidelity::Fixture f = fidelity::read_fixture(m.name, mode);
      const Inputs in = f.inputs();
      // The fixture's own variables, so outputs are checked even where an init differed.
      const Tree variables = ser::msgpack_restore(f.variables_bytes);
      fidelity::check_close(Tree(m.apply(variables, in)), f.case_tree["output"]);
      if (f.case_tree.as_dict().contains("intermediates")) {
        REQUIRE(m.intermediates);
        // Flax writes the sown tuples as {'0': ...} state dicts.
        fidelity::check_close(ser::to_state_dict(m.intermediates(variables, in)),
                              f.case_tree["intermediates"]);
      }
      if (!f.case_tree.as_dict().contains("grads")) continue;
      const Array ct = f.case_tree["cotangent"].leaf();
      const Tree grads =
          linum::grad([&](const Tree& v) { return linum::sum(m.apply(v, in) * ct); })(variables);
      fidelity::check_close(grads, f.case_tree["grads"]);
    }
  }
}

namespace {

// Four steps of `tx` on nn.Dense(3)'s variables from the fixture, loss mean((dense(x) - target)^2):
// the loss before each step must be the fixture's output, the variables after it its trajectory.
template <class Tx>
void check_trajectory(const std::string& name, const Tx& tx) {
  namespace optim = linum::optim;
  for (const auto& mode : fidelity::kModes) {
    INFO(name, " (", std::string(mode.name), ")");
    // The mode matters to optimizers that draw (noisy_sgd's add_noise).
    linum::random::ThreefryPartitionableScope scope(mode.partitionable);
    const fidelity::Fixture f = fidelity::read_fixture(name, mode);
    const Array x = f.inputs().at(0), target = f.inputs().at(1);
    const nn::Dense dense(3);
    auto loss = [&](const Tree& v) {
      return linum::mean(linum::square(dense.apply(v, x) - target));
    };
    Tree v = ser::msgpack_restore(f.variables_bytes);
    auto state = tx.init(v);
    std::vector<Array> losses;
    for (int step = 1; step <= 4; ++step) {
      losses.push_back(loss(v));
      auto [u, next] = tx.update(linum::grad(loss)(v), state, v);
      state = next;
      v = optim::apply_updates(v, u);
      fidelity::check_close(v, f.case_tree["trajectory"][std::to_string(step)]);
    }
    fidelity::check_close(Tree(linum::stack(losses)), f.case_tree["output"]);
  }
}

}  // namespace

TEST_CASE("fidelity: optax trajectories (sgd with momentum, adam, adamw) match the fixture's") {
  namespace optim = linum::optim;
  check_trajectory("optax_sgd_momentum", optim::sgd(0.1, 0.9));
  check_trajectory("optax_adam", optim::adam(0.05));
  check_trajectory("optax_adamw", optim::adamw(0.05, 0.9, 0.999, 1e-8, 0.0, std::nullopt, 0.1));
}

TEST_CASE("fidelity: the rest of optax's alias.py (written by the real optax) match the fixtures") {
  namespace optim = linum::optim;
  check_trajectory("optax_nesterov", optim::sgd(0.1, 0.9, true));
  check_trajectory("optax_nadam", optim::nadam(0.05));
  check_trajectory("optax_rmsprop", optim::rmsprop(0.05));
  check_trajectory("optax_rmsprop_centered", optim::rmsprop<true>(0.05, 0.9, 1e-8, 0.0, true, 0.5));
  check_trajectory("optax_adagrad", optim::adagrad(0.1));
  check_trajectory("optax_lamb", optim::lamb(0.05));
  check_trajectory("optax_lion", optim::lion(0.01));
  check_trajectory("optax_adafactor", optim::adafactor(0.05));
  check_trajectory("optax_adabelief", optim::adabelief(0.05));
  check_trajectory("optax_adadelta", optim::adadelta(0.5));
  check_trajectory("optax_adamax", optim::adamax(0.05));
  check_trajectory("optax_adamaxw", optim::adamaxw(0.05));
  check_trajectory("optax_adan", optim::adan(0.05));
  check_trajectory("optax_amsgrad", optim::amsgrad(0.05));
  check_trajectory("optax_fromage", optim::fromage(0.05));
  check_trajectory("optax_lars", optim::lars(0.05));
  check_trajectory("optax_noisy_sgd", optim::noisy_sgd(0.05));
  check_trajectory("optax_novograd", optim::novograd(0.05));
  check_trajectory("optax_optimistic_gradient_descent", optim::optimistic_gradient_descent(0.05));
  check_trajectory("optax_radam", optim::radam(0.05));
  check_trajectory("optax_rprop", optim::rprop(0.05));
  check_trajectory("optax_sgd_schedule",
                   optim::sgd(optim::warmup_cosine_decay_schedule(0.0, 0.1, 2, 4)));
  check_trajectory("optax_sign_sgd", optim::sign_sgd(0.05));
  check_trajectory("optax_sm3", optim::sm3(0.05));
  check_trajectory("optax_yogi", optim::yogi(0.05));
  check_trajectory("optax_chain_clip_adam",
                   optim::chain(optim::clip_by_global_norm(0.5), optim::adam(0.05)));
}

namespace {

// Flax's tabulate text without rich's ANSI styling, each line right-trimmed.
std::vector<std::string> plain_lines(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out.push_back(line);
      line.clear();
    } else if (text[i] == '\x1b') {
      while (i < text.size() && text[i] != 'm') ++i;  // CSI ... m
    } else {
      line += text[i];
    }
  }
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

template <class M>
void check_tabulate(const std::string& name, const M& module) {
  INFO(name);
  const std::string want =
      fidelity::read_text(std::string(LINUM_FIDELITY_FIXTURES) + "/" + name + ".tabulate.txt");
  const fidelity::Fixture f = fidelity::read_fixture(name, fidelity::kModes[0]);
  // The fixtures were written outside a terminal: rich's default width of 80.
  const std::string got =
      nn::tabulate(module, linum::random::key(0), {.width = 80})(f.inputs().at(0));
  const auto g = plain_lines(got), w = plain_lines(want);
  for (std::size_t i = 0; i < std::max(g.size(), w.size()); ++i) {
    INFO("line " << i);
    CHECK((i < g.size() ? g[i] : "<none>") == (i < w.size() ? w[i] : "<none>"));
  }
}

}  // namespace

TEST_CASE("fidelity: nn::tabulate's text is Flax's (rich's styling aside)") {
  check_tabulate("mlp", MLP());
  check_tabulate("rnn_lstm", RNNModel<nn::LSTMCell>());
  check_tabulate("rnn_optimized_lstm", RNNModel<nn::OptimizedLSTMCell>());
  // Keyword arguments in the inputs column: those Bidirectional passes its RNNs (init_key: None,
  // ...), SpectralNorm's keyword-only update_stats.
  check_tabulate("bidirectional", BidirectionalModel());
  check_tabulate("spectral_norm", SpectralDense());
  check_tabulate("scan_lstm", ScanLSTM());
  check_tabulate("conv_lstm", ConvLSTMModel());
}

TEST_CASE("fidelity: to_bytes of TrainState.create(params, adam) is the fixture's, and it loads") {
  namespace optim = linum::optim;
  for (const auto& mode : fidelity::kModes) {
    linum::random::ThreefryPartitionableScope scope(mode.partitionable);
    INFO(std::string(mode.name));
    const fidelity::Fixture f = fidelity::read_fixture("train_state_adam", mode);
    const Tree params = nn::Dense(3).init(linum::random::key(0), f.inputs().at(0))["params"];
    const auto state = optim::create_train_state(nullptr, params, optim::adam(0.05));
    CHECK(ser::to_bytes(state) == f.variables_bytes);
    const auto loaded = ser::from_bytes(state, f.variables_bytes);
    fidelity::check_bit_identical(loaded.params, params);
    CHECK(ser::to_bytes(loaded) == f.variables_bytes);
  }
}

namespace {

// The paths and ranks of apply(..., capture_intermediates=True)'s 'intermediates'.
std::map<std::string, int> captured(const Tree& intermediates) {
  std::map<std::string, int> out;
  for (const auto& [path, leaf] : linum::pytree::tree_leaves_with_path(intermediates))
    out[linum::pytree::keystr(path, true, "/")] = leaf.ndim();
  return out;
}

template <class M>
std::map<std::string, int> capture_of(const M& m, const Array& x) {
  const Tree v = m.init(linum::random::key(0), x);
  return captured(m.apply(v, x, {.capture_intermediates = true}).second["intermediates"]);
}

struct RNNWithCarry : nn::Module<RNNWithCarry> {
  std::pair<Tree, Array> call(const Array& x) {
    return nn::RNN(nn::LSTMCell(4)).call_with_carry(x);
  }
};

}  // namespace

TEST_CASE(
    "fidelity: capture_intermediates through RNN and lifted modules captures what Flax's does") {
  // The real Flax 0.12.10's paths (scripts/reference/flax_probes.py, 2026-11-27): an RNN called
  // with return_carry sows its ((c, h), outputs); nn.remat sows the wrapped Dense's output once;
  // inside nn.vmap and nn.scan nothing is sown ('intermediates' is not one of their variable
  // collections), only the top module's own output.
  using Paths = std::map<std::string, int>;
  CHECK(capture_of(RNNWithCarry(), linum::ones({2, 5, 3})) == Paths{{"RNN_0/__call__/0/0/0", 2},
                                                                    {"RNN_0/__call__/0/0/1", 2},
                                                                    {"RNN_0/__call__/0/1", 3},
                                                                    {"__call__/0/0/0", 2},
                                                                    {"__call__/0/0/1", 2},
                                                                    {"__call__/0/1", 3}});
  CHECK(capture_of(RematDense(), linum::ones({4, 5})) ==
        Paths{{"CheckpointDense_0/__call__/0", 2}, {"__call__/0", 2}});
  CHECK(capture_of(VmapDense(), linum::ones({2, 4, 5})) == Paths{{"__call__/0", 3}});
  CHECK(capture_of(ScanResidual(), linum::ones({2, 4})) == Paths{{"__call__/0", 2}});
}

}  // namespace test_fidelity
