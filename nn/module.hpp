// flax.linen.Module's typed front: a module type is `struct D : nn::Module<D>` (CRTP) whose
// `call` is Python's __call__; Module<D> runs it and named methods through ModuleBase's method
// frame, and gives init / init_with_output / apply / bind / lazy_init / module_paths, which are
// lift::init / apply of a scope function binding a copy of the module to the root scope (as
// flax/linen/module.py). The binding core is nn/module_base.hpp.
#pragma once

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
#include <vector>

#include <linum/nn/module_base.hpp>

namespace linum::nn {

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

namespace detail {
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
    if constexpr (sizeof...(A) > 0 && lift::detail::last_is<Rngs, A...>()) {
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
