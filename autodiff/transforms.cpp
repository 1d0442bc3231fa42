// Non-template parts of the transforms: input checks, the reverse sweep driver, vmap plumbing.
#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/transforms.hpp>

#include <algorithm>
#include <sstream>

namespace linum {

AxisSpec AxisSpec::seq(std::vector<AxisSpec> items) {
  AxisSpec s;
  s.kind_ = Kind::Seq;
  s.axis_.reset();
  s.items_ = std::move(items);
  return s;
}

namespace {

// A dict spec's key as JAX prints it, and as the TreeDef's node data holds it.
std::string key_repr(const std::string& k) { return pytree::str_repr(k); }
std::string key_repr(const pytree::Path& k) { return pytree::repr_as_tuple(k); }
std::string key_data(const std::string& k) { return k; }
std::string key_data(const pytree::Path& k) { return pytree::detail::encode_tuple_key(k); }

// A dict spec's entries, sorted by key as the TreeDef orders them; a repeated key is an error.
template <class K>
void sorted_dict_entries(std::vector<std::pair<K, AxisSpec>>& items, std::vector<std::string>& keys,
                         std::vector<AxisSpec>& specs, const char* fn) {
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0 && items[i - 1].first == items[i].first)
      throw ValueError(std::string(fn) + ": duplicate key " + key_repr(items[i].first));
    keys.push_back(key_data(items[i].first));
    specs.push_back(std::move(items[i].second));
  }
}

}  // namespace

AxisSpec AxisSpec::dict(std::vector<std::pair<std::string, AxisSpec>> items) {
  AxisSpec s;
  s.axis_.reset();
  s.kind_ = Kind::Dict;
  sorted_dict_entries(items, s.keys_, s.items_, "AxisSpec::dict");
  return s;
}

AxisSpec AxisSpec::tuple_dict(std::vector<std::pair<pytree::Path, AxisSpec>> items) {
  AxisSpec s;
  s.axis_.reset();
  s.tuple_keys_ = true;
  s.kind_ = Kind::Dict;
  sorted_dict_entries(items, s.keys_, s.items_, "AxisSpec::tuple_dict");
  return s;
}

AxisSpec::AxisSpec(const pytree::Dict<pytree::Path, pytree::BasicTree<int>>& axes) {
  std::vector<std::pair<pytree::Path, AxisSpec>> items;
  for (const auto& [k, v] : axes) items.emplace_back(k, AxisSpec(v));
  *this = tuple_dict(std::move(items));
}

AxisSpec::AxisSpec(const pytree::BasicTree<int>& t) {
  using pytree::NodeKind;
  switch (t.kind()) {
    case NodeKind::Leaf:
      *this = AxisSpec(t.leaf());
      return;
    case NodeKind::None:
      *this = AxisSpec(std::nullopt);
      return;
    case NodeKind::Dict:
    case NodeKind::FrozenDict: {
      std::vector<std::pair<std::string, AxisSpec>> items;
      for (const auto& [k, v] : t.as_mapping()) items.emplace_back(k, AxisSpec(v));
      *this = dict(std::move(items));
      return;
    }
    case NodeKind::Tuple:
    case NodeKind::List: {
      std::vector<AxisSpec> items;
      for (const auto& v : t.items()) items.emplace_back(v);
      *this = seq(std::move(items));
      return;
    }
    default:
      throw TypeError("AxisSpec: an axes tree may hold ints, None, dicts, tuples and lists, got " +
                      std::string(pytree::kind_name(t.kind())));
  }
}

AxisSpec::operator int() const {
  if (kind_ != Kind::Leaf) throw ValueError("AxisSpec " + to_string() + " is not a single axis");
  return axis_ ? *axis_ : kNone;
}

AxisSpec::operator std::vector<int>() const {
  std::vector<int> r;
  if (kind_ != Kind::Seq) throw ValueError("AxisSpec " + to_string() + " is not a tuple of axes");
  for (const auto& it : items_) r.push_back(static_cast<int>(it));
  return r;
}

