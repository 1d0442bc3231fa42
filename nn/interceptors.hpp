// flax.linen.intercept_methods: interceptors every module method call in a thread goes through
// while they are installed (nn/interceptors.cpp runs them).
#pragma once

#include <functional>
#include <string>
#include <utility>

#include <linum/autodiff/tree_bridge.hpp>

namespace linum::nn {

class ModuleBase;

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

}  // namespace linum::nn
