// flax.linen.Module in C++: a Module is typed configuration plus, while bound, a lift::Scope.
// Compact style: a submodule constructed inside a running method adopts that module as parent
// and takes Flax's auto-name (Dense_0, counted per type). Setup style: setup() registers named
// children with submodule(name, member). init/apply/bind are lift::init/apply of a scope function
// that binds a copy of the module to the root scope (as flax/linen/module.py).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

#include <linum/autodiff/primitive.hpp>
#include <linum/lift/scope.hpp>

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

// apply(variables, args..., {.mutable_, .rngs, .capture_intermediates}) -> (out, mutated).
struct ApplyOptions {
  Filter mutable_ = false;
  Rngs rngs = {};
  CaptureFilter capture_intermediates = false;
};
// init(rngs, args..., {.mutable_, .capture_intermediates}); Flax's default keeps intermediates out.
struct InitOptions {
  Filter mutable_ = DenyList("intermediates");
  CaptureFilter capture_intermediates = false;
};

// method=...: apply/init call fn(module, args...) instead of the module's __call__.
template <class F>
struct Method {
  F fn;
};
template <class F>
Method<F> method(F fn) {
  return {std::move(fn)};
}

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

class ModuleBase;

namespace detail {
struct ModuleState;

// A method's argument or result as the Python value Flax sees: an Array or a Tree as itself, a
// pair or tuple as a tuple, a vector as a list, an empty optional as None. Other types
// (configuration structs, numbers, functions) have no Tree form.
template <class T>
struct ValueTree : std::false_type {};
// `from` rebuilds the C++ value from a Tree of that form (what an interceptor returns), or throws
// a TypeError saying what it expected.
[[noreturn]] void bad_value_tree(const Tree& got, const char* expected);
const Tree::seq_type& value_tree_items(const Tree& t, std::size_t n, const char* expected);
template <>
struct ValueTree<Array> : std::true_type {
  static Tree make(const Array& a) { return Tree(a); }
  static Array from(const Tree& t) {
    if (!t.is_leaf()) bad_value_tree(t, "an Array");
    return t.leaf();
  }
};
template <>
struct ValueTree<Tree> : std::true_type {
  static Tree make(const Tree& t) { return t; }
  static Tree from(const Tree& t) { return t; }
};
template <class T>
constexpr bool has_value_tree_v = ValueTree<std::remove_cvref_t<T>>::value;
template <class T>
Tree value_tree(const T& v) {
  return ValueTree<std::remove_cvref_t<T>>::make(v);
}
template <class T>
T from_value_tree(const Tree& t) {
  return ValueTree<T>::from(t);
}
template <class... T>
struct ValueTree<std::tuple<T...>> : std::bool_constant<(has_value_tree_v<T> && ...)> {
  static Tree make(const std::tuple<T...>& t) {
    return std::apply([](const auto&... e) { return Tree::tuple({value_tree(e)...}); }, t);
  }
  static std::tuple<T...> from(const Tree& t) {
    const auto& items = value_tree_items(t, sizeof...(T), "a tuple");
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<T...>(from_value_tree<T>(items[I])...);
    }
    (std::index_sequence_for<T...>{});
  }
};
template <class A, class B>
struct ValueTree<std::pair<A, B>> : std::bool_constant<has_value_tree_v<A> && has_value_tree_v<B>> {
  static Tree make(const std::pair<A, B>& p) {
    return Tree::tuple({value_tree(p.first), value_tree(p.second)});
  }
  static std::pair<A, B> from(const Tree& t) {
    const auto& items = value_tree_items(t, 2, "a pair");
    return {from_value_tree<A>(items[0]), from_value_tree<B>(items[1])};
  }
};
template <class T>
struct ValueTree<std::optional<T>> : std::bool_constant<has_value_tree_v<T>> {
  static Tree make(const std::optional<T>& o) { return o ? value_tree(*o) : Tree::none(); }
  static std::optional<T> from(const Tree& t) {
    if (t.is_none()) return std::nullopt;
    return from_value_tree<T>(t);
  }
};
template <class T>
struct ValueTree<std::vector<T>> : std::bool_constant<has_value_tree_v<T>> {
  static Tree make(const std::vector<T>& v) {
    Tree out = Tree::list();
    for (const auto& e : v) out.items().push_back(value_tree(e));
    return out;
  }
  static std::vector<T> from(const Tree& t) {
    if (!t.is_list() && !t.is_tuple()) bad_value_tree(t, "a list");
    std::vector<T> out;
    for (const auto& e : t.items()) out.push_back(from_value_tree<T>(e));
    return out;
  }
};

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
// Flax's _process_inputs over positional arguments: one as itself, several as a tuple.
template <class... A>
Tree inputs_tree(const A&... args) {
  Tree::seq_type items;
  [[maybe_unused]] auto add = [&](const auto& a) {  // unused for a call without arguments
    if constexpr (has_value_tree_v<decltype(a)>) items.push_back(value_tree(a));
  };
  (add(args), ...);
  if (items.size() == 1) return items.front();
  return Tree::tuple(std::move(items));
}
// The arguments of a call that records none (a named method's body takes no arguments).
struct NoInputs {
  Tree operator()() const { return Tree::tuple(); }
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

// ---- method interceptors (flax.linen.intercept_methods) ----
// What an interceptor sees of the call: the module, the method's name ("__call__", "setup", a
// named method's name) and the method itself, which skips the interceptors installed inside.
struct InterceptorContext {
  ModuleBase& module;
  std::string method_name;
  std::function<Tree()> orig_method;
};
// interceptor(next, args, context) -> the method's output. `next()` runs the interceptors
// installed inside this one and then the method, and returns its output as a Tree (an Array as a
// leaf, a pair or tuple as a tuple, nothing as None); what the interceptor returns becomes the
// output, so it must have the method's form. `args` are the call's positional arguments that
// have a Tree form, as a tuple. C++ methods are typed, so an interceptor cannot change the
// arguments (Flax's next_fun(*args) can).
using Interceptor = std::function<Tree(const std::function<Tree()>& next, const Tree& args,
                                       const InterceptorContext& context)>;
// Flax's `with nn.intercept_methods(interceptor): body()`: every module method call in this
// thread while body runs goes through the interceptor; the first installed is the outermost.
template <class F>
decltype(auto) intercept_methods(Interceptor interceptor, F&& body);

namespace detail {
struct InstalledInterceptor {
  explicit InstalledInterceptor(Interceptor f);
  ~InstalledInterceptor();
  InstalledInterceptor(const InstalledInterceptor&) = delete;
  InstalledInterceptor& operator=(const InstalledInterceptor&) = delete;
};
bool interceptors_installed();
// The installed interceptors around `method` for a call of `name` on `m`.
Tree run_interceptors(ModuleBase& m, const char* name, const Tree& args,
                      const std::function<Tree()>& method);
}  // namespace detail

template <class F>
decltype(auto) intercept_methods(Interceptor interceptor, F&& body) {
  detail::InstalledInterceptor installed(std::move(interceptor));
  return std::forward<F>(body)();
}

namespace detail {
// str(key) of a Python dict key, as Flax's state dict names a container's entries: strings as
// they are, integers in decimal, bools True/False, tuples (pairs) as Python prints them.
inline std::string dict_key_str(const std::string& k) { return k; }
inline std::string dict_key_str(const char* k) { return k; }
inline std::string dict_key_str(bool k) { return k ? "True" : "False"; }
template <class K>
requires std::is_integral_v<K> std::string dict_key_str(K k) { return std::to_string(k); }
// repr() of a key inside a tuple key: strings quoted, the rest as str().
std::string quoted_key(const std::string& k);
template <class K>
std::string tuple_key_item(const K& k) {
  if constexpr (std::is_convertible_v<const K&, std::string>)
    return quoted_key(k);
  else
    return dict_key_str(k);
}
template <class... K>
std::string dict_key_str(const std::tuple<K...>& k) {
  std::string out = "(";
  std::apply(
      [&](const auto&... e) {
        std::size_t i = 0;
        ((out += (i++ ? ", " : "") + tuple_key_item(e)), ...);
      },
      k);
  return out + (sizeof...(K) == 1 ? ",)" : ")");
}
template <class A, class B>
std::string dict_key_str(const std::pair<A, B>& k) {
  return dict_key_str(std::tuple<A, B>(k.first, k.second));
}

template <class T>
struct is_std_vector : std::false_type {};
template <class T, class A>
struct is_std_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};
template <class T>
struct is_std_map : std::false_type {};
template <class K, class V, class C, class A>
struct is_std_map<std::map<K, V, C, A>> : std::true_type {};
template <class T>
struct is_std_tuple : std::false_type {};
template <class... T>
struct is_std_tuple<std::tuple<T...>> : std::true_type {};
template <class A, class B>
struct is_std_tuple<std::pair<A, B>> : std::true_type {};
template <class T>
struct is_std_optional : std::false_type {};
template <class T>
struct is_std_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_std_variant : std::false_type {};
template <class... T>
struct is_std_variant<std::variant<T...>> : std::true_type {};

// Whether T is a module or a container that can hold one.
template <class T>
constexpr bool holds_modules() {
  if constexpr (std::is_base_of_v<ModuleBase, T>)
    return true;
  else if constexpr (is_std_vector<T>::value || is_std_array<T>::value || is_std_optional<T>::value)
    return holds_modules<typename T::value_type>();
  else if constexpr (is_std_map<T>::value)
    return holds_modules<typename T::mapped_type>();
  else if constexpr (is_std_tuple<T>::value)
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (holds_modules<std::tuple_element_t<I, T>>() || ...);
    }
  (std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (is_std_variant<T>::value) return
      []<std::size_t... I>(std::index_sequence<I...>) {
    return (holds_modules<std::variant_alternative_t<I, T>>() || ...);
  }
  (std::make_index_sequence<std::variant_size_v<T>>{});
  else return false;
}

// Calls f(name + suffix, module) for each module in x, Flax's suffixes (see submodule()); a
// map's entries in the sorted order of their key texts, as Flax's _sorted_items.
template <class T, class F>
void for_each_submodule(const std::string& name, T& x, const F& f) {
  if constexpr (std::is_base_of_v<ModuleBase, T>) {
    f(name, static_cast<ModuleBase&>(x));
  } else if constexpr (is_std_vector<T>::value || is_std_array<T>::value) {
    for (std::size_t i = 0; i < x.size(); ++i)
      for_each_submodule(name + "_" + std::to_string(i), x[i], f);
  } else if constexpr (is_std_map<T>::value) {
    std::vector<std::pair<std::string, typename T::mapped_type*>> entries;
    for (auto& [k, v] : x) entries.emplace_back(dict_key_str(k), &v);
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [k, v] : entries) for_each_submodule(name + "_" + k, *v, f);
  } else if constexpr (is_std_tuple<T>::value) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (for_each_submodule(name + "_" + std::to_string(I), std::get<I>(x), f), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (is_std_optional<T>::value) {
    if (x) for_each_submodule(name, *x, f);
  } else if constexpr (is_std_variant<T>::value) {
    std::visit([&](auto& alt) { for_each_submodule(name, alt, f); }, x);
  }
  // Anything else (a function, a number) is not a module: Flax skips it.
}
}  // namespace detail

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

