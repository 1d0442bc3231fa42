// flax.linen.recurrent: RNNCellBase (what a cell is), the cells LSTMCell, OptimizedLSTMCell,
// GRUCell and SimpleCell (Flax's parameter names ii/if/ig/io + hi/hf/hg/ho, ir/iz/in + hr/hz/hn,
// i + h; initialize_carry), RNN (a cell scanned over time with lift::scan: time_major, reverse,
// keep_order, seq_lengths, the final carry) and Bidirectional.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <linum/autodiff/jacobian.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/lift/transforms.hpp>
#include <linum/nn/initializers.hpp>
#include <linum/nn/linear.hpp>
#include <linum/nn/module.hpp>
#include <linum/nn/tabulate.hpp>
#include <linum/nn/transforms.hpp>

namespace linum::nn {

using Activation = std::function<Array(const Array&)>;

// flax.linen.RNNCellBase: the base of RNN cells, which nn::RNN scans over time. A cell of your own
// derives from RNNCellBase<MyCell> (a Module) and defines
//   std::pair<Carry, Array> call(const Carry& carry, const Array& inputs);  // one time step
//   Carry initialize_carry(const Array& rng, const Shape& input_shape) const;
//   static constexpr int num_feature_axes = 1;  // or int num_feature_axes() const
// input_shape is one step's inputs' shape (the sequence's without its time axis). The carry is any
// pytree of Arrays: a Tree by default (Flax's Carry = Any), or the type a cell names with
// `using Carry = ...` (an Array, a pair (c, h), a tuple, a struct of Arrays).
template <class Cell>
struct RNNCellBase : Module<Cell> {
  using Carry = Tree;
};

// Fields every cell has (flax RNNCellBase subclasses).
struct RNNCellConfig {
  std::int64_t features = 0;
  Activation gate_fn = [](const Array& x) { return linum::sigmoid(x); };
  Activation activation_fn = [](const Array& x) { return linum::tanh(x); };
  initializers::Initializer kernel_init = default_kernel_init();
  initializers::Initializer recurrent_kernel_init = initializers::orthogonal();
  initializers::Initializer bias_init = initializers::zeros_init();
  initializers::Initializer carry_init = initializers::zeros_init();
  // The Denses' computation dtype. The carry is created in param_dtype and the state updates
  // promote, so with dtype=bfloat16 and float32 params an LSTM's or GRU's carry stays float32.
  std::optional<DType> dtype = std::nullopt;
  DType param_dtype = float32;
  bool residual = false;  // SimpleCell only
  std::optional<std::string> name = {};
};

// LSTM: carry (c, h); i, f, o = gate(W_i x + W_h h + b), g = act(...); c' = f c + i g,
// h' = o act(c'). Input kernels have no bias, hidden ones do.
struct LSTMCell : RNNCellBase<LSTMCell>, RNNCellConfig {
  using Carry = std::pair<Array, Array>;  // (c, h)
  static constexpr int num_feature_axes = 1;
  explicit LSTMCell(std::int64_t features) { this->features = features; }
  explicit LSTMCell(RNNCellConfig c) : RNNCellConfig(std::move(c)) {
    if (name) named(*name);
  }
  std::pair<Carry, Array> call(const Carry& carry, const Array& inputs);
  // Zero (carry_init) c and h of shape batch_dims + (features,), input_shape = batch + (in,).
  Carry initialize_carry(const Array& rng, const Shape& input_shape) const;
};

// The kernel and bias of a Dense without applying it (flax.linen.recurrent.DenseParams).
struct DenseParams : Module<DenseParams> {
  std::int64_t features;
  bool use_bias;
  DType param_dtype;
  initializers::Initializer kernel_init, bias_init;
  DenseParams(std::int64_t f, bool b, DType d, initializers::Initializer k,
              initializers::Initializer bi, std::string n)
      : features(f),
        use_bias(b),
        param_dtype(d),
        kernel_init(std::move(k)),
        bias_init(std::move(bi)) {
    named(std::move(n));
  }
  std::pair<Array, std::optional<Array>> call(const Array& inputs);
};

// The same function and parameters as LSTMCell, with the four gates' kernels concatenated into
// one matmul for the input and one for the hidden state.
struct OptimizedLSTMCell : RNNCellBase<OptimizedLSTMCell>, RNNCellConfig {
  using Carry = std::pair<Array, Array>;
  static constexpr int num_feature_axes = 1;
  explicit OptimizedLSTMCell(std::int64_t features) { this->features = features; }
  explicit OptimizedLSTMCell(RNNCellConfig c) : RNNCellConfig(std::move(c)) {
    if (name) named(*name);
  }
  std::pair<Carry, Array> call(const Carry& carry, const Array& inputs);
  Carry initialize_carry(const Array& rng, const Shape& input_shape) const;
};

// GRU: r, z = gate(W_i x + b_i + W_h h); n = act(W_in x + b_in + r (W_hn h + b_hn));
// h' = (1 - z) n + z h. Input kernels have biases; of the hidden ones only hn does.
struct GRUCell : RNNCellBase<GRUCell>, RNNCellConfig {
  using Carry = Array;
  static constexpr int num_feature_axes = 1;
  explicit GRUCell(std::int64_t features) { this->features = features; }
  explicit GRUCell(RNNCellConfig c) : RNNCellConfig(std::move(c)) {
    if (name) named(*name);
  }
  std::pair<Carry, Array> call(const Carry& carry, const Array& inputs);
  Carry initialize_carry(const Array& rng, const Shape& input_shape) const;
};

// Elman cell: h' = act(W_i x + b + W_h h [+ h if residual]); the bias is the input Dense's.
struct SimpleCell : RNNCellBase<SimpleCell>, RNNCellConfig {
  using Carry = Array;
  static constexpr int num_feature_axes = 1;
  explicit SimpleCell(std::int64_t features) { this->features = features; }
  explicit SimpleCell(RNNCellConfig c) : RNNCellConfig(std::move(c)) {
    if (name) named(*name);
  }
  std::pair<Carry, Array> call(const Carry& carry, const Array& inputs);
  Carry initialize_carry(const Array& rng, const Shape& input_shape) const;
};

// flax.linen.recurrent.flip_sequences: reverses each sequence along time; with seq_lengths only
// its first seq_lengths[b] steps (the padding stays at the end).
Array flip_sequences(const Array& inputs, const std::optional<Array>& seq_lengths,
                     int num_batch_dims, bool time_major);

namespace detail {
// A dense cell's checks: inputs and carry h have a feature axis (`who` names the cell).
void check_cell(const Array& h, const Array& x, const char* who);
// initialize_carry's shape of a dense cell: input_shape's batch dims + (features,).
Shape carry_shape(std::int64_t features, const Shape& input_shape, const char* who);
// Flax's cell.num_feature_axes: a constant of the dense cells, a method of cells whose count
// depends on their fields (ConvLSTMCell: len(kernel_size) + 1).
template <class Cell>
int num_feature_axes(const Cell& cell) {
  if constexpr (requires { cell.num_feature_axes(); })
    return cell.num_feature_axes();
  else
    return Cell::num_feature_axes;
}
// Per batch element b (of one batch dim after the time axis 0), x[seq_lengths[b] - 1, b].
Array select_last(const Array& stacked, const Array& seq_lengths);
void check_rnn_input(const Array& inputs, int time_axis, int num_feature_axes);
// seq_lengths index time steps: an integer array (JAX rejects float indices), else TypeError.
void check_seq_lengths(const Array& seq_lengths);
}  // namespace detail

struct RNNConfig {
  bool time_major = false;
  bool reverse = false;
  bool keep_order = false;
  Filter variable_broadcast = "params";
  lift::SplitRngs split_rngs = {{"params", false}};
  std::optional<std::string> name = {};
};

// A cell's carry as a Tree (RNN's initial_carry and returned carry): an Array is a leaf, a pair
// (c, h) or a tuple a tuple, a struct a dict of its fields.
template <class C>
Tree carry_to_tree(const C& c) {
  return linum::detail::to_dynamic_tree(c);
}
// The cell's Carry read back from such a Tree; a Tree of another structure is a ValueError.
template <class C>
C carry_from_tree(const Tree& t) {
  if constexpr (std::is_same_v<C, Tree>) {
    return t;
  } else {
    static_assert(std::is_default_constructible_v<C>,
                  "nn::RNN: a cell's Carry other than a Tree is a pytree of a fixed structure "
                  "(an Array, a pair, a tuple, a struct of Arrays)");
    const C like{};
    const Tree want = carry_to_tree(like);
    if (!(pytree::tree_structure(t) == pytree::tree_structure(want))) {
      throw ValueError("RNN: initial_carry " + pytree::tree_structure(t).to_string() +
                       " does not have the structure of the cell's carry " +
                       pytree::tree_structure(want).to_string());
    }
    return pytree::tree_unflatten_like(like, pytree::tree_leaves<Array>(t));
  }
}

namespace detail {
// What nn::RNN needs of a cell, a Module (RNNCellBase's contract), each missing piece named.
template <class Cell>
constexpr void check_rnn_cell() {
  static_assert(
      requires { typename Cell::Carry; },
      "nn::RNN: the cell needs a Carry type (derive it from nn::RNNCellBase<Cell>, or "
      "`using Carry = ...;`)");
  static_assert(
      requires(const Cell& c, const Array& rng, const Shape& s) {
        { c.initialize_carry(rng, s) } -> std::convertible_to<typename Cell::Carry>;
      },
      "nn::RNN: the cell needs `Carry initialize_carry(const Array& rng, const Shape& "
      "input_shape) const`");
  static_assert(has_call_v<Cell, const typename Cell::Carry&, const Array&>,
                "nn::RNN: the cell needs `std::pair<Carry, Array> call(const Carry& carry, const "
                "Array& inputs)`");
  static_assert(
      requires(const Cell& c) {
        { c.num_feature_axes() } -> std::convertible_to<int>;
      } ||
          requires {
            { Cell::num_feature_axes } -> std::convertible_to<int>;
          },
      "nn::RNN: the cell needs num_feature_axes: `static constexpr int num_feature_axes = 1;` "
      "or `int num_feature_axes() const`");
}
}  // namespace detail

// Per-call arguments of RNN.__call__ (time_major/reverse/keep_order override the fields).
struct RNNArgs {
  std::optional<Tree> initial_carry = {};  // carry_to_tree(cell carry)
  std::optional<Array> init_key = {};
  std::optional<Array> seq_lengths = {};  // integers of the batch shape
  std::optional<bool> time_major = {}, reverse = {}, keep_order = {};
};

// RNN(cell): call(inputs) -> outputs; return_carry is call_with_carry(inputs) -> (carry as a
// Tree, outputs). inputs are (*batch, time, features) or, time_major, (time, *batch, features).
// The cell is scanned over time as Flax's RNN does, nn::scan(scan_fn)(cell, carry, inputs), its
// params broadcast; its variables stay where the cell belongs: a cell built inside a running
// compact method is that module's child (params/LSTMCell_0/..., RNN_0 owns nothing), a cell built
// outside any module (or in setup) becomes this RNN's field "cell" (params/.../cell/...). Not a
// template, so that it is auto-named RNN_0 as in Flax.
struct RNN : Module<RNN>, RNNConfig {
  template <class Cell>
  requires std::derived_from<Cell, ModuleBase>
  explicit RNN(Cell c, RNNConfig cfg = {}) : RNNConfig(std::move(cfg)) {
    detail::check_rnn_cell<Cell>();
    cell_ = std::make_shared<Cell>(std::move(c));
    share_ = [](const ModuleBase& m) -> std::shared_ptr<ModuleBase> {
      return std::make_shared<Cell>(static_cast<const Cell&>(m));
    };
    run_ = [](RNN& self, const Array& x, const RNNArgs& a, bool return_carry) {
      return self.run<Cell>(x, a, return_carry);
    };
    if (name) named(*name);
  }
  // The cell prototype (Flax's rnn.cell).
  const ModuleBase& cell() const { return *cell_; }
  ModuleBase& cell() { return *cell_; }
  void setup() override {
    bound_.reset();  // a clone of a bound RNN carries its old binding's cell
    bound_cell();
  }
  Array call(const Array& inputs, const RNNArgs& args = {}) {
    return run_(*this, inputs, args, false).second;
  }
  std::pair<Tree, Array> call_with_carry(const Array& inputs, const RNNArgs& args = {}) {
    return call_with_keywords(inputs, args, {});
  }

