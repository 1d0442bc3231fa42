// Flax's msgpack format: exact bytes against the spec, every dtype, Flax's chunking of large
// arrays, numpy scalars and native numbers, and round trips of a CNN's variables and an Adam state.
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "helpers.hpp"

namespace test_msgpack {

namespace ser = linum::serialization;
namespace optim = linum::optim;
using namespace ser_test;

namespace {

// A variables dict shaped like a small Flax CNN's: Conv -> BatchNorm -> Dense.
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

  TEST_CASE("weakly typed scalars (Python numbers) are written natively, as Flax's packb does") {
    // Flax: {'i': 7, 'big': 300, 'f': 0.5} packs as Python ints and a float64; the inverse of
    // reading native numbers (above), so a Flax file round-trips byte for byte.
    Mp want;
    want.map(4).str("i").u8(0x07).str("big").u8(0xcd).be(300, 2);
    want.str("f").u8(0xcb).be(0x3fe0000000000000ull, 8).str("neg").u8(0xff);
    Tree t{{"i", Array(7)}, {"big", Array(300)}, {"f", Array(0.5)}, {"neg", Array(-1)}};
    CHECK(ser::msgpack_serialize(t) == want.b);
    CHECK(ser::msgpack_serialize(ser::msgpack_restore(want.b)) == want.b);
    // A strongly typed scalar (jnp.asarray(7)) stays an ndarray (ext 1).
    const std::string strong =
        ser::msgpack_serialize(Tree{{"i", linum::full({}, 7.0, linum::int32)}});
    CHECK(strong == Mp().map(1)
                        .str("i")
                        .ext(1, Mp::ndarray({}, "int32", le_bytes(std::vector<std::int32_t>{7})))
                        .b);
  }

  TEST_CASE("a Python float with an integral value stays a float (2.0 is 0xcb, not the int 2)") {
    // Python's msgpack packs 2.0 as float64 0xcb 40 00 00 00 00 00 00 00; msgpack-c's packer
    // would write the int 2, which reads back as an int32. Also a float32 of 37581357056, past
    // uint32 (the fuzzer's finding: its int form could not be read back at all).
    Mp want;
    want.map(2).str("f").u8(0xcb).be(0x4000000000000000ull, 8);
    want.str("g").u8(0xca).be(0x510c0060u, 4);
    Tree t = ser::msgpack_restore(want.b);
    CHECK(t["f"].leaf().dtype() == linum::float64);
    CHECK(t["g"].leaf().dtype() == linum::float32);
    CHECK(ser::msgpack_serialize(t) == want.b);
    CHECK(ser::msgpack_serialize(Tree{{"f", Array(2.0)}, {"g", Array(37581357056.0f)}}) == want.b);
  }

  TEST_CASE("str leaves: msgpack strings read and written, kept by from_bytes and tree_map") {
    // Flax writes {'name': 'résumé', 'w': array} with the str as a msgpack str.
    Mp want;
    want.map(2).str("name").str("r\xc3\xa9sum\xc3\xa9").str("w");
    want.ext(1, Mp::ndarray({1}, "float32", le_bytes(std::vector<float>{1.5f})));
    Tree t = ser::msgpack_restore(want.b);
    CHECK(ser::str_value(t["name"]) == std::optional<std::string>("r\xc3\xa9sum\xc3\xa9"));
    CHECK_FALSE(ser::str_value(t["w"]).has_value());
    CHECK(ser::msgpack_serialize(t) == want.b);
    CHECK(ser::to_bytes(Tree{{"name", ser::str_leaf("r\xc3\xa9sum\xc3\xa9")},
                             {"w", linum::array({1.5f})}}) == want.b);
    // from_bytes into a target holding any str there takes the stored one (Flax returns the state
    // of an unregistered leaf as it is); tree_map keeps the str, mapping the arrays only.
    Tree target{{"name", ser::str_leaf("")}, {"w", linum::zeros({1})}};
    Tree back = ser::from_bytes(target, want.b);
    CHECK(ser::str_value(back["name"]) == std::optional<std::string>("r\xc3\xa9sum\xc3\xa9"));
    Tree doubled = linum::pytree::tree_map([](const Array& a) { return 2.0 * a; }, back);
    CHECK(ser::str_value(doubled["name"]) == ser::str_value(back["name"]));
    CHECK(values(doubled["w"].leaf()) == Vec{3.0});
    // An array target where the file has a str is named.
    check_error<linum::TypeError>(
        [&] {
          ser::from_bytes(Tree{{"name", linum::zeros({1})}, {"w", linum::zeros({1})}}, want.b);
        },
        {"expected an array at path ./name", "got a string"});
  }

