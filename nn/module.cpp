// Module binding: adoption of compact children, setup, method frames and capture,
// as flax/linen/module.py's __post_init__, _call_wrapped_method and _try_setup.
#include <linum/nn/module.hpp>
#include <linum/nn/module_repr.hpp>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string_view>
#include <utility>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/trace.hpp>
#include <linum/pytree/repr.hpp>

namespace linum::nn {

// Flax's errors name `@compact`; linum's spelling of it follows.
constexpr const char* kCompactInCpp =
    " (in linum: a module's `call`, unless its class says `compact = false`, or a method body "
    "run through compact_method(...))";

namespace detail {


// Modules adopted through submodule() under one root binding, keyed by the identity (state) of
// the unbound module passed in: a shared instance is adopted once (Flax's _caches[root]).
struct AdoptCache {
  struct Entry {
    std::shared_ptr<ModuleState> original;  // keeps the key alive
    std::weak_ptr<ModuleState> adopted;
  };
  std::map<const ModuleState*, Entry> entries;
};

struct ModuleState {
  const std::type_info* type = nullptr;
  std::optional<std::string> name;
  // A compact child's parent and provisional auto-name index, bound at first use.
  std::shared_ptr<ModuleState> parent;
  std::optional<int> auto_index;
  std::optional<Scope> scope;
  std::map<std::string, int> autoname_cursor;  // per type name, as Flax's autoname_cursor
  bool setup_called = false, in_setup = false;
  int method_depth = 0;
  int compact_depth = 0;        // running compact methods of this module
  bool lifted_compact = false;  // a lifted copy of a module that was in a compact method
  std::shared_ptr<AdoptCache> adopt_cache;
  std::shared_ptr<ChildList> children = std::make_shared<ChildList>();
  std::map<std::string, Scope> name_scopes;  // compact_name_scope children, reused per call
  // Fields registered with submodule(): offset in the module object, and how to unbind them.
  std::vector<std::pair<std::uintptr_t, ModuleBase::MemberVisit>> members;
  // Adopted through submodule(): the name the module had before (unbind_state restores it).
  bool adopted = false;
  std::optional<std::string> unbound_name;

  bool in_compact() const { return compact_depth > 0 || lifted_compact; }

