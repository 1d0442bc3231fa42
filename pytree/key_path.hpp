// JAX-style key paths: the entries that name a child inside its parent (DictKey, SequenceKey,
// GetAttrKey, FlattenedIndexKey), a KeyPath from the root to a leaf, and keystr to print one.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace linum::pytree {

// A dict entry: printed by keystr as ['key'].
struct DictKey {
  std::string key;
  friend bool operator==(const DictKey&, const DictKey&) = default;
};

// An entry of a tuple-keyed flat dict (traverse_util.flatten_dict without sep): JAX's DictKey
// with a tuple key, printed by keystr as [('a', 'b')] and by repr as DictKey(key=('a', 'b')).
struct TupleDictKey {
  std::vector<std::string> key;
  friend bool operator==(const TupleDictKey&, const TupleDictKey&) = default;
};

// A tuple or list element: printed as [idx].
struct SequenceKey {
  std::size_t idx;
  friend bool operator==(const SequenceKey&, const SequenceKey&) = default;
};

// A named field of a struct (namedtuple / dataclass): printed as .name.
struct GetAttrKey {
  std::string name;
  friend bool operator==(const GetAttrKey&, const GetAttrKey&) = default;
};

// A child of a custom node that did not name its children: printed as [key].
struct FlattenedIndexKey {
  std::size_t key;
  friend bool operator==(const FlattenedIndexKey&, const FlattenedIndexKey&) = default;
};

using KeyEntry = std::variant<DictKey, SequenceKey, GetAttrKey, FlattenedIndexKey, TupleDictKey>;
using KeyPath = std::vector<KeyEntry>;

// jax.tree_util.keystr: "['a'][0].b"; with simple=true each entry prints bare ("a", "0", "b")
// and entries are joined by `separator`.
std::string keystr(const KeyPath& path, bool simple = false, std::string_view separator = "");

// The entry as keystr prints it: ['a'], [0], .b
std::string key_str(const KeyEntry& entry);

// Python reprs: DictKey(key='a'), SequenceKey(idx=0), GetAttrKey(name='b'),
// FlattenedIndexKey(key=0).
std::ostream& operator<<(std::ostream& os, const DictKey& k);
std::ostream& operator<<(std::ostream& os, const SequenceKey& k);
std::ostream& operator<<(std::ostream& os, const GetAttrKey& k);
std::ostream& operator<<(std::ostream& os, const FlattenedIndexKey& k);
std::ostream& operator<<(std::ostream& os, const TupleDictKey& k);
std::ostream& operator<<(std::ostream& os, const KeyEntry& k);
// A KeyPath prints as a Python tuple of entries: (DictKey(key='b'), DictKey(key='a'))
std::ostream& operator<<(std::ostream& os, const KeyPath& p);

namespace detail {

// A non-owning key used while walking a tree; turned into a KeyEntry only when a path is needed.
struct KeyRef {
  enum Kind : unsigned char { Dict, Sequence, Attr, FlatIndex, TupleDict } kind;
  std::string_view name;
  std::size_t index = 0;
  const std::vector<std::string>* tuple = nullptr;

  static KeyRef dict(std::string_view k) { return {Dict, k, 0}; }
  static KeyRef seq(std::size_t i) { return {Sequence, {}, i}; }
  static KeyRef attr(std::string_view n) { return {Attr, n, 0}; }
  static KeyRef flat(std::size_t i) { return {FlatIndex, {}, i}; }
  static KeyRef tuple_dict(const std::vector<std::string>& k) { return {TupleDict, {}, 0, &k}; }
  KeyEntry entry() const;
};

KeyPath to_key_path(const std::vector<KeyRef>& refs);
std::string keystr(const std::vector<KeyRef>& refs);

// The key path of the node a walk is at, for error messages ("at ['a'][0]").
struct PathCtx {
  std::vector<KeyRef> path;

  std::string where() const { return path.empty() ? "the root" : keystr(path); }
  template <class Fn>
  decltype(auto) child(KeyRef key, Fn&& fn) {
    path.push_back(key);
    decltype(auto) r = fn();
    path.pop_back();
    return r;
  }
};

}  // namespace detail
}  // namespace linum::pytree