  TEST_CASE("to_bytes(TrainState) writes step as the int Flax's TrainState holds") {
    // Flax: TrainState.create sets step=0 (a Python int) and apply_gradients step + 1, so
    // to_bytes writes {'step': 0 | 1, 'params': {...}, 'opt_state': ...} with a msgpack int.
    using Params = std::map<std::string, Array>;
    auto state = optim::create_train_state(nullptr, Params{{"w", linum::array({1.0f, 2.0f})}},
                                           optim::sgd(0.5));
    auto step_bytes = [](const std::string& bytes) {
      // The state dict is a map of 3 whose first entry is 'step'.
      REQUIRE(bytes.substr(0, 6) == std::string("\x83\xa4step", 6));
      return static_cast<unsigned char>(bytes[6]);
    };
    CHECK(step_bytes(ser::to_bytes(state)) == 0x00);
    auto next = state.apply_gradients(Params{{"w", linum::array({1.0f, 1.0f})}});
    const std::string bytes = ser::to_bytes(next);
    CHECK(step_bytes(bytes) == 0x01);
    auto restored = ser::from_bytes(state, bytes);
    CHECK(restored.step.item<int>() == 1);
    CHECK(ser::to_bytes(restored) == bytes);
    CHECK(values(restored.params.at("w")) == Vec{0.5, 1.5});
    // A Flax file written under jax.jit holds step as an int32 array: it is kept as one.
    Tree sd = ser::to_state_dict(next);
    sd["step"] = linum::full({}, 4.0, linum::int32);
    const std::string jitted = ser::msgpack_serialize(sd);
    auto from_jit = ser::from_bytes(state, jitted);
    CHECK(from_jit.step.item<int>() == 4);
    CHECK(ser::to_bytes(from_jit) == jitted);
  }

  TEST_CASE("float16 and bfloat16 stay 2-byte; 8, 16 and 64-bit integers convert exactly") {
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
    CHECK(t["f16"].leaf().dtype() == linum::float16);
    CHECK(t["bf16"].leaf().dtype() == linum::bfloat16);
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

  TEST_CASE("a Flax checkpoint with bfloat16 / float16 leaves round-trips byte for byte") {
    // As flax.serialization.msgpack_serialize writes a bf16 leaf: ext 1 holding (shape,
    // arr.dtype.name, arr.tobytes()), the name being ml_dtypes' "bfloat16".
    const std::vector<std::uint16_t> kernel{0x3f80, 0xbe00, 0x7f81,
                                            0x0001};        // 1, -0.125, sNaN, tiny
    const std::vector<std::uint16_t> bias{0x3555, 0xfc00};  // 0.333, -inf
    Mp m;
    m.map(1).str("params").map(2);
    m.str("bias").ext(1, Mp::ndarray({2}, "float16", le_bytes(bias)));
    m.str("kernel").ext(1, Mp::ndarray({2, 2}, "bfloat16", le_bytes(kernel)));
    const Tree t = ser::msgpack_restore(m.b);
    const Array k = t["params"]["kernel"].leaf(), b = t["params"]["bias"].leaf();
    CHECK(k.dtype() == linum::bfloat16);
    CHECK(k.shape() == linum::Shape{2, 2});
    CHECK(k.data<linum::BFloat16>()[2].bits == 0x7f81);  // the bits, not a float32 round trip
    CHECK(values(k)[1] == -0.125);
    CHECK(b.dtype() == linum::float16);
    CHECK(values(b)[1] == -INFINITY);
    CHECK(ser::msgpack_serialize(t) == m.b);
    // bfloat16 arrays made here are written under the same name.
    Tree mine{{"w", linum::astype(linum::array({1.0f, -0.125f}), linum::bfloat16)}};
    const std::string payload =
        Mp::ndarray({2}, "bfloat16", le_bytes(std::vector<std::uint16_t>{0x3f80, 0xbe00}));
    Mp want;
    want.map(1).str("w").ext(1, payload);
    CHECK(ser::msgpack_serialize(mine) == want.b);
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

}  // namespace test_msgpack
