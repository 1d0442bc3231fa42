// flax.core.scope in C++: a Scope is a cursor into a tree of variable collections plus rng state
// (flax/core/scope.py). Scope functions `f(Scope&, args...)` declare params and variables through
// it; init/apply/bind make the root scope, run f, and hand back the outputs and the variables.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/random/random.hpp>
#include <linum/autodiff/tree_bridge.hpp>
#include <linum/lift/errors.hpp>
#include <linum/lift/filters.hpp>
#include <linum/lift/meta.hpp>
#include <linum/lift/rng.hpp>

namespace linum::nn::initializers {
class Initializer;
}  // namespace linum::nn::initializers

namespace linum::lift {

// rngs={'params': key, 'dropout': key}: one base key per named stream. A bare key converts to
// {'params': key}, as Flax's init and apply read rngs=key (its bind refuses one).
struct Rngs : std::map<std::string, Array> {
  using std::map<std::string, Array>::map;
  Rngs() = default;
  Rngs(const Array& key)  // NOLINT(google-explicit-constructor): rngs=key, as in Flax
      : std::map<std::string, Array>{{"params", key}}, bare_key(true) {}
  // Made from a bare key: Flax's errors for rngs=key differ from those for a dict.
  bool bare_key = false;
};
// Scope flags (Flax's `flags` dict): init sets {"initializing": true}.
using Flags = std::map<std::string, bool>;

// Per-(scope path, stream) counters of make_rng; a child's counters live in its parent's under
// the child's name, so pushing the same name again continues them (as Flax's rng_counters do).
struct RngCounters {
  std::map<std::string, std::uint64_t> count;
  std::map<std::string, std::shared_ptr<RngCounters>> children;
};

// An initializer whose output shape is its shape argument (nn::initializers::Initializer and
// the plain initializer functions say so), so param() can check an existing parameter's shape
// without running it. Other init functions are run once with key(0) to learn their shape.
template <class F>
struct init_returns_shape_arg : std::false_type {};
template <>
struct init_returns_shape_arg<Array (*)(const Array&, const Shape&, DType)> : std::true_type {};
template <>
struct init_returns_shape_arg<nn::initializers::Initializer> : std::true_type {};

class Variable;

class Scope {
 public:
  // Scope(variables, rngs, mutable, flags): a root scope, as flax.core.Scope(...).
  explicit Scope(Tree variables = Tree::dict(), Rngs rngs = {}, Filter mutable_ = false,
                 Flags flags = {});
  // A root with outer's name, path and flags inside a lifted transform; its debug path reads
  // "vmap(dense)". It shares `counters` with the scopes outside (as Flax's pack shares them, so
  // every trace of the body advances the outer counters).
  static Scope lifted_root(const Scope& outer, const std::string& transform, Tree variables,
                           std::map<std::string, LazyRng> rngs, Filter mutable_,
                           std::shared_ptr<RngCounters> counters);

  // The scope's own name ("" at the root, which Flax calls None), its path from the root, and
  // the text errors print ("/" at the root, "/dense" below it).
  const std::string& name() const;
  const std::vector<std::string>& path() const;
  const std::vector<std::string>& debug_path() const;
  std::string path_text() const;
  Scope root() const;
  std::optional<Scope> parent() const;

  // ---- names ----
  void reserve(const std::string& name, const std::optional<std::string>& col = std::nullopt);
  bool name_reserved(const std::string& name,
                     const std::optional<std::string>& col = std::nullopt) const;
  std::string default_name(const std::string& prefix) const;
  // push(name, prefix, reuse): a child scope; the name defaults to prefix + the first free index.
  Scope push(std::optional<std::string> name = std::nullopt, const std::string& prefix = "",
             bool reuse = false);
  // A copy over the same variables with fresh reservations; rng counters shared unless rewound.
  Scope rewound(bool rewind_rngs = false) const;
  // child(fn, name)(args...) = fn(child.rewound(), args...): the child is pushed once.
  template <class F>
  auto child(F fn, std::optional<std::string> name = std::nullopt,
             const std::string& prefix = "child_") {
    Scope c = push(name, prefix);
    return [c, fn = std::move(fn)](auto&&... args) mutable {
      Scope s = c.rewound();
      return fn(s, std::forward<decltype(args)>(args)...);
    };
  }