  std::string type_name() const { return demangled_type_name(*type); }
};

namespace {
// Modules whose method (or setup) is running, innermost last: the parent of modules built now.
thread_local std::vector<ModuleBase*> g_running;
// Address ranges of modules under construction: a module built inside one is a member field,
// not a compact child (C++ default-constructs members that Python would not have).
thread_local std::vector<std::pair<std::uintptr_t, std::uintptr_t>> g_constructing;
thread_local std::vector<CaptureFilter> g_capture;
thread_local int g_detached = 0;
thread_local std::vector<PathRecorder*> g_path_recorders;
thread_local std::vector<CallRecorder> g_call_recorders;
}  // namespace

CaptureScope::CaptureScope(CaptureFilter f) { g_capture.push_back(std::move(f)); }
CaptureScope::~CaptureScope() { g_capture.pop_back(); }
DetachedConstruction::DetachedConstruction() { ++g_detached; }
DetachedConstruction::~DetachedConstruction() { --g_detached; }
PathRecorder::PathRecorder() { g_path_recorders.push_back(this); }
PathRecorder::~PathRecorder() { g_path_recorders.pop_back(); }
CallRecorderScope::CallRecorderScope(CallRecorder r) { g_call_recorders.push_back(std::move(r)); }
CallRecorderScope::~CallRecorderScope() { g_call_recorders.pop_back(); }
const CallRecorder* call_recorder() {
  return g_call_recorders.empty() ? nullptr : &g_call_recorders.back();
}

Tree lazy_init(const std::function<Tree(const Arrays&)>& init_fn,
               const std::vector<ShapeDtype>& avals) {
  // Under an abstract level only what depends on the inputs stays abstract: params drawn from
  // the rngs are computed as usual.
  linum::detail::AbstractTrace trace;
  linum::detail::TraceScope scope(trace);
  Arrays xs;
  for (const auto& a : avals) xs.push_back(trace.wrap(a));
  Tree v = init_fn(xs);
  for (const Array& leaf : pytree::tree_leaves<Array>(v)) {
    if (linum::detail::is_abstract(leaf)) {
      std::ostringstream shape;
      shape << ShapeDtype{leaf.shape(), leaf.dtype()};
      throw lift::LazyInitError(
          "Lazy init encountered a value that could with the given inputs "
          "(shape: " +
          shape.str() + ").");
    }
  }
  return v;
}

std::string quoted_key(const std::string& k) { return pytree::str_repr(k); }

Rngs checked_module_rngs(const Rngs& rngs, const std::string& type_name, const char* dict_message) {
  if (rngs.bare_key) {
    const Array& key = rngs.at("params");
    if (!lift::is_valid_rng(key)) {
      throw lift::InvalidRngError("RNGs should be of shape (2,) or PRNGKey in Module " + type_name +
                                  ", but rngs are: " + (key.valid() ? repr(key) : "Array()"));
    }
  }
  lift::detail::check_rngs(rngs, dict_message);
  return rngs;
}

void throw_invalid_apply_method(const std::string& type_name) {
  throw lift::ApplyModuleInvalidMethodError(
      "Cannot call apply(): a function that does not take the module (" + type_name +
      "&) as its first argument is not a valid function for apply().");
}

namespace {
// Flax's AssignSubModuleError: children are made in setup or in a compact method only.
void check_may_create_child(const ModuleState& parent, const ModuleState& child) {
  if (!parent.in_setup && !parent.in_compact()) {
    throw lift::AssignSubModuleError("Submodule " + child.type_name() +
                                     " must be defined in `setup()` or in a method wrapped in "
                                     "`@compact`" +
                                     kCompactInCpp);
  }
}
void register_child(ModuleState& parent, const std::string& name, const ModuleBase& child,
                    const std::shared_ptr<ChildList>& grandchildren) {
  auto node =
      std::make_shared<ReprNode>(ReprNode{child.type_name(), child.attributes(), grandchildren});
  for (auto& [n, c] : *parent.children) {
    if (n == name) {
      c = std::move(node);
      return;
    }
  }
  parent.children->emplace_back(name, std::move(node));
}
}  // namespace

}  // namespace detail

using detail::check_may_create_child;
using detail::g_capture;
using detail::g_constructing;
using detail::g_detached;
using detail::g_path_recorders;
using detail::g_running;
using detail::register_child;

std::string ModuleBase::repr() const {
  return detail::module_repr(type_name(), attributes(), *state_->children);
}

ModuleBase::ModuleBase(const std::type_info& type, std::uintptr_t self, std::size_t size)
    : state_(std::make_shared<detail::ModuleState>()) {
  state_->type = &type;
  const std::uintptr_t p = self;
  while (!g_constructing.empty() &&
         !(g_constructing.back().first <= p && p < g_constructing.back().second)) {
    g_constructing.pop_back();
  }
  const bool is_member = !g_constructing.empty();
  if (is_member || g_running.empty() || g_detached > 0) {
    g_constructing.emplace_back(p, p + size);
    return;
  }
  auto& parent = g_running.back()->state_;
  check_may_create_child(*parent, *state_);
  g_constructing.emplace_back(p, p + size);
  if (parent->in_setup) return;  // named when setup assigns it (submodule)
  state_->parent = parent;
  state_->auto_index = parent->autoname_cursor[state_->type_name()]++;
}

ModuleBase::~ModuleBase() {
  for (auto it = g_constructing.rbegin(); it != g_constructing.rend(); ++it) {
    if (it->first == reinterpret_cast<std::uintptr_t>(this)) {
      g_constructing.erase(std::next(it).base());
      break;
    }
  }
}

void ModuleBase::set_explicit_name(std::string n) {
  auto& s = *state_;
  if (s.scope)
    throw ValueError("Module::named: module \"" + (s.name ? *s.name : std::string("?")) +
                     "\" is already bound; name it before its first use");
  // Give back the provisional auto-name index when nothing took a later one (Flax does not
  // count explicitly named modules); the module stays the parent's child.
  if (s.parent && s.auto_index) {
    int& cursor = s.parent->autoname_cursor[s.type_name()];
    if (cursor == *s.auto_index + 1) --cursor;
  }
  s.auto_index.reset();
  s.name = std::move(n);
}

void ModuleBase::orphan() {
  auto& s = *state_;
  if (s.parent && s.auto_index) {
    int& cursor = s.parent->autoname_cursor[s.type_name()];
    if (cursor == *s.auto_index + 1) --cursor;
  }
  s.auto_index.reset();
  s.parent.reset();
}

void ModuleBase::order_auto_names(ModuleBase& later) {
  auto& a = *state_;
  auto& b = *later.state_;
  if (&a == &b || !a.parent || a.parent != b.parent || !a.auto_index || !b.auto_index ||
      *a.type != *b.type || a.scope || b.scope)
    return;
  if (*a.auto_index > *b.auto_index) std::swap(a.auto_index, b.auto_index);
}

void ModuleBase::copy_autoname_cursor_from(const ModuleBase& other) {
  state_->autoname_cursor = other.state_->autoname_cursor;
  // Only a copy not yet running takes the flag (the outer module gets its cursor back after).
  if (state_->method_depth == 0) state_->lifted_compact = other.state_->in_compact();
}

ModuleBase::AutonameCursor ModuleBase::autoname_cursor() const { return state_->autoname_cursor; }

void ModuleBase::reimport_autoname_cursor(const AutonameCursor& cursor) {
  state_->autoname_cursor = cursor;
}

void ModuleBase::adopt_current_parent(std::optional<std::string> name) {
  reset_state(false);
  if (!g_running.empty()) {
    auto& parent = g_running.back()->state_;
    check_may_create_child(*parent, *state_);
    if (!parent->in_setup) {
      state_->parent = parent;
      if (!name) state_->auto_index = parent->autoname_cursor[state_->type_name()]++;
    }
  }
  state_->name = std::move(name);
}

void ModuleBase::bind_name_scope(ModuleBase& parent, const std::string& name) {
  Scope& ps = parent.scope();
  auto& scopes = parent.state_->name_scopes;
  auto it = scopes.find(name);
  if (it == scopes.end()) {
    if (ps.name_reserved(name)) {
      throw lift::NameInUseError("Could not create submodule \"" + name + "\" in Module " +
                                 parent.type_name() + ": Name in use.");
    }
    it = scopes.emplace(name, ps.push(name)).first;
  }
  reset_state(false);
  state_->name = name;
  state_->parent = parent.state_;
  state_->adopt_cache = parent.state_->adopt_cache;
  state_->scope = it->second.rewound();
  state_->setup_called = true;
}

void ModuleBase::reset_state(bool keep_name) {
  auto fresh = std::make_shared<detail::ModuleState>();
  fresh->type = state_->type;
  if (keep_name && !state_->auto_index) fresh->name = state_->name;
  state_ = std::move(fresh);
}

std::optional<std::string> ModuleBase::module_name() const { return state_->name; }
bool ModuleBase::is_bound() const { return state_->scope.has_value() || state_->parent != nullptr; }

Scope& ModuleBase::scope() const {
  const_cast<ModuleBase*>(this)->ensure_bound();
  return *state_->scope;
}
std::vector<std::string> ModuleBase::path() const {
  // Flax's Module.path: a module with no scope (nor a bound parent to take one from) is unbound.
  const auto& s = *state_;
  if (!s.scope && !(s.parent && s.parent->scope))
    throw ValueError("Can't access module paths on unbound modules.");
  return scope().path();
}

void ModuleBase::ensure_bound() {
  if (state_->scope) return;
  if (!state_->parent || !state_->parent->scope) {
    // A field of a module whose setup has not run yet is bound by that setup (which replaces
    // this module's state).
    if (bind_as_pending_field()) return;
    throw lift::CallCompactUnboundModuleError(
        "Can't call compact methods on unbound modules (in linum: a module's compact `call` runs "
        "inside init/apply, or on the module bind() returns)");
  }
  auto& s = *state_;
  const std::string n = s.name ? *s.name : s.type_name() + "_" + std::to_string(*s.auto_index);
  if (s.parent->scope->name_reserved(n)) {
    throw lift::NameInUseError("Could not create submodule \"" + n + "\" in Module " +
                               s.parent->type_name() + ": Name in use.");
  }
  s.scope = s.parent->scope->push(n);
  s.name = n;
  s.adopt_cache = s.parent->adopt_cache;
  register_child(*s.parent, n, *this, s.children);
  ensure_setup();
}

void ModuleBase::ensure_setup() {
  auto& s = *state_;
  if (s.setup_called) return;
  s.setup_called = true;
  s.in_setup = true;
  g_running.push_back(this);
  struct Exit {
    ModuleBase* m;
    ~Exit() {
      g_running.pop_back();
      m->state_->in_setup = false;
    }
  } exit{this};
  if (detail::interceptors_installed() && defines_setup()) {
    detail::run_interceptors(*this, "setup", Tree::tuple(), [this] {
      setup();
      return Tree::none();
    });
  } else {
    setup();
  }
}

void ModuleBase::attach_as_child(ModuleBase& parent, const std::string& name) {
  Scope& ps = parent.scope();
  auto& cache = parent.state_->adopt_cache;
  if (!cache) cache = std::make_shared<detail::AdoptCache>();
  // A module already bound in this tree (a sibling passed in as a field) keeps its scope.
  if (state_->scope && state_->scope->is_valid() && state_->scope->root() == ps.root()) return;
  if (!state_->scope && state_->parent && state_->parent->scope &&
      state_->parent->scope->is_valid() && state_->parent->scope->root() == ps.root())
    return;
  // The same unbound instance reached again (a copy sharing its state) is the module adopted
  // the first time.
  const auto key = state_.get();
  if (auto it = cache->entries.find(key); it != cache->entries.end()) {
    if (auto adopted = it->second.adopted.lock()) {
      state_ = std::move(adopted);
      return;
    }
  }
  std::shared_ptr<detail::ModuleState> original = state_;
  // An explicitly named adoptee keeps its name when the parent preserves adopted names.
  std::string adopted_name = name;
  if (parent.preserves_adopted_names() && state_->name && !state_->auto_index)
    adopted_name = *state_->name;
  reset_state(false);
  state_->name = adopted_name;
  state_->adopted = true;
  if (!original->auto_index) state_->unbound_name = original->name;
  if (ps.name_reserved(adopted_name)) {
    throw lift::NameInUseError("Could not create submodule \"" + adopted_name + "\" in Module " +
                               parent.type_name() + ": Name in use.");
  }
  state_->scope = ps.push(adopted_name);
  state_->adopt_cache = cache;
  cache->entries[key] = {std::move(original), state_};
  register_child(*parent.state_, adopted_name, *this, state_->children);
  // Its setup waits for its first method call (ensure_bound, enter_method).
}

void ModuleBase::remember_member(const void* field, MemberVisit visit) {
  const auto base = reinterpret_cast<std::uintptr_t>(dynamic_cast<const void*>(this));
  const auto at = reinterpret_cast<std::uintptr_t>(field);
  if (at < base || at >= base + object_size()) return;  // not a field of this object
  const std::pair<std::uintptr_t, MemberVisit> entry{at - base, visit};
  auto& members = state_->members;
  if (std::find(members.begin(), members.end(), entry) == members.end()) members.push_back(entry);
}

namespace {
template <class F>
struct VisitWith : ModuleBase::ModuleVisitor {
  F f;
  explicit VisitWith(F fn) : f(std::forward<F>(fn)) {}
  void operator()(ModuleBase& m) override { f(m); }
};
}  // namespace

template <class F>
void ModuleBase::for_each_member(F&& f) {
  // Copied: a setup run from f registers more members.
  const auto members = state_->members;
  const auto base = reinterpret_cast<std::uintptr_t>(dynamic_cast<void*>(this));
  VisitWith<F&> visit(f);
  for (const auto& [offset, each] : members) each(base + offset, visit);
}

bool ModuleBase::bind_as_pending_field() {
  if (is_bound()) return true;
  // The running modules are alive; their fields are reached through the recorded offsets. The
  // owner whose object holds this one is set up first; a field held in a container on the heap
  // is found by setting up the pending fields in order.
  for (bool any : {false, true}) {
    for (auto it = g_running.rbegin(); it != g_running.rend(); ++it)
      if ((*it)->setup_field_owner(*this, any)) return true;
  }
  return false;
}

bool ModuleBase::setup_field_owner(const ModuleBase& target, bool any_pending) {
  const auto t = reinterpret_cast<std::uintptr_t>(dynamic_cast<const void*>(&target));
  bool found = false;
  for_each_member([&](ModuleBase& m) {
    if (found || !m.state_->scope) return;
    const auto b = reinterpret_cast<std::uintptr_t>(dynamic_cast<void*>(&m));
    const bool holds = b <= t && t < b + m.object_size();
    if (!holds && !any_pending) return;
    if (!holds && m.state_->setup_called && m.state_->members.empty()) return;
    m.ensure_setup();
    found = target.is_bound() || m.setup_field_owner(target, any_pending);
  });
  return found;
}

void ModuleBase::setup_all_fields() {
  for_each_member([](ModuleBase& m) {
    if (!m.state_->scope) return;
    m.ensure_setup();
    m.setup_all_fields();
  });
}

void share_scope(ModuleBase& module, ModuleBase& other) {
  if (!module.is_bound() || !other.is_bound())
    throw lift::CallShareScopeOnUnboundModuleError("Can't call `share_scope` on unbound modules");
  const Scope ms = module.scope(), os = other.scope();
  bool other_inside = false;
  for (std::optional<Scope> s = os; s && !other_inside; s = s->parent()) other_inside = *s == ms;
  ModuleBase& update = other_inside ? other : module;
  Scope target = other_inside ? ms : os;
  const Scope old = *update.state_->scope;
  update.state_->scope = target;
  update.for_each_member([&](ModuleBase& m) {
    auto& child = m.state_->scope;
    if (!child) return;
    const std::optional<Scope> parent = child->parent();
    if (parent && *parent == old) child = target.push(child->name());
  });
}

void ModuleBase::unbind_state() {
  // A copy shares its fields' states with the bound original: the offsets recorded there find the
  // same fields in this copy.
  const std::shared_ptr<detail::ModuleState> old = state_;
  const auto base = reinterpret_cast<std::uintptr_t>(dynamic_cast<void*>(this));
  VisitWith unbind([](ModuleBase& m) { m.unbind_state(); });
  for (const auto& [offset, each] : old->members) each(base + offset, unbind);
  auto fresh = std::make_shared<detail::ModuleState>();
  fresh->type = old->type;
  if (old->adopted)
    fresh->name = old->unbound_name;
  else if (!old->auto_index)
    fresh->name = old->name;
  state_ = std::move(fresh);
}

void ModuleBase::bind_root(const Scope& scope) {
  state_->scope = scope;
  if (!state_->adopt_cache) state_->adopt_cache = std::make_shared<detail::AdoptCache>();
  ensure_setup();
}

void ModuleBase::enter_method(bool compact) {
  ensure_bound();
  ensure_setup();
  g_running.push_back(this);
  ++state_->method_depth;
  if (compact) ++state_->compact_depth;
  if (!g_path_recorders.empty()) {
    std::string key;
    for (const auto& part : state_->scope->path()) key += (key.empty() ? "" : "/") + part;
    auto& paths = g_path_recorders.back()->paths;
    if (!paths.count(key)) paths.emplace(key, clone_base());
  }
}

void ModuleBase::check_initialization_allowed(const char* what) const {
  if (!state_->in_setup && !state_->in_compact()) {
    throw ValueError(std::string(what) +
                     " must be initialized in `setup()` or in a method wrapped in `@compact`" +
                     kCompactInCpp);
  }
}

void ModuleBase::exit_method(bool compact) {
  g_running.pop_back();
  auto& s = *state_;
  if (compact) --s.compact_depth;
  // After the outermost call, or the outermost compact one as Flax's, the scope is rewound and
  // auto-naming restarts, so calling it again re-creates the same child names over the same
  // variables.
  const bool outermost = --s.method_depth == 0 || (compact && s.compact_depth == 0);
  if (outermost && s.scope && s.scope->is_valid()) {
    s.scope = s.scope->rewound();
    s.autoname_cursor.clear();
  }
}

void ModuleBase::claim_name(const std::string& name, const std::string& col, const char* kind) {
  if (scope().name_reserved(name, col)) {
    throw lift::NameInUseError(std::string("Could not create ") + kind + " \"" + name +
                               "\" in Module " + type_name() + ": Name in use.");
  }
}

bool ModuleBase::capturing(const char* method_name) const {
  return !g_capture.empty() && g_capture.back()(*this, method_name);
}

}  // namespace linum::nn
