// flax.linen's intercept_methods and merge_param: the interceptor chain every module method call
// goes through (ModuleBase::intercepted, ensure_setup), and the field-or-call-argument check.
#include <linum/nn/module.hpp>

#include <string>
#include <utility>
#include <vector>

#include <linum/pytree/repr.hpp>

namespace linum::nn {

void detail::merge_param_error(const std::string& who, const std::string& name, bool both) {
  if (both) {
    throw ValueError(
        who + ": parameter \"" + name +
        "\" was passed to the constructor and at call time. Should be passed just once.");
  }
  throw ValueError(who + ": parameter \"" + name +
                   "\" must be passed to the constructor or at call time.");
}

// ---- method interceptors ----

namespace detail {
namespace {
thread_local std::vector<Interceptor> g_interceptors;
}  // namespace

InstalledInterceptor::InstalledInterceptor(Interceptor f) {
  if (!f) throw ValueError("nn::intercept_methods: expected an interceptor, got an empty function");
  g_interceptors.push_back(std::move(f));
}
InstalledInterceptor::~InstalledInterceptor() { g_interceptors.pop_back(); }
bool interceptors_installed() { return !g_interceptors.empty(); }

Tree run_interceptors(ModuleBase& m, const char* name, const Tree& args,
                      const std::function<Tree()>& method) {
  // The ones installed when the call starts, outermost (first installed) first, as Flax's.
  const std::vector<Interceptor> chain = g_interceptors;
  const InterceptorContext context{m, name, method};
  std::function<Tree(std::size_t)> run = [&](std::size_t i) -> Tree {
    if (i == chain.size()) return method();
    return chain[i]([&run, i] { return run(i + 1); }, args, context);
  };
  return run(0);
}

void bad_value_tree(const Tree& got, const char* expected) {
  throw TypeError(std::string("nn::intercept_methods: an interceptor returned a ") +
                  std::string(pytree::kind_name(got.kind())) + " where the method returns " +
                  expected);
}
const Tree::seq_type& value_tree_items(const Tree& t, std::size_t n, const char* expected) {
  if ((!t.is_tuple() && !t.is_list()) || t.items().size() != n)
    bad_value_tree(t, (std::string(expected) + " of " + std::to_string(n)).c_str());
  return t.items();
}
}  // namespace detail

}  // namespace linum::nn
