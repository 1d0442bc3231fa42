// Checkpoint element types -> linum Arrays: exact widening (8/16-bit ints), checked narrowing
// (64-bit ints), zero-copy sharing of aligned buffers of linum's own dtypes (float16 and
// bfloat16 included).
#include "dtype_codec.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <linum/error.hpp>

namespace linum::serialization::codec {

namespace {

struct Entry {
  Src src;
  std::string_view numpy;
  std::string_view safetensors;
  std::size_t size;
};

constexpr Entry kTable[] = {
    {Src::f16, "float16", "F16", 2}, {Src::bf16, "bfloat16", "BF16", 2},
    {Src::f32, "float32", "F32", 4}, {Src::f64, "float64", "F64", 8},
    {Src::i8, "int8", "I8", 1},      {Src::i16, "int16", "I16", 2},
    {Src::i32, "int32", "I32", 4},   {Src::i64, "int64", "I64", 8},
    {Src::u8, "uint8", "U8", 1},     {Src::u16, "uint16", "U16", 2},
    {Src::u32, "uint32", "U32", 4},  {Src::u64, "uint64", "U64", 8},
    {Src::b, "bool", "BOOL", 1},
};

const Entry& entry(Src s) {
  for (const auto& e : kTable) {
    if (e.src == s) return e;
  }
  return kTable[0];
}

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Converts element by element into a fresh buffer of dtype Out.
template <class Out, class F>
Array convert(const Shape& shape, std::size_t n, F&& f) {
  std::vector<Out> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = f(i);
  if constexpr (std::is_same_v<Out, std::uint8_t>) {
    return linum::detail::from_buffer(out.data(), shape, bool_, bool_);
  } else {
    return linum::detail::from_values(out.data(), shape);
  }
}

template <class Out, class In>
Array narrow(const Shape& shape, std::size_t n, const char* data, std::string_view fn,
             std::string_view src_name) {
  return convert<Out>(shape, n, [&](std::size_t i) {
    const In v = load<In>(data + i * sizeof(In));
    if (v < static_cast<In>(std::numeric_limits<Out>::min()) ||
        v > static_cast<In>(std::numeric_limits<Out>::max())) {
      throw ValueError(std::string(fn) + ": element " + std::to_string(i) + " of a " +
                       std::string(src_name) + " array, " + std::to_string(v) +
                       ", does not fit linum's " + std::string(dtype_name(dtype_of<Out>())));
    }
    return static_cast<Out>(v);
  });
}

}  // namespace

std::size_t itemsize(Src s) { return entry(s).size; }

std::optional<Src> from_numpy_name(std::string_view name) {
  for (const auto& e : kTable) {
    if (e.numpy == name) return e.src;
  }
  return std::nullopt;
}

std::optional<Src> from_safetensors_name(std::string_view name) {
  for (const auto& e : kTable) {
    if (e.safetensors == name) return e.src;
  }
  return std::nullopt;
}

std::string_view safetensors_name(DType d) {
  switch (d) {
    case DType::float32:
      return "F32";
    case DType::float64:
      return "F64";
    case DType::int32:
      return "I32";
    case DType::uint32:
      return "U32";
    case DType::bool_:
      return "BOOL";
    case DType::bfloat16:
      return "BF16";
    case DType::float16:
      return "F16";
    case DType::complex64:
    case DType::complex128:
      throw TypeError("save_safetensors: complex arrays (" + std::string(dtype_name(d)) +
                      ") are not supported");
  }
  return "?";
}

Array decode(Src src, const Shape& shape, const char* data, std::size_t nbytes, std::string_view fn,
             const std::shared_ptr<void>& owner) {
  std::int64_t count = 1;
  for (auto d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) {
      throw ValueError(std::string(fn) + ": shape " + shape_str(shape) +
                       " has a negative entry or an element count that overflows");
    }
  }
  const std::size_t isz = itemsize(src);
  std::uint64_t need = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(count), isz, &need) || need != nbytes) {
    throw ValueError(std::string(fn) + ": a " + std::string(entry(src).numpy) + " array of shape " +
                     shape_str(shape) + " needs " +
                     (need || !count ? std::to_string(need) : std::string("more than 2^64")) +
                     " bytes, the buffer has " + std::to_string(nbytes));
  }
  const auto n = static_cast<std::size_t>(count);
  auto share_or_copy = [&](DType d) {
    if (owner && reinterpret_cast<std::uintptr_t>(data) % isz == 0) {
      return Array(
          std::make_shared<linum::detail::ConcreteImpl>(shape, d, owner, const_cast<char*>(data)));
    }
    return linum::detail::from_buffer(data, shape, d, d);
  };
  switch (src) {
    case Src::f32:
      return share_or_copy(float32);
    case Src::f64:
      return share_or_copy(float64);
    case Src::i32:
      return share_or_copy(int32);
    case Src::u32:
      return share_or_copy(uint32);
    case Src::f16:  // the 2-byte floats stay 2 bytes: a round trip is byte-identical
      return share_or_copy(float16);
    case Src::bf16:
      return share_or_copy(bfloat16);
    case Src::i8:
      return convert<std::int32_t>(shape, n,
                                   [&](std::size_t i) { return load<std::int8_t>(data + i); });
    case Src::i16:
      return convert<std::int32_t>(shape, n,
                                   [&](std::size_t i) { return load<std::int16_t>(data + 2 * i); });
    case Src::u8:
      return convert<std::uint32_t>(shape, n,
                                    [&](std::size_t i) { return load<std::uint8_t>(data + i); });
    case Src::u16:
      return convert<std::uint32_t>(
          shape, n, [&](std::size_t i) { return load<std::uint16_t>(data + 2 * i); });
    case Src::i64:
      return narrow<std::int32_t, std::int64_t>(shape, n, data, fn, "int64");
    case Src::u64:
      return narrow<std::uint32_t, std::uint64_t>(shape, n, data, fn, "uint64");
    case Src::b:  // any nonzero byte is True, as numpy reads it; linum stores 0/1
      return convert<std::uint8_t>(
          shape, n, [&](std::size_t i) { return static_cast<std::uint8_t>(data[i] != 0); });
  }
  throw ValueError(std::string(fn) + ": unknown element type");
}

Array decode_array(std::string_view numpy_name, const Shape& shape, const char* data,
                   std::size_t nbytes, std::string_view fn, const std::shared_ptr<void>& owner) {
  auto src = from_numpy_name(numpy_name);
  if (!src) {
    throw NotImplementedError(
        std::string(fn) + ": dtype '" + std::string(numpy_name.substr(0, 64)) +
        "' is not supported; linum reads float16, bfloat16, float32, float64, int8, int16, "
        "int32, int64, uint8, uint16, uint32, uint64 and bool");
  }
  return decode(*src, shape, data, nbytes, fn, owner);
}

Bytes bytes_of(const Array& a, std::string_view fn) {
  if (!a.valid()) throw ValueError(std::string(fn) + ": an empty Array handle has no value");
  Array c = a.concrete();
  const auto& impl = static_cast<const linum::detail::ConcreteImpl&>(*c.impl());
  return {c, static_cast<const char*>(impl.data),
          static_cast<std::size_t>(c.size()) * linum::itemsize(c.dtype())};
}

}  // namespace linum::serialization::codec
