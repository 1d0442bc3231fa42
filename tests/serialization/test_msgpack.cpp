// Flax's msgpack format: exact bytes against the spec, every dtype, Flax's chunking of large
// arrays, numpy scalars and native numbers, and round trips of a CNN's variables and an Adam state.
#include <cmath>
#include <string>

#include "helpers.hpp"

namespace ser = linum::serialization;
namespace optim = linum::optim;
using namespace ser_test;

namespace {

// A seed-CNN-shaped variables dict: Conv -> BatchNorm -> Dense (spec seeds' CNN).
Tree cnn_variables() {
  auto ramp = [](linum::Shape s, double scale) {
    return linum::reshape(linum::arange(0, static_cast<double>(linum::shape_size(s))) * scale, s);
  };
  return Tree{
      {"params",
       Tree{{"Conv_0", Tree{{"kernel", ramp({3, 3, 1, 8}, 0.01)}, {"bias", ramp({8}, -0.5)}}},
            {"BatchNorm_0", Tree{{"scale", linum::ones({8})}, {"bias", linum::zeros({8})}}},
            {"Dense_0", Tree{{"kernel", ramp({8, 10}, 0.25)}, {"bias", ramp({10}, 1.0)}}}}},
      {"batch_stats",
       Tree{{"BatchNorm_0", Tree{{"mean", ramp({8}, 0.125)}, {"var", linum::ones({8})}}}}}};
}

void check_same(const Tree& a, const Tree& b) {
  REQUIRE(a.kind() == b.kind());
  if (a.is_leaf()) {
    CHECK(a.leaf().shape() == b.leaf().shape());
    CHECK(a.leaf().dtype() == b.leaf().dtype());
    CHECK(values(a.leaf()) == values(b.leaf()));
  } else if (a.is_dict()) {
    CHECK(a.size() == b.size());
    for (const auto& [k, v] : a.as_dict()) check_same(v, b[k]);
  } else if (a.is_tuple() || a.is_list()) {
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) check_same(a[i], b[i]);
  }
}

}  // namespace

