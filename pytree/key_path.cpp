// keystr and the Python-style printing of key path entries.
#include <linum/pytree/key_path.hpp>
#include <linum/pytree/repr.hpp>

#include <ostream>

namespace linum::pytree {

std::string key_str(const KeyEntry& entry) {
  return std::visit(
      [](const auto& k) -> std::string {
        using K = std::decay_t<decltype(k)>;
        if constexpr (std::is_same_v<K, DictKey>) return detail::cat("[", repr(k.key), "]");
        if constexpr (std::is_same_v<K, SequenceKey>) return detail::cat("[", k.idx, "]");
        if constexpr (std::is_same_v<K, GetAttrKey>) return detail::cat(".", k.name);
        if constexpr (std::is_same_v<K, FlattenedIndexKey>) return detail::cat("[", k.key, "]");
        if constexpr (std::is_same_v<K, TupleDictKey>)
          return detail::cat("[", repr_as_tuple(k.key), "]");
      },
      entry);
}

static std::string simple_str(const KeyEntry& entry) {
  return std::visit(
      [](const auto& k) -> std::string {
        using K = std::decay_t<decltype(k)>;
        if constexpr (std::is_same_v<K, DictKey>) return k.key;
        if constexpr (std::is_same_v<K, SequenceKey>) return std::to_string(k.idx);
        if constexpr (std::is_same_v<K, GetAttrKey>) return k.name;
        if constexpr (std::is_same_v<K, FlattenedIndexKey>) return std::to_string(k.key);
        if constexpr (std::is_same_v<K, TupleDictKey>) return repr_as_tuple(k.key);
      },
      entry);
}

std::string keystr(const KeyPath& path, bool simple, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i) out += separator;
    out += simple ? simple_str(path[i]) : key_str(path[i]);
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, const DictKey& k) {
  return os << "DictKey(key=" << repr(k.key) << ")";
}
std::ostream& operator<<(std::ostream& os, const SequenceKey& k) {
  return os << "SequenceKey(idx=" << k.idx << ")";
}
std::ostream& operator<<(std::ostream& os, const GetAttrKey& k) {
  return os << "GetAttrKey(name=" << repr(k.name) << ")";
}
std::ostream& operator<<(std::ostream& os, const FlattenedIndexKey& k) {
  return os << "FlattenedIndexKey(key=" << k.key << ")";
}
std::ostream& operator<<(std::ostream& os, const TupleDictKey& k) {
  return os << "DictKey(key=" << repr_as_tuple(k.key) << ")";
}
std::ostream& operator<<(std::ostream& os, const KeyEntry& k) {
  std::visit([&](const auto& e) { os << e; }, k);
  return os;
}
std::ostream& operator<<(std::ostream& os, const KeyPath& p) {
  os << "(";
  for (std::size_t i = 0; i < p.size(); ++i) os << (i ? ", " : "") << p[i];
  return os << (p.size() == 1 ? ",)" : ")");
}

namespace detail {

KeyEntry KeyRef::entry() const {
  switch (kind) {
    case Dict:
      return DictKey{std::string(name)};
    case Sequence:
      return SequenceKey{index};
    case Attr:
      return GetAttrKey{std::string(name)};
    case TupleDict:
      return TupleDictKey{*tuple};
    case FlatIndex:
      break;
  }
  return FlattenedIndexKey{index};
}

KeyPath to_key_path(const std::vector<KeyRef>& refs) {
  KeyPath p;
  p.reserve(refs.size());
  for (const auto& r : refs) p.push_back(r.entry());
  return p;
}

std::string keystr(const std::vector<KeyRef>& refs) {
  std::string out;
  for (const auto& r : refs) out += key_str(r.entry());
  return out;
}

}  // namespace detail
}  // namespace linum::pytree