 private:
  friend struct Bidirectional;
  // __call__ with return_carry: its inputs are recorded as __call__'s (tabulate), followed by
  // the keyword arguments a Python caller names (Bidirectional's), as Flax lists them.
  std::pair<Tree, Array> call_with_keywords(const Array& inputs, const RNNArgs& args,
                                            std::vector<std::pair<std::string, Tree>> keywords) {
    return run_method(
        "__call__", [&] { return run_(*this, inputs, args, true); }, detail::is_compact<RNN>(),
        [&] {
          return keywords.empty() ? detail::inputs_tree(inputs)
                                  : detail::inputs_with_keywords({Tree(inputs)}, keywords);
        });
  }

  std::shared_ptr<ModuleBase> cell_, bound_;
  std::function<std::shared_ptr<ModuleBase>(const ModuleBase&)> share_;
  std::function<std::pair<Tree, Array>(RNN&, const Array&, const RNNArgs&, bool)> run_;

  // The cell this binding runs: a copy that is the same module as the prototype (it shares its
  // binding), registered as the field "cell" (Flax's _register_submodules): a cell already bound
  // in this tree stays where it is, an unbound one is adopted here. Adopting rebinds the copy
  // only, so the prototype stays unbound for the next init or apply.
  ModuleBase& bound_cell() {
    if (!bound_) {
      bound_ = share_(*cell_);
      submodule("cell", *bound_);
    }
    return *bound_;
  }