TEST_SUITE("serialization msgpack") {
  TEST_CASE("an array is ext type 1 holding msgpack (shape, dtype name, bytes), byte for byte") {
    Tree t{{"a", linum::array({1.0f, 2.0f})}};
    const std::string payload = Mp::ndarray({2}, "float32", le_bytes(std::vector<float>{1, 2}));
    Mp want;
    want.map(1).str("a").ext(1, payload);
    CHECK(ser::msgpack_serialize(t) == want.b);
    CHECK(ser::to_bytes(t) == want.b);
  }

  TEST_CASE("every linum dtype round-trips with its numpy name") {
    Tree t{{"f32", linum::array({1.5f, -2.0f})},
           {"f64", linum::array({{0.1, 0.2}, {0.3, 1e300}})},
           {"i32", linum::array({-7, 8})},
           {"u32", linum::astype(linum::array({1, 4000000}), linum::uint32)},
           {"bool", linum::array(std::vector<bool>{true, false, true})},
           {"scalar", Array(3.25f)},
           {"empty", linum::zeros({0, 3})}};
    const std::string bytes = ser::msgpack_serialize(t);
    for (auto name : {"float32", "float64", "int32", "uint32", "bool"}) {
      CHECK(bytes.find(name) != std::string::npos);
    }
    check_same(ser::msgpack_restore(bytes), t);
  }

  TEST_CASE("arrays above the chunk limit are chunked as Flax does and joined on reading") {
    Array big = linum::reshape(linum::arange(0, 70), {10, 7});  // int32, 280 bytes
    Tree t{{"big", big}, {"small", linum::array({1, 2})}};
    const std::string chunked = ser::msgpack_serialize(t, 64);  // 16 elements per chunk
    CHECK(chunked.find("__msgpack_chunked_array__") != std::string::npos);
    CHECK(chunked != ser::msgpack_serialize(t));
    // The shape dict holds native ints: {'0': 10, '1': 7} is 0x82 a1 '0' 0a a1 '1' 07.
    CHECK(chunked.find(std::string("\x82\xa1"
                                   "0\x0a\xa1"
                                   "1\x07",
                                   7)) != std::string::npos);
    // 70 elements in chunks of 16: five chunks, the last of 6 elements.
    const std::string last =
        Mp::ndarray({6}, "int32", le_bytes(std::vector<std::int32_t>{64, 65, 66, 67, 68, 69}));
    CHECK(chunked.find(last) != std::string::npos);
    check_same(ser::msgpack_restore(chunked), t);
    // A root array is chunked too.
    CHECK(values(ser::msgpack_restore(ser::msgpack_serialize(Tree(big), 64)).leaf()) ==
          values(big));
  }

  TEST_CASE("numpy scalars (ext 3) and native msgpack numbers read as rank-0 arrays") {
    Mp m;
    m.map(4).str("s").ext(3, Mp::ndarray({}, "float32", le_bytes(std::vector<float>{2.5f})));
    m.str("i").uint(300).str("f").u8(0xcb).be(0x3fe0000000000000ull, 8).str("t").u8(0xc3);
    Tree t = ser::msgpack_restore(m.b);
    CHECK(t["s"].leaf().shape().empty());
    CHECK(t["s"].leaf().item<float>() == 2.5f);
    CHECK(t["i"].leaf().dtype() == linum::int32);
    CHECK(t["i"].leaf().item<int>() == 300);
    CHECK(t["f"].leaf().dtype() == linum::float64);
    CHECK(t["f"].leaf().item<double>() == 0.5);
    CHECK(t["t"].leaf().dtype() == linum::bool_);
  }

  TEST_CASE("float16, bfloat16, int8, int16, int64, uint8, uint16, uint64 convert exactly") {
    // float16 0x3c00 = 1, 0xc100 = -2.5, 0x0001 = 2^-24 (subnormal), 0x7c00 = inf.
    std::vector<std::uint16_t> f16{0x3c00, 0xc100, 0x0001, 0x7c00};
    std::vector<std::uint16_t> bf16{0x3f80, 0xc020};  // 1, -2.5
    Mp m;
    m.map(8);
    m.str("f16").ext(1, Mp::ndarray({4}, "float16", le_bytes(f16)));
    m.str("bf16").ext(1, Mp::ndarray({2}, "bfloat16", le_bytes(bf16)));
    m.str("i8").ext(1, Mp::ndarray({2}, "int8", le_bytes(std::vector<std::int8_t>{-128, 127})));
    m.str("i16").ext(1, Mp::ndarray({1}, "int16", le_bytes(std::vector<std::int16_t>{-30000})));
    m.str("i64").ext(1,
                     Mp::ndarray({2}, "int64", le_bytes(std::vector<std::int64_t>{-5, 1 << 30})));
    m.str("u8").ext(1, Mp::ndarray({2}, "uint8", le_bytes(std::vector<std::uint8_t>{0, 255})));
    m.str("u16").ext(1, Mp::ndarray({1}, "uint16", le_bytes(std::vector<std::uint16_t>{65535})));
    m.str("u64").ext(1,
                     Mp::ndarray({1}, "uint64", le_bytes(std::vector<std::uint64_t>{4000000000u})));
    Tree t = ser::msgpack_restore(m.b);
    CHECK(t["f16"].leaf().dtype() == linum::float32);
    Vec f = values(t["f16"].leaf());
    CHECK(f[0] == 1.0);
    CHECK(f[1] == -2.5);
    CHECK(f[2] == std::ldexp(1.0, -24));
    CHECK(std::isinf(f[3]));
    CHECK(values(t["bf16"].leaf()) == Vec{1.0, -2.5});
    CHECK(t["i8"].leaf().dtype() == linum::int32);
    CHECK(values(t["i8"].leaf()) == Vec{-128, 127});
    CHECK(values(t["i16"].leaf()) == Vec{-30000});
    CHECK(t["i64"].leaf().dtype() == linum::int32);
    CHECK(values(t["i64"].leaf()) == Vec{-5, 1 << 30});
    CHECK(t["u8"].leaf().dtype() == linum::uint32);
    CHECK(values(t["u8"].leaf()) == Vec{0, 255});
    CHECK(values(t["u16"].leaf()) == Vec{65535});
    CHECK(t["u64"].leaf().dtype() == linum::uint32);
    CHECK(values(t["u64"].leaf()) == Vec{4000000000.0});
  }

  TEST_CASE("int64 values outside int32 are an error naming the value, not a wrap-around") {
    Mp m;
    m.ext(1, Mp::ndarray({2}, "int64", le_bytes(std::vector<std::int64_t>{1, 1ll << 40})));
    check_error<linum::ValueError>([&] { ser::msgpack_restore(m.b); },
                                   {"element 1", "1099511627776", "int32"});
  }

  TEST_CASE("a CNN's variables round-trip through to_bytes / from_bytes") {
    Tree v = cnn_variables();
    Tree zero = linum::pytree::tree_map([](const Array& a) { return linum::zeros_like(a); }, v);
    Tree back = ser::from_bytes(zero, ser::to_bytes(v));
    check_same(back, v);
    // msgpack_restore without a target gives the same dicts, in the written order.
    Tree restored = ser::msgpack_restore(ser::to_bytes(v));
    check_same(restored, v);
    CHECK(restored["params"].as_dict().keys() == v["params"].as_dict().keys());
  }

  TEST_CASE("an Adam state round-trips, tuple and EmptyState included") {
    Tree params{{"w", linum::array({1.0f, 2.0f})}, {"b", linum::array({-1.0f})}};
    auto tx = optim::adam(0.1);
    auto state = tx.init(params);
    Tree g{{"w", linum::array({0.5f, -0.25f})}, {"b", linum::array({2.0f})}};
    auto [u, s1] = tx.update(g, state, params);
    const std::string bytes = ser::to_bytes(s1);
    auto back = ser::from_bytes(state, bytes);
    CHECK(std::get<0>(back).count.template item<int>() == 1);
    CHECK(values(std::get<0>(back).mu["w"].leaf()) == values(std::get<0>(s1).mu["w"].leaf()));
    CHECK(values(std::get<0>(back).nu["b"].leaf()) == values(std::get<0>(s1).nu["b"].leaf()));
    // '1': {} is an empty msgpack map (0x80).
    CHECK(bytes.find(std::string("\xa1"
                                 "1\x80",
                                 3)) != std::string::npos);
  }

  TEST_CASE("complex numbers (ext 2) are rejected: linum has no complex dtype") {
    Mp payload;
    payload.arr(2).u8(0xcb).be(0, 8).u8(0xcb).be(0, 8);
    Mp m;
    m.map(1).str("z").ext(2, payload.b);
    check_error<linum::NotImplementedError>([&] { ser::msgpack_restore(m.b); },
                                            {"complex", "ext type 2", "/z"});
  }
}
