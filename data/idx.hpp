// IDX files, the format of MNIST, Fashion-MNIST and EMNIST: two zero bytes, a type code, the
// rank, big-endian uint32 dimensions, then the big-endian elements. Gzip-compressed (.gz, as
// the datasets ship) or plain.
#pragma once

#include <string>

#include <linum/autodiff/array.hpp>

namespace linum::data {

// The array in `path`, its elements converted exactly to the nearest linum dtype: uint8 ->
// uint32, int8 / int16 / int32 -> int32, float32, float64 (so MNIST's uint8 pixels load as
// uint32; astype(float32) / 255 gives the usual [0, 1] inputs). A missing, truncated or corrupt
// file is a ValueError naming the function, the file and the byte offset.
Array load_idx(const std::string& path);

}  // namespace linum::data
