// The fidelity suite's fixture reader and comparisons. A fixture is a pair of files under
// tests/fidelity/fixtures/, written by scripts/flax_fixtures.py (real Flax) or derived from Flax's
// source by tests/fidelity/derive_fixtures.py (the header string says which):
//   <model>.<mode>.msgpack       flax.serialization.to_bytes(model.init(jax.random.key(0), ...))
//   <model>.<mode>.case.msgpack  {'header', 'model', 'threefry_partitionable', 'inputs': {'0',
//                                 ...}, 'output'[, 'cotangent', 'grads']}
// mode is 'partitionable' (jax_threefry_partitionable on) or 'original' (off).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

namespace fidelity {

using linum::Array;
using linum::Tree;

struct Mode {
  const char* name;
  bool partitionable;
};
inline constexpr Mode kModes[] = {{"partitionable", true}, {"original", false}};

// One zoo entry: linum's version of the Flax model the fixture was written from.
struct Model {
  std::string name;
  // model.init(key, *inputs) -> variables.
  std::function<Tree(const Array& key, const std::vector<Array>& inputs)> init;
  // model.apply(variables, *inputs) -> output.
  std::function<Array(const Tree& variables, const std::vector<Array>& inputs)> apply;
  // Leaves whose init values come out of float computations that XLA and linum round
  // differently, by path ("/params/LSTMCell_0/hi/kernel"): a LAPACK QR (jax's orthogonal
  // initializer: geqrf/orgqr, whose last bits depend on the BLAS kernels picked for the CPU), and
  // the kernels SpectralNorm/WeightNorm store at init (Flax stores them normalized: a power
  // iteration or an l2 norm, summed in another order than XLA's dot). Checked to a few float32
  // ulps instead of 0.
  std::set<std::string> rounded_leaves = {};
  // apply(variables, *inputs, capture_intermediates=True)'s 'intermediates' collection, for the
  // models whose fixture records it.
  std::function<Tree(const Tree& variables, const std::vector<Array>& inputs)> intermediates = {};
};

struct Fixture {
  std::string variables_bytes;  // to_bytes(init), exactly as written
  Tree case_tree;               // the .case.msgpack, restored
  std::vector<Array> inputs() const;
};

// A whole file (REQUIREs it exists).
std::string read_text(const std::string& path);

// Reads <model>.<mode>.msgpack and .case.msgpack from the fixture directory (REQUIREs both).
Fixture read_fixture(const std::string& model, const Mode& mode);

// Same tree structure (dict keys in the same order), dtypes, shapes and float bits at every leaf;
// leaves named in rounded_leaves within 1e-6 (a few ulps of values of magnitude <= 1).
void check_bit_identical(const Tree& got, const Tree& want,
                         const std::set<std::string>& rounded_leaves = {});

// Same structure, and every element within float32 rounding of the fixture's:
// |got - want| <= 1e-5 * (1 + |want|).
void check_close(const Tree& got, const Tree& want, const std::string& path = "");

}  // namespace fidelity
