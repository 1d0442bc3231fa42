// safetensors reader (validating the header as the reference implementation does, before any
// tensor is materialised) and writer (the reference byte layout). JSON via nlohmann-json.
#include <linum/nn/safetensors.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <linum/error.hpp>

#include "dtype_codec.hpp"

namespace linum::safetensors {

namespace codec = serialization::codec;
using json = nlohmann::json;

namespace {

constexpr int kMaxJsonDepth = 16;  // a valid header nests 3 deep

[[noreturn]] void fail(const std::string& what) { throw ValueError("load_safetensors: " + what); }

std::uint64_t read_u64_le(const std::byte* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

struct Entry {
  std::string name;
  codec::Src src;
  Shape shape;
  std::uint64_t begin, end;
};

std::uint64_t offset_of(const json& v, const std::string& name) {
  if (!v.is_number_unsigned())
    fail("tensor '" + name + "': data_offsets must be non-negative integers");
  return v.get<std::uint64_t>();
}

Tensors parse(const std::byte* data, std::size_t size, const std::shared_ptr<void>& owner,
              Metadata* metadata) {
  if (size < 8)
    fail("the input has " + std::to_string(size) + " bytes, fewer than the 8-byte header length");
  const std::uint64_t n = read_u64_le(data);
  if (n > MAX_HEADER_SIZE) {
    fail("the header declares " + std::to_string(n) + " bytes, more than the limit of " +
         std::to_string(MAX_HEADER_SIZE));
  }
  if (n > size - 8) {
    fail("the header declares " + std::to_string(n) + " bytes but only " +
         std::to_string(size - 8) + " follow (truncated file)");
  }
  const char* hdr = reinterpret_cast<const char*>(data + 8);
  if (n == 0 || hdr[0] != '{') fail("the header does not start with '{'");

  // Depth is bounded and duplicate names are rejected while parsing (JSON itself allows both).
  std::set<std::string> seen;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) {
    if (depth > kMaxJsonDepth)
      fail("the header nests deeper than " + std::to_string(kMaxJsonDepth));
    if (ev == json::parse_event_t::key && depth == 1) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!seen.insert(key).second) fail("duplicate tensor name '" + key + "' in the header");
    }
    return true;
  };
  json header;
  try {
    header = json::parse(hdr, hdr + n, cb);
  } catch (const json::exception& e) {
    fail(std::string("the header is not valid UTF-8 JSON: ") + e.what());
  }
  if (!header.is_object()) fail("the header is not a JSON object");

  const std::uint64_t buffer_size = size - 8 - n;
  const std::byte* buffer = data + 8 + n;
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) fail("__metadata__ is not an object of strings");
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string()) fail("__metadata__ value for '" + k + "' is not a string");
        if (metadata) (*metadata)[k] = v.get<std::string>();
      }
      continue;
    }
    if (!info.is_object()) fail("tensor '" + name + "' is not an object");
    auto dt = info.find("dtype");
    auto sh = info.find("shape");
    auto off = info.find("data_offsets");
    if (dt == info.end() || !dt->is_string()) fail("tensor '" + name + "' has no string dtype");
    if (sh == info.end() || !sh->is_array()) fail("tensor '" + name + "' has no shape array");
    if (off == info.end() || !off->is_array() || off->size() != 2)
      fail("tensor '" + name + "' has no data_offsets pair");
    auto src = codec::from_safetensors_name(dt->get_ref<const std::string&>());
    if (!src) {
      throw NotImplementedError("load_safetensors: tensor '" + name + "' has dtype " + dt->dump() +
                                "; linum reads F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, "
                                "U32, U64 and BOOL");
    }
    Entry e{name, *src, {}, offset_of((*off)[0], name), offset_of((*off)[1], name)};
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned() || d.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
        fail("tensor '" + name + "': shape entries must be non-negative integers");
      e.shape.push_back(static_cast<std::int64_t>(d.get<std::uint64_t>()));
    }
    if (e.begin > e.end) fail("tensor '" + name + "': data_offsets begin after they end");
    entries.push_back(std::move(e));
  }
  // As the reference reader: sorted by offset, the tensors tile the buffer without gaps.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  std::uint64_t at = 0;
  for (const auto& e : entries) {
    if (e.begin != at) {
      fail("tensor '" + e.name + "' starts at byte " + std::to_string(e.begin) +
           " of the data, "
           "expected " +
           std::to_string(at) + " (tensors must tile the data without gaps or overlap)");
    }
    at = e.end;
  }
  if (at != buffer_size) {
    fail("the tensors cover " + std::to_string(at) + " bytes of data but the input holds " +
         std::to_string(buffer_size));
  }
  Tensors out;
  for (const auto& e : entries) {
    out.emplace(e.name,
                codec::decode(e.src, e.shape, reinterpret_cast<const char*>(buffer + e.begin),
                              static_cast<std::size_t>(e.end - e.begin),
                              "load_safetensors (tensor '" + e.name + "')", owner));
  }
  return out;
}

}  // namespace