template <class T>
struct is_method : std::false_type {};
template <class F>
struct is_method<Method<F>> : std::true_type {};

// A module's `call` is compact unless the class says `static constexpr bool compact = false`
// (Flax's setup-style __call__ without @compact).
template <class D>
constexpr bool is_compact() {
  if constexpr (requires { D::compact; })
    return static_cast<bool>(D::compact);
  else
    return true;
}
template <class D>
constexpr std::optional<bool> preserve_adopted_names_attr() {
  if constexpr (requires { D::preserve_adopted_names; })
    return static_cast<bool>(D::preserve_adopted_names);
  else
    return std::nullopt;
}
[[noreturn]] void throw_invalid_apply_method(const std::string& type_name);
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

// Runs init_fn on abstract arrays of `avals` (Module::lazy_init).
Tree lazy_init(const std::function<Tree(const Arrays&)>& init_fn,
               const std::vector<ShapeDtype>& avals);

// Calls the module's method: __call__, a Method<F> (fn(module, args...)) or a member pointer.
template <class D, class M, class... A>
decltype(auto) invoke_method(D& m, M& method, A&&... args) {
  if constexpr (is_method<M>::value) {
    if constexpr (!std::is_invocable_v<decltype(method.fn), D&, A...> &&
                  std::is_invocable_v<decltype(method.fn), A...>) {
      // Flax: the method must take the module as its first argument.
      throw_invalid_apply_method(m.type_name());
      return method.fn(std::forward<A>(args)...);  // unreachable; gives the return type
    } else {
      return method.fn(m, std::forward<A>(args)...);
    }
  } else if constexpr (std::is_member_function_pointer_v<M>)
    return (m.*method)(std::forward<A>(args)...);
  else
    return m(std::forward<A>(args)...);
}
struct CallOp {};

