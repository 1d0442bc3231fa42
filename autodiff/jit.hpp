// linum::jit (jax.jit): the first call with a new signature — the arguments' tree structure,
// leaf shapes, dtypes and weak types, and the values of the static arguments — traces the
// function into a Program (the primitives it binds over abstract values, as a jaxpr); later
// calls with that signature replay the Program: the same kernels in the same order (results
// equal eager ones bit for bit) with no dispatch, tape or shape bookkeeping per op, each buffer
// released after its last reader. Rules, as JAX's:
// - the function runs once per trace, not per call (side effects happen when it is traced);
// - arrays it closes over are constants of the trace: pass what changes as an argument;
// - reading a traced value on the host (item(), `if (x)`) is a ConcretizationTypeError naming
//   jit; cond/switch_/while_loop on such a value are staged instead (control_flow.hpp);
// - arguments that are not pytrees of Arrays (ints, bools, enums, strings) are static: their
//   values are part of the signature; `static_argnums` makes other comparable arguments static.
// Called with tracers of an enclosing grad/jvp/vmap (grad(jit(f))), the function runs inline
// under that transform: same results, no replay.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/tree_bridge.hpp>
#include <linum/error.hpp>
#include <linum/pytree/treedef.hpp>

namespace linum {

struct JitOptions {
  std::vector<int> static_argnums = {};  // arguments compared by value, not traced; -1 is the last
  std::size_t cache_size = 64;           // programs kept per jitted function (least recent out)
};

namespace detail {

class Program;  // jit.cpp

// Traces fn (flat Array leaves in, flat leaves out) into a Program; `name` names the function
// in errors.
std::shared_ptr<const Program> jit_trace(const std::function<Arrays(const Arrays&)>& fn,
                                         const Arrays& leaves, const std::string& name);
Arrays jit_replay(const Program& p, const Arrays& leaves);
std::size_t program_size(const Program& p);  // recorded primitives
// One line per eqn ("v3 = dot_general[dimension_numbers=...] v1 v2"), as the replay runs them.
std::string program_text(const Program& p);
// The jitted function's name when x (or the value beneath its tracers) is traced by jit, else
// nullptr: reading it on the host is then a ConcretizationTypeError naming the function.
const std::string* jit_function_of(const Array& x);
void check_not_jit_traced(const char* what, const Array& x);

// The signature a program is cached under.
struct JitKey {
  std::string text;  // tree structure, avals, static values that print
  std::vector<pytree::StaticValue> statics;
  friend bool operator==(const JitKey& a, const JitKey& b) {
    return a.text == b.text && a.statics == b.statics;
  }
};
void append_avals(std::string& out, const Arrays& leaves);
// Which of a call's nargs positional arguments static_argnums names (negative entries count from
// the end). An entry outside [-nargs, nargs) is the ValueError JAX raises for a function with
// fewer positional parameters.
std::vector<bool> static_mask(const std::vector<int>& static_argnums, std::size_t nargs,
                              const std::string& name);

struct JitEntry {
  JitKey key;
  std::shared_ptr<const Program> program;
  pytree::TreeDef out_def;
};

struct JitCache {
  std::mutex mu;
  std::vector<JitEntry> entries;  // most recently used last
  std::size_t traces = 0;
};

// A comparable value that holds no Arrays (not a pytree node, not an Array) may be static.
template <class A>
constexpr bool can_be_static_v =
    always_static_v<A> || (std::equality_comparable<A> && !std::is_same_v<A, Array> &&
                           (pytree::detail::category_v<A> == pytree::detail::Category::Leaf ||
                            pytree::detail::category_v<A> == pytree::detail::Category::Invalid));
template <class A>
constexpr bool is_array_tree_v = !always_static_v<A> && pytree::detail::is_pytree_v<A>;

}  // namespace detail

template <class F>
class Jitted {
 public:
  Jitted(F f, JitOptions opts, std::string name)
      : f_(std::move(f)),
        opts_(std::move(opts)),
        name_(std::move(name)),
        cache_(std::make_shared<detail::JitCache>()) {
    if (opts_.cache_size == 0) throw ValueError("jit: cache_size must be at least 1");
  }

  template <class... A>
  auto operator()(const A&... args) const {
    // A replay never calls f, so f may not count on running each call: jit calls it as const.
    static_assert(
        std::is_invocable_v<const F&, const A&...> || !std::is_invocable_v<F&, const A&...>,
        "jit: f is not const-callable (a `mutable` lambda or a non-const operator()); "
        "jit calls f only when it traces, so f cannot keep state between calls");
    static_assert(std::is_invocable_v<F&, const A&...>,
                  "jit: f cannot be called with these arguments");
    using R = std::decay_t<std::invoke_result_t<const F&, const A&...>>;
    constexpr std::size_t n = sizeof...(A);
    const auto targs = std::forward_as_tuple(args...);
    const std::vector<bool> statics = detail::static_mask(opts_.static_argnums, n, name_);
    // The signature and the dynamic leaves of every argument.
    detail::JitKey key;
    std::vector<Arrays> leaves(n);
    bool traced_input = false;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (classify<I>(std::get<I>(targs), statics[I], key, leaves[I], traced_input), ...);
    }
    (std::make_index_sequence<n>{});
    if (traced_input) return f_(args...);  // under an enclosing transform: run inline

