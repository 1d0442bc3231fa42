// Where Flax 0.12 puts each recurrent layer's variables, and what it records of them. A cell built
// in a parent's compact method belongs to that parent (flax/linen/module.py __post_init__ names
// it LSTMCell_0 there as it is built); RNN.__call__ scans it in function form,
// transforms.scan(scan_fn, ...)(self.cell, carry, inputs), so its params stay at the cell's own
// scope and RNN_0 holds none. A cell built outside any module, or in setup, is adopted by the RNN
// as its field `cell` (_register_submodules). Params that come out of a lifted transform have
// their dict keys sorted (jax's pytree flattening). Values are checked against plain Dense layers
// initialised at the same paths: same rng path, same numbers.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>
#include <linum/nn/serialization.hpp>
#include <linum/nn/tabulate.hpp>

#include "nn_testing.hpp"

namespace test_recurrent_layout {

using namespace linum;
using testing::allclose;
using testing::shape_of;
using Keys = std::vector<std::string>;

namespace {
const Keys kLSTMSorted{"hf", "hg", "hi", "ho", "if", "ig", "ii", "io"};
const lift::ScanOptions kScanCell{.variable_broadcast = "params",
                                  .split_rngs = {{"params", false}},
                                  .in_axes = {1},
                                  .out_axes = 1};

Keys keys(const Tree& t) { return t.as_dict().keys(); }
Array first_step(const Array& x) { return squeeze(slice(x, {{}, {0, 1}}), 1); }

struct Tagger : nn::Module<Tagger> {
  Array call(const Array& x) {
    Array h = nn::RNN(nn::LSTMCell(4))(x);
    return nn::Dense(2)(h);
  }
};

// One gate's input and hidden Dense of an LSTMCell, as plain Dense layers, in a child `name`.
struct GateDenses : nn::Module<GateDenses> {
  Array call(const Array& x, const Array& h) {
    nn::Dense({.features = 4, .use_bias = false, .name = "ii"})(x);
    return nn::Dense({.features = 4, .kernel_init = nn::initializers::orthogonal(), .name = "hi"})(
        h);
  }
};
struct GateHolder : nn::Module<GateHolder> {
  std::string child;
  explicit GateHolder(std::string c) : child(std::move(c)) {}
  Array call(const Array& x, const Array& h) { return GateDenses().named(child)(x, h); }
};
// The cell's ii and hi kernels equal those plain Dense layers at the same path, bit for bit.
void check_same_rng_path(const Tree& cell_params, const std::string& child, std::int64_t in) {
  Tree g = GateHolder(child).init(random::key(0), zeros({2, in}), zeros({2, 4}))["params"][child];
  CHECK(allclose(cell_params["ii"]["kernel"].leaf(), g["ii"]["kernel"].leaf(), 0.0f));
  CHECK(allclose(cell_params["hi"]["kernel"].leaf(), g["hi"]["kernel"].leaf(), 0.0f));
  CHECK(allclose(cell_params["hi"]["bias"].leaf(), g["hi"]["bias"].leaf(), 0.0f));
}

template <class Cell>
struct OneRNN : nn::Module<OneRNN<Cell>> {
  Array call(const Array& x) { return nn::RNN(Cell(4))(x); }
};

struct Named : nn::Module<Named> {
  Array call(const Array& x) {
    Array a = nn::RNN(nn::LSTMCell(4), {.name = "lstm"})(x);            // cell: LSTMCell_0
    Array b = nn::RNN(nn::GRUCell({.features = 3, .name = "enc"}))(x);  // cell: enc
    Array c = nn::RNN(nn::LSTMCell(2))(x);                              // cell: LSTMCell_1
    return concatenate({a, b, c}, -1);
  }
};

// self.rnn = nn.RNN(nn.GRUCell(3)); self.cell = nn.LSTMCell(4); self.shared = nn.RNN(self.cell).
struct SetupRNN : nn::Module<SetupRNN> {
  static constexpr bool compact = false;
  std::optional<nn::RNN> rnn, shared;
  std::optional<nn::LSTMCell> cell;
  void setup() override {
    rnn.emplace(nn::GRUCell(3));
    submodule("rnn", *rnn);
    cell.emplace(4);
    submodule("cell", *cell);
    shared.emplace(*cell);
    submodule("shared", *shared);
  }
  Array call(const Array& x) { return concatenate({(*rnn)(x), (*shared)(x)}, -1); }
};

struct BiTagger : nn::Module<BiTagger> {
  Array call(const Array& x) {
    return nn::Bidirectional(nn::RNN(nn::LSTMCell(4)), nn::RNN(nn::LSTMCell(5)))(x);
  }
};
struct BiTaggerBraces : nn::Module<BiTaggerBraces> {
  Array call(const Array& x) {
    return nn::Bidirectional{nn::RNN(nn::LSTMCell(4)), nn::RNN(nn::LSTMCell(5))}(x);
  }
};

struct ScanClass : nn::Module<ScanClass> {
  Array call(const Array& x) {
    auto lstm = nn::scan(nn::LSTMCell(4), kScanCell);
    return lstm(lstm.initialize_carry(random::key(0), first_step(x).shape()), x).second;
  }
};
struct ScanFunction : nn::Module<ScanFunction> {
  Array call(const Array& x) {
    nn::LSTMCell cell(4);
    auto body = [](nn::LSTMCell& c, const nn::LSTMCell::Carry& carry, const Array& xt) {
      return c(carry, xt);
    };
    auto carry = cell.initialize_carry(random::key(0), first_step(x).shape());
    return nn::scan(body, kScanCell)(cell, carry, x).second;
  }
};
}  // namespace

TEST_CASE("RNN(cell) in a compact method: params/LSTMCell_0/..., RNN_0 holds nothing") {
  Array x = random::normal(random::key(16), {2, 5, 3});
  auto [y, v] = Tagger().init_with_output(random::key(0), x);
  CHECK(y.shape() == Shape{2, 5, 2});
  // The scan publishes the cell's params when it returns, before Dense_0 is built.
  CHECK(keys(v["params"]) == Keys{"LSTMCell_0", "Dense_0"});
  const Tree& cp = v["params"]["LSTMCell_0"];
  CHECK(keys(cp) == kLSTMSorted);
  CHECK(keys(cp["hi"]) == Keys{"bias", "kernel"});
  CHECK(keys(cp["ii"]) == Keys{"kernel"});
  CHECK(shape_of(cp["ii"]["kernel"]) == Shape{3, 4});
  CHECK(shape_of(cp["hi"]["kernel"]) == Shape{4, 4});
  check_same_rng_path(cp, "LSTMCell_0", 3);

  // The RNN's output (captured) is the cell scanned with those params, as a root RNN runs it.
  auto [out, state] = Tagger().apply(v, x, {.capture_intermediates = true});
  CHECK(keys(state["intermediates"]) == Keys{"RNN_0", "Dense_0", "__call__"});
  const Tree root_rnn{{"params", Tree{{"cell", cp}}}};
  CHECK(allclose(state["intermediates"]["RNN_0"]["__call__"][0].leaf(),
                 nn::RNN(nn::LSTMCell(4)).apply(root_rnn, x), 0.0f));

  // A checkpoint in Flax's layout loads: from_bytes accepts it and restores every value.
  Tree flax = v;
  flax["params"]["LSTMCell_0"]["io"]["kernel"] = Tree(full({3, 4}, 0.25f));
  flax["params"]["Dense_0"]["bias"] = Tree(array(std::vector<float>{1.5f, -2.0f}, {2}));
  const Tree restored = serialization::from_bytes(v, serialization::to_bytes(flax));
  CHECK(allclose(restored["params"]["LSTMCell_0"]["io"]["kernel"].leaf(), full({3, 4}, 0.25f)));
  CHECK(allclose(restored["params"]["Dense_0"]["bias"].leaf(),
                 array(std::vector<float>{1.5f, -2.0f}, {2})));
  // The old layout (RNN_0/cell/...) is not this model's: from_bytes names the missing key.
  Tree old =
      Tree{{"params", Tree{{"RNN_0", Tree{{"cell", cp}}}, {"Dense_0", v["params"]["Dense_0"]}}}};
  CHECK_THROWS(serialization::from_bytes(v, serialization::to_bytes(old)));
}

TEST_CASE("Every cell in a compact RNN is the parent's <Cell>_0, its keys sorted by the scan") {
  Array x = random::normal(random::key(17), {2, 5, 3});
  Tree o = OneRNN<nn::OptimizedLSTMCell>().init(random::key(0), x)["params"];
  CHECK(keys(o) == Keys{"OptimizedLSTMCell_0"});
  CHECK(keys(o["OptimizedLSTMCell_0"]) == kLSTMSorted);
  check_same_rng_path(o["OptimizedLSTMCell_0"], "OptimizedLSTMCell_0", 3);
  Tree g = OneRNN<nn::GRUCell>().init(random::key(0), x)["params"];
  CHECK(keys(g) == Keys{"GRUCell_0"});
  CHECK(keys(g["GRUCell_0"]) == Keys{"hn", "hr", "hz", "in", "ir", "iz"});
  CHECK(keys(g["GRUCell_0"]["ir"]) == Keys{"bias", "kernel"});
  Tree s = OneRNN<nn::SimpleCell>().init(random::key(0), x)["params"];
  CHECK(keys(s) == Keys{"SimpleCell_0"});
  CHECK(keys(s["SimpleCell_0"]) == Keys{"h", "i"});
  CHECK(keys(s["SimpleCell_0"]["i"]) == Keys{"bias", "kernel"});
  CHECK(keys(s["SimpleCell_0"]["h"]) == Keys{"kernel"});
}

TEST_CASE("RNN names: a named RNN still leaves its cell LSTMCell_0; a named cell keeps its name") {
  Array x = random::normal(random::key(18), {2, 5, 3});
  Tree p = Named().init(random::key(0), x)["params"];
  CHECK(keys(p) == Keys{"LSTMCell_0", "enc", "LSTMCell_1"});
  CHECK(shape_of(p["LSTMCell_0"]["hi"]["kernel"]) == Shape{4, 4});
  CHECK(shape_of(p["enc"]["hn"]["kernel"]) == Shape{3, 3});
  CHECK(shape_of(p["LSTMCell_1"]["hi"]["kernel"]) == Shape{2, 2});
}

TEST_CASE("RNN in setup: rnn/cell for a cell built there; a cell assigned first stays `cell`") {
  Array x = random::normal(random::key(19), {2, 5, 3});
  auto [y, v] = SetupRNN().init_with_output(random::key(0), x);
  CHECK(y.shape() == Shape{2, 5, 7});
  CHECK(keys(v["params"]) == Keys{"rnn", "cell"});
  CHECK(keys(v["params"]["rnn"]) == Keys{"cell"});
  CHECK(keys(v["params"]["rnn"]["cell"]) == Keys{"hn", "hr", "hz", "in", "ir", "iz"});
  CHECK(keys(v["params"]["cell"]) == kLSTMSorted);
  check_same_rng_path(v["params"]["cell"], "cell", 3);
}

TEST_CASE("Bidirectional in a compact method: LSTMCell_0 forward, LSTMCell_1 backward") {
  Array x = random::normal(random::key(20), {2, 5, 3});
  auto [y, v] = BiTagger().init_with_output(random::key(0), x);
  CHECK(y.shape() == Shape{2, 5, 9});
  // Flax builds the arguments left to right: the forward cell first, whatever order C++ used.
  CHECK(keys(v["params"]) == Keys{"LSTMCell_0", "LSTMCell_1"});
  CHECK(shape_of(v["params"]["LSTMCell_0"]["hi"]["kernel"]) == Shape{4, 4});
  CHECK(shape_of(v["params"]["LSTMCell_1"]["hi"]["kernel"]) == Shape{5, 5});
  CHECK(keys(v["params"]["LSTMCell_1"]) == kLSTMSorted);
  check_same_rng_path(v["params"]["LSTMCell_0"], "LSTMCell_0", 3);
  const Tree fwd{{"params", Tree{{"cell", v["params"]["LSTMCell_0"]}}}};
  const Tree bwd{{"params", Tree{{"cell", v["params"]["LSTMCell_1"]}}}};
  CHECK(allclose(slice(y, {{}, {}, {0, 4}}), nn::RNN(nn::LSTMCell(4)).apply(fwd, x)));
  nn::RNN back(nn::LSTMCell(5), {.reverse = true, .keep_order = true});
  CHECK(allclose(slice(y, {{}, {}, {4, 9}}), back.apply(bwd, x)));
  // Braces build left to right already: the same tree.
  Tree vb = BiTaggerBraces().init(random::key(0), x);
  CHECK(keys(vb["params"]) == Keys{"LSTMCell_0", "LSTMCell_1"});
  CHECK(allclose(vb["params"]["LSTMCell_1"]["ii"]["kernel"].leaf(),
                 v["params"]["LSTMCell_1"]["ii"]["kernel"].leaf(), 0.0f));
}

TEST_CASE("nn::scan over a cell: ScanLSTMCell_0 (class form), LSTMCell_0 (function form)") {
  Array x = random::normal(random::key(21), {2, 5, 3});
  Tree c = ScanClass().init(random::key(0), x)["params"];
  CHECK(keys(c) == Keys{"ScanLSTMCell_0"});
  CHECK(keys(c["ScanLSTMCell_0"]) == kLSTMSorted);
  check_same_rng_path(c["ScanLSTMCell_0"], "ScanLSTMCell_0", 3);
  Tree f = ScanFunction().init(random::key(0), x)["params"];
  CHECK(keys(f) == Keys{"LSTMCell_0"});
  CHECK(keys(f["LSTMCell_0"]) == kLSTMSorted);
  // The function form is what RNN runs: the same params as Tagger's cell.
  Tree t = Tagger().init(random::key(0), x)["params"]["LSTMCell_0"];
  CHECK(allclose(f["LSTMCell_0"]["hg"]["kernel"].leaf(), t["hg"]["kernel"].leaf(), 0.0f));
}

namespace {
struct WithCarry : nn::Module<WithCarry> {
  std::pair<Tree, Array> call(const Array& x) {
    return nn::RNN(nn::LSTMCell(4)).call_with_carry(x);
  }
};
struct Wrapped : nn::Module<Wrapped> {
  Array call(const Array& x) {
    nn::LSTMCell::Carry c{zeros({2, 4}), zeros({2, 4})};
    Array y1 = nn::remat(nn::LSTMCell(4))(c, x).second;
    Array y2 = nn::vmap(nn::LSTMCell(4),
                        {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}})(c, x)
                   .second;
    return y1 + y2;
  }
};
}  // namespace

