// How a linen transform lifts a module (flax/linen/transforms.py): which scopes it lifts
// (get_module_scopes: the module's own plus those of the bound modules it holds as fields, so a
// module shared from outside gets its variables mapped like the module's own), the module copy
// bound to the lifted scopes inside the transform (set_module_scopes: lifted_copy), and the two
// ways a transform's body is made from a module: the wrapped module's call for a transformed
// module type (module_class_lift_transform: lifted_call) and a function fn(module, args...) run
// as a method of the calling module (decorator_lift_transform / lift_direct_transform:
// LiftDirect). C++ cannot list a struct's fields, so a module names the modules it holds but does
// not own with `auto module_fields() { return std::tie(a, b); }`.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/lift/pack.hpp>
#include <linum/nn/module.hpp>
#include <linum/pytree/traits.hpp>

namespace linum::nn {

template <class M>
concept HasModuleFields = requires(M& m) {
  m.module_fields();
};

namespace detail {

template <class E, class F>
void visit_field(E& e, F& f) {
  using T = std::remove_cv_t<E>;
  if constexpr (std::is_base_of_v<ModuleBase, T>) {
    f(e);
  } else if constexpr (pytree::detail::is_std_vector<T>::value) {
    for (auto& x : e) visit_field(x, f);
  } else if constexpr (pytree::detail::is_std_optional<T>::value) {
    if (e) visit_field(*e, f);
  } else {
    static_assert(sizeof(T) == 0,
                  "module_fields(): each element must be a module, or a std::vector or "
                  "std::optional of modules");
  }
}
// Calls f(field) for every module m.module_fields() names (none without module_fields()).
template <class M, class F>
void for_each_field(M& m, F&& f) {
  if constexpr (HasModuleFields<M>) {
    auto fields = m.module_fields();
    std::apply([&](auto&... e) { (visit_field(e, f), ...); }, fields);
  }
}

// Whether `s` is `outer` or below it (a child the transformed module's setup binds again).
bool scope_within(const Scope& s, const Scope& outer);
// The index of `s` in `scopes` (same scope object), or -1.
int find_scope(const std::vector<Scope>& scopes, const Scope& s);

// scopes[0] is the transform's own scope; appends the scopes of the bound modules reachable
// through module_fields() that lie outside it, each once (a shared module is lifted once).
template <class M>
void collect_scopes(M& m, std::vector<Scope>& scopes) {
  for_each_field(m, [&](auto& f) {
    if (f.is_bound()) {
      Scope sc = f.scope();
      if (!scope_within(sc, scopes[0]) && find_scope(scopes, sc) < 0) scopes.push_back(sc);
    }
    collect_scopes(f, scopes);
  });
}
// Flax's get_module_scopes: the scope `own` a transform of `m` lifts, then its fields'.
template <class M>
std::vector<Scope> module_scopes(const Scope& own, M& m) {
  std::vector<Scope> scopes{own};
  collect_scopes(m, scopes);
  return scopes;
}

// Rebinds m's field modules (m is a fresh copy: they still share the outer modules' state) to
// the lifted scopes, fields of fields first, so that setup sees them bound. `outer` lists the
// scopes as module_scopes collected them; `bound[k]` is the first module rebound to inner[k]
// (later aliases share its state).
template <class M>
void rebind_fields(M& m, const std::vector<Scope>& outer, std::vector<Scope>& inner,
                   std::vector<ModuleBase*>& bound) {
  for_each_field(m, [&](auto& f) {
    if (!f.is_bound()) return;
    const int k = find_scope(outer, f.scope());
    if (k <= 0) return;
    if (bound[k]) {
      static_cast<ModuleBase&>(f) = *bound[k];
      rebind_fields(f, outer, inner, bound);
      return;
    }
    f = f.clone();
    rebind_fields(f, outer, inner, bound);
    f.bind_root(inner[k]);
    bound[k] = &f;
  });
}

// The module copy inside a transform (Flax's set_module_scopes): a clone of `proto` bound as the
// root of the lifted scope, or of inner[0] when several scopes were lifted, its fields then bound
// to the others. The fields are matched to inner scopes by collecting their outer scopes again
// in module_scopes' order (inner[0] stands in for the module's own scope: it has its path). With
// `names_from`, the copy continues that module's auto-names.
template <class M, class S>
M lifted_copy(const M& proto, S& inner, const ModuleBase* names_from = nullptr) {
  M m = proto.clone();
  if (names_from) m.copy_autoname_cursor_from(*names_from);
  if constexpr (std::is_same_v<S, Scope>) {
    m.bind_root(inner);
  } else {
    if (inner.size() > 1) {
      const std::vector<Scope> outer = module_scopes(inner[0], m);
      std::vector<ModuleBase*> bound(outer.size(), nullptr);
      rebind_fields(m, outer, inner, bound);
    }
    m.bind_root(inner[0]);
  }
  return m;
}

// The body of a transformed module type (Flax's module_class_lift_transform): the wrapped
// module's call on a lifted copy. It owns its copy of the target: a checkpointed call runs again
// in the backward pass, after the module that made it may be gone.
template <class M>
auto lifted_call(const M& target) {
  return [target](auto& inner, const auto&... a) {
    M m = lifted_copy(target, inner);
    return m(a...);
  };
}

// Flax's lift_direct_transform / decorator_lift_transform: functions fn(module, args...) lifted
// as scope functions of the module's scope (scope()) or, like the method decorators, of it and
// its fields' scopes (scopes()). body(fn) runs fn as a method of a lifted copy of the module, so
// modules built inside are its children in the lifted scope; the method name is Flax's for a
// lambda, so the default capture_intermediates filter ('__call__') does not capture it. Every
// lifted copy continues the module's auto-names as they were when the transform began, and the
// names the last copy took are the module's when this object goes (Flax's _state.export /
// reimport): a Dense made after the transform is not one made inside again. Bodies own their
// copies (checkpoint and custom_vjp run them after the call returned).
template <class M>
class LiftDirect {
 public:
  explicit LiftDirect(M& module) : module_(module), proto_(module.clone()) {
    proto_.copy_autoname_cursor_from(module);
  }
  ~LiftDirect() {
    if (*names_) module_.reimport_autoname_cursor(**names_);
  }
  LiftDirect(const LiftDirect&) = delete;
  LiftDirect& operator=(const LiftDirect&) = delete;

