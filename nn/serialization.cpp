// flax.serialization's msgpack codec over msgpack-c (libmsgpack-cxx): Flax's byte layout when
// writing, and a reader that validates every declared size against the bytes actually present
// before it allocates, bounds nesting, and turns every malformation into a linum::Error.
#include <linum/nn/serialization.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <memory>

#include <msgpack.hpp>

#include "dtype_codec.hpp"
#include "state_dict_kind.hpp"

namespace linum::serialization {

static_assert(std::endian::native == std::endian::little,
              "linum's checkpoint codec assumes a little-endian host, as Flax's files are");

namespace {

// A str leaf is a box whose metadata holds the text and whose value is None.
class StrMetadata final : public pytree::BoxMetadata {
 public:
  explicit StrMetadata(std::string text) : text_(std::move(text)) {}
  std::string type_name() const override { return "str"; }
  std::string repr_fields() const override { return ", text=" + pytree::str_repr(text_); }
  bool equals(const pytree::BoxMetadata& other) const override {
    const auto* o = dynamic_cast<const StrMetadata*>(&other);
    return o && o->text_ == text_;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

const StrMetadata* str_metadata(const Tree& t) {
  return t.is_box() ? dynamic_cast<const StrMetadata*>(t.box_metadata().get()) : nullptr;
}

}  // namespace

Tree str_leaf(std::string text) {
  return Tree::box(std::make_shared<const StrMetadata>(std::move(text)), Tree());
}

std::optional<std::string> str_value(const Tree& t) {
  if (const auto* m = str_metadata(t)) return m->text();
  return std::nullopt;
}

// ---- writing -------------------------------------------------------------------------------

namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

void pack_str(Packer& pk, std::string_view s) {
  pk.pack_str(static_cast<std::uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

// Flax's _ndarray_to_bytes: packb((shape, dtype.name, bytes), use_bin_type=True).
void pack_ndarray(Packer& pk, const Shape& shape, DType dtype, const char* bytes,
                  std::size_t nbytes) {
  if (nbytes > std::numeric_limits<std::uint32_t>::max()) {
    throw ValueError("msgpack_serialize: a chunk of " + std::to_string(nbytes) +
                     " bytes exceeds msgpack's 4 GiB limit; lower max_chunk_size");
  }
  msgpack::sbuffer inner;
  Packer ipk(inner);
  ipk.pack_array(3);
  ipk.pack_array(static_cast<std::uint32_t>(shape.size()));
  for (auto d : shape) ipk.pack_int64(d);
  pack_str(ipk, dtype_name(dtype));
  ipk.pack_bin(static_cast<std::uint32_t>(nbytes));
  ipk.pack_bin_body(bytes, static_cast<std::uint32_t>(nbytes));
  pk.pack_ext(inner.size(), 1);
  pk.pack_ext_body(inner.data(), static_cast<std::uint32_t>(inner.size()));
}

// msgpack-c packs a float that holds an integral value as an integer; Python's msgpack (Flax's
// packb) writes the float itself, and an integer would read back as an int32. So the float's own
// msgpack bytes: the 0xca / 0xcb marker, then the IEEE bits big-endian.
template <class F, class U>
void pack_ieee(Packer& pk, F v, unsigned char marker) {
  U bits;
  std::memcpy(&bits, &v, sizeof bits);
  char buf[1 + sizeof bits];
  buf[0] = static_cast<char>(marker);
  for (std::size_t i = 0; i < sizeof bits; ++i)
    buf[1 + i] = static_cast<char>(bits >> (8 * (sizeof bits - 1 - i)));
  pk.pack_bin_body(buf, sizeof buf);  // appends the bytes as they are
}

void pack_leaf(Packer& pk, const Array& a) {
  // A weakly typed scalar is a Python number: Flax's packb writes it natively (msgpack_restore
  // reads native numbers back as exactly these arrays).
  if (a.valid() && a.weak_type() && a.ndim() == 0) {
    const Array c = a.concrete();
    switch (c.dtype()) {
      case int32: pk.pack_int64(c.item<std::int64_t>()); return;
      case uint32: pk.pack_uint64(c.item<std::uint64_t>()); return;
      case float32: pack_ieee<float, std::uint32_t>(pk, c.item<float>(), 0xca); return;
      case float64: pack_ieee<double, std::uint64_t>(pk, c.item<double>(), 0xcb); return;
      default: break;
    }
  }
  auto r = codec::bytes_of(a, "msgpack_serialize");
  pack_ndarray(pk, r.keep.shape(), r.keep.dtype(), r.data, r.size);
}

// Flax's _chunk: flat chunks of max(1, MAX_CHUNK_SIZE / itemsize) elements.
void pack_chunked(Packer& pk, const Array& a, std::size_t max_chunk_size) {
  auto r = codec::bytes_of(a, "msgpack_serialize");
  const Shape& shape = r.keep.shape();
  const std::size_t isz = itemsize(r.keep.dtype());
  const std::size_t per_chunk = std::max<std::size_t>(1, max_chunk_size / isz);
  const std::size_t n = static_cast<std::size_t>(r.keep.size());
  const std::size_t nchunks = (n + per_chunk - 1) / per_chunk;
  pk.pack_map(3);
  pack_str(pk, "__msgpack_chunked_array__");
  pk.pack_true();
  pack_str(pk, "shape");
  pk.pack_map(static_cast<std::uint32_t>(shape.size()));
  for (std::size_t i = 0; i < shape.size(); ++i) {
    pack_str(pk, std::to_string(i));
    pk.pack_int64(shape[i]);
  }
  pack_str(pk, "chunks");
  pk.pack_map(static_cast<std::uint32_t>(nchunks));
  for (std::size_t c = 0; c < nchunks; ++c) {
    const std::size_t count = std::min(per_chunk, n - c * per_chunk);
    pack_str(pk, std::to_string(c));
    pack_ndarray(pk, Shape{static_cast<std::int64_t>(count)}, r.keep.dtype(),
                 r.data + c * per_chunk * isz, count * isz);
  }
}

bool needs_chunks(const Array& a, std::size_t max_chunk_size) {
  return a.valid() && static_cast<std::size_t>(a.size()) * itemsize(a.dtype()) > max_chunk_size;
}

// Flax chunks array leaves that are the root or dict values (_chunk_array_leaves_in_place).
void pack_tree(Packer& pk, const Tree& t, std::size_t max_chunk, bool chunkable) {
  switch (t.kind()) {
    case pytree::NodeKind::None: pk.pack_nil(); return;
    case pytree::NodeKind::Leaf:
      if (chunkable && needs_chunks(t.leaf(), max_chunk)) {
        pack_chunked(pk, t.leaf(), max_chunk);
      } else {
        pack_leaf(pk, t.leaf());
      }
      return;
    case pytree::NodeKind::Dict:
      pk.pack_map(static_cast<std::uint32_t>(t.size()));
      for (const auto& [k, v] : t.as_dict()) {
        pack_str(pk, k);
        pack_tree(pk, v, max_chunk, true);
      }
      return;
    case pytree::NodeKind::Tuple:
    case pytree::NodeKind::List:
      pk.pack_array(static_cast<std::uint32_t>(t.size()));
      for (const auto& v : t.items()) pack_tree(pk, v, max_chunk, false);
      return;
    case pytree::NodeKind::EmptyNode:
      throw TypeError("msgpack_serialize: can not serialize flax's empty_node");
    case pytree::NodeKind::FrozenDict:  // msgpack packs only exact dicts; Flax's packb fails too
      throw TypeError(
          "msgpack_serialize: can not serialize a FrozenDict; to_bytes writes its state dict, a "
          "plain dict");
    case pytree::NodeKind::Box:
      if (const auto* str = str_metadata(t)) {
        pack_str(pk, str->text());
        return;
      }
      throw TypeError("msgpack_serialize: can not serialize a " + t.box_metadata()->type_name() +
                      " box; to_bytes writes its state dict, {'value': ...}");
    case pytree::NodeKind::NamedTuple:
    case pytree::NodeKind::Custom:
    case pytree::NodeKind::TupleDict: break;  // static node kinds: a dynamic Tree never holds them
  }
  throw TypeError("msgpack_serialize: can not serialize " + detail::kind_of(t));
}

}  // namespace

std::string msgpack_serialize(const Tree& pytree, std::size_t max_chunk_size) {
  if (max_chunk_size == 0) throw ValueError("msgpack_serialize: max_chunk_size must be positive");
  msgpack::sbuffer buf;
  Packer pk(buf);
  pack_tree(pk, pytree, max_chunk_size, true);
  return std::string(buf.data(), buf.size());
}

// ---- reading -------------------------------------------------------------------------------

namespace {

// Flax's _ndarray_from_bytes, strictly: the payload must be exactly (shape, dtype, buffer).
Array ndarray_from_bytes(const char* data, std::size_t size, bool scalar,
                         const std::string& where) {
  auto fail = [&](const std::string& what) -> Array {
    throw ValueError("msgpack_restore: malformed array (msgpack ext type " +
                     std::string(scalar ? "3" : "1") + ") at " + where + ": " + what);
  };
  // Limits scale with the payload, so nothing is allocated beyond a small multiple of it.
  const std::size_t lim = size;
  msgpack::unpack_limit limit(/*array=*/std::min<std::size_t>(lim, 64), /*map=*/0,
                              /*str=*/64, /*bin=*/lim, /*ext=*/0, /*depth=*/3);
  msgpack::object_handle oh;
  try {
    std::size_t off = 0;
    oh = msgpack::unpack(
        data, size, off, [](msgpack::type::object_type, std::size_t, void*) { return true; },
        nullptr, limit);
    if (off != size) return fail("trailing bytes after the (shape, dtype, buffer) triple");
  } catch (const msgpack::insufficient_bytes&) {
    return fail("the payload is truncated");
  } catch (const std::exception& e) {
    return fail(std::string("the payload is not valid msgpack within the size limits (") +
                e.what() + ")");
  }
  const msgpack::object& o = oh.get();
  if (o.type != msgpack::type::ARRAY || o.via.array.size != 3)
    return fail("expected a msgpack array of 3 (shape, dtype name, buffer)");
  const msgpack::object& so = o.via.array.ptr[0];
  const msgpack::object& dn = o.via.array.ptr[1];
  const msgpack::object& bo = o.via.array.ptr[2];
  if (so.type != msgpack::type::ARRAY) return fail("the shape is not a msgpack array");
  Shape shape;
  std::int64_t count = 1;
  for (std::uint32_t i = 0; i < so.via.array.size; ++i) {
    const msgpack::object& d = so.via.array.ptr[i];
    if (d.type != msgpack::type::POSITIVE_INTEGER) {
      return fail("shape entry " + std::to_string(i) + " is not a non-negative integer");
    }
    if (d.via.u64 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        __builtin_mul_overflow(count, static_cast<std::int64_t>(d.via.u64), &count)) {
      return fail("the shape's element count overflows 64 bits");
    }
    shape.push_back(static_cast<std::int64_t>(d.via.u64));
  }
  if (scalar && !shape.empty())
    return fail("a numpy scalar must have shape (), got " + shape_str(shape));
  std::string_view name;
  if (dn.type == msgpack::type::STR)
    name = {dn.via.str.ptr, dn.via.str.size};
  else if (dn.type == msgpack::type::BIN)
    name = {dn.via.bin.ptr, dn.via.bin.size};
  else
    return fail("the dtype name is not a string");
  std::string_view buffer;
  if (bo.type == msgpack::type::BIN)
    buffer = {bo.via.bin.ptr, bo.via.bin.size};
  else if (bo.type == msgpack::type::STR)
    buffer = {bo.via.str.ptr, bo.via.str.size};
  else
    return fail("the buffer is not bytes");
  return codec::decode_array(name, shape, buffer.data(), buffer.size(),
                             "msgpack_restore (array at " + where + ")", nullptr);
}

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  while (i < s.size()) {
    const unsigned c = p[i];
    std::size_t n;
    std::uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xe0) == 0xc0)
      n = 1, cp = c & 0x1f;
    else if ((c & 0xf0) == 0xe0)
      n = 2, cp = c & 0x0f;
    else if ((c & 0xf8) == 0xf0)
      n = 3, cp = c & 0x07;
    else
      return false;
    if (i + n >= s.size()) return false;  // the sequence runs past the end
    for (std::size_t k = 1; k <= n; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid UTF-8 (Python rejects them).
    static constexpr std::uint32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

// Builds the Tree from msgpack-c's parse events with an explicit stack: no recursion, nesting
// bounded by MAX_DEPTH, each declared element count checked against the input length.
class TreeBuilder {
 public:
  explicit TreeBuilder(std::size_t input_size) : input_size_(input_size) {}

  Tree take_root() { return std::move(root_); }

  bool visit_nil() { return emit(Tree()); }
  bool visit_boolean(bool v) { return emit(Tree(Array(v))); }
  bool visit_positive_integer(std::uint64_t v) {
    if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))
      return emit(Tree(Array(static_cast<std::int32_t>(v))));
    if (v <= std::numeric_limits<std::uint32_t>::max())
      return emit(Tree(Array(static_cast<std::uint32_t>(v))));
    throw ValueError("msgpack_restore: the integer " + std::to_string(v) + " at " + where() +
                     " does not fit linum's int32 or uint32");
  }
  bool visit_negative_integer(std::int64_t v) {
    if (v < std::numeric_limits<std::int32_t>::min()) {
      throw ValueError("msgpack_restore: the integer " + std::to_string(v) + " at " + where() +
                       " does not fit linum's int32");
    }
    return emit(Tree(Array(static_cast<std::int32_t>(v))));
  }
  bool visit_float32(float v) { return emit(Tree(Array(v))); }
  bool visit_float64(double v) { return emit(Tree(Array(v))); }
  bool visit_str(const char* v, std::uint32_t size) {
    std::string_view s(v, size);
    if (!valid_utf8(s)) {
      throw ValueError("msgpack_restore: a string at " + where() + " is not valid UTF-8");
    }
    if (in_key()) {
      auto& f = stack_.back();
      if (f.node.as_dict().contains(s)) {
        throw ValueError("msgpack_restore: duplicate map key " + pytree::str_repr(s) + " at " +
                         where());
      }
      f.key.assign(s);
      f.have_key = true;
      return true;
    }
    return emit(str_leaf(std::string(s)));
  }
  bool visit_bin(const char*, std::uint32_t) {
    reject_key("bytes");
    throw TypeError("msgpack_restore: a bytes value at " + where() +
                    " has no linum leaf type (leaves are arrays)");
  }
  bool visit_ext(const char* v, std::uint32_t size) {
    reject_key("an ext value");
    // msgpack-c hands the type byte first, then the payload.
    const auto code = static_cast<std::int8_t>(v[0]);
    if (code == 1 || code == 3)
      return emit(Tree(ndarray_from_bytes(v + 1, size - 1, code == 3, where())));
    if (code == 2) {
      throw NotImplementedError("msgpack_restore: a complex number (msgpack ext type 2) at " +
                                where() + "; linum has no complex dtype");
    }
    throw ValueError("msgpack_restore: unknown msgpack ext type " + std::to_string(code) + " at " +
                     where() + "; Flax writes 1 (ndarray), 2 (complex) and 3 (numpy scalar)");
  }
  bool start_array(std::uint32_t n) {
    reject_key("an array");
    if (n > input_size_) truncated_count("array", n);
    push(Tree::list(), n);  // no reserve: a declared count costs nothing until elements arrive
    return true;
  }
  bool start_map(std::uint32_t n) {
    reject_key("a map");
    if (std::uint64_t(n) * 2 > input_size_) truncated_count("map", n);
    push(Tree::dict(), n);
    return true;
  }
  bool start_array_item() { return true; }
  bool end_array_item() { return true; }
  bool end_array() { return pop(); }
  bool start_map_key() {
    stack_.back().in_key = true;
    return true;
  }
  bool end_map_key() {
    if (!stack_.back().have_key) {
      throw TypeError("msgpack_restore: a map key at " + where() + " is not a string");
    }
    stack_.back().in_key = false;
    return true;
  }
  bool start_map_value() { return true; }
  bool end_map_value() { return true; }
  bool end_map() { return pop(); }
  void parse_error(std::size_t, std::size_t error_offset) {
    throw ValueError("msgpack_restore: invalid msgpack byte at offset " +
                     std::to_string(error_offset));
  }
  void insufficient_bytes(std::size_t, std::size_t error_offset) {
    throw ValueError("msgpack_restore: the input is truncated (it ends at byte " +
                     std::to_string(error_offset) + " inside a value)");
  }
  bool referenced() const { return false; }
  void set_referenced(bool) {}

 private:
  struct Frame {
    Tree node;
    std::string key;
    bool in_key = false;
    bool have_key = false;
  };

  bool in_key() const { return !stack_.empty() && stack_.back().in_key; }
  void reject_key(const char* what) {
    if (in_key()) {
      throw TypeError("msgpack_restore: a map key at " + where() + " is " + what +
                      "; state dict keys are strings");
    }
  }
  [[noreturn]] void truncated_count(const char* what, std::uint32_t n) {
    throw ValueError("msgpack_restore: a " + std::string(what) + " at " + where() + " declares " +
                     std::to_string(n) + " entries but the input has only " +
                     std::to_string(input_size_) + " bytes");
  }
  void push(Tree node, std::uint32_t) {
    if (stack_.size() >= MAX_DEPTH) {
      throw ValueError("msgpack_restore: nesting deeper than " + std::to_string(MAX_DEPTH) +
                       " levels at " + where());
    }
    stack_.push_back(Frame{std::move(node), {}, false, false});
  }
  bool pop() {
    Tree node = std::move(stack_.back().node);
    stack_.pop_back();
    return emit(std::move(node));
  }
  bool emit(Tree v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Frame& f = stack_.back();
    if (f.in_key) reject_key("not a string");
    if (f.node.is_list()) {
      f.node.as_list().push_back(std::move(v));
    } else {
      f.node.as_dict().insert_or_assign(std::move(f.key), std::move(v));
      f.key.clear();
      f.have_key = false;
    }
    return true;
  }
  std::string where() const {
    std::string s = "/";
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (f.node.is_list()) {
        s += std::to_string(f.node.size()) + "/";
      } else if (i + 1 < stack_.size() || f.have_key) {
        s += f.key + "/";
      }
    }
    return s.size() > 1 ? s.substr(0, s.size() - 1) : s;
  }