// A static_assert condition that only fails when the template is instantiated.
template <class...>
inline constexpr bool dependent_false = false;

// Whether D has a `call` (Python's __call__) that takes `args`.
template <class D, class... A>
constexpr bool has_call_v = requires(D& m, A&&... args) {
  m.call(std::forward<A>(args)...);
};

// Module.init/apply's rngs: a bare key must be one PRNG key (Flax's InvalidRngError naming the
// module); every key of a dict is checked with `dict_message` (a ValueError, as flax.core's).
Rngs checked_module_rngs(const Rngs& rngs, const std::string& type_name, const char* dict_message);
inline constexpr const char* kApplyRngsMessage =
    "The ``rngs`` argument passed to an apply function should be a ``jax.PRNGKey`` or a "
    "dictionary mapping strings to ``jax.PRNGKey``.";
inline constexpr const char* kInitRngsMessage =
    "First argument passed to an init function should be a ``jax.PRNGKey`` or a dictionary "
    "mapping strings to ``jax.PRNGKey``.";

// f(args[0..n-2]...): the arguments without the last one (a trailing options struct).
template <class F, class... A>
decltype(auto) call_dropping_last(F&& f, A&&... args) {
  auto t = std::forward_as_tuple(std::forward<A>(args)...);
  return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
    return f(std::forward<std::tuple_element_t<I, std::tuple<A...>>>(std::get<I>(t))...);
  }
  (std::make_index_sequence<sizeof...(A) - 1>{});
}
template <class... A>
decltype(auto) last_arg(A&&... args) {
  return std::get<sizeof...(A) - 1>(std::forward_as_tuple(std::forward<A>(args)...));
}
}  // namespace detail

