// safetensors (huggingface/safetensors): load a file or a byte string into a flat dict of
// Arrays, save one. Layout: 8-byte little-endian header length N, N bytes of JSON header
// {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, "__metadata__":
// {str: str}}, then the tensor bytes. Files load through mmap: a tensor whose bytes are aligned
// to its itemsize is shared, not copied. Nested names ("params.Dense_0.kernel") become a tree
// with traverse_util::unflatten_dict(load_safetensors(path), ".").
//
// Element types convert as in serialization.hpp (F16/BF16 stay float16/bfloat16, I8/I16 ->
// int32, U8/U16 -> uint32, I64/U64 narrowed when every value fits); F8 types:
// NotImplementedError.
// Every malformation (truncation, bad JSON, non-UTF-8, duplicate names, offsets that overlap,
// leave holes or overrun the buffer) is a linum::Error.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>

#include <linum/autodiff/array.hpp>

namespace linum::safetensors {

using Tensors = std::map<std::string, Array>;
using Metadata = std::map<std::string, std::string>;

// safetensors' MAX_HEADER_SIZE: larger headers are rejected before they are read.
inline constexpr std::size_t MAX_HEADER_SIZE = 100'000'000;

// safetensors.numpy.load_file / load. `metadata`, when given, receives "__metadata__".
Tensors load_safetensors(const std::filesystem::path& path, Metadata* metadata = nullptr);
Tensors load_safetensors(std::span<const std::byte> bytes, Metadata* metadata = nullptr);

// safetensors.numpy.save / save_file: the bytes the reference writer produces (tensors sorted
// by dtype alignment then name, header padded with spaces to a multiple of 8 bytes).
std::string save_safetensors(const Tensors& tensors, const Metadata& metadata = {});
void save_safetensors(const Tensors& tensors, const std::filesystem::path& path,
                      const Metadata& metadata = {});

}  // namespace linum::safetensors