  std::size_t input_size_;
  std::vector<Frame> stack_;
  Tree root_;
};

std::int64_t int_of(const Tree& t, const char* what) {
  if (!t.is_leaf() || t.leaf().ndim() != 0 || !is_integer(t.leaf().dtype())) {
    throw ValueError(std::string("msgpack_restore: a chunked array's ") + what +
                     " is not an integer");
  }
  return t.leaf().item<std::int64_t>();
}

// Flax's _unchunk, with the checks Flax leaves to numpy: dense '0'..'n-1' keys, 1-D chunks of
// one dtype whose sizes add up to the shape's element count.
Array unchunk(const Tree& d) {
  auto fail = [](const std::string& what) -> Array {
    throw ValueError("msgpack_restore: malformed chunked array: " + what);
  };
  if (!d.contains("shape") || !d["shape"].is_dict()) return fail("no 'shape' dict");
  if (!d.contains("chunks") || !d["chunks"].is_dict()) return fail("no 'chunks' dict");
  const Tree& sd = d["shape"];
  const Tree& cd = d["chunks"];
  Shape shape;
  std::int64_t count = 1;
  for (std::size_t i = 0; i < sd.size(); ++i) {
    if (!sd.contains(std::to_string(i)))
      return fail("shape has no key '" + std::to_string(i) + "'");
    const std::int64_t dim = int_of(sd[std::to_string(i)], "shape entry");
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count))
      return fail("shape entry " + std::to_string(dim) + " is negative or overflows");
    shape.push_back(dim);
  }
  std::int64_t total = 0;
  std::optional<DType> dtype;
  std::vector<const Array*> chunks;
  for (std::size_t i = 0; i < cd.size(); ++i) {
    if (!cd.contains(std::to_string(i)))
      return fail("chunks has no key '" + std::to_string(i) + "'");
    const Tree& c = cd[std::to_string(i)];
    if (!c.is_leaf() || c.leaf().ndim() != 1)
      return fail("chunk " + std::to_string(i) + " is not a 1-D array");
    if (dtype && *dtype != c.leaf().dtype()) return fail("chunks of different dtypes");
    dtype = c.leaf().dtype();
    total += c.leaf().size();
    chunks.push_back(&c.leaf());
  }
  if (total != count) {
    return fail("the chunks hold " + std::to_string(total) + " elements, the shape " +
                shape_str(shape) + " needs " + std::to_string(count));
  }
  if (!dtype) dtype = float32;  // zero elements and no chunks: nothing says otherwise
  Array out = empty(shape, *dtype);
  auto* dst = static_cast<char*>(static_cast<const linum::detail::ConcreteImpl&>(*out.impl()).data);
  for (const Array* c : chunks) {
    auto r = codec::bytes_of(*c, "msgpack_restore");
    if (r.size) std::memcpy(dst, r.data, r.size);
    dst += r.size;
  }
  return out;
}

bool is_chunked(const Tree& t) { return t.is_dict() && t.contains("__msgpack_chunked_array__"); }

// Flax's _unchunk_array_leaves_in_place: the root, and dict values found through dicts.
Tree unchunk_leaves(Tree t, std::size_t depth = 0) {
  if (!t.is_dict()) return t;
  if (is_chunked(t)) return Tree(unchunk(t));
  for (auto& [k, v] : t.as_dict()) {
    if (v.is_dict()) v = unchunk_leaves(std::move(v), depth + 1);
  }
  return t;
}

}  // namespace

Tree msgpack_restore(std::string_view encoded) {
  TreeBuilder b(encoded.size());
  std::size_t off = 0;
  if (!msgpack::v2::parse(encoded.data(), encoded.size(), off, b)) {
    throw ValueError("msgpack_restore: the input is not a complete msgpack value");
  }
  if (off != encoded.size()) {
    throw ValueError("msgpack_restore: " + std::to_string(encoded.size() - off) +
                     " bytes of extra data after the msgpack value");
  }
  return unchunk_leaves(b.take_root());
}

}  // namespace linum::serialization