  template <class Cell>
  std::pair<Tree, Array> run(const Array& x, const RNNArgs& a, bool return_carry) {
    using Carry = typename Cell::Carry;
    Cell& cell = static_cast<Cell&>(bound_cell());
    const bool tm = a.time_major.value_or(time_major);
    const bool rev = a.reverse.value_or(reverse);
    const bool keep = a.keep_order.value_or(keep_order);
    const int nf = detail::num_feature_axes(cell);
    const int time_axis = tm ? 0 : x.ndim() - (nf + 1);
    detail::check_rnn_input(x, time_axis, nf);
    if (a.seq_lengths) detail::check_seq_lengths(*a.seq_lengths);
    const int num_batch_dims = x.ndim() - nf - 1;
    Array inputs = rev ? flip_sequences(x, a.seq_lengths, num_batch_dims, tm) : x;
    Carry carry;
    if (a.initial_carry) {
      carry = carry_from_tree<Carry>(*a.initial_carry);
    } else {
      Shape in_shape = x.shape();
      in_shape.erase(in_shape.begin() + time_axis);
      carry = cell.initialize_carry(a.init_key.value_or(random::key(0)), in_shape);
    }
    const lift::ScanOptions opts{.variable_broadcast = variable_broadcast,
                                 .split_rngs = split_rngs,
                                 .in_axes = {time_axis},
                                 .out_axes = 0};
    Carry last;
    Array outputs;
    if (!(a.seq_lengths && return_carry)) {
      auto scan_fn = [](Cell& c, const Carry& carry, const Array& xt) { return c(carry, xt); };
      std::tie(last, outputs) = nn::scan(scan_fn, opts)(cell, carry, inputs);
    } else {
      // Every step's carry is kept to pick each sequence's carry after its last valid step
      // (Flax's _select_last_carry).
      auto scan_fn = [](Cell& c, const Carry& carry, const Array& xt) {
        auto [c2, y] = c(carry, xt);
        return std::make_pair(c2, std::make_pair(c2, y));
      };
      auto [unused, stacked] = nn::scan(scan_fn, opts)(cell, carry, inputs);
      last = linum::detail::tree_apply(
          stacked.first, [&](const Array& h) { return detail::select_last(h, *a.seq_lengths); });
      outputs = stacked.second;
    }
    outputs = moveaxis(outputs, 0, time_axis);
    if (rev && keep) outputs = flip_sequences(outputs, a.seq_lengths, num_batch_dims, tm);
    return {carry_to_tree(last), outputs};
  }
};

// Bidirectional(forward_rnn, backward_rnn): the forward RNN and the backward one (reverse,
// keep_order) over the same inputs, outputs merged by merge_fn (concatenation on the last axis);
// call_with_carry returns the carries as a tuple (forward, backward). RNNs built in a running
// compact method stay that module's children (their cells LSTMCell_0 and LSTMCell_1 there); RNNs
// built outside any module become the fields forward_rnn and backward_rnn.
struct Bidirectional : Module<Bidirectional> {
  RNN forward_rnn, backward_rnn;
  std::function<Array(const Array&, const Array&)> merge_fn = [](const Array& a, const Array& b) {
    return concatenate({a, b}, -1);
  };
  Bidirectional(RNN f, RNN b) : forward_rnn(std::move(f)), backward_rnn(std::move(b)) {
    // Python builds Bidirectional(RNN(cell), RNN(cell))'s arguments left to right.
    forward_rnn.order_auto_names(backward_rnn);
    forward_rnn.cell().order_auto_names(backward_rnn.cell());
  }
  void setup() override {
    // Copies that are the same modules (they share their binding), registered as the fields.
    fwd_ = std::make_shared<RNN>(forward_rnn);
    bwd_ = std::make_shared<RNN>(backward_rnn);
    submodule("forward_rnn", *fwd_);
    submodule("backward_rnn", *bwd_);
  }
  Array call(const Array& inputs, const std::optional<Array>& seq_lengths = std::nullopt) {
    return run(inputs, seq_lengths).second;
  }
  std::pair<Tree, Array> call_with_carry(const Array& inputs,
                                         const std::optional<Array>& seq_lengths = std::nullopt) {
    return run_method(
        "__call__", [&] { return run(inputs, seq_lengths); }, detail::is_compact<Bidirectional>(),
        [&] { return detail::inputs_tree(inputs); });
  }