    Arrays flat;
    for (auto& l : leaves) flat.insert(flat.end(), l.begin(), l.end());
    detail::append_avals(key.text, flat);
    detail::JitEntry entry = lookup(key);
    if (!entry.program) {
      pytree::TreeDef out_def;
      auto run = [&](const Arrays& in) {
        // Where each argument's leaves start in `in` (arguments are evaluated in any order).
        std::vector<std::size_t> begin(n + 1, 0);
        for (std::size_t i = 0; i < n; ++i) begin[i + 1] = begin[i] + leaves[i].size();
        R y = [&]<std::size_t... I>(std::index_sequence<I...>) {
          return f_(rebuild<I>(std::get<I>(targs), statics[I], in, begin[I], begin[I + 1])...);
        }
        (std::make_index_sequence<n>{});
        auto [out, def] = pytree::tree_flatten<Array>(y);
        out_def = def;
        return Arrays(out.begin(), out.end());
      };
      entry.program = detail::jit_trace(run, flat, name_);
      entry.key = std::move(key);
      entry.out_def = out_def;
      insert(entry);
    }
    Arrays out = detail::jit_replay(*entry.program, flat);
    return pytree::tree_unflatten<R>(entry.out_def, out);
  }

  // How many times the function was traced (JAX counts compiles), and the cached programs.
  std::size_t trace_count() const {
    std::lock_guard<std::mutex> g(cache_->mu);
    return cache_->traces;
  }
  std::size_t cache_size() const {
    std::lock_guard<std::mutex> g(cache_->mu);
    return cache_->entries.size();
  }
  // Primitives in the most recently used program (0 before the first call).
  std::size_t program_size() const {
    std::lock_guard<std::mutex> g(cache_->mu);
    return cache_->entries.empty() ? 0 : detail::program_size(*cache_->entries.back().program);
  }
  // The most recently used program as the replay runs it, after fusion and the rewrites that
  // batch a loop's products, one eqn per line (as jax.make_jaxpr prints; "" before the first call).
  std::string program_text() const {
    std::lock_guard<std::mutex> g(cache_->mu);
    return cache_->entries.empty() ? "" : detail::program_text(*cache_->entries.back().program);
  }

 private:
  template <std::size_t I, class A>
  void classify(const A& a, bool is_static, detail::JitKey& key, Arrays& leaves,
                bool& traced) const {
    key.text += '|';
    if (detail::always_static_v<A> || is_static) {
      if constexpr (std::is_convertible_v<const A&, std::string_view>) {
        key.statics.push_back(pytree::StaticValue::of(std::string(std::string_view(a))));
        key.text += "static";
      } else if constexpr (detail::can_be_static_v<A>) {
        key.statics.push_back(pytree::StaticValue::of(a));
        key.text += "static";
      } else {
        throw TypeError("jit(" + name_ + "): static argument " + std::to_string(I) +
                        " holds Arrays or has no ==, so calls cannot be told apart by value; "
                        "pass it as a traced argument");
      }
      return;
    }
    if constexpr (!detail::is_array_tree_v<A>) {
      throw TypeError("jit(" + name_ + "): argument " + std::to_string(I) +
                      " is neither a pytree of Arrays nor a static value; list it in "
                      "static_argnums");
    } else {
      leaves = detail::tree_arrays(a);
      for (const Array& x : leaves) {
        if (!x.valid())
          throw ValueError("jit(" + name_ + "): argument " + std::to_string(I) +
                           " holds an empty Array handle");
        traced = traced || x.is_tracer();
      }
      if constexpr (!std::is_same_v<A, Array>) key.text += pytree::tree_structure(a).to_string();
    }
  }

  template <std::size_t I, class A>
  A rebuild(const A& a, bool is_static, const Arrays& in, std::size_t from, std::size_t to) const {
    if constexpr (!detail::is_array_tree_v<A>) {
      return a;
    } else {
      if (is_static) return a;
      Arrays l(in.begin() + static_cast<std::ptrdiff_t>(from),
               in.begin() + static_cast<std::ptrdiff_t>(to));
      return A(detail::tree_rebuild(a, l));
    }
  }

  detail::JitEntry lookup(const detail::JitKey& key) const {
    std::lock_guard<std::mutex> g(cache_->mu);
    auto& e = cache_->entries;
    for (std::size_t i = 0; i < e.size(); ++i) {
      if (e[i].key == key) {
        detail::JitEntry hit = e[i];
        e.erase(e.begin() + static_cast<std::ptrdiff_t>(i));
        e.push_back(hit);
        return hit;
      }
    }
    return {};
  }
  void insert(const detail::JitEntry& entry) const {
    std::lock_guard<std::mutex> g(cache_->mu);
    ++cache_->traces;
    auto& e = cache_->entries;
    if (e.size() >= opts_.cache_size) e.erase(e.begin());
    e.push_back(entry);
  }

  F f_;
  JitOptions opts_;
  std::string name_;
  std::shared_ptr<detail::JitCache> cache_;
};

// jax.jit(f, static_argnums=...): see the rules at the top of this file. `name` appears in
// errors ("jit(<name>)").
template <class F>
Jitted<F> jit(F f, JitOptions opts = {}, std::string name = "fn") {
  return Jitted<F>(std::move(f), std::move(opts), std::move(name));
}

}  // namespace linum
