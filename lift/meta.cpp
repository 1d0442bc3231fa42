// flax.core.meta's tree functions and Partitioned (flax/core/meta.py).
#include <linum/lift/meta.hpp>

#include <typeinfo>

#include <linum/error.hpp>
#include <linum/pytree/repr.hpp>

namespace linum::lift::meta {

namespace {

const AxisMetadata* axis_metadata(const Tree& t) {
  return t.is_box() ? dynamic_cast<const AxisMetadata*>(t.box_metadata().get()) : nullptr;
}

// f applied to every box of `t` (the outermost ones), the rest of the tree rebuilt around them.
template <class F>
Tree map_boxes(const Tree& t, const F& f) {
  if (t.is_box()) return f(t);
  if (t.is_dict() || t.is_frozen_dict()) {
    Tree::dict_type d;
    for (const auto& [k, v] : t.as_mapping()) d.insert_or_assign(k, map_boxes(v, f));
    if (t.is_frozen_dict()) return Tree(pytree::FrozenDict<Array>(std::move(d)));
    return Tree(std::move(d));
  }
  if (t.is_tuple() || t.is_list()) {
    Tree::seq_type s;
    for (const auto& v : t.items()) s.push_back(map_boxes(v, f));
    return t.is_tuple() ? Tree::tuple(std::move(s)) : Tree::list(std::move(s));
  }
  return t;
}

// add_axis (add) or remove_axis on every AxisMetadata box of `tree`.
Tree axis_boxes(const Tree& tree, int index, const MetadataParams& params, bool add) {
  return map_boxes(tree, [&](const Tree& b) {
    const AxisMetadata* m = axis_metadata(b);
    if (!m) return b;
    return add ? m->add_axis(b.box_value(), index, params)
               : m->remove_axis(b.box_value(), index, params);
  });
}

}  // namespace

bool is_axis_metadata(const Tree& t) { return axis_metadata(t) != nullptr; }

Tree unbox(const Tree& tree) {
  return map_boxes(tree, [](const Tree& b) {
    const AxisMetadata* m = axis_metadata(b);
    return m ? m->unbox(unbox(b.box_value())) : unbox(b.box_value());
  });
}

Tree add_axis(const Tree& tree, int index, const MetadataParams& params) {
  return axis_boxes(tree, index, params, true);
}
Tree remove_axis(const Tree& tree, int index, const MetadataParams& params) {
  return axis_boxes(tree, index, params, false);
}

Tree collection_axes(const Tree& vars, const std::map<std::string, int>& axes,
                     const MetadataParams& params, bool add) {
  Tree out = vars;
  for (const auto& [col, axis] : axes)
    if (out.contains(col)) out[col] = axis_boxes(out[col], axis, params, add);
  return out;
}

Tree replace_boxed(const Tree& tree, const Tree& values) {
  if (tree.is_box()) {
    if (values.is_box()) return values;
    return Tree::box(tree.box_metadata(), replace_boxed(tree.box_value(), values));
  }
  if ((tree.is_dict() || tree.is_frozen_dict()) && values.is_dict()) {
    Tree::dict_type d;
    for (const auto& [k, v] : values.as_dict()) {
      const auto& cur = tree.as_mapping();
      auto it = cur.find(k);
      d.insert_or_assign(k, it == cur.end() ? v : replace_boxed(it->second, v));
    }
    return Tree(std::move(d));
  }
  return values;
}

// ---- Partitioned ----

Tree Partitioned::box(Tree value, LogicalNames names) {
  return Tree::box(std::make_shared<const Partitioned>(std::move(names)), std::move(value));
}

std::string Partitioned::repr_fields() const {
  return ", names=" + pytree::repr_as_tuple(names_) + ", mesh=None";
}

bool Partitioned::equals(const pytree::BoxMetadata& other) const {
  return typeid(other) == typeid(*this) && static_cast<const Partitioned&>(other).names_ == names_;
}

Tree Partitioned::with_names(Tree value, LogicalNames names) const {
  return box(std::move(value), std::move(names));
}

namespace {
// metadata_params[PARTITION_NAME]: a name, or None (std::nullopt) for an axis not partitioned.
std::optional<std::string> partition_name(const Partitioned& p, const MetadataParams& params) {
  auto it = params.find(PARTITION_NAME);
  if (it != params.end() && std::holds_alternative<std::string>(it->second))
    return std::get<std::string>(it->second);
  if (it != params.end() && std::holds_alternative<std::nullopt_t>(it->second)) return std::nullopt;
  throw ValueError("Trying to transform a " + p.type_name() +
                   " variable but \"partition_name\" is not specified in metadata_params (a "
                   "string or None): " +
                   p.type_name() + "(names=" + pytree::repr_as_tuple(p.names()) + ")");
}
}  // namespace

Tree Partitioned::add_axis(const Tree& value, int index, const MetadataParams& params) const {
  if (index < 0)
    throw ValueError(type_name() + ".add_axis: the axis index must be >= 0, got " +
                     std::to_string(index));
  LogicalNames names = names_;
  while (names.size() < static_cast<std::size_t>(index)) names.emplace_back(std::nullopt);
  names.insert(names.begin() + index, partition_name(*this, params));
  return with_names(value, std::move(names));
}

Tree Partitioned::remove_axis(const Tree& value, int index, const MetadataParams& params) const {
  const std::optional<std::string> name = partition_name(*this, params);
  if (index < 0 || static_cast<std::size_t>(index) >= names_.size() || names_[index] != name) {
    throw ValueError(type_name() + ".remove_axis: axis " + std::to_string(index) + " of names " +
                     pytree::repr_as_tuple(names_) + " is not the partition name " +
                     (name ? "'" + *name + "'" : std::string("None")));
  }
  LogicalNames names = names_;
  names.erase(names.begin() + index);
  return with_names(value, std::move(names));
}

LogicalNames partition_names(const Tree& t) {
  if (!t.is_box()) return {};
  const auto* p = dynamic_cast<const Partitioned*>(t.box_metadata().get());
  return p ? p->names() : LogicalNames{};
}

}  // namespace linum::lift::meta
