// flax.serialization: state dicts of linum pytrees (to_state_dict / from_state_dict) and Flax's
// msgpack checkpoint format (to_bytes / from_bytes, msgpack_serialize / msgpack_restore), byte
// for byte what Flax writes. The msgpack codec lives in serialization.cpp; this header is light.
//
// Format (flax/serialization.py): a state dict is nested msgpack maps with string keys; an array
// is msgpack ext type 1 whose payload is the msgpack array (shape, dtype name, row-major
// little-endian bytes); a numpy scalar is ext 3 (same payload, shape ()); a Python complex is
// ext 2 (linum has no complex dtype: NotImplementedError). Arrays above MAX_CHUNK_SIZE bytes are
// written as {'__msgpack_chunked_array__': True, 'shape': {'0': d0, ...}, 'chunks': {'0': a0,
// ...}}.
//
// float16 and bfloat16 leaves are read and written as they are (byte for byte). Reading dtypes
// linum lacks converts exactly or fails: int8/int16 -> int32, uint8/uint16 -> uint32 (exact), int64
// -> int32 and uint64 -> uint32 when every value fits (ValueError naming the first value that does
// not). Native msgpack numbers become weakly typed rank-0 Arrays (a Python number, as JAX types
// it): integers int32 (uint32 above INT32_MAX), floats float32/float64 as stored; booleans bool.
// Writing is the inverse: a weakly typed rank-0 int32, uint32, float32 or float64 Array is written
// as that native number (TrainState's step is Flax's Python int this way). String leaves (Python
// str) are str_leaf() nodes, read and written as msgpack strings. Bytes and complex values have no
// linum leaf: TypeError / NotImplementedError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/tree_bridge.hpp>
#include <linum/error.hpp>
#include <linum/pytree/from_dynamic.hpp>
#include <linum/pytree/frozen_dict.hpp>
#include <linum/pytree/to_dynamic.hpp>

namespace linum::serialization {

// A Python str leaf of a checkpoint (a name, a config entry): a Tree node without Array leaves
// whose text is part of the tree's structure, so tree_map and from_state_dict keep it.
Tree str_leaf(std::string text);
// The text of a str_leaf() node; nullopt for any other node.
std::optional<std::string> str_value(const Tree& t);

// Flax's MAX_CHUNK_SIZE: arrays of more bytes are split into flat chunks of at most this size.
inline constexpr std::size_t MAX_CHUNK_SIZE = std::size_t(1) << 30;

// Nesting deeper than this is rejected while reading (no stack overflow on hostile input).
inline constexpr std::size_t MAX_DEPTH = 512;

// msgpack bytes of a tree of dicts, lists/tuples (msgpack arrays), None and Array leaves.
// max_chunk_size is Flax's MAX_CHUNK_SIZE; smaller values exercise chunking in tests.
std::string msgpack_serialize(const Tree& pytree, std::size_t max_chunk_size = MAX_CHUNK_SIZE);

// The tree msgpack_serialize (or Flax) wrote; chunked arrays are joined again. Any malformed
// input is a linum::Error (ValueError, TypeError, NotImplementedError) naming what was wrong.
Tree msgpack_restore(std::string_view encoded);

namespace detail {

using pytree::detail::Category;
using pytree::detail::category_v;

// Flax's _record_path: the names taken from the root ('.') to the value being restored.
struct RestorePath {
  std::vector<std::string> names;
  std::string str() const;  // current_path(): names joined by '/'
};

struct PathGuard {
  RestorePath& p;
  PathGuard(RestorePath& path, std::string name) : p(path) { p.names.push_back(std::move(name)); }
  ~PathGuard() { p.names.pop_back(); }
  PathGuard(const PathGuard&) = delete;
  PathGuard& operator=(const PathGuard&) = delete;
};

Tree tree_to_state_dict(const Tree& t);
Tree tree_from_state_dict(const Tree& target, const Tree& state, RestorePath& path);
Array array_from_state(const Array& target, const Tree& state, RestorePath& path);
const Tree::dict_type& expect_state_dict(const Tree& state, const char* target_kind,
                                         const RestorePath& path);
// Flax's _restore_list size check, then state['i'] for each i (KeyError when missing).
void check_list_state(std::size_t target_size, const Tree& state, const RestorePath& path);
const Tree& list_item(const Tree& state, std::size_t i, const RestorePath& path);
// Flax's _restore_dict check: every target key must be in the state dict.
void check_dict_keys(const std::set<std::string>& target_keys, const Tree& state,
                     const RestorePath& path);
// Flax's _restore_namedtuple check: the field names must match exactly.
void check_struct_fields(const std::set<std::string>& fields, const Tree& state,
                         const RestorePath& path);

// to_state_dict's nodes: a dynamic tree through tree_to_state_dict, every sequence (tuple,
// vector, custom node) a dict of its children by name.
struct StateDictStyle {
  template <class X>
  Tree dynamic(const X& x) const {
    static_assert(std::is_same_v<X, Tree>, "to_state_dict: a BasicTree must hold Arrays");
    return tree_to_state_dict(x);
  }
  template <class KeyOf>
  Tree sequence(Tree::seq_type items, pytree::SequenceKind, const KeyOf& key) const {
    Tree::dict_type d;
    for (std::size_t i = 0; i < items.size(); ++i) d.insert_or_assign(key(i), std::move(items[i]));
    return Tree(std::move(d));
  }
};

// from_state_dict's side of from_dynamic: the state dict read into the target's structure with
// Flax's checks and messages; path is Flax's _record_path.
struct RestoreStyle {
  RestorePath path;

