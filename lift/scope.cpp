// Scope: variables, names, rng counters and validity, rule for rule as flax/core/scope.py, and
// lazy_init's check (flax.core.partial_eval).
#include <linum/lift/scope.hpp>

#include <sstream>

#include <linum/lift/lazy_init.hpp>

namespace linum::lift {

// What a root and every scope pushed from it share: the variables and the validity flag.
struct Scope::Root {
  Tree variables;  // {collection: nested dict}
  bool invalid = false;
};

struct Scope::Impl {
  std::shared_ptr<Root> root;
  std::shared_ptr<Impl> parent;
  std::string name;
  std::vector<std::string> path, debug_path;
  std::map<std::string, LazyRng> rngs;
  std::shared_ptr<RngCounters> counters;
  Filter mutable_ = false;
  Flags flags;
  // name -> the collections it is reserved for; nullopt: reserved as a child scope.
  std::map<std::string, std::set<std::optional<std::string>>> reservations;
};

namespace {

// A counter at 0 for every stream of `rngs`.
std::shared_ptr<RngCounters> fresh_counters(const std::map<std::string, LazyRng>& rngs) {
  auto c = std::make_shared<RngCounters>();
  for (const auto& [k, r] : rngs) c->count[k] = 0;
  return c;
}

// flax's _put_variable: a dict written over a dict merges key by key, anything else replaces.
void merge_into(Tree& target, const Tree& value) {
  if (target.is_dict() && value.is_dict()) {
    for (const auto& [k, v] : value.as_dict()) merge_into(target[k], v);
  } else {
    target = value;
  }
}

}  // namespace

Scope::Scope(Tree variables, Rngs rngs, Filter mutable_, Flags flags)
    : impl_(std::make_shared<Impl>()) {
  impl_->root = std::make_shared<Root>();
  impl_->root->variables = variables.is_none() ? Tree::dict() : std::move(variables);
  for (auto& [k, key] : rngs) impl_->rngs.emplace(k, LazyRng::create(key));
  impl_->counters = fresh_counters(impl_->rngs);
  impl_->mutable_ = std::move(mutable_);
  impl_->flags = std::move(flags);
}

Scope Scope::lifted_root(const Scope& outer, const std::string& transform, Tree variables,
                         std::map<std::string, LazyRng> rngs, Filter mutable_,
                         std::shared_ptr<RngCounters> counters) {
  Scope s(std::move(variables), {}, std::move(mutable_), outer.flags());
  s.impl_->rngs = std::move(rngs);
  s.impl_->name = outer.name();
  s.impl_->path = outer.path();
  s.impl_->debug_path = outer.debug_path();
  if (s.impl_->debug_path.empty()) s.impl_->debug_path.emplace_back();
  s.impl_->debug_path.back() = transform + "(" + s.impl_->debug_path.back() + ")";
  s.impl_->counters = std::move(counters);
  return s;
}

const std::string& Scope::name() const { return impl_->name; }
const std::vector<std::string>& Scope::path() const { return impl_->path; }
const std::vector<std::string>& Scope::debug_path() const { return impl_->debug_path; }
std::string Scope::path_text() const {
  std::string s;
  for (const auto& p : impl_->debug_path) s += "/" + p;
  return s.empty() ? "/" : s;
}
Scope Scope::root() const {
  auto p = impl_;
  while (p->parent) p = p->parent;
  return Scope(p);
}
std::optional<Scope> Scope::parent() const {
  if (!impl_->parent) return std::nullopt;
  return Scope(impl_->parent);
}

void Scope::check_valid() const {
  if (impl_->root->invalid) {
    throw InvalidScopeError("The scope \"" + (impl_->name.empty() ? "None" : impl_->name) +
                            "\" is no longer valid.");
  }
}
void Scope::invalidate() { impl_->root->invalid = true; }
bool Scope::is_valid() const { return !impl_->root->invalid; }

// ---- names ----

bool Scope::name_reserved(const std::string& name, const std::optional<std::string>& col) const {
  auto it = impl_->reservations.find(name);
  if (it == impl_->reservations.end() || it->second.empty()) return false;
  return it->second.contains(std::nullopt) || !col || it->second.contains(col);
}

void Scope::reserve(const std::string& name, const std::optional<std::string>& col) {
  if (name_reserved(name, col)) throw ValueError("Duplicate use of scope name: \"" + name + "\"");
  impl_->reservations[name].insert(col);
}

std::string Scope::default_name(const std::string& prefix) const {
  for (std::size_t i = 0;; ++i) {
    std::string n = prefix + std::to_string(i);
    if (!impl_->reservations.contains(n)) return n;
  }
}

Scope Scope::push(std::optional<std::string> name, const std::string& prefix, bool reuse) {
  check_valid();
  const std::string n = name ? *name : default_name(prefix);
  if (!(reuse && impl_->reservations.contains(n))) reserve(n);
  auto c = std::make_shared<Impl>();
  c->root = impl_->root;
  c->parent = impl_;
  c->name = n;
  c->path = impl_->path;
  c->path.push_back(n);
  c->debug_path = impl_->debug_path;
  c->debug_path.push_back(n);
  for (const auto& [k, r] : impl_->rngs) c->rngs.emplace(k, LazyRng::create(r, {n}));
  auto& counters = impl_->counters->children[n];
  if (!counters) counters = fresh_counters(c->rngs);
  c->counters = counters;
  c->mutable_ = impl_->mutable_;
  c->flags = impl_->flags;
  return Scope(std::move(c));
}

Scope Scope::rewound(bool rewind_rngs) const {
  check_valid();
  auto c = std::make_shared<Impl>(*impl_);
  c->reservations.clear();
  if (rewind_rngs) c->counters = fresh_counters(c->rngs);
  return Scope(std::move(c));
}

// ---- variables ----

const Filter& Scope::mutable_filter() const { return impl_->mutable_; }
bool Scope::is_mutable_collection(const std::string& col) const {
  return in_filter(impl_->mutable_, col);
}

bool Scope::is_collection_empty(const std::string& col) const {
  const Tree& vs = impl_->root->variables;
  if (!vs.contains(col)) return true;
  const Tree& c = vs[col];
  return c.is_none() || (c.is_dict() && c.size() == 0);
}

bool Scope::has_collection(const std::string& col) const {
  return impl_->root->variables.contains(col);
}

const Tree* Scope::find(const std::string& col) const {
  const Tree* t = &impl_->root->variables;
  if (!t->contains(col)) return nullptr;
  t = &(*t)[col];
  for (const auto& p : impl_->path) {
    if (!t->contains(p)) return nullptr;
    t = &(*t)[p];
  }
  return t;
}

Tree Scope::variables() const {
  Tree out = Tree::dict();
  for (const auto& col : impl_->root->variables.as_dict().keys()) {
    if (const Tree* t = find(col)) out[col] = *t;
  }
  return out;
}

Tree Scope::mutable_variables() const {
  Tree out = Tree::dict();
  Tree all = variables();
  for (const auto& [col, v] : all.as_dict()) {
    if (is_mutable_collection(col)) out[col] = v;
  }
  return out;
}

bool Scope::has_variable(const std::string& col, const std::string& name) const {
  const Tree* t = find(col);
  return t && t->contains(name);
}

Tree Scope::get_variable(const std::string& col, const std::string& name,
                         Tree default_value) const {
  const Tree* t = find(col);
  if (!t || !t->contains(name)) return default_value;
  return (*t)[name];
}

void Scope::put_variable(const std::string& col, const std::string& name, const Tree& value) {
  check_valid();
  if (!is_mutable_collection(col)) {
    throw ModifyScopeVariableError("Cannot update variable \"" + name + "\" in \"" + path_text() +
                                   "\" because collection \"" + col + "\" is immutable.");
  }
  Tree* t = &impl_->root->variables[col];
  for (const auto& p : impl_->path) {
    t = &(*t)[p];
    if (!t->is_dict()) *t = Tree::dict();
  }
  merge_into((*t)[name], value);
}

void Scope::throw_not_found(const std::string& col, const std::string& name, bool is_param) const {
  if (is_collection_empty(col)) {
    throw ScopeCollectionNotFound("Tried to access \"" + name + "\" from collection \"" + col +
                                  "\" in \"" + path_text() + "\" but the collection is empty.");
  }
  if (is_param) {
    throw ScopeParamNotFoundError("Could not find parameter named \"" + name + "\" in scope \"" +
                                  path_text() + "\".");
  }
  throw ScopeVariableNotFoundError("No Variable named \"" + name + "\" for collection \"" + col +
                                   "\" exists in \"" + path_text() + "\".");
}

Variable Scope::variable(const std::string& col, const std::string& name) {
  reserve(name, col);
  if (!has_variable(col, name)) throw_not_found(col, name, false);
  return Variable(*this, col, name);
}

void Scope::check_param_shape(const Tree& value, const Shape& init_shape, const std::string& name,
                              const std::string& path) {
  const Shape have = value.is_leaf() ? value.leaf().shape() : Shape{};
  if (!value.is_leaf() || have != init_shape) {
    throw ScopeParamShapeError("For parameter \"" + name + "\" in \"" + path +
                               "\", the given initializer is expected to generate shape " +
                               shape_str(init_shape) +
                               ", but the existing parameter it received has shape " +
                               (value.is_leaf() ? shape_str(have) : std::string("(a tree)")) + ".");
  }
}

void Scope::check_param_shape(const Tree& value, const Tree& init, const std::string& name,
                              const std::string& path) {
  const Arrays a = pytree::tree_leaves<Array>(value), b = pytree::tree_leaves<Array>(init);
  // Flax zips the leaves pairwise; a leaf-count mismatch is a shape mismatch too.
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i].shape() != b[i].shape()) check_param_shape(Tree(a[i]), b[i].shape(), name, path);
  }
  if (a.size() != b.size()) {
    throw ScopeParamShapeError(
        "For parameter \"" + name + "\" in \"" + path +
        "\", the given initializer is expected to generate " + std::to_string(b.size()) +
        " arrays, but the existing parameter has " + std::to_string(a.size()) + ".");
  }
}

