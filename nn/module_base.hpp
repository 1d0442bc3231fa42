// The binding core of flax.linen.Module: ModuleBase, a module's name, parent, scope and setup
// children while bound, its variables, and the method frame every call goes through (lazy
// binding of compact children, setup, auto-names, interceptors, capture_intermediates, call
// recorders). Compact style: a submodule constructed inside a running method adopts that module
// as parent and takes Flax's auto-name (Dense_0, counted per type). Setup style: setup()
// registers named children with submodule(name, member). The typed front (Module<D>, init /
// apply / bind) is nn/module.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <linum/autodiff/primitive.hpp>
#include <linum/lift/scope.hpp>
#include <linum/nn/interceptors.hpp>
#include <linum/nn/submodule_names.hpp>
#include <linum/nn/value_tree.hpp>

namespace linum::nn {

using lift::DenyList;
using lift::Filter;
using lift::Rngs;
using lift::Scope;
using lift::Variable;

class ModuleBase;

// capture_intermediates: false, true (every __call__), or a filter on (module, method name).
class CaptureFilter {
 public:
  CaptureFilter(bool on = false) : on_(on) {}  // NOLINT(google-explicit-constructor)
  template <class F>
  requires std::is_invocable_r_v<bool, F, const ModuleBase&, const std::string&> CaptureFilter(F f)
      : on_(true), fn_(std::move(f)) {}  // NOLINT(google-explicit-constructor)
  explicit operator bool() const { return on_; }
  bool operator()(const ModuleBase& m, const std::string& method) const {
    return on_ && (fn_ ? fn_(m, method) : method == "__call__");
  }

 private:
  bool on_;
  std::function<bool(const ModuleBase&, const std::string&)> fn_;
};

// sow's reduce: append to a tuple (Flax's default init_fn=tuple(), reduce_fn=append).
Tree sow_append(const Tree& xs, const Tree& x);
Tree sow_empty_tuple();

// flax.config: flax_preserve_adopted_names keeps an explicitly named module's own name when a
// parent adopts it through submodule(field, member) (a class can say so with a static
// `preserve_adopted_names` member instead).
namespace config {
inline bool flax_preserve_adopted_names = false;
}  // namespace config

// A module's configuration fields for repr(): (name, Python-style value text), in field order.
using Attributes = std::vector<std::pair<std::string, std::string>>;
// Python reprs of common field values: True, 3, 3.0, 'ok', (3, 2), None.
std::string attr_repr(bool v);
std::string attr_repr(std::int64_t v);
inline std::string attr_repr(int v) { return attr_repr(static_cast<std::int64_t>(v)); }
std::string attr_repr(double v);
std::string attr_repr(const std::string& v);
inline std::string attr_repr(const char* v) { return attr_repr(std::string(v)); }
std::string attr_repr(const std::vector<std::int64_t>& v);
std::string attr_repr(std::nullopt_t);

namespace detail {
struct ModuleState;

// Every method call while a recorder is installed (nn::tabulate's rows, as Flax's
// call_info_stack): `start` runs as the call begins, after setup, with its arguments (those with
// a Tree form: one as itself, several as a tuple, none as ()) and returns the call's index;
// `end` gets that index and the result (None when it has no Tree form).
struct CallRecorder {
  std::function<std::size_t(const ModuleBase&, const std::string& method, const Tree& inputs)>
      start;
  std::function<void(std::size_t call, const Tree& outputs)> end;
};
const CallRecorder* call_recorder();
struct CallRecorderScope {
  explicit CallRecorderScope(CallRecorder r);
  ~CallRecorderScope();
  CallRecorderScope(const CallRecorderScope&) = delete;
  CallRecorderScope& operator=(const CallRecorderScope&) = delete;
};
}  // namespace detail

// flax.linen.merge_param: a setting given either as a field or as a call argument, exactly once
// (Dropout's deterministic, BatchNorm's use_running_average); `who` names the caller in errors.
namespace detail {
[[noreturn]] void merge_param_error(const std::string& who, const std::string& name, bool both);
}
template <class T>
T merge_param(const std::string& name, const std::optional<T>& a, const std::optional<T>& b,
              const std::string& who = "merge_param") {
  if (a.has_value() == b.has_value()) detail::merge_param_error(who, name, a.has_value());
  return a ? *a : *b;
}

// flax.linen.share_scope(module, other): the two use one scope, so a module that wraps another
// keeps its parameter tree (a LoRA wrapper's params land beside the wrapped Dense's). When
// other's scope is inside module's (a child module's setup registered), the child takes
// module's scope; otherwise module takes other's. Children registered under the replaced scope
// move along; both must be bound (CallShareScopeOnUnboundModuleError).
void share_scope(ModuleBase& module, ModuleBase& other);

class ModuleBase {
 public:
  virtual ~ModuleBase();
  ModuleBase(const ModuleBase&) = default;
  ModuleBase(ModuleBase&&) = default;
  ModuleBase& operator=(const ModuleBase&) = default;
  ModuleBase& operator=(ModuleBase&&) = default;

