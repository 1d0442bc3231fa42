// safetensors: the reference layout byte for byte, round trips of every linum dtype (BF16 and
// F16 as they are), exact widening of I8/U8 and checked narrowing of I64, metadata, zero-copy
// loading from a file, unflatten_dict(".").
#include <cstdio>
#include <filesystem>
#include <string>

#include "helpers.hpp"

namespace test_safetensors {

namespace st = linum::safetensors;
using namespace ser_test;

namespace {

// A safetensors file from a header text and data, the header padded to 8 bytes by the spec.
std::string file_of(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  return le64(header.size()) + header + data;
}

std::filesystem::path temp_file(const char* name) {
  return std::filesystem::temp_directory_path() /
         (std::string("linum_st_") + std::to_string(::getpid()) + "_" + name);
}

}  // namespace

TEST_SUITE("serialization safetensors") {
  TEST_CASE("save_safetensors writes the reference layout: sorted by dtype size then name") {
    st::Tensors t{
        {"b", linum::array({1.0f, 2.0f})}, {"a", linum::array({7})}, {"z", linum::array({0.5})}};
    const std::string data = le_bytes(std::vector<double>{0.5}) +
                             le_bytes(std::vector<float>{1.0f, 2.0f}) +
                             le_bytes(std::vector<std::int32_t>{7});
    const std::string want = file_of(R"({"z":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},)"
                                     R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                                     R"("a":{"dtype":"I32","shape":[1],"data_offsets":[16,20]}})",
                                     data);
    CHECK(st::save_safetensors(t) == want);
  }

  TEST_CASE("every linum dtype and the metadata round-trip") {
    st::Tensors t{{"f32", linum::array({{1.5f, 2.5f}, {3.5f, 4.5f}})},
                  {"f64", linum::array({1e-300, 2.0})},
                  {"i32", linum::array({-3, 4})},
                  {"u32", linum::astype(linum::array({5, 6}), linum::uint32)},
                  {"b", linum::array(std::vector<bool>{true, false})},
                  {"s", Array(9.0f)}};
    st::Metadata meta{{"format", "np"}, {"source", "linum"}};
    const std::string bytes = st::save_safetensors(t, meta);
    st::Metadata got_meta;
    st::Tensors back = st::load_safetensors(as_bytes(bytes), &got_meta);
    CHECK(got_meta == meta);
    REQUIRE(back.size() == t.size());
    for (const auto& [k, v] : t) {
      INFO(k);
      CHECK(back.at(k).dtype() == v.dtype());
      CHECK(back.at(k).shape() == v.shape());
      CHECK(values(back.at(k)) == values(v));
    }
  }

  TEST_CASE("F16 and BF16 read as float16 / bfloat16; I8, I64, U8 as int32, uint32, exactly") {
    const std::string data = le_bytes(std::vector<std::int64_t>{-9, 123456}) +
                             le_bytes(std::vector<std::uint16_t>{0x3c00, 0xb800}) +  // 1, -0.5
                             le_bytes(std::vector<std::uint16_t>{0x4040}) +          // 3
                             le_bytes(std::vector<std::int8_t>{-1}) +
                             le_bytes(std::vector<std::uint8_t>{200});
    const std::string f = file_of(R"({"i64":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
                                  R"("h":{"dtype":"F16","shape":[2],"data_offsets":[16,20]},)"
                                  R"("bf":{"dtype":"BF16","shape":[],"data_offsets":[20,22]},)"
                                  R"("i8":{"dtype":"I8","shape":[1],"data_offsets":[22,23]},)"
                                  R"("u8":{"dtype":"U8","shape":[1],"data_offsets":[23,24]}})",
                                  data);
    st::Tensors t = st::load_safetensors(as_bytes(f));
    CHECK(t.at("i64").dtype() == linum::int32);
    CHECK(values(t.at("i64")) == Vec{-9, 123456});
    CHECK(t.at("h").dtype() == linum::float16);
    CHECK(values(t.at("h")) == Vec{1.0, -0.5});
    CHECK(t.at("bf").dtype() == linum::bfloat16);
    CHECK(t.at("bf").shape().empty());
    CHECK(t.at("bf").item<float>() == 3.0f);
    CHECK(values(t.at("i8")) == Vec{-1});
    CHECK(t.at("u8").dtype() == linum::uint32);
    CHECK(values(t.at("u8")) == Vec{200});
  }

  TEST_CASE("BF16 and F16 tensors round-trip byte for byte, NaN payloads included") {
    // The reference layout: both 2-byte, so sorted by name.
    const std::string data = le_bytes(std::vector<std::uint16_t>{0x3f80, 0x7f81, 0x0001}) +
                             le_bytes(std::vector<std::uint16_t>{0xfbff, 0x7c01});
    const std::string f = file_of(R"({"bf":{"dtype":"BF16","shape":[3],"data_offsets":[0,6]},)"
                                  R"("h":{"dtype":"F16","shape":[2],"data_offsets":[6,10]}})",
                                  data);
    st::Tensors t = st::load_safetensors(as_bytes(f));
    CHECK(t.at("bf").dtype() == linum::bfloat16);
    CHECK(t.at("bf").data<linum::BFloat16>()[1].bits == 0x7f81);
    CHECK(t.at("h").dtype() == linum::float16);
    CHECK(values(t.at("h"))[0] == -65504.0);
    CHECK(st::save_safetensors(t) == f);
    // Written from arrays made here, the 2-byte dtypes keep their names.
    st::Tensors mine{{"w", linum::astype(linum::array({0.1f, 2.0f}), linum::bfloat16)}};
    const std::string bytes = st::save_safetensors(mine);
    CHECK(bytes.find(R"("dtype":"BF16")") != std::string::npos);
    CHECK(values(st::load_safetensors(as_bytes(bytes)).at("w")) == values(mine.at("w")));
  }

  TEST_CASE("a file loads without copying aligned tensors: they share one mapping") {
    auto path = temp_file("zc.safetensors");
    st::Tensors t{{"params.Dense_0.kernel",
                   linum::reshape(linum::arange(0.0, 12.0, 1.0, linum::float32), {3, 4})},
                  {"params.Dense_0.bias", linum::array({1.0f, 2.0f, 3.0f, 4.0f})}};
    st::save_safetensors(t, path);
    st::Tensors back = st::load_safetensors(path);
    std::filesystem::remove(path);  // the mapping outlives the name
    auto impl = [](const Array& a) {
      return static_cast<const linum::detail::ConcreteImpl*>(a.impl().get());
    };
    const auto* k = impl(back.at("params.Dense_0.kernel"));
    const auto* b = impl(back.at("params.Dense_0.bias"));
    CHECK(k->owner != nullptr);
    CHECK(k->owner == b->owner);  // both point into the same mapped file
    CHECK(static_cast<const char*>(k->data) - static_cast<const char*>(b->data) == 16);
    CHECK(values(back.at("params.Dense_0.kernel")) == values(t.at("params.Dense_0.kernel")));

    // Dotted names nest with unflatten_dict(..., ".").
    Tree nested = linum::traverse_util::unflatten_dict(back, ".");
    CHECK(values(nested["params"]["Dense_0"]["bias"].leaf()) == Vec{1, 2, 3, 4});
  }

  TEST_CASE("a missing file is an Error naming it") {
    check_error([] { st::load_safetensors(std::filesystem::path("/nonexistent/x.safetensors")); },
                {"/nonexistent/x.safetensors"});
  }
}

}  // namespace test_safetensors
