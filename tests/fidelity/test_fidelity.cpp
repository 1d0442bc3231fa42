// linum against Flax's fixtures (fixture_suite.hpp): for each model of the zoo and each threefry
// mode, linum's init from PRNGKey(0) has the fixture's params to 0 ulps and writes the fixture's
// checkpoint bytes exactly; from_bytes loads the fixture; apply, grad and captured intermediates
// give the fixture's to float32 rounding; optax trajectories follow the fixture's step by step.
#include <doctest/doctest.h>

#include <linum/nn/serialization.hpp>
#include <linum/optim/optim.hpp>

#include "fixture_suite.hpp"

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

// A layer with one positional input: init(key, x) / apply(variables, x).
template <class M>
Model unary(std::string name, M m, std::set<std::string> qr_leaves = {}) {
  return {
      std::move(name), [m](const Array& key, const Inputs& in) { return m.init(key, in.at(0)); },
      [m](const Tree& v, const Inputs& in) { return m.apply(v, in.at(0)); }, std::move(qr_leaves)};
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
      fidelity::check_bit_identical(init, ser::msgpack_restore(f.variables_bytes), m.qr_leaves);
      // The fixture loads into linum's init (same structure, values within the QR's ulps) and
      // linum writes it back byte for byte; without QR-drawn leaves linum's init is those bytes.
      const Tree loaded = ser::from_bytes(init, f.variables_bytes);
      fidelity::check_bit_identical(loaded, init, m.qr_leaves);
      CHECK(ser::to_bytes(loaded) == f.variables_bytes);
      if (m.qr_leaves.empty()) CHECK(ser::to_bytes(init) == f.variables_bytes);
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
