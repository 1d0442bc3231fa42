// flax.linen.tabulate: a table of a module's calls — path, module type, inputs, outputs and the
// variables each module owns (per collection: name: dtype[shape], count and bytes) — with totals,
// drawn as Flax (rich) draws it. The module is run once with init and capture_intermediates.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <linum/nn/module.hpp>

namespace linum::nn {

struct TabulateOptions {
  std::optional<int> depth = {};  // rows up to this path length; deeper variables fold upward
  Filter mutable_ = DenyList("intermediates");
};

namespace detail {
// One recorded call: the module's path, type and method (filled in post-order as calls return).
struct TabulateCall {
  std::vector<std::string> path;
  std::string type, method;
};
// The Array inputs of one __call__ (recorded as the call starts).
struct TabulateInputs {
  std::vector<std::string> path;
  Arrays inputs;
};
// The table for a run: calls recorded by the capture filter, the captured outputs (in
// variables["intermediates"]), each call's inputs and the variables init created.
std::string render_tabulate(const std::vector<TabulateCall>& calls, const Tree& variables,
                            const std::vector<TabulateInputs>& inputs, const TabulateOptions& opts);
}  // namespace detail

// nn.tabulate(module, rngs, depth=...)(args...) -> the table as a string.
template <class M, class R>
auto tabulate(const M& module, R rngs, TabulateOptions opts = {}) {
  return [module, rngs = std::move(rngs), opts](const auto&... args) -> std::string {
    static_assert(sizeof...(args) >= 1 && sizeof...(args) <= 2,
                  "nn::tabulate: modules called with one or two arguments");
    auto calls = std::make_shared<std::vector<detail::TabulateCall>>();
    CaptureFilter record([calls](const ModuleBase& m, const std::string& method) {
      calls->push_back({m.path(), m.type_name(), method});
      return true;
    });
    auto inputs = std::make_shared<std::vector<detail::TabulateInputs>>();
    detail::InputRecorderScope record_inputs([inputs](const ModuleBase& m, const Arrays& a) {
      inputs->push_back({m.path(), a});
    });
    InitOptions io{.mutable_ = opts.mutable_, .capture_intermediates = record};
    Tree vars = module.init(rngs, args..., io);
    return detail::render_tabulate(*calls, vars, *inputs, opts);
  };
}

}  // namespace linum::nn
