// Which scopes a linen transform lifts (Flax's get_module_scopes / set_module_scopes):
// the transformed module's own scope plus the scopes of the bound modules it holds as fields,
// so a module shared from outside (nn.vmap of a C that calls a B bound in its parent) gets its
// variables mapped like the module's own. C++ cannot list a struct's fields, so a module names
// the modules it holds but does not own with `auto module_fields() { return std::tie(a, b); }`.
#pragma once

#include <optional>
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

// Inside the transform: the lifted scope of each outer scope, and the first module rebound to
// it (later aliases share its state).
struct LiftedScopes {
  const std::vector<Scope>& outer;
  std::vector<Scope>& inner;
  std::vector<ModuleBase*> bound;
};
// Rebinds m's field modules (m is a fresh copy: they still share the outer modules' state) to
// the lifted scopes, fields of fields first, so that setup sees them bound.
template <class M>
void rebind_fields(M& m, LiftedScopes& ls) {
  for_each_field(m, [&](auto& f) {
    if (!f.is_bound()) return;
    const int k = find_scope(ls.outer, f.scope());
    if (k <= 0) return;
    if (ls.bound[k]) {
      static_cast<ModuleBase&>(f) = *ls.bound[k];
      rebind_fields(f, ls);
      return;
    }
    f = f.clone();
    rebind_fields(f, ls);
    f.bind_root(ls.inner[k]);
    ls.bound[k] = &f;
  });
}
// A copy of `proto` bound to inner[0], its fields to the other lifted scopes.
template <class M>
M bind_lifted(const M& proto, const std::vector<Scope>& outer, std::vector<Scope>& inner,
              const ModuleBase* cursor_from = nullptr) {
  M m = proto.clone();
  if (cursor_from) m.copy_autoname_cursor_from(*cursor_from);
  if (outer.size() > 1) {
    LiftedScopes ls{outer, inner, std::vector<ModuleBase*>(outer.size(), nullptr)};
    rebind_fields(m, ls);
  }
  m.bind_root(inner[0]);
  return m;
}

// Several scopes as one: a root whose collections are {col: {"0": scopes[0]'s part, "1": ...}},
// sharing their rng counters under the same keys, so one lift/ transform maps them all.
Scope combined_scope(const std::vector<Scope>& scopes);
// Inside the transform: one lifted root per outer scope over its part of `inner`, with the
// transform's (split) base keys and the outer scope's own rng suffix and counters.
std::vector<Scope> split_scope(const Scope& inner, const std::vector<Scope>& outer);
// After the body: the lifted roots' mutable collections back into `inner`, and invalidated.
void merge_split(Scope& inner, std::vector<Scope>& parts);
// After the transform: the combined root's mutable collections back into each outer scope.
void write_back(const Scope& combined, std::vector<Scope>& scopes);

// Runs make(fn)(scope, args...) for the lift/ transform `make` builds, where
// fn(Scope& s, args...) = body(scopes, lifted, args...) with `lifted` the scopes' lifted
// counterparts. One scope is lifted as itself (Flax's keys exactly); several through
// combined_scope. fn owns its captures: checkpoint and custom_vjp run it after the call returned.
template <class Make, class Body, class... A>
auto lift_scopes(const Make& make, std::vector<Scope> scopes, Body body, const A&... args) {
  if (scopes.size() == 1) {
    auto fn = [scopes, body](Scope& s, const auto&... a) {
      std::vector<Scope> lifted{s};
      return body(scopes, lifted, a...);
    };
    return make(fn)(scopes[0], args...);
  }
  Scope all = combined_scope(scopes);
  auto fn = [scopes, body](Scope& s, const auto&... a) {
    std::vector<Scope> lifted = split_scope(s, scopes);
    struct Invalidate {
      std::vector<Scope>& v;
      ~Invalidate() {
        for (auto& x : v) x.invalidate();
      }
    } guard{lifted};
    auto y = body(scopes, lifted, a...);
    merge_split(s, lifted);
    return y;
  };
  auto y = make(fn)(all, args...);
  write_back(all, scopes);
  all.invalidate();
  return y;
}

// lift_scopes for a module: its scope (`primary`) plus those of its fields.
template <class M>
std::vector<Scope> module_scopes(const Scope& primary, M& m) {
  std::vector<Scope> scopes{primary};
  collect_scopes(m, scopes);
  return scopes;
}

}  // namespace detail
}  // namespace linum::nn
