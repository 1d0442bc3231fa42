// Module binding: adoption of compact children, setup, method frames, sow/perturb and capture,
// as flax/linen/module.py's __post_init__, _call_wrapped_method and _try_setup.
#include <linum/nn/module.hpp>

#include <cxxabi.h>

#include <cstdlib>
#include <string_view>

#include <linum/autodiff/ops.hpp>

namespace linum::nn {

namespace detail {

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

  std::string type_name() const { return demangled_type_name(*type); }
};

namespace {
// Modules whose method (or setup) is running, innermost last: the parent of modules built now.
thread_local std::vector<ModuleBase*> g_running;
// Address ranges of modules under construction: a module built inside one is a member field,
// not a compact child (C++ default-constructs members that Python would not have).
thread_local std::vector<std::pair<std::uintptr_t, std::uintptr_t>> g_constructing;
thread_local std::vector<CaptureFilter> g_capture;
}  // namespace

namespace {
// Flax-style class name of a demangled C++ type: unqualified, template arguments appended
// (linum::nn::Dense -> Dense; linum::nn::Vmap<linum::nn::Dense> -> VmapDense; a class local to
// a function, f()::M -> M).
std::string flax_class_name(std::string_view full) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i + 1 < full.size(); ++i) {
    const char c = full[i];
    if (c == '<' || c == '(')
      ++depth;
    else if (c == '>' || c == ')')
      --depth;
    else if (depth == 0 && c == ':' && full[i + 1] == ':')
      start = i + 2;
  }
  std::string_view base = full.substr(start);
  const auto lt = base.find('<');
  if (lt == std::string_view::npos) return std::string(base);
  std::string out(base.substr(0, lt));
  depth = 0;
  std::size_t arg_start = lt + 1;
  for (std::size_t i = lt; i < base.size(); ++i) {
    const char c = base[i];
    if (c == '<' || c == '(') {
      ++depth;
    } else if (c == '>' || c == ')') {
      if (--depth == 0) out += flax_class_name(base.substr(arg_start, i - arg_start));
    } else if (c == ',' && depth == 1) {
      out += flax_class_name(base.substr(arg_start, i - arg_start));
      arg_start = i + 1;
      while (arg_start < base.size() && base[arg_start] == ' ') ++arg_start;
    }
  }
  return out;
}
}  // namespace

std::string demangled_type_name(const std::type_info& t) {
  int status = 0;
  char* raw = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
  std::string full = status == 0 && raw ? raw : t.name();
  std::free(raw);
  return flax_class_name(full);
}

CaptureScope::CaptureScope(CaptureFilter f) { g_capture.push_back(std::move(f)); }
CaptureScope::~CaptureScope() { g_capture.pop_back(); }

}  // namespace detail

using detail::g_capture;
using detail::g_constructing;
using detail::g_running;

Tree sow_append(const Tree& xs, const Tree& x) {
  if (!xs.is_tuple()) {
    throw TypeError(std::string("sow: the default reduce_fn appends to a tuple, but the variable "
                                "holds a ") +
                    std::string(pytree::kind_name(xs.kind())));
  }
  Tree out = xs;
  out.append(x);
  return out;
}
Tree sow_empty_tuple() { return Tree::tuple(); }