// The CRTP base every module derives from: struct Dense : nn::Module<Dense> { ... call(...) }.
// `call` is Python's __call__; module(x) runs it through the method wrapper.
template <class D>
class Module : public ModuleBase {
 public:
  Module() : ModuleBase(typeid(D), reinterpret_cast<std::uintptr_t>(this), sizeof(D)) {}

  std::string type_name() const override { return detail::demangled_type_name(typeid(D)); }
  std::size_t object_size() const override { return sizeof(D); }
  bool defines_setup() const override {
    if constexpr (requires { &D::setup; })
      return !std::is_same_v<decltype(&D::setup), void (ModuleBase::*)()>;
    else
      return true;  // a private override
  }
  std::shared_ptr<ModuleBase> clone_base() const override {
    auto c = std::make_shared<D>(self());
    c->reset_state();
    return c;
  }
  D clone() const {
    D c = self();
    c.reset_state();
    return c;
  }
  // Module(name=...): an explicit name in the parent instead of the auto-name.
  D& named(std::string n) & {
    set_explicit_name(std::move(n));
    return self();
  }
  D named(std::string n) && {
    set_explicit_name(std::move(n));
    return std::move(self());
  }

  // Module.copy(name=...): an unbound-config copy adopted by the running module (auto-named
  // Child_<i> unless `name` is given); outside any module it is a plain clone.
  D copy(std::optional<std::string> name = std::nullopt) const {
    D c = clone();
    c.adopt_current_parent(std::move(name));
    return c;
  }