TEST_CASE("capture_intermediates: tuple results (return_carry), remat and vmap as Flax's") {
  Array x = random::normal(random::key(22), {2, 5, 3});
  auto [out, v] = WithCarry().init_with_output(random::key(0), x);
  auto [y, state] = WithCarry().apply(v, x, {.capture_intermediates = true});
  // Flax sows the method's result as it is: RNN_0/__call__ = ((carry, outputs),), carry = (c, h).
  const Tree& rnn = state["intermediates"]["RNN_0"]["__call__"];
  REQUIRE(rnn.is_tuple());
  REQUIRE(rnn.size() == 1);
  REQUIRE(rnn[0].is_tuple());
  REQUIRE(rnn[0].size() == 2);
  CHECK(rnn[0][0].is_tuple());
  CHECK(allclose(rnn[0][0][1].leaf(), y.first[1].leaf(), 0.0f));
  CHECK(allclose(rnn[0][1].leaf(), y.second, 0.0f));
  CHECK(shape_of(rnn[0][0][0]) == Shape{2, 4});
  // The root's (carry, outputs) too.
  CHECK(state["intermediates"]["__call__"][0].size() == 2);

  // As the real Flax 0.12.10 captures (scripts/reference/flax_probes.py): remat lifts every
  // collection, and the wrapped cell's own __call__ sows once (the transform's call is not a
  // method Flax sees); vmap lifts only its variable_axes collections, so nothing is sown inside
  // it, and the transform itself sows nothing either.
  Array xs = first_step(x);
  Tree wv = Wrapped().init(random::key(0), xs);
  auto [wy, ws] = Wrapped().apply(wv, xs, {.capture_intermediates = true});
  const Tree& im = ws["intermediates"];
  CHECK(keys(im) == Keys{"CheckpointLSTMCell_0", "__call__"});
  const Tree& r = im["CheckpointLSTMCell_0"]["__call__"];
  REQUIRE(r.size() == 1);
  CHECK(shape_of(r[0][0][0]) == Shape{2, 4});
  CHECK(shape_of(r[0][1]) == Shape{2, 4});
  // Lifted params come out sorted.
  CHECK(keys(wv["params"]["CheckpointLSTMCell_0"]) == kLSTMSorted);
  CHECK(keys(wv["params"]["VmapLSTMCell_0"]) == kLSTMSorted);
}

