#include "fixture_suite.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <doctest/doctest.h>

#include <linum/nn/serialization.hpp>

#include "support/testing.hpp"

namespace fidelity {

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot open fixture " << path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

namespace {

std::vector<std::string> keys(const Tree& t) {
  std::vector<std::string> k;
  for (const auto& [name, v] : t.as_dict()) k.push_back(name);
  return k;
}

// A float32 value with enough digits to tell neighbouring floats apart.
std::string exact(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

template <class LeafCheck>
void walk(const Tree& got, const Tree& want, const std::string& path, const LeafCheck& leaf) {
  INFO("at ", path.empty() ? "." : path);
  if (want.is_leaf()) {
    REQUIRE(got.is_leaf());
    const Array &g = got.leaf(), &w = want.leaf();
    REQUIRE(g.shape() == w.shape());
    leaf(g, w, path);
    return;
  }
  REQUIRE(!got.is_leaf());
  REQUIRE(keys(got) == keys(want));
  for (const auto& [k, v] : want.as_dict()) walk(got[k], v, path + "/" + k, leaf);
}

}  // namespace

std::vector<Array> Fixture::inputs() const {
  std::vector<Array> in;
  const Tree& t = case_tree["inputs"];
  for (std::size_t i = 0; i < t.as_dict().size(); ++i) in.push_back(t[std::to_string(i)].leaf());
  return in;
}

Fixture read_fixture(const std::string& model, const Mode& mode) {
  const std::string stem = std::string(LINUM_FIDELITY_FIXTURES) + "/" + model + "." + mode.name;
  Fixture f{read_text(stem + ".msgpack"),
            linum::serialization::msgpack_restore(read_text(stem + ".case.msgpack"))};
  const auto model_name = linum::serialization::str_value(f.case_tree["model"]);
  REQUIRE_MESSAGE((model_name && *model_name == model), stem << ".case.msgpack is not " << model);
  return f;
}

void check_bit_identical(const Tree& got, const Tree& want,
                         const std::set<std::string>& rounded_leaves) {
  walk(got, want, "", [&](const Array& g, const Array& w, const std::string& path) {
    REQUIRE(g.dtype() == w.dtype());
    const bool rounded = rounded_leaves.contains(path);
    // float32 -> float64 is exact, so equal doubles are equal floats (0 ulps); signed zeros and
    // NaN payloads are covered by the byte comparison of the checkpoints.
    const auto gv = linum::testing::values(g), wv = linum::testing::values(w);
    for (std::size_t i = 0; i < wv.size(); ++i) {
      INFO("element ", i, ": linum ", exact(gv[i]), ", fixture ", exact(wv[i]));
      if (rounded)
        CHECK(std::abs(gv[i] - wv[i]) <= 1e-6);
      else
        CHECK(gv[i] == wv[i]);
    }
  });
}

void check_close(const Tree& got, const Tree& want, const std::string& path) {
  walk(got, want, path, [](const Array& g, const Array& w, const std::string&) {
    const auto gv = linum::testing::values(g), wv = linum::testing::values(w);
    for (std::size_t i = 0; i < wv.size(); ++i) {
      INFO("element ", i, ": linum ", exact(gv[i]), ", fixture ", exact(wv[i]));
      CHECK(std::abs(gv[i] - wv[i]) <= 1e-5 * (1 + std::abs(wv[i])));
    }
  });
}

}  // namespace fidelity