  // The class name Flax would print ("Dense"); auto-names are "<type_name>_<i>".
  virtual std::string type_name() const = 0;
  // A fresh, unbound copy (Module.clone()).
  virtual std::shared_ptr<ModuleBase> clone_base() const = 0;

  // Flax's repr: "Cls(\n    # attributes\n    a = 1\n    # children\n    Dense_0 = Dense(...)\n)".
  // Children are the submodules bound so far; attributes() lists the configuration fields.
  virtual Attributes attributes() const { return {}; }
  std::string repr() const;

  // The module's name in its parent (nullopt for a root or an unnamed, unattached module).
  std::optional<std::string> module_name() const;
  bool is_bound() const;
  // Module.scope: throws for unbound modules.
  Scope& scope() const;
  std::vector<std::string> path() const;

  // ---- variables, as Flax's Module methods ----
  template <class Init, class... A>
  auto param(const std::string& name, Init&& init_fn, A&&... args) {
    check_initialization_allowed("Parameters");
    claim_name(name, "params", "param");
    return scope().param(name, std::forward<Init>(init_fn), std::forward<A>(args)...);
  }
  template <class Init, class... A>
  Variable variable(const std::string& col, const std::string& name, Init&& init_fn, A&&... args) {
    check_initialization_allowed("Variables");
    claim_name(name, col, "variable");
    return scope().variable(col, name, std::forward<Init>(init_fn), std::forward<A>(args)...);
  }
  // A braced shape as the first argument, param("kernel", init, {3, 4}) as Flax's (3, 4): a
  // template parameter cannot be deduced from braces.
  template <class Init, class... A>
  auto param(const std::string& name, Init&& init_fn, const Shape& shape, A&&... args) {
    return param<Init, const Shape&, A...>(name, std::forward<Init>(init_fn), shape,
                                           std::forward<A>(args)...);
  }
  template <class Init, class... A>
  Variable variable(const std::string& col, const std::string& name, Init&& init_fn,
                    const Shape& shape, A&&... args) {
    return variable<Init, const Shape&, A...>(col, name, std::forward<Init>(init_fn), shape,
                                              std::forward<A>(args)...);
  }
  Variable variable(const std::string& col, const std::string& name);
  bool has_variable(const std::string& col, const std::string& name) const;
  Tree get_variable(const std::string& col, const std::string& name, Tree default_value = {}) const;
  void put_variable(const std::string& col, const std::string& name, const Tree& value);
  // The bound scope's variables ({collection: this module's part}).
  Tree variables() const;
  bool is_mutable_collection(const std::string& col) const;
  bool is_initializing() const;
  bool has_rng(const std::string& name) const;
  Array make_rng(const std::string& name = "params");

  // sow(col, name, value): appends to a tuple in `col` (or reduces with reduce_fn from
  // init_fn()); a no-op returning false when `col` is not mutable.
  bool sow(const std::string& col, const std::string& name, const Tree& value,
           const std::function<Tree(const Tree&, const Tree&)>& reduce_fn = sow_append,
           const std::function<Tree()>& init_fn = sow_empty_tuple);
  // perturb(name, x): x plus a zero variable of `collection` (created when mutable), so the
  // gradient w.r.t. variables[collection][name] is the gradient w.r.t. this intermediate.
  Array perturb(const std::string& name, const Array& value,
                const std::string& collection = "perturbations");

  // How a field registered with submodule() is walked: visit(m) for each of its modules (vector
  // elements too).
  struct ModuleVisitor {
    virtual void operator()(ModuleBase& m) = 0;

   protected:
    ~ModuleVisitor() = default;
  };
  using MemberVisit = void (*)(std::uintptr_t field, ModuleVisitor& visit);