 private:
  std::shared_ptr<RNN> fwd_, bwd_;
  std::pair<Tree, Array> run(const Array& inputs, const std::optional<Array>& seq_lengths) {
    // The keyword arguments Flax's Bidirectional passes each RNN (tabulate lists them).
    auto keywords = [&](bool reverse) {
      std::vector<std::pair<std::string, Tree>> kw = {
          {"initial_carry", Tree::none()},
          {"init_key", Tree::none()},
          {"seq_lengths", seq_lengths ? Tree(*seq_lengths) : Tree::none()},
          {"return_carry", detail::keyword_bool(true)},
          {"time_major", detail::keyword_bool(fwd_->time_major)},
          {"reverse", detail::keyword_bool(reverse)}};
      if (reverse) kw.emplace_back("keep_order", detail::keyword_bool(true));
      return kw;
    };
    auto [cf, of] = fwd_->call_with_keywords(inputs, {.seq_lengths = seq_lengths, .reverse = false},
                                             keywords(false));
    auto [cb, ob] = bwd_->call_with_keywords(
        inputs, {.seq_lengths = seq_lengths, .reverse = true, .keep_order = true}, keywords(true));
    return {Tree::tuple({cf, cb}), merge_fn(of, ob)};
  }
};

}  // namespace linum::nn