// ---- rngs ----

bool Scope::has_rng(const std::string& name) const { return impl_->rngs.contains(name); }

Array Scope::make_rng(const std::string& name) {
  std::string stream = name;
  if (!impl_->rngs.contains(stream)) {
    if (!impl_->rngs.contains("params")) {
      throw InvalidRngError((impl_->name.empty() ? std::string("None") : impl_->name) +
                            " needs PRNG for \"" + name + "\"");
    }
    stream = "params";
  }
  check_valid();
  const std::uint64_t c = ++impl_->counters->count[stream];
  return LazyRng::create(impl_->rngs.at(stream), {c}).as_jax_rng();
}

const std::map<std::string, LazyRng>& Scope::rngs() const { return impl_->rngs; }
const std::shared_ptr<RngCounters>& Scope::rng_counters() const { return impl_->counters; }

// ---- flags ----

const Flags& Scope::flags() const { return impl_->flags; }
bool Scope::get_flag(const std::string& key, bool default_value) const {
  auto it = impl_->flags.find(key);
  return it == impl_->flags.end() ? default_value : it->second;
}

// ---- Variable ----

Tree Variable::get() const { return meta::unbox(scope_.get_variable(col_, name_)); }
void Variable::set(const Tree& v) const {
  Tree cur = scope_.get_variable(col_, name_);
  Scope(scope_).put_variable(col_, name_, cur.is_none() ? v : meta::replace_boxed(cur, v));
}
Variable::Value Variable::value() const {
  Tree t = get();
  if (!t.is_leaf()) {
    throw TypeError("Variable::value: variable \"" + name_ + "\" of collection \"" + col_ +
                    "\" holds a " + std::string(pytree::kind_name(t.kind())) +
                    ", not one array; use get()");
  }
  return Value(*this, t.leaf());
}