  Scope& scope() const { return module_.scope(); }
  std::vector<Scope> scopes() const { return module_scopes(module_.scope(), module_); }

  template <class F>
  auto body(F fn) const {
    return [fn = std::move(fn), proto = proto_, names = names_](auto& inner, const auto&... a) {
      M m = lifted_copy(proto, inner, &proto);
      return m.method("<lambda>", [&] {
        auto y = fn(m, a...);
        *names = m.autoname_cursor();
        return y;
      });
    };
  }

 private:
  using Names = std::shared_ptr<std::optional<ModuleBase::AutonameCursor>>;
  M& module_;
  M proto_;
  Names names_ = std::make_shared<std::optional<ModuleBase::AutonameCursor>>();
};

// Flax's fork_rngs: every rng stream of `scope` is replaced by the fresh key make_rng(stream)
// draws there (advancing its counter) while body(inner, args...) runs over the packed scope, so
// nn.jit and nn.fold_rngs draw the same keys, unlike the untransformed module.
template <class Body, class... A>
auto forked(Scope& scope, const char* name, const Body& body, const A&... args) {
  // nn.jit's outputs cross jax.jit; fold_rngs calls the body directly (lift.fold_rngs).
  const bool sorted = std::string(name) != "fold_rngs";
  return lift::pack(lift::PackSpec{{true}, {true}, {true}, name, sorted}, scope,
                    [&](const auto& p) {
                      lift::RngGroups rngs = p.rngs();
                      for (auto& group : rngs)
                        for (auto& [stream, r] : group[0])
                          r = lift::LazyRng::create(scope.make_rng(stream));
                      return p.call(body, p.variables(), rngs, args...);
                    });
}

}  // namespace detail
}  // namespace linum::nn
