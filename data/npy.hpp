// NumPy's own file formats: .npy (one array, np.save / np.load) and .npz (a zip archive of .npy
// members, np.savez / np.savez_compressed), so that arrays saved from Python load in C++ and
// back. Reading takes header versions 1.0, 2.0 and 3.0, either byte order, C and Fortran order,
// and numpy's bool, int8..int64, uint8..uint64, float16, float32 and float64, converted exactly
// to the nearest linum dtype (float16 -> float32; int8/int16 -> int32; uint8/uint16 -> uint32;
// int64 -> int32 and uint64 -> uint32 when every value fits, else a ValueError). Writing gives
// little-endian C-order files byte-identical to what np.save writes for the same array.
// A malformed file is a linum::Error naming the function, the file (and member) and the byte
// offset; a dtype linum cannot hold (strings, objects, complex, structured) a NotImplementedError.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>

#include <linum/autodiff/array.hpp>

namespace linum::data {

// np.load(path) of a .npy file.
Array load_npy(const std::string& path);
// load_npy that also checks what the file loads as: a TypeError naming the file, its numpy dtype
// and `dtype` when they differ (e.g. an int64 file, which loads as int32, read as float32).
Array load_npy(const std::string& path, DType dtype);
// np.save(path, a) (a concrete array; under grad/jvp its value).
void save_npy(const std::string& path, const Array& a);

// np.load(path) of a .npz file: the arrays by name (member names without their ".npy").
// Members may be stored or deflated (np.savez_compressed); Zip64 records are read.
std::map<std::string, Array> load_npz(const std::string& path);
// np.savez(path, **arrays) and np.savez_compressed(path, **arrays).
void savez(const std::string& path, const std::map<std::string, Array>& arrays);
void savez_compressed(const std::string& path, const std::map<std::string, Array>& arrays);

// The same on bytes in memory (a network buffer, a fuzzer's input); `source` names them in errors.
Array decode_npy(std::span<const std::byte> bytes, const std::string& source = "<memory>");
std::string encode_npy(const Array& a);
std::map<std::string, Array> decode_npz(std::span<const std::byte> bytes,
                                        const std::string& source = "<memory>");
std::string encode_npz(const std::map<std::string, Array>& arrays, bool compressed = false);

}  // namespace linum::data