  template <class T>
  T leaf(const T* target, const Tree& state) {
    Array a = array_from_state(Array(pytree::detail::target_or_default(target)), state, path);
    if constexpr (std::is_same_v<T, Array>)
      return a;
    else
      return a.concrete().template item<T>();
  }
  template <class T>
  T dynamic(const T* target, const Tree& state) {
    static_assert(std::is_same_v<T, Tree> || std::is_same_v<T, pytree::FrozenDict<Array>>,
                  "from_state_dict: a BasicTree must hold Arrays");
    const T none{};
    const T& x = target ? *target : none;
    if constexpr (std::is_same_v<T, Tree>)
      return tree_from_state_dict(x, state, path);
    else
      return T(tree_from_state_dict(x.unfreeze(), state, path));
  }
  // Flax's _restore_list for tuples and vectors, _restore_namedtuple for structs; a custom
  // node's children are a dict by name, as to_state_dict writes them.
  template <class T, class KeyOf>
  std::size_t node(const Tree& state, std::size_t size, const KeyOf& key) {
    constexpr Category c = category_v<T>;
    if constexpr (c == Category::Tuple || c == Category::List) {
      check_list_state(size, state, path);
    } else {
      std::set<std::string> names;
      for (std::size_t i = 0; i < size; ++i) names.insert(key(i));
      if constexpr (c == Category::Struct)
        check_struct_fields(names, state, path);
      else
        check_dict_keys(names, state, path);
    }
    return size;
  }
  std::vector<std::string> dict(const Tree& state, std::vector<std::string> target_keys) {
    check_dict_keys(std::set<std::string>(target_keys.begin(), target_keys.end()), state, path);
    return target_keys;
  }
  template <class Read>
  auto child(const Tree& state, const pytree::ChildKey& key, const Read& read) {
    PathGuard g(path, std::string(key.name));
    const bool sequence = key.parent == Category::Tuple || key.parent == Category::List;
    return read(sequence ? list_item(state, key.index, path)
                         : state.as_dict().at(std::string(key.name)));
  }
};

}  // namespace detail

// flax.serialization.to_state_dict: a Tree of dicts (string keys), Array leaves and None.
// Tuples, std::array, std::vector and Tree tuples/lists become dicts keyed "0", "1", ...; Hana
// structs (optax states, TrainState) dicts of their fields; FrozenDict and string maps dicts.
template <class T>
Tree to_state_dict(const T& target) {
  return pytree::to_dynamic<Array>(target, detail::StateDictStyle{});
}

// flax.serialization.from_state_dict: a copy of target with the state's values. The state must
// have target's structure (extra dict entries are ignored, as Flax does) and each array the
// target array's shape; a mismatch is a ValueError naming the path (Flax's messages).
// A None in the target takes whatever the state holds there.
template <class T>
T from_state_dict(const T& target, const Tree& state, std::string name = ".") {
  detail::RestoreStyle style;
  style.path.names.push_back(std::move(name));
  return pytree::from_dynamic(&target, state, style);
}

// flax.serialization.to_bytes / from_bytes.
template <class T>
std::string to_bytes(const T& target) {
  return msgpack_serialize(to_state_dict(target));
}
template <class T>
T from_bytes(const T& target, std::string_view encoded_bytes) {
  return from_state_dict(target, msgpack_restore(encoded_bytes));
}

}  // namespace linum::serialization