ModuleBase::ModuleBase(const std::type_info& type, std::uintptr_t self, std::size_t size)
    : state_(std::make_shared<detail::ModuleState>()) {
  state_->type = &type;
  const std::uintptr_t p = self;
  while (!g_constructing.empty() &&
         !(g_constructing.back().first <= p && p < g_constructing.back().second)) {
    g_constructing.pop_back();
  }
  const bool is_member = !g_constructing.empty();
  g_constructing.emplace_back(p, p + size);
  if (is_member || g_running.empty()) return;
  auto& parent = g_running.back()->state_;
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

void ModuleBase::copy_autoname_cursor_from(const ModuleBase& other) {
  state_->autoname_cursor = other.state_->autoname_cursor;
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
std::vector<std::string> ModuleBase::path() const { return scope().path(); }

void ModuleBase::ensure_bound() {
  auto& s = *state_;
  if (s.scope) return;
  if (!s.parent || !s.parent->scope) {
    throw lift::CallCompactUnboundModuleError("Can't call compact methods on unbound modules");
  }
  const std::string n = s.name ? *s.name : s.type_name() + "_" + std::to_string(*s.auto_index);
  if (s.parent->scope->name_reserved(n)) {
    throw lift::NameInUseError("Could not create submodule \"" + n + "\" in Module " +
                               s.parent->type_name() + ": Name in use.");
  }
  s.scope = s.parent->scope->push(n);
  s.name = n;
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
  setup();
}

void ModuleBase::attach_as_child(ModuleBase& parent, const std::string& name) {
  reset_state(false);
  state_->name = name;
  Scope& ps = parent.scope();
  if (ps.name_reserved(name)) {
    throw lift::NameInUseError("Could not create submodule \"" + name + "\" in Module " +
                               parent.type_name() + ": Name in use.");
  }
  state_->scope = ps.push(name);
  ensure_setup();
}

void ModuleBase::bind_root(const Scope& scope) {
  state_->scope = scope;
  ensure_setup();
}

void ModuleBase::enter_method() {
  ensure_bound();
  ensure_setup();
  g_running.push_back(this);
  ++state_->method_depth;
}

void ModuleBase::exit_method() {
  g_running.pop_back();
  auto& s = *state_;
  // After the outermost call the scope is rewound and auto-naming restarts, so calling the
  // module again re-creates the same child names over the same variables.
  if (--s.method_depth == 0 && s.scope && s.scope->is_valid()) {
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

// ---- variables ----

namespace {
Scope& bound_scope(const ModuleBase& m, const std::string& what) {
  if (!m.is_bound()) throw ValueError("Can't access " + what + " on unbound modules");
  return m.scope();
}
}  // namespace

Variable ModuleBase::variable(const std::string& col, const std::string& name) {
  claim_name(name, col, "variable");
  return scope().variable(col, name);
}
bool ModuleBase::has_variable(const std::string& col, const std::string& name) const {
  return bound_scope(*this, "variables").has_variable(col, name);
}
Tree ModuleBase::get_variable(const std::string& col, const std::string& name,
                              Tree default_value) const {
  return bound_scope(*this, "variables").get_variable(col, name, std::move(default_value));
}
void ModuleBase::put_variable(const std::string& col, const std::string& name, const Tree& value) {
  bound_scope(*this, "variables").put_variable(col, name, value);
}
Tree ModuleBase::variables() const { return bound_scope(*this, "variables").variables(); }
bool ModuleBase::is_mutable_collection(const std::string& col) const {
  return bound_scope(*this, "variables").is_mutable_collection(col);
}
bool ModuleBase::is_initializing() const {
  return bound_scope(*this, "variables").is_initializing();
}
bool ModuleBase::has_rng(const std::string& name) const {
  return bound_scope(*this, "RNGs").has_rng(name);
}
Array ModuleBase::make_rng(const std::string& name) {
  return bound_scope(*this, "RNGs").make_rng(name);
}

bool ModuleBase::sow(const std::string& col, const std::string& name, const Tree& value,
                     const std::function<Tree(const Tree&, const Tree&)>& reduce_fn,
                     const std::function<Tree()>& init_fn) {
  Scope& s = bound_scope(*this, "variables");
  if (!s.is_mutable_collection(col)) return false;
  Tree xs;
  if (s.has_variable(col, name)) {
    xs = s.get_variable(col, name);
  } else {
    s.reserve(name, col);
    xs = init_fn();
  }
  s.put_variable(col, name, reduce_fn(xs, value));
  return true;
}

Array ModuleBase::perturb(const std::string& name, const Array& value,
                          const std::string& collection) {
  Scope& s = bound_scope(*this, "variables");
  if (s.is_mutable_collection(collection) && !s.has_variable(collection, name)) {
    s.reserve(name, collection);
    s.put_variable(collection, name, zeros_like(value));
  }
  if (s.has_collection(collection)) {
    if (!s.has_variable(collection, name)) {
      throw ValueError("Perturbation collection " + collection +
                       " present, but missing perturbation variable " + name);
    }
    return value + s.get_variable(collection, name).leaf();
  }
  return value;
}

}  // namespace linum::nn