std::string AxisSpec::to_string() const {
  switch (kind_) {
    case Kind::Leaf:
      return axis_ ? std::to_string(*axis_) : "None";
    case Kind::Seq: {
      std::string s = "(";
      for (std::size_t i = 0; i < items_.size(); ++i) s += (i ? ", " : "") + items_[i].to_string();
      return s + (items_.size() == 1 ? ",)" : ")");
    }
    case Kind::Dict: {
      std::string s = "{";
      for (std::size_t i = 0; i < items_.size(); ++i) {
        s += i ? ", " : "";
        const std::string& k = keys_[i];
        s += tuple_keys_ ? key_repr(pytree::detail::decode_tuple_key(k)) : key_repr(k);
        s += ": " + items_[i].to_string();
      }
      return s + "}";
    }
  }
  return "";
}

}  // namespace linum

namespace linum::detail {

Array watch_input(TapeTrace& tape, const Array& x, Watched& w, bool allow_int, const char* fn) {
  check_valid(x, fn);
  w.leaves.push_back(x);
  if (!is_inexact(x.dtype())) {
    if (!allow_int) {
      const std::string f(fn);
      const bool grad = f == "grad" || f == "value_and_grad";
      throw TypeError(
          f + " requires real-valued inputs (input dtype that is a sub-dtype of np." +
          (grad ? "inexact" : "floating") + "), but got " + std::string(dtype_name(x.dtype())) +
          (grad ? ". If you want to use Boolean- or integer-valued inputs, use vjp or set "
                  "allow_int to True (linum::allow_int)."
                : ". For differentiation of functions with integer inputs, use vjp directly."));
    }
    w.vars.push_back(-1);
    return x;
  }
  w.vars.push_back(w.n_vars++);
  return tape.watch(x);
}

void check_grad_output(const Array& out, const char* fn) {
  check_valid(out, fn);
  if (out.ndim() != 0)
    throw TypeError(std::string(fn) + " requires a scalar output, got shape " +
                    shape_str(out.shape()) +
                    ". For vector-valued functions use vjp, jacrev or jacfwd.");
  if (!is_floating(out.dtype()))
    throw TypeError(std::string(fn) +
                    " requires real-valued outputs (output dtype that is a sub-dtype "
                    "of np.inexact), but got " +
                    std::string(dtype_name(out.dtype())));
}

void check_cotangent(const Array& ct, const Array& primal, const char* fn) {
  check_valid(ct, fn);
  if (ct.shape() != primal.shape() || ct.dtype() != primal.dtype()) {
    std::ostringstream os;
    os << fn << ": the cotangent of shape " << shape_str(ct.shape()) << " and dtype " << ct.dtype()
       << " must have the same shape and dtype as the corresponding primal output, shape "
       << shape_str(primal.shape()) << " and dtype " << primal.dtype();
    throw ValueError(os.str());
  }
}

void throw_structure_mismatch(const char* fn, const char* what_a, const pytree::TreeDef& a,
                              const char* what_b, const pytree::TreeDef& b) {
  throw ValueError(std::string(fn) + ": " + what_a + " and " + what_b +
                   " must have the same tree structure; " + what_a + " have tree structure " +
                   a.to_string() + " whereas " + what_b + " have tree structure " + b.to_string());
}

Arrays pullback(TapeTrace& tape, const Arrays& out_primals, const std::vector<int>& out_vars,
                Arrays cts, const Watched& w, const char* fn, bool release) {
  if (cts.size() != out_primals.size())
    throw ValueError(std::string(fn) + ": the cotangent has " + std::to_string(cts.size()) +
                     " leaves but the primal output has " + std::to_string(out_primals.size()));
  for (std::size_t i = 0; i < cts.size(); ++i) {
    check_cotangent(cts[i], out_primals[i], fn);
    // An integer output has no tangent space (JAX's float0): its cotangent contributes nothing.
    if (!is_inexact(out_primals[i].dtype())) cts[i] = Array();
  }
  Arrays g = tape.backward(out_vars, cts, w.n_vars, release);
  Arrays out(w.leaves.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int v = w.vars[i];
    out[i] = v >= 0 && g[v].valid() ? g[v] : zeros_like(w.leaves[i]);
  }
  return out;
}

std::vector<std::int64_t> leaf_sizes(const Arrays& leaves, std::int64_t& total) {
  std::vector<std::int64_t> sizes;
  total = 0;
  for (const auto& l : leaves) {
    sizes.push_back(l.size());
    total += l.size();
  }
  return sizes;
}

Array basis_block(const Array& like, std::int64_t off, std::int64_t total) {
  Shape s{total};
  s.insert(s.end(), like.shape().begin(), like.shape().end());
  // Column c of eye(total, n, -off) is the unit vector e_{off + c}.
  return reshape(eye(total, like.size(), -off, like.dtype()), s);
}

Array jac_rows(const Array& rows, std::int64_t off, std::int64_t n, const Shape& out,
               std::int64_t total) {
  Array r = n == total ? rows : slice(rows, {Slice{off, off + n}});
  Shape s = out;
  s.insert(s.end(), rows.shape().begin() + 1, rows.shape().end());
  return reshape(r, s);
}

Array jac_cols(const Array& cols, std::int64_t off, std::int64_t n, const Shape& in,
               std::int64_t total) {
  Array c = n == total ? cols : slice(cols, {Slice{off, off + n}});
  Shape s = in;
  s.insert(s.end(), cols.shape().begin() + 1, cols.shape().end());
  const int ni = static_cast<int>(in.size()), no = static_cast<int>(cols.ndim()) - 1;
  std::vector<int> perm;
  for (int a = 0; a < no; ++a) perm.push_back(ni + a);
  for (int a = 0; a < ni; ++a) perm.push_back(a);
  return transpose(reshape(c, s), perm);
}

void check_jac_dtypes(const Arrays& leaves, const char* fn, const char* what) {
  for (const auto& l : leaves) {
    check_valid(l, fn);
    if (!is_floating(l.dtype()))
      throw TypeError(std::string(fn) + " requires real-valued " + what + " (" +
                      std::string(what).substr(0, std::string(what).size() - 1) +
                      " dtype that is a sub-dtype of np.floating), but got " +
                      std::string(dtype_name(l.dtype())) +
                      ". For differentiation of functions with integer " + what +
                      ", use vjp directly.");
  }
}

Array jvp_watch(JvpTrace& t, const Array& primal, const Array& tangent) {
  check_valid(primal, "jvp");
  check_valid(tangent, "jvp");
  if (primal.shape() != tangent.shape() || primal.dtype() != tangent.dtype()) {
    std::ostringstream os;
    os << "jvp: primal and tangent arguments do not match: primal has shape "
       << shape_str(primal.shape()) << " and dtype " << primal.dtype() << ", tangent has shape "
       << shape_str(tangent.shape()) << " and dtype " << tangent.dtype();
    throw ValueError(os.str());
  }
  return t.watch(primal, tangent);
}

namespace {

void broadcast_prefix(const AxisSpec& spec, const pytree::TreeDef& def,
                      std::vector<std::optional<int>>& out, const std::string& fail) {
  if (spec.kind() == AxisSpec::Kind::Leaf) {
    out.insert(out.end(), def.num_leaves(), spec.axis());
    return;
  }
  using pytree::NodeKind;
  const auto& root = def.nodes().front();
  const NodeKind k = root.kind;
  if (spec.kind() == AxisSpec::Kind::Seq) {
    const bool seq = k == NodeKind::Tuple || k == NodeKind::List || k == NodeKind::NamedTuple ||
                     k == NodeKind::Custom;
    if (!seq || root.arity != spec.items().size()) throw ValueError(fail);
    auto kids = def.children();
    for (std::size_t i = 0; i < kids.size(); ++i)
      broadcast_prefix(spec.items()[i], kids[i], out, fail);
    return;
  }
  // As JAX matches dict prefixes: same keys, string keys for a (Frozen)dict, tuple keys for
  // a tuple-keyed dict (flatten_dict's result).
  const bool dict_node = spec.has_tuple_keys() ? k == NodeKind::TupleDict
                                               : (k == NodeKind::Dict || k == NodeKind::FrozenDict);
  if (!dict_node || root.arity != spec.keys().size()) throw ValueError(fail);
  for (std::size_t i = 0; i < spec.keys().size(); ++i)
    if (def.data(root, i) != spec.keys()[i]) throw ValueError(fail);
  auto kids = def.children();
  for (std::size_t i = 0; i < kids.size(); ++i)
    broadcast_prefix(spec.items()[i], kids[i], out, fail);
}

}  // namespace

std::vector<std::optional<int>> vmap_leaf_axes(const AxisSpec& spec, const pytree::TreeDef& def,
                                               bool in_axes) {
  const char* what = in_axes ? "in_axes" : "out_axes";
  if (in_axes && spec.kind() == AxisSpec::Kind::Dict)
    throw ValueError(
        "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
        "arguments passed to the function, but got " +
        spec.to_string() + " (a single argument's entry is written AxisSpec::seq({entry}))");
  if (in_axes && spec.kind() == AxisSpec::Kind::Seq &&
      spec.items().size() != def.nodes().front().arity)
    throw ValueError(
        "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
        "arguments passed to the function, but got len(in_axes)=" +
        std::to_string(spec.items().size()) +
        ", len(args)=" + std::to_string(def.nodes().front().arity));
  std::vector<std::optional<int>> out;
  out.reserve(def.num_leaves());
  broadcast_prefix(spec, def, out,
                   std::string("vmap ") + what +
                       " specification must be a tree prefix of the corresponding value, got "
                       "specification " +
                       spec.to_string() + " for value tree " + def.to_string() + ".");
  return out;
}

std::int64_t vmap_axis_size(const Arrays& leaves, std::vector<std::optional<int>>& axes,
                            std::optional<std::int64_t> axis_size,
                            const std::function<std::string(std::size_t)>& leaf_name) {
  // Sizes in first-seen order with how many leaves have each, for JAX's summary message.
  struct Seen {
    std::int64_t size;
    int count;
    std::size_t leaf;
  };
  std::vector<Seen> seen;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (!axes[i]) continue;
    check_valid(leaves[i], "vmap");
    const int nd = leaves[i].ndim();
    const int ax = *axes[i];
    if (ax < -nd || ax >= nd)
      throw ValueError("vmap was requested to map its argument along axis " + std::to_string(ax) +
                       ", which implies that its rank should be at least " +
                       std::to_string(ax < 0 ? -ax : ax + 1) + ", but is only " +
                       std::to_string(nd) + " (its shape is " + shape_str(leaves[i].shape()) + ")");
    axes[i] = ax < 0 ? ax + nd : ax;
    const std::int64_t s = leaves[i].shape(*axes[i]);
    auto it = std::find_if(seen.begin(), seen.end(), [&](const Seen& e) { return e.size == s; });
    if (it == seen.end())
      seen.push_back({s, 1, i});
    else
      ++it->count;
  }
  const bool size_clash =
      axis_size && !seen.empty() && (seen.size() > 1 || seen[0].size != *axis_size);
  if (seen.size() > 1 || size_clash) {
    std::sort(seen.begin(), seen.end(),
              [](const Seen& a, const Seen& b) { return a.count > b.count; });
    std::ostringstream os;
    os << "vmap got inconsistent sizes for the mapped axis:";
    if (axis_size) os << "\n  * the axis_size argument is " << *axis_size << ";";
    for (std::size_t k = 0; k < seen.size(); ++k) {
      const Seen& e = seen[k];
      os << "\n  * ";
      if (e.count == 1)
        os << "one axis had size " << e.size << ": ";
      else
        os << "most axes (" << e.count << " of them) had size " << e.size << ", e.g. ";
      os << "axis " << *axes[e.leaf] << " of " << leaf_name(e.leaf) << " of type "
         << aval_str(leaves[e.leaf]) << (k + 1 < seen.size() ? ";" : "");
    }
    throw ValueError(os.str());
  }
  if (!seen.empty()) return seen[0].size;
  if (axis_size) {
    if (*axis_size < 0)
      throw ValueError("vmap: axis_size must be non-negative, got " + std::to_string(*axis_size));
    return *axis_size;
  }
  throw ValueError(
      "vmap must have at least one non-None value in in_axes (or be given axis_size when no "
      "argument is mapped)");
}

Array vmap_out(const BatchTrace& t, const Array& y, std::optional<int> out_axis) {
  check_valid(y, "vmap");
  auto [v, b] = t.unwrap(y);
  if (!out_axis) {
    if (b >= 0)
      throw ValueError("vmap has mapped output but out_axes is None (an output of shape " +
                       shape_str(y.shape()) + " depends on the mapped axis)");
    return v;
  }
  const int nd = v.ndim() + (b < 0 ? 1 : 0);
  const int to = *out_axis < 0 ? *out_axis + nd : *out_axis;
  if (to < 0 || to >= nd)
    throw ValueError("vmap out_axes " + std::to_string(*out_axis) +
                     " is out of bounds for an output of rank " + std::to_string(nd - 1) +
                     " (shape " + shape_str(y.shape()) + ")");
  return move_bdim(v, b, to, t.axis_size());
}

}  // namespace linum::detail