namespace {
struct Lifted : nn::Module<Lifted> {
  Array call(const Array& x) {
    Array a = nn::remat(nn::Dense(3))(x);
    Array b = nn::jit(nn::Dense(3))(x);
    Array c = nn::fold_rngs(nn::Dense(3))(x);
    return a + b + c + nn::Dense(3)(x);
  }
};
}  // namespace

TEST_CASE("Lifted params come out sorted where a JAX transform returns them, as to_bytes writes") {
  // jax.checkpoint and jax.jit hand their outputs back through pytree flattening (dict keys
  // sorted); lift.fold_rngs calls the body directly, so its Dense keeps kernel before bias, as an
  // untransformed Dense does.
  Tree p = Lifted().init(random::key(0), ones({2, 4}))["params"];
  CHECK(keys(p) == Keys{"CheckpointDense_0", "JitDense_0", "FoldRngsDense_0", "Dense_0"});
  CHECK(keys(p["CheckpointDense_0"]) == Keys{"bias", "kernel"});
  CHECK(keys(p["JitDense_0"]) == Keys{"bias", "kernel"});
  CHECK(keys(p["FoldRngsDense_0"]) == Keys{"kernel", "bias"});
  CHECK(keys(p["Dense_0"]) == Keys{"kernel", "bias"});
}

