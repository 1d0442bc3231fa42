// Private to nn/: the element types that checkpoint files carry (numpy names for Flax msgpack,
// safetensors' short names), and the exact conversion of a raw little-endian buffer into a linum
// Array, with every size checked before anything is allocated.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <linum/autodiff/array.hpp>

namespace linum::serialization::codec {

enum class Src { f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, b };

std::size_t itemsize(Src s);
std::optional<Src> from_numpy_name(std::string_view name);
std::optional<Src> from_safetensors_name(std::string_view name);
std::string_view safetensors_name(DType d);

// The Array that `nbytes` bytes of element type `src` and shape `shape` hold, converted to the
// nearest linum dtype (see serialization.hpp). ValueError when nbytes != count * itemsize or
// the count overflows. With an owner, data of a linum dtype aligned to its itemsize
// is shared instead of copied (the owner keeps the bytes alive).
Array decode(Src src, const Shape& shape, const char* data, std::size_t nbytes, std::string_view fn,
             const std::shared_ptr<void>& owner);

// decode() for a numpy dtype name; NotImplementedError for names linum cannot read.
Array decode_array(std::string_view numpy_name, const Shape& shape, const char* data,
                   std::size_t nbytes, std::string_view fn, const std::shared_ptr<void>& owner);

// The bytes of a concrete Array (its value under grad/jvp).
struct Bytes {
  Array keep;
  const char* data;
  std::size_t size;
};
Bytes bytes_of(const Array& a, std::string_view fn);

}  // namespace linum::serialization::codec