Tensors load_safetensors(std::span<const std::byte> bytes, Metadata* metadata) {
  return parse(bytes.data(), bytes.size(), nullptr, metadata);
}

Tensors load_safetensors(const std::filesystem::path& path, Metadata* metadata) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw Error("load_safetensors: cannot open " + path.string() + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("load_safetensors: " + path.string() + " is not a regular file");
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return parse(nullptr, 0, nullptr, metadata);
  }
  // A private writable mapping: Arrays never write, and nothing can reach the file if one did.
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    throw Error("load_safetensors: cannot map " + path.string() + ": " + std::strerror(errno));
  }
  std::shared_ptr<void> owner(p, [size](void* q) { ::munmap(q, size); });
  return parse(static_cast<const std::byte*>(p), size, owner, metadata);
}

std::string save_safetensors(const Tensors& tensors, const Metadata& metadata) {
  struct Item {
    const std::string* name;
    codec::Bytes bytes;
  };
  std::vector<Item> items;
  for (const auto& [name, a] : tensors) {
    if (name == "__metadata__") throw ValueError("save_safetensors: '__metadata__' is reserved");
    items.push_back({&name, codec::bytes_of(a, "save_safetensors")});
  }
  // The reference writer's order: larger dtype first (F64 > F32 > U32 > I32 > BOOL), then name.
  auto rank = [](DType d) {
    switch (d) {
      case DType::float64:
        return 4;
      case DType::float32:
        return 3;
      case DType::uint32:
        return 2;
      case DType::int32:
        return 1;
      default:
        return 0;
    }
  };
  std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
    const int ra = rank(a.bytes.keep.dtype()), rb = rank(b.bytes.keep.dtype());
    return ra != rb ? ra > rb : *a.name < *b.name;
  });
  auto ordered = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    auto m = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    ordered["__metadata__"] = std::move(m);
  }
  std::uint64_t at = 0;
  for (const auto& it : items) {
    nlohmann::ordered_json info = nlohmann::ordered_json::object();
    info["dtype"] = codec::safetensors_name(it.bytes.keep.dtype());
    info["shape"] = it.bytes.keep.shape();
    info["data_offsets"] = {at, at + it.bytes.size};
    at += it.bytes.size;
    ordered[*it.name] = std::move(info);
  }
  std::string h = ordered.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + h.size() + at);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((h.size() >> (8 * i)) & 0xff));
  out += h;
  for (const auto& it : items) out.append(it.bytes.data, it.bytes.size);
  return out;
}

void save_safetensors(const Tensors& tensors, const std::filesystem::path& path,
                      const Metadata& metadata) {
  const std::string bytes = save_safetensors(tensors, metadata);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw Error("save_safetensors: cannot write " + path.string());
}

}  // namespace linum::safetensors