  template <class... A>
  decltype(auto) operator()(A&&... args) {
    static_assert(detail::has_call_v<D, A...>,
                  "nn::Module: this module has no `call` (Python's __call__) taking these "
                  "arguments; define one, or pass a method to init/apply");
    return run_method(
        "__call__", [&]() -> decltype(auto) { return self().call(std::forward<A>(args)...); },
        detail::is_compact<D>(), [&] { return detail::inputs_tree(args...); });
  }
  // A named method through the wrapper (capture_intermediates sees `name`):
  //   Array encode(Array x) { return method("encode", [&] { ... }); }
  template <class F>
  decltype(auto) method(const char* name, F&& body) {
    return run_method(name, std::forward<F>(body), detail::is_compact<D>());
  }
  // @nn.compact on a named method of a setup-style module (`compact = false`): submodules made
  // in `body` are auto-named, and the names restart after each outermost compact call, as
  // Flax's, so calling it twice from other methods reuses the same children.
  //   Array _call(Array x) { return compact_method("_call", [&] { return Dense(3)(x); }); }
  template <class F>
  decltype(auto) compact_method(const char* name, F&& body) {
    return run_method(name, std::forward<F>(body), true);
  }
  // @nn.compact_name_scope: modules made in `body` live under the child scope `name`
  //   Array up(Array x) { return compact_name_scope("up", [&] { return Dense(3)(x); }); }
  template <class F>
  decltype(auto) compact_name_scope(const std::string& name, F&& body);

  // lazy_init(rngs, ShapeDtype...): Flax's lazy_init — the variables init would make, computed
  // from the inputs' shapes alone; a variable whose value depends on an input is a LazyInitError.
  template <class R, class... A>
  requires(std::is_same_v<A, ShapeDtype>&&...) Tree lazy_init(const R& rngs, const A&... avals)
  const {
    return detail::lazy_init(
        [&](const Arrays& xs) {
          return [&]<std::size_t... I>(std::index_sequence<I...>) { return init(rngs, xs[I]...); }
          (std::index_sequence_for<A...>{});
        },
        {avals...});
  }

  // module_paths(rngs, args...): "/"-joined path -> an unbound copy of every module whose method
  // runs during init ("" is the root), as Flax's Module.module_paths.
  template <class R, class... A>
  std::map<std::string, std::shared_ptr<ModuleBase>> module_paths(const R& rngs,
                                                                  A&&... args) const {
    detail::PathRecorder rec;
    init(rngs, std::forward<A>(args)...);
    return std::move(rec.paths);
  }

  // ---- init / apply / bind ----
  // init(key or Rngs, args...[, method][, InitOptions]) -> variables.
  template <class R, class... A>
  Tree init(const R& rngs, A&&... args) const {
    return init_with_output(rngs, std::forward<A>(args)...).second;
  }
  // init({{"params", k1}, {"dropout", k2}}, args...): the streams as a braced dict.
  template <class... A>
  Tree init(const Rngs& rngs, A&&... args) const {
    return this->template init<Rngs, A...>(rngs, std::forward<A>(args)...);
  }
  template <class R, class A1>
  Tree init(const R& rngs, A1&& a1, InitOptions opts) const {
    return init_with_output(rngs, std::forward<A1>(a1), std::move(opts)).second;
  }
  template <class R, class A1, class A2>
  Tree init(const R& rngs, A1&& a1, A2&& a2, InitOptions opts) const {
    return init_with_output(rngs, std::forward<A1>(a1), std::forward<A2>(a2), std::move(opts))
        .second;
  }
  template <class R, class... A>
  auto init_with_output(const R& rngs, A&&... args) const {
    if constexpr (lift::detail::last_is<InitOptions, A...>()) {
      InitOptions opts = detail::last_arg(args...);
      return detail::call_dropping_last(
          [&](auto&&... a) {
            return run_init(rngs, std::move(opts),
                            std::forward_as_tuple(std::forward<decltype(a)>(a)...));
          },
          std::forward<A>(args)...);
    } else {
      return run_init(rngs, InitOptions{}, std::forward_as_tuple(std::forward<A>(args)...));
    }
  }
  template <class... A>
  auto init_with_output(const Rngs& rngs, A&&... args) const {
    return this->template init_with_output<Rngs, A...>(rngs, std::forward<A>(args)...);
  }
  template <class R, class A1>
  auto init_with_output(const R& rngs, A1&& a1, InitOptions opts) const {
    return run_init(rngs, std::move(opts), std::forward_as_tuple(std::forward<A1>(a1)));
  }
  template <class R, class A1, class A2>
  auto init_with_output(const R& rngs, A1&& a1, A2&& a2, InitOptions opts) const {
    return run_init(rngs, std::move(opts),
                    std::forward_as_tuple(std::forward<A1>(a1), std::forward<A2>(a2)));
  }

