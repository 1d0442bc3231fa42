// A bound module's variables, rngs, sow and perturb: each reaches the module's scope, with Flax's
// errors for an unbound module (flax/linen/module.py's variable, param, sow, perturb).
#include <linum/nn/module.hpp>

#include <functional>
#include <string>

#include <linum/autodiff/ops.hpp>

namespace linum::nn {

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

namespace {
Scope& bound_scope(const ModuleBase& m, const std::string& what) {
  if (!m.is_bound()) throw ValueError("Can't access " + what + " on unbound modules");
  return m.scope();
}
}  // namespace

Variable ModuleBase::variable(const std::string& col, const std::string& name) {
  check_initialization_allowed("Variables");
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