  // ---- setup-style children ----
  // setup(): children registered with submodule(name, member). Runs once per bound instance, at
  // its first method call (Flax runs it at the first attribute access): a child registered in a
  // parent's setup is set up only if it is used, so lifted copies do not set up whole subtrees.
  virtual void setup() {}
  // self.name = Module(...) in setup: binds `member` as the child `name` of this module.
  // Containers name their modules <name><suffix> (Flax's _get_suffix_value_pairs): a vector,
  // std::array, tuple or pair element i adds "_i", a map entry adds "_" + str(key) (a tuple key
  // (1, 2) gives a_(1, 2)), nested containers add both (layers_0, lyrs1_a, blocks_b_0); entries
  // that are not modules (functions, numbers, an empty optional, a variant holding a function)
  // are skipped but keep their index ([Dense, relu, Dense] names layers_0 and layers_2). The same
  // instance reached twice is adopted once.
  template <class T>
  T& submodule(const std::string& name, T& member) {
    static_assert(detail::holds_modules<T>(),
                  "submodule: expected a module or a container (vector, array, map, tuple, pair, "
                  "optional, variant) of modules");
    detail::for_each_submodule(
        name, member, [&](const std::string& n, ModuleBase& m) { m.attach_as_child(*this, n); });
    remember_member(&member, [](std::uintptr_t at, ModuleVisitor& visit) {
      detail::for_each_submodule("", *reinterpret_cast<T*>(at),
                                 [&](const std::string&, ModuleBase& m) { visit(m); });
    });
    return member;
  }

  // Binds this (unbound) module as child `name` of `parent` (used by submodule and transforms).
  void attach_as_child(ModuleBase& parent, const std::string& name);
  // Makes this module (a copy sharing a bound module's state) unbound, and each module field
  // registered with submodule() too, each with the name it had before its parent adopted it:
  // what unbind() gives back is equal to the unbound original, its fields included.
  void unbind_state();
  // Makes this module a root bound to `scope` (init/apply/bind) and runs setup.
  void bind_root(const Scope& scope);
  // Forgets any binding (fresh state, keeping an explicit name): what clone() does.
  void reset_state(bool keep_name = true);
  // Gives back a provisional auto-name: a module passed to a transform is a prototype, not a
  // child of the module it was built in (nn::vmap(nn::Dense(2), ...) creates no Dense_0).
  void orphan();
  // Python builds a call's arguments left to right, C++ in any order (g++ builds the last first):
  // of this module and `later`, auto-named in the same parent for the same type and not yet bound,
  // this one takes the lower name, as Flax's left-to-right construction gives it
  // (Bidirectional(RNN(LSTMCell(4)), RNN(LSTMCell(4))): the forward cell is LSTMCell_0).
  void order_auto_names(ModuleBase& later);
  // Lifted transforms bind a clone of a module inside and continue its auto-names there; the
  // clone is inside a compact method when `other` is (Flax's _state.export/reimport).
  void copy_autoname_cursor_from(const ModuleBase& other);
  // The next auto-name index per type (Flax's autoname_cursor). A function-form transform gives
  // the one its lifted copy ended with back to the module (Flax's _state.reimport), so a Dense
  // made after nn::scan(body) is Dense_1 when the body made Dense_0.
  using AutonameCursor = std::map<std::string, int>;
  AutonameCursor autoname_cursor() const;
  void reimport_autoname_cursor(const AutonameCursor& cursor);
  // The parent a module built now would adopt: Flax's copy() default parent.
  void adopt_current_parent(std::optional<std::string> name);
  // Binds this internal module as the name scope `name` of `parent` (compact_name_scope).
  void bind_name_scope(ModuleBase& parent, const std::string& name);

 protected:
  ModuleBase(const std::type_info& type, std::uintptr_t self, std::size_t size);

