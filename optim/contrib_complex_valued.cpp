// split_real_and_imaginary's leaf split and merge (contrib_complex_valued.hpp), and their walk
// over a dynamic Tree.
// g++ 12 reports the moves of Tree's variant inside FrozenDict's constructor, inlined into walk
// below, as maybe uninitialized (a false positive of its -O3 inlining; the other TUs that build
// FrozenDicts do not see it).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <linum/optim/contrib_complex_valued.hpp>

#include <linum/pytree/frozen_dict.hpp>

namespace linum::optim::detail {

Tree split_real_imag_leaf(const Array& x) {
  if (x.valid() && is_complex(x.dtype())) return Tree::tuple({real(x), imag(x)});
  return Tree(x);
}

Array merge_real_imag_leaf(const Tree& t) {
  if (t.is_tuple() && t.size() == 2 && t[0].is_leaf() && t[1].is_leaf())
    return complex(t[0].leaf(), t[1].leaf());
  if (!t.is_leaf())
    throw TypeError(std::string("split_real_and_imaginary: the inner transformation returned a ") +
                    std::string(pytree::kind_name(t.kind())) +
                    " where an update or a (real, imaginary) pair was");
  return t.leaf();
}

namespace {
// Replaces, in place, every leaf of t by f(leaf, the node of `other` at its place).
template <class F>
void walk(Tree& t, const Tree* other, F& f) {
  auto at = [&](const auto& key) -> const Tree* { return other ? &(*other)[key] : nullptr; };
  if (t.is_leaf()) {
    t = f(t.leaf(), other);
  } else if (t.is_dict()) {
    for (auto& [k, v] : t.as_dict()) walk(v, at(std::string_view(k)), f);
  } else if (t.is_tuple() || t.is_list()) {
    for (std::size_t i = 0; i < t.size(); ++i) walk(t.items()[i], at(i), f);
  } else if (t.is_box()) {
    walk(t.box_value(), other ? &other->box_value() : nullptr, f);
  } else if (t.is_frozen_dict()) {
    Tree plain = t.as_frozen_dict().unfreeze();
    if (other && other->is_frozen_dict()) {
      const Tree o = other->as_frozen_dict().unfreeze();
      walk(plain, &o, f);
    } else {
      walk(plain, other, f);
    }
    t = Tree(pytree::FrozenDict<Array>(plain));
  }
}
}  // namespace

Tree split_real_imag_dynamic(const Tree& t) {
  Tree out = t;
  auto f = [](const Array& x, const Tree*) { return split_real_imag_leaf(x); };
  walk(out, nullptr, f);
  return out;
}

Tree merge_real_imag_dynamic(const Tree& like, const Tree& split) {
  Tree out = like;
  auto f = [](const Array&, const Tree* s) { return Tree(merge_real_imag_leaf(*s)); };
  walk(out, &split, f);
  return out;
}

}  // namespace linum::optim::detail
