// nn::tabulate: the Flax-like table of a module's calls and variables (rows in call order,
// outputs, per-module params with counts and bytes, totals, depth folding).
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>
#include <linum/nn/tabulate.hpp>

namespace test_tabulate {

using namespace linum;

namespace {
struct MLP : nn::Module<MLP> {
  Array call(const Array& x) {
    Array h = nn::relu(nn::Dense(4)(x));
    return nn::Dense(2)(h);
  }
};
struct Block : nn::Module<Block> {
  Array call(const Array& x) {
    Array h = nn::LayerNorm()(x);
    return nn::BatchNorm({.use_running_average = false})(MLP()(h));
  }
};
std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}
bool has_line(const std::string& table, const std::string& needle) {
  for (const auto& l : lines(table))
    if (l.find(needle) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("tabulate(MLP): Flax's table — rows in call order, shapes, per-module params, totals") {
  const std::string t = nn::tabulate(MLP(), random::key(0), {.width = 80})(ones({16, 9}));
  // Flax's docstring table for this model (flax/linen/summary.py).
  const std::string expected =
      "\n"
      "                                MLP Summary\n"
      "┏━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━┓\n"
      "┃ path    ┃ module ┃ inputs        ┃ outputs       ┃ params               ┃\n"
      "┡━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━┩\n"
      "│         │ MLP    │ float32[16,9] │ float32[16,2] │                      │\n"
      "├─────────┼────────┼───────────────┼───────────────┼──────────────────────┤\n"
      "│ Dense_0 │ Dense  │ float32[16,9] │ float32[16,4] │ bias: float32[4]     │\n"
      "│         │        │               │               │ kernel: float32[9,4] │\n"
      "│         │        │               │               │                      │\n"
      "│         │        │               │               │ 40 (160 B)           │\n"
      "├─────────┼────────┼───────────────┼───────────────┼──────────────────────┤\n"
      "│ Dense_1 │ Dense  │ float32[16,4] │ float32[16,2] │ bias: float32[2]     │\n"
      "│         │        │               │               │ kernel: float32[4,2] │\n"
      "│         │        │               │               │                      │\n"
      "│         │        │               │               │ 10 (40 B)            │\n"
      "├─────────┼────────┼───────────────┼───────────────┼──────────────────────┤\n"
      "│         │        │               │         Total │ 50 (200 B)           │\n"
      "└─────────┴────────┴───────────────┴───────────────┴──────────────────────┘\n"
      "\n"
      "                       Total Parameters: 50 (200 B)\n"
      "\n";
  CHECK(t == expected);
}

TEST_CASE("tabulate: a column per collection, nested paths, and depth folding the subtree") {
  Array x = ones({8, 3});
  const std::string t = nn::tabulate(Block(), random::key(0), {.width = 200})(x);
  // Parents come before children; batch_stats gets its own column.
  const auto ls = lines(t);
  CHECK(has_line(t, "┃ path          ┃ module    ┃ inputs       ┃ outputs      ┃ params"));
  CHECK(has_line(t, "batch_stats"));
  std::vector<std::string> order;
  for (const auto& l : ls)
    for (const char* p :
         {"│ LayerNorm_0 ", "│ MLP_0 ", "│ MLP_0/Dense_0 ", "│ MLP_0/Dense_1 ", "│ BatchNorm_0 "})
      if (l.rfind(p, 0) == 0) order.push_back(p);
  CHECK(order == std::vector<std::string>{"│ LayerNorm_0 ", "│ MLP_0 ", "│ MLP_0/Dense_0 ",
                                          "│ MLP_0/Dense_1 ", "│ BatchNorm_0 "});
  CHECK(has_line(t, "mean: float32[2]"));
  // Each submodule's inputs: MLP_0 gets LayerNorm's output, MLP_0/Dense_1 the hidden (8, 4).
  CHECK(has_line(t, "│ MLP_0         │ MLP       │ float32[8,3] │ float32[8,2] │"));
  CHECK(has_line(t, "│ MLP_0/Dense_1 │ Dense     │ float32[8,4] │ float32[8,2] │"));
  // params: LayerNorm 6 + Dense 16 + Dense 10 + BatchNorm 4 = 36; batch_stats 4; all 40.
  CHECK(has_line(t, "Total │ 36 (144 B)"));
  CHECK(has_line(t, "Total Parameters: 40 (160 B)"));
  // depth=1: no MLP_0/Dense_* rows; MLP_0's row totals its subtree (16 + 10 = 26).
  const std::string d = nn::tabulate(Block(), random::key(0), {.depth = 1, .width = 200})(x);
  CHECK_FALSE(has_line(d, "Dense_0"));
  CHECK(has_line(d, "26 (104 B)"));
  CHECK(has_line(d, "Total Parameters: 40 (160 B)"));
}

}  // namespace test_tabulate