  // ---- collections and variables ----
  const Filter& mutable_filter() const;
  bool is_mutable_collection(const std::string& col) const;
  bool is_collection_empty(const std::string& col) const;
  // Whether the root's variables have the collection at all (even empty).
  bool has_collection(const std::string& col) const;
  // {col: this scope's part of it} for every root collection that has entries here.
  Tree variables() const;
  // variables() restricted to the mutable collections.
  Tree mutable_variables() const;
  bool has_variable(const std::string& col, const std::string& name) const;
  // The value, or `default_value` (None) when it does not exist.
  Tree get_variable(const std::string& col, const std::string& name,
                    Tree default_value = Tree()) const;
  // Writes (merging dicts key by key); ModifyScopeVariableError for an immutable collection.
  void put_variable(const std::string& col, const std::string& name, const Tree& value);

  // variable(col, name, init_fn, args...): init_fn(args...) creates it when missing (no rng).
  template <class Init, class... A>
  Variable variable(const std::string& col, const std::string& name, Init&& init_fn, A&&... args);
  Variable variable(const std::string& col, const std::string& name);

  // param(name, init_fn, args...): init_fn(make_rng("params"), args...) creates it when missing;
  // an existing one is checked against the initializer's shape. Returns what init_fn returns
  // (an Array, or a Tree for initializers of several arrays), unboxed: an init_fn with a
  // box_metadata() (meta::with_partitioning) stores the value in that box.
  template <class Init, class... A>
  auto param(const std::string& name, Init&& init_fn, A&&... args);
  // The same with a braced shape first, param("kernel", init, {3, 4}), as Flax's (3, 4).
  template <class Init, class... A>
  auto param(const std::string& name, Init&& init_fn, const Shape& shape, A&&... args) {
    return param<Init, const Shape&, A...>(name, std::forward<Init>(init_fn), shape,
                                           std::forward<A>(args)...);
  }
  template <class Init, class... A>
  auto variable(const std::string& col, const std::string& name, Init&& init_fn, const Shape& shape,
                A&&... args) {
    return variable<Init, const Shape&, A...>(col, name, std::forward<Init>(init_fn), shape,
                                              std::forward<A>(args)...);
  }

  // ---- rngs ----
  bool has_rng(const std::string& name) const;
  Array make_rng(const std::string& name = "params");
  const std::map<std::string, LazyRng>& rngs() const;
  const std::shared_ptr<RngCounters>& rng_counters() const;

  // ---- flags and validity ----
  const Flags& flags() const;
  bool get_flag(const std::string& key, bool default_value = false) const;
  bool is_initializing() const { return get_flag("initializing"); }
  // After invalidate(), using this scope or one pushed from it throws InvalidScopeError.
  void invalidate();
  bool is_valid() const;

  // Two handles on the same scope object.
  friend bool operator==(const Scope& a, const Scope& b) { return a.impl_ == b.impl_; }

 private:
  struct Root;
  struct Impl;
  explicit Scope(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  void check_valid() const;
  const Tree* find(const std::string& col) const;  // this scope's part of a collection
  [[noreturn]] void throw_not_found(const std::string& col, const std::string& name,
                                    bool is_param) const;
  static void check_param_shape(const Tree& value, const Tree& init, const std::string& name,
                                const std::string& path);
  static void check_param_shape(const Tree& value, const Shape& init_shape, const std::string& name,
                                const std::string& path);

  std::shared_ptr<Impl> impl_;
};

// A handle on one variable: value() reads it and value() = x writes it, as Flax's var.value.
class Variable {
 public:
  Variable(Scope scope, std::string col, std::string name)
      : scope_(std::move(scope)), col_(std::move(col)), name_(std::move(name)) {}