  // apply(variables, args...[, method][, Rngs]) -> out; with a trailing ApplyOptions, (out,
  // state) as below.
  template <class... A>
  decltype(auto) apply(const Tree& variables, A&&... args) const {
    if constexpr (lift::detail::last_is<ApplyOptions, A...>()) {
      ApplyOptions opts = detail::last_arg(args...);
      return detail::call_dropping_last(
          [&](auto&&... a) {
            return run_apply(variables, std::move(opts), true,
                             std::forward_as_tuple(std::forward<decltype(a)>(a)...));
          },
          std::forward<A>(args)...);
    } else {
      auto [out, state] = run_apply(variables, ApplyOptions{}, false,
                                    std::forward_as_tuple(std::forward<A>(args)...));
      return out;
    }
  }
  // An Array where the variables go: init's key and apply's variables swapped, or x first.
  template <class... A>
  void apply(const Array&, A&&...) const {
    static_assert(detail::dependent_false<A...>,
                  "nn::Module::apply: the first argument must be the variables (a Tree from "
                  "init), got an Array: apply(variables, args...)");
  }
  // apply(variables, args...[, method], {.mutable_, .rngs, .capture_intermediates}) -> (out,
  // state).
  template <class A1>
  auto apply(const Tree& variables, A1&& a1, ApplyOptions opts) const {
    return run_apply(variables, std::move(opts), true, std::forward_as_tuple(std::forward<A1>(a1)));
  }
  template <class A1, class A2>
  auto apply(const Tree& variables, A1&& a1, A2&& a2, ApplyOptions opts) const {
    return run_apply(variables, std::move(opts), true,
                     std::forward_as_tuple(std::forward<A1>(a1), std::forward<A2>(a2)));
  }
  template <class A1, class A2, class A3>
  auto apply(const Tree& variables, A1&& a1, A2&& a2, A3&& a3, ApplyOptions opts) const {
    return run_apply(
        variables, std::move(opts), true,
        std::forward_as_tuple(std::forward<A1>(a1), std::forward<A2>(a2), std::forward<A3>(a3)));
  }

  // bind(variables, rngs, mutable): a copy bound to a root scope, for interactive use.
  D bind(const Tree& variables, const Rngs& rngs = {}, const Filter& mutable_ = false) const {
    D m = clone();
    m.bind_root(lift::bind(variables, rngs, mutable_));
    m.setup_all_fields();
    return m;
  }
  bool preserves_adopted_names() const override {
    return detail::preserve_adopted_names_attr<D>().value_or(config::flax_preserve_adopted_names);
  }

  // unbind(): (an unbound copy, this module's variables), as Flax's clone(_deep_clone=True,
  // _reset_names=True, name=None): no name, and every submodule field unbound as it was before
  // this module was bound.
  std::pair<D, Tree> unbind() const {
    Tree vars = variables();
    D c = self();
    c.unbind_state();
    c.reset_state(false);
    return {std::move(c), std::move(vars)};
  }

 private:
  const D& self() const { return static_cast<const D&>(*this); }
  D& self() { return static_cast<D&>(*this); }