namespace {
std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::size_t a = 0;
  while (a < s.size()) {
    const std::size_t b = s.find('\n', a);
    out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}
// The first cell of each row (the path), in table order.
std::vector<std::string> row_paths(const std::string& table) {
  std::vector<std::string> out;
  bool next_is_row = false;
  for (const auto& l : lines(table)) {
    if (l.rfind("┡", 0) == 0 || l.rfind("├", 0) == 0) {
      next_is_row = true;
      continue;
    }
    if (next_is_row && l.rfind("│", 0) == 0) {
      const std::size_t a = std::string("│ ").size(), b = l.find(" │", a);
      std::string p = l.substr(a, b - a);
      p.erase(p.find_last_not_of(' ') + 1);
      out.push_back(p);
    }
    next_is_row = false;
  }
  out.pop_back();  // the footer (totals)
  return out;
}
// The column texts of the row whose path is `path` (one string per column, its lines joined by
// \n, blank lines dropped).
std::vector<std::string> row_cells(const std::string& table, const std::string& path) {
  std::vector<std::string> cells;
  bool in_row = false;
  for (const auto& l : lines(table)) {
    if (l.rfind("│", 0) != 0) {
      if (in_row) break;
      continue;
    }
    std::vector<std::string> parts;
    std::size_t a = std::string("│").size();
    while (true) {
      const std::size_t b = l.find("│", a);
      if (b == std::string::npos) break;
      std::string c = l.substr(a + 1, b - a - 1);  // after the one space of padding
      c.erase(c.find_last_not_of(' ') + 1);
      parts.push_back(c);
      a = b + std::string("│").size();
    }
    if (!in_row && parts.front() == path) {
      in_row = true;
      cells = parts;
    } else if (in_row && parts.front().empty()) {
      for (std::size_t i = 1; i < parts.size(); ++i)
        if (!parts[i].empty()) cells[i] += (cells[i].empty() ? "" : "\n") + parts[i];
    } else if (in_row) {
      break;
    }
  }
  return cells;
}
struct OptTagger : nn::Module<OptTagger> {
  Array call(const Array& x) { return nn::RNN(nn::OptimizedLSTMCell(4))(x); }
};
}  // namespace