  // An Array that writes through on assignment: mean.value() = 0.9 * mean.value() + ...
  class Value : public Array {
   public:
    Value(const Variable& var, Array a)
        : Array(std::move(a)), scope_(var.scope_), col_(var.col_), name_(var.name_) {}
    Value(const Value&) = default;
    Value& operator=(const Array& v) {
      Variable(scope_, col_, name_).set(v);
      Array::operator=(v);
      return *this;
    }
    Value& operator=(const Value& v) { return *this = static_cast<const Array&>(v); }

   private:
    Scope scope_;
    std::string col_, name_;
  };

  // Reads see the unboxed value (Flax's var.value); a write to a boxed variable keeps its box.
  Value value() const;  // a variable holding one Array
  Tree get() const;     // any variable (a sown tuple, a dict)
  void set(const Tree& v) const;
  bool is_mutable() const { return scope_.is_mutable_collection(col_); }
  const std::string& collection() const { return col_; }
  const std::string& name() const { return name_; }

 private:
  Scope scope_;
  std::string col_, name_;
};

// ---- bind / apply / init ----------------------------------------------------------------------

namespace detail {
// The variables argument checks of bind/apply (ApplyScopeInvalidVariables*Error).
Tree checked_variables(const Tree& variables, bool check_params_layer);
void check_rngs(const Rngs& rngs, const char* message);
Rngs init_rngs(const Rngs& rngs);

// Whether the last of A... is T (after removing references and const).
template <class T, class... A>
constexpr bool last_is() {
  if constexpr (sizeof...(A) == 0)
    return false;
  else
    return std::is_same_v<
        std::remove_cvref_t<std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>>, T>;
}

// Invalidates the scopes when the code using them returns or throws.
struct InvalidateOnExit {
  std::vector<Scope> scopes;
  ~InvalidateOnExit() {
    for (auto& s : scopes) s.invalidate();
  }
};

template <bool ReturnVariables, class F, class... A>
auto run_root(F& fn, const Tree& variables, const Rngs& rngs, const Filter& mutable_,
              const Flags& flags, A&&... args) {
  Scope root(checked_variables(variables, true), rngs, mutable_, flags);
  InvalidateOnExit guard{{root}};
  using Out = decltype(fn(root, std::forward<A>(args)...));
  if constexpr (ReturnVariables) {
    Out y = fn(root, std::forward<A>(args)...);
    return std::pair<Out, Tree>(std::move(y), root.mutable_variables());
  } else {
    return fn(root, std::forward<A>(args)...);
  }
}

// apply(fn)(variables, args..., [Rngs]): a trailing Rngs becomes the root's rngs.
template <bool ReturnVariables, class F>
auto make_apply(F fn, Filter mutable_, Flags flags) {
  return [fn = std::move(fn), mutable_ = std::move(mutable_), flags = std::move(flags)](
             const Tree& variables, auto&&... args) mutable {
    if constexpr (last_is<Rngs, decltype(args)...>()) {
      auto all = std::forward_as_tuple(std::forward<decltype(args)>(args)...);
      const Rngs& rngs = std::get<sizeof...(args) - 1>(all);
      check_rngs(rngs,
                 "The ``rngs`` argument passed to an apply function should be a ``jax.PRNGKey`` "
                 "or a dictionary mapping strings to ``jax.PRNGKey``.");
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return run_root<ReturnVariables>(fn, variables, rngs, mutable_, flags,
                                         std::get<I>(std::move(all))...);
      }
      (std::make_index_sequence<sizeof...(args) - 1>{});
    } else {
      return run_root<ReturnVariables>(fn, variables, Rngs{}, mutable_, flags,
                                       std::forward<decltype(args)>(args)...);
    }
  };
}
}  // namespace detail

// bind(variables, rngs, mutable): a root scope over the variables (for interactive use).
Scope bind(const Tree& variables, const Rngs& rngs = {}, const Filter& mutable_ = false,
           const Flags& flags = {});

// apply(fn)(variables, args..., [Rngs]) -> fn(root, args...).
template <class F>
auto apply(F fn) {
  return detail::make_apply<false>(std::move(fn), false, Flags{});
}
// apply(fn, mutable)(variables, args..., [Rngs]) -> (out, the mutable collections). Unlike Flax,
// passing a filter always returns the pair (even `false`): C++ needs the type up front.
template <class F>
auto apply(F fn, Filter mutable_, Flags flags = {}) {
  return detail::make_apply<true>(std::move(fn), std::move(mutable_), std::move(flags));
}

// init(fn, mutable)(key or Rngs, args...) -> (out, variables).
template <class F>
auto init(F fn, Filter mutable_ = true, Flags flags = {}) {
  flags["initializing"] = true;
  return [fn = std::move(fn), mutable_ = std::move(mutable_), flags = std::move(flags)](
             const auto& rngs, auto&&... args) mutable {
    return detail::run_root<true>(fn, Tree::dict(), detail::init_rngs(rngs), mutable_, flags,
                                  std::forward<decltype(args)>(args)...);
  };
}

// ---- templates ----------------------------------------------------------------------------------

namespace detail {
template <class R>
Tree to_variable_tree(R&& v) {
  if constexpr (std::is_arithmetic_v<std::remove_cvref_t<R>>)
    return Tree(Array(v));
  else
    return Tree(std::forward<R>(v));
}
template <class R>
R from_variable_tree(const Tree& t) {
  if constexpr (std::is_same_v<R, Tree>)
    return t;
  else if constexpr (std::is_same_v<R, Array>)
    return t.leaf();
  else
    return t.leaf().template item<R>();
}
template <class Init, class... A>
constexpr bool init_shape_is_arg() {
  if constexpr (sizeof...(A) == 0)
    return false;
  else
    return init_returns_shape_arg<std::decay_t<Init>>::value &&
           std::is_convertible_v<std::tuple_element_t<0, std::tuple<A...>>, Shape>;
}
}  // namespace detail

template <class Init, class... A>
Variable Scope::variable(const std::string& col, const std::string& name, Init&& init_fn,
                         A&&... args) {
  reserve(name, col);
  if (!has_variable(col, name)) {
    if (!is_mutable_collection(col)) throw_not_found(col, name, false);
    put_variable(col, name, detail::to_variable_tree(init_fn(std::forward<A>(args)...)));
  }
  return Variable(*this, col, name);
}

template <class Init, class... A>
auto Scope::param(const std::string& name, Init&& init_fn, A&&... args) {
  using R = std::remove_cvref_t<decltype(init_fn(std::declval<Array>(), args...))>;
  reserve(name, "params");
  if (has_variable("params", name)) {
    Tree value = meta::unbox(get_variable("params", name));
    if constexpr (detail::init_shape_is_arg<Init, A...>()) {
      check_param_shape(value, Shape(std::get<0>(std::tie(args...))), name, path_text());
    } else {
      check_param_shape(value, detail::to_variable_tree(init_fn(random::key(0), args...)), name,
                        path_text());
    }
    return detail::from_variable_tree<R>(value);
  }
  if (!is_mutable_collection("params")) throw_not_found("params", name, true);
  R value = init_fn(make_rng("params"), std::forward<A>(args)...);
  Tree stored = detail::to_variable_tree(value);
  if constexpr (requires { init_fn.box_metadata(); }) {
    if (init_fn.box_metadata()) stored = Tree::box(init_fn.box_metadata(), std::move(stored));
  }
  put_variable("params", name, stored);
  if constexpr (std::is_same_v<R, Tree>)
    return meta::unbox(value);
  else
    return value;
}

}  // namespace linum::lift
