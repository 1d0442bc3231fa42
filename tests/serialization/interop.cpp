// The linum half of interop.py: reads the checkpoint and safetensors file that Python wrote the
// way Flax and the safetensors reference do, checks every value against the shared closed
// formulas, and writes linum's own files for Python to decode. Needs LINUM_INTEROP_DIR.
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "helpers.hpp"
#include "interop_files.hpp"

namespace ser = linum::serialization;
namespace st = linum::safetensors;
using namespace ser_test;
using linum::Shape;

namespace {

std::string dir() { return interop_dir("interop.py"); }

// interop.py's formulas: ints(n)[k] = k * 37 % 101 - 50, floats = ints / 8.
Vec ints(std::size_t n, double scale = 1, double offset = 0) {
  Vec v;
  for (std::size_t k = 0; k < n; ++k)
    v.push_back((static_cast<double>(k * 37 % 101) - 50 + offset) * scale);
  return v;
}
Array floats(Shape s, linum::DType d) {
  return linum::astype(
      linum::array(ints(static_cast<std::size_t>(linum::shape_size(s)), 1.0 / 8), s), d);
}
Array bools(std::size_t n) {
  std::vector<bool> v;
  for (std::size_t k = 0; k < n; ++k) v.push_back(k % 3 == 0);
  return linum::array(v);
}

void check_leaf(const Tree& t, linum::DType d, const Shape& s, const Vec& v) {
  REQUIRE(t.is_leaf());
  CHECK(t.leaf().dtype() == d);
  CHECK(t.leaf().shape() == s);
  CHECK(values(t.leaf()) == v);
}

Tree linum_tree() {
  using linum::float32, linum::float64;
  return Tree{
      {"params", Tree{{"Conv_0", Tree{{"kernel", floats({3, 3, 1, 4}, float32)},
                                      {"bias", floats({4}, float32)}}},
                      {"Dense_0",
                       Tree{{"kernel", floats({4, 2}, float64)}, {"bias", floats({2}, float64)}}}}},
      {"ints", linum::astype(linum::array(ints(5, 1000)), linum::int32)},
      {"u", linum::astype(linum::array(ints(3, 100000, 50)), linum::uint32)},
      {"flags", bools(4)},
      // A 0-d float32 array (numpy's), not a Python number: strongly typed.
      {"seq", Tree::tuple({Tree(floats({2}, float32)), Tree(linum::full({}, 1.5, float32))})},
      {"none", Tree()},
      {"name", ser::str_leaf("linum \xe2\x9c\x93")},
      {"step", Array(7)},  // a Python int
      // The 2-byte floats under numpy's / ml_dtypes' names, written as they are.
      {"half", Tree{{"b", floats({3}, linum::bfloat16)}, {"h", floats({2}, linum::float16)}}}};
}

}  // namespace

TEST_CASE("linum reads the Flax-format checkpoint that Python wrote") {
  const std::string bytes = read_file(dir() + "/py_flax.msgpack");
  Tree t = ser::msgpack_restore(bytes);
  using linum::float32, linum::float64, linum::int32, linum::uint32;
  check_leaf(t["params"]["Conv_0"]["kernel"], float32, {3, 3, 1, 4}, ints(36, 1.0 / 8));
  check_leaf(t["params"]["Dense_0"]["bias"], float64, {2}, ints(2, 1.0 / 8));
  const Tree& d = t["dtypes"];
  check_leaf(d["int32"], int32, {5}, ints(5, 1000));
  check_leaf(d["uint32"], uint32, {4}, ints(4, 100000, 50));
  check_leaf(d["bool"], linum::bool_, {6}, {1, 0, 0, 1, 0, 0});
  check_leaf(d["float16"], linum::float16, {2, 3}, ints(6, 1.0 / 8));
  check_leaf(d["int8"], int32, {7}, ints(7));
  check_leaf(d["int64"], int32, {5}, ints(5, 1000));
  Vec u8;
  for (int k = 0; k < 6; ++k) u8.push_back(k * 37 % 256);
  check_leaf(d["uint8"], uint32, {6}, u8);
  check_leaf(d["uint16"], uint32, {3}, ints(3, 600, 50));
  check_leaf(t["bf16"], linum::bfloat16, {5}, {-2, -1.5, -1, -0.5, 0});
  check_leaf(t["scalar"], float32, {}, {2.5});
  check_leaf(t["step"], int32, {}, {7});
  check_leaf(t["lr"], float64, {}, {0.5});
  check_leaf(t["big"], float32, {10, 7}, ints(70, 1.0 / 8));  // written in 5 chunks
  CHECK(ser::str_value(t["name"]) == std::optional<std::string>("r\xc3\xa9sum\xc3\xa9"));

  // from_bytes into a target of the right structure checks every shape and keeps the values.
  Tree target = linum::pytree::tree_map([](const Array& a) { return linum::zeros_like(a); }, t);
  Tree back = ser::from_bytes(target, bytes);
  CHECK(values(back["big"].leaf()) == ints(70, 1.0 / 8));
}

TEST_CASE("linum reads the safetensors file that Python wrote") {
  st::Metadata meta;
  st::Tensors t = st::load_safetensors(std::filesystem::path(dir() + "/py.safetensors"), &meta);
  CHECK(meta == st::Metadata{{"format", "np"}});
  REQUIRE(t.size() == 5);
  CHECK(values(t.at("a.b")) == ints(6, 1.0 / 8));
  CHECK(t.at("a.b").shape() == Shape{2, 3});
  CHECK(t.at("a.c").dtype() == linum::int32);
  CHECK(values(t.at("a.c")) == ints(3, 1000));
  CHECK(t.at("d").dtype() == linum::float16);
  CHECK(values(t.at("d")) == ints(2, 1.0 / 8));
  CHECK(values(t.at("e")) == Vec{1, 0, 0});
  CHECK(values(t.at("f")) == ints(2, 1.0 / 8));
  Tree nested = linum::traverse_util::unflatten_dict(t, ".");
  CHECK(values(nested["a"]["c"].leaf()) == ints(3, 1000));
}

TEST_CASE("linum writes a checkpoint, a chunked checkpoint and a safetensors file for Python") {
  const Tree tree = linum_tree();
  write_file(dir() + "/linum_flax.msgpack", ser::to_bytes(tree));
  Tree with_big = ser::to_state_dict(tree);
  with_big["big"] = floats({10, 7}, linum::float32);
  write_file(dir() + "/linum_chunked.msgpack", ser::msgpack_serialize(with_big, 64));
  using Params = std::map<std::string, Array>;
  auto state = linum::optim::create_train_state(nullptr, Params{{"w", floats({3}, linum::float32)}},
                                                linum::optim::sgd(0.5));
  state = state.apply_gradients(Params{{"w", linum::ones({3})}});
  write_file(dir() + "/linum_train_state.msgpack", ser::to_bytes(state));
  st::Tensors ts{{"w", floats({3, 4}, linum::float32)},
                 {"b", floats({4}, linum::float64)},
                 {"i", linum::astype(linum::array(ints(3, 1000)), linum::int32)},
                 {"m", bools(5)}};
  st::save_safetensors(ts, std::filesystem::path(dir() + "/linum.safetensors"), {{"format", "np"}});
}