  // Runs a method body as Flax's _call_wrapped_method: binds a compact child lazily, runs
  // setup, makes this module the parent of modules constructed inside, captures intermediates
  // and rewinds the scope after the outermost call.
  // `inputs()` gives the call's arguments to a call recorder.
  template <class F, class I = detail::NoInputs>
  decltype(auto) run_method(const char* method_name, F&& body, bool compact = true,
                            const I& inputs = {}) {
    // A non-compact method of an unbound module runs as plain code (Flax allows it).
    if (!compact && !is_bound() && !bind_as_pending_field())
      return intercepted(method_name, std::forward<F>(body), inputs);
    enter_method(compact);
    struct Exit {
      ModuleBase* m;
      bool compact;
      ~Exit() { m->exit_method(compact); }
    } exit{this, compact};
    const detail::CallRecorder* rec = detail::call_recorder();
    const std::size_t call = rec ? rec->start(*this, method_name, inputs()) : 0;
    if constexpr (std::is_void_v<decltype(body())>) {
      intercepted(method_name, std::forward<F>(body), inputs);
      if (rec) rec->end(call, Tree::none());
    } else {
      decltype(auto) y = intercepted(method_name, std::forward<F>(body), inputs);
      capture(method_name, y);
      if (rec) {
        if constexpr (detail::has_value_tree_v<decltype(y)>)
          rec->end(call, detail::value_tree(y));
        else
          rec->end(call, Tree::none());
      }
      return y;
    }
  }
  void set_explicit_name(std::string n);
  // body() through the installed interceptors (nn::intercept_methods), or directly when there are
  // none. An output without a Tree form is seen as None and cannot be replaced; a method returning
  // a reference is not intercepted.
  template <class F, class I>
  decltype(auto) intercepted(const char* method_name, F&& body, const I& inputs) {
    using R = decltype(body());
    if (!detail::interceptors_installed()) return body();
    if constexpr (std::is_void_v<R>) {
      detail::run_interceptors(*this, method_name, inputs(), [&] {
        body();
        return Tree::none();
      });
    } else if constexpr (!std::is_reference_v<R> && detail::has_value_tree_v<R>) {
      return detail::from_value_tree<std::remove_cv_t<R>>(detail::run_interceptors(
          *this, method_name, inputs(), [&] { return detail::value_tree(body()); }));
    } else if constexpr (!std::is_reference_v<R>) {
      std::optional<R> out;
      const Tree t = detail::run_interceptors(*this, method_name, inputs(), [&] {
        out.emplace(body());
        return Tree::none();
      });
      if (!out || !t.is_none())
        detail::bad_value_tree(t, "the method's own output (it has no Tree form)");
      return R(std::move(*out));
    } else {
      return body();
    }
  }
  // Whether this class defines its own setup (Flax intercepts only methods a class defines).
  virtual bool defines_setup() const = 0;
  // The bytes of the most-derived object, for telling member fields from other modules.
  virtual std::size_t object_size() const = 0;

 private:
  // Records how unbind_state() and the deferred setups reach a field registered with
  // submodule() in this module or a copy: `visit(address, ...)` with the field's address there
  // (fields only, not heap objects).
  void remember_member(const void* field, MemberVisit visit);
  // A module field whose owner's setup has not run yet is unbound until it does. When such a
  // field is used inside a running method, runs the setups that register it (Flax's attribute
  // access does); false when no running module holds it.
  bool bind_as_pending_field();
  bool setup_field_owner(const ModuleBase& target, bool any_pending);
  template <class F>
  void for_each_member(F&& f);
  // bind() gives an interactive module whose fields are read directly: every setup runs now.
  void setup_all_fields();
  void enter_method(bool compact);
  void exit_method(bool compact);
  void check_initialization_allowed(const char* what) const;
  virtual bool preserves_adopted_names() const { return config::flax_preserve_adopted_names; }
  void ensure_bound();
  void ensure_setup();
  void claim_name(const std::string& name, const std::string& col, const char* kind);
  template <class T>
  void capture(const char* method_name, const T& y) {
    // Flax sows whatever the method returns: results with a Tree form (an Array, a Tree, a tuple
    // such as an RNN's (carry, outputs)) are captured, other result types are not.
    if constexpr (detail::has_value_tree_v<T>) {
      if (capturing(method_name)) sow("intermediates", method_name, detail::value_tree(y));
    }
  }
  bool capturing(const char* method_name) const;

  std::shared_ptr<detail::ModuleState> state_;
  friend struct detail::ModuleState;
  friend void share_scope(ModuleBase& module, ModuleBase& other);
  template <class D>
  friend class Module;
};

namespace detail {
// Binds the capture_intermediates filter for the duration of an init/apply.
struct CaptureScope {
  explicit CaptureScope(CaptureFilter f);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
};
std::string demangled_type_name(const std::type_info& t);
// Modules constructed while this guard lives are not adopted by the running module.
struct DetachedConstruction {
  DetachedConstruction();
  ~DetachedConstruction();
  DetachedConstruction(const DetachedConstruction&) = delete;
  DetachedConstruction& operator=(const DetachedConstruction&) = delete;
};
// Collects path -> unbound copy of every module whose method runs (Module::module_paths).
struct PathRecorder {
  std::map<std::string, std::shared_ptr<ModuleBase>> paths;
  PathRecorder();
  ~PathRecorder();
  PathRecorder(const PathRecorder&) = delete;
  PathRecorder& operator=(const PathRecorder&) = delete;
};

}  // namespace detail

}  // namespace linum::nn