  // Splits a trailing Method<F> or member pointer off the arguments and calls it on the root.
  template <class Tuple>
  static auto scope_fn(D proto, Tuple&&) {
    return [proto = std::move(proto)](Scope& root, auto&&... args) mutable -> decltype(auto) {
      D m = proto;
      m.reset_state(false);
      m.bind_root(root);
      return call_with_method(m, std::forward<decltype(args)>(args)...);
    };
  }
  template <class... A>
  static decltype(auto) call_with_method(D& m, A&&... args) {
    using Last = std::remove_cvref_t<std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>>;
    if constexpr (detail::is_method<Last>::value || std::is_member_function_pointer_v<Last>) {
      auto t = std::forward_as_tuple(std::forward<A>(args)...);
      return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
        return detail::invoke_method(
            m, std::get<sizeof...(A) - 1>(t),
            std::forward<std::tuple_element_t<I, std::tuple<A...>>>(std::get<I>(t))...);
      }
      (std::make_index_sequence<sizeof...(A) - 1>{});
    } else {
      return m(std::forward<A>(args)...);
    }
  }
  static decltype(auto) call_with_method(D& m) { return m(); }

  template <class R, class Tuple>
  auto run_init(const R& rngs, InitOptions opts, Tuple&& args) const {
    static_assert(std::is_convertible_v<const R&, const Array&> || std::is_same_v<R, Rngs>,
                  "nn::Module::init: the first argument must be a PRNG key or nn::Rngs: "
                  "init(key, args...)");
    const Rngs init_rngs =
        detail::checked_module_rngs(Rngs(rngs), self().type_name(), detail::kInitRngsMessage);
    if (opts.capture_intermediates)
      opts.mutable_ = lift::union_filters(opts.mutable_, "intermediates");
    detail::CaptureScope capture(opts.capture_intermediates);
    auto fn = scope_fn(self(), args);
    return std::apply(
        [&](auto&&... a) {
          return lift::init(fn, opts.mutable_)(init_rngs, std::forward<decltype(a)>(a)...);
        },
        std::forward<Tuple>(args));
  }
  template <class Tuple>
  auto run_apply(const Tree& variables, ApplyOptions opts, bool, Tuple&& args) const {
    // As Flax: capturing intermediates makes the collection they go to mutable.
    if (opts.capture_intermediates)
      opts.mutable_ = lift::union_filters(opts.mutable_, "intermediates");
    detail::CaptureScope capture(opts.capture_intermediates);
    auto fn = scope_fn(self(), args);
    return std::apply(
        [&](auto&&... a) {
          return peel_rngs(fn, variables, opts, std::forward<decltype(a)>(a)...);
        },
        std::forward<Tuple>(args));
  }
  // A trailing Rngs argument (apply(v, x, Rngs{...})) joins opts.rngs.
  template <class Fn, class... A>
  auto peel_rngs(Fn& fn, const Tree& variables, ApplyOptions& opts, A&&... args) const {
    if constexpr (sizeof...(A) > 0 && lift::detail::last_is_rngs<A...>()) {
      auto t = std::forward_as_tuple(std::forward<A>(args)...);
      const Rngs& extra = std::get<sizeof...(A) - 1>(t);
      for (const auto& [k, v] : extra) opts.rngs[k] = v;
      opts.rngs.bare_key = opts.rngs.bare_key || extra.bare_key;
      opts.rngs =
          detail::checked_module_rngs(opts.rngs, self().type_name(), detail::kApplyRngsMessage);
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return lift::detail::run_root<true>(
            fn, variables, opts.rngs, opts.mutable_, lift::Flags{},
            std::forward<std::tuple_element_t<I, std::tuple<A...>>>(std::get<I>(t))...);
      }
      (std::make_index_sequence<sizeof...(A) - 1>{});
    } else {
      opts.rngs =
          detail::checked_module_rngs(opts.rngs, self().type_name(), detail::kApplyRngsMessage);
      return lift::detail::run_root<true>(fn, variables, opts.rngs, opts.mutable_, lift::Flags{},
                                          std::forward<A>(args)...);
    }
  }
};

namespace detail {
// The child module a compact_name_scope method runs in (Flax's CompactNameScope).
struct NameScope : Module<NameScope> {
  template <class F>
  decltype(auto) call(F& body) {
    return body();
  }
};
}  // namespace detail

template <class D>
template <class F>
decltype(auto) Module<D>::compact_name_scope(const std::string& name, F&& body) {
  return run_method(name.c_str(), [&]() -> decltype(auto) {
    std::optional<detail::NameScope> ns;
    {
      detail::DetachedConstruction detached;
      ns.emplace();
    }
    ns->bind_name_scope(*this, name);
    return (*ns)(body);
  });
}

// isinstance(module, T), for capture_intermediates filters.
template <class T>
bool isinstance(const ModuleBase& m) {
  return dynamic_cast<const T*>(&m) != nullptr;
}

}  // namespace linum::nn

#include <linum/nn/function_forms.hpp>