// ---- bind / apply / init ----

namespace detail {

Tree checked_variables(const Tree& variables, bool check_params_layer) {
  const char* msg =
      "The first argument passed to an apply function should be a dictionary of collections. "
      "Each collection should be a dictionary with string keys.";
  if (variables.is_none()) return Tree::dict();
  if (!variables.is_dict()) throw ApplyScopeInvalidVariablesTypeError(msg);
  for (const auto& [col, v] : variables.as_dict()) {
    if (!v.is_dict()) throw ApplyScopeInvalidVariablesTypeError(msg);
  }
  if (check_params_layer && variables.contains("params") &&
      variables["params"].contains("params")) {
    throw ApplyScopeInvalidVariablesStructureError(
        "Expect the `variables` (first argument) passed to apply() to be a dict with the structure "
        "{\"params\": ...}, but got a dict with an extra params layer, i.e.  {\"params\": "
        "{\"params\": ... } }. You should instead pass in your dict's [\"params\"].");
  }
  return variables;
}

void check_rngs(const Rngs& rngs, const char* message) {
  for (const auto& [k, v] : rngs) {
    if (!is_valid_rng(v)) throw ValueError(message);
  }
}

void check_lazy_variables(const Tree& variables) {
  for (const Array& leaf : pytree::tree_leaves<Array>(variables)) {
    if (!linum::detail::is_abstract(leaf)) continue;
    std::ostringstream aval;
    aval << shape_dtype(leaf);
    throw LazyInitError("Lazy init encountered a value that could with the given inputs (shape: " +
                        std::string("ShapedArray(") + aval.str() + ")).");
  }
}

Rngs init_rngs(const Rngs& rngs) {
  check_rngs(rngs,
             "First argument passed to an init function should be a ``jax.PRNGKey`` or a "
             "dictionary mapping strings to ``jax.PRNGKey``.");
  return rngs;
}

}  // namespace detail

Scope bind(const Tree& variables, const Rngs& rngs, const Filter& mutable_, const Flags& flags) {
  for (const auto& [k, v] : rngs) {
    // Flax's bind takes only a dict of streams, not rngs=key.
    if (rngs.bare_key || !is_valid_rng(v)) {
      throw InvalidRngError("rngs should be a dictionary mapping strings to `jax.PRNGKey`.");
    }
  }
  return Scope(detail::checked_variables(variables, false), rngs, mutable_, flags);
}

}  // namespace linum::lift