TEST_CASE("tabulate of a recurrent model: Flax's rows, the cell after RNN_0, in call order") {
  Array x = random::normal(random::key(23), {2, 5, 3});
  const std::string t = nn::tabulate(Tagger(), random::key(0), {.width = 200})(x);
  // Flax numbers calls as they start: RNN_0 before the cell it scans; the scan's scan_fn is no
  // method of the cell (no row); each gate's input Dense before its hidden one.
  CHECK(row_paths(t) == Keys{"", "RNN_0", "LSTMCell_0", "LSTMCell_0/ii", "LSTMCell_0/hi",
                             "LSTMCell_0/if", "LSTMCell_0/hf", "LSTMCell_0/ig", "LSTMCell_0/hg",
                             "LSTMCell_0/io", "LSTMCell_0/ho", "Dense_0"});
  // The cell's row: its (carry, x) inputs and ((c, h), h) outputs of one step as Flax's yaml;
  // no params of its own (each Dense has a row).
  const auto cell = row_cells(t, "LSTMCell_0");
  REQUIRE(cell.size() == 5);
  CHECK(cell[1] == "LSTMCell");
  CHECK(cell[2] == "- - float32[2,4]\n  - float32[2,4]\n- float32[2,3]");
  CHECK(cell[3] == "- - float32[2,4]\n  - float32[2,4]\n- float32[2,4]");
  CHECK(cell[4].empty());
  const auto rnn = row_cells(t, "RNN_0");
  CHECK(rnn[1] == "RNN");
  CHECK(rnn[2] == "float32[2,5,3]");
  CHECK(rnn[3] == "float32[2,5,4]");
  CHECK(rnn[4].empty());
  const auto hi = row_cells(t, "LSTMCell_0/hi");
  CHECK(hi[2] == "float32[2,4]");
  CHECK(hi[3] == "float32[2,4]");
  CHECK(hi[4] == "bias: float32[4]\nkernel: float32[4,4]\n20 (80 B)");
  // An RNN called with return_carry: its inputs, and ((c, h), outputs).
  const auto wc = row_cells(nn::tabulate(WithCarry(), random::key(0), {.width = 200})(x), "RNN_0");
  CHECK(wc[2] == "float32[2,5,3]");
  CHECK(wc[3] == "- - float32[2,4]\n  - float32[2,4]\n- float32[2,5,4]");
  // 4 input kernels (3x4) + 4 hidden kernels and biases (4x4 + 4) + Dense_0 (4x2 + 2) = 138.
  CHECK(t.find("Total Parameters: 138 (552 B)") != std::string::npos);

  // OptimizedLSTMCell's DenseParams rows: ii, hi, if, hf, ... as built; their (kernel, bias)
  // results.
  const std::string o = nn::tabulate(OptTagger(), random::key(0), {.width = 200})(x);
  CHECK(row_paths(o) ==
        Keys{"", "RNN_0", "OptimizedLSTMCell_0", "OptimizedLSTMCell_0/ii", "OptimizedLSTMCell_0/hi",
             "OptimizedLSTMCell_0/if", "OptimizedLSTMCell_0/hf", "OptimizedLSTMCell_0/ig",
             "OptimizedLSTMCell_0/hg", "OptimizedLSTMCell_0/io", "OptimizedLSTMCell_0/ho"});
  const auto ii = row_cells(o, "OptimizedLSTMCell_0/ii");
  CHECK(ii[1] == "DenseParams");
  CHECK(ii[2] == "float32[2,3]");
  CHECK(ii[3] == "- float32[3,4]\n- None");
  CHECK(ii[4] == "kernel: float32[3,4]\n12 (48 B)");
  const auto ohi = row_cells(o, "OptimizedLSTMCell_0/hi");
  CHECK(ohi[3] == "- float32[4,4]\n- float32[4]");

  // nn.scan(nn.LSTMCell) in a compact method (Flax's summary_test test_lifted_transform_no_rename):
  // the ScanLSTMCell_0 row is followed by ScanLSTMCell_0/ii. As the real Flax 0.12.10 prints it
  // (tests/fidelity/fixtures/scan_lstm.tabulate.txt), that row is the wrapped LSTMCell's first
  // call, one step's (carry, x), not the scan's.
  const std::string sc = nn::tabulate(ScanClass(), random::key(0), {.width = 200})(x);
  const auto paths = row_paths(sc);
  REQUIRE(paths.size() == 10);
  CHECK(paths[1] == "ScanLSTMCell_0");
  CHECK(paths[2] == "ScanLSTMCell_0/ii");
  CHECK(paths[3] == "ScanLSTMCell_0/hi");
  const auto scan_row = row_cells(sc, "ScanLSTMCell_0");
  CHECK(scan_row[1] == "LSTMCell");
  CHECK(scan_row[2] == "- - float32[2,4]\n  - float32[2,4]\n- float32[2,3]");
  CHECK(scan_row[3] == "- - float32[2,4]\n  - float32[2,4]\n- float32[2,4]");
}

}  // namespace test_recurrent_layout
