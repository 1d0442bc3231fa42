// flax.linen.tabulate: a table of a module's calls — path, module type, inputs, outputs and the
// variables each module owns (per collection: name: dtype[shape], count and bytes) — with totals,
// drawn as Flax (rich) draws it. The module is run once with init, every method call recorded.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <linum/nn/module.hpp>

namespace linum::nn {

struct TabulateOptions {
  std::optional<int> depth = {};  // rows up to this path length; deeper variables fold upward
  Filter mutable_ = DenyList("intermediates");
  // The console width the table is fitted to, as rich fits Flax's: too wide a table has its
  // widest wrappable columns narrowed first, cells wrapped at spaces and words that do not fit cut
  // with "…". Unset: $COLUMNS, else the width of the terminal on stdin, stdout or stderr, else
  // 80, as rich's Console decides (Flax's table in a log file is 80 wide).
  std::optional<int> width = {};
};

namespace detail {
// One recorded method call, in the order calls start (Flax's call index): the module's path, type
// and method, its arguments and its result (Flax's _CallInfo).
struct TabulateCall {
  std::vector<std::string> path;
  std::string type, method;
  Tree inputs, outputs;
};
// A Python bool passed as a keyword argument, as tabulate's inputs column shows it (True/False).
Tree keyword_bool(bool b);
// Flax's _process_inputs of a call with keyword arguments: (*args, kwargs), the kwargs a dict
// with its keys sorted as PyYAML writes them.
Tree inputs_with_keywords(Tree::seq_type args, std::vector<std::pair<std::string, Tree>> keywords);
// The table for a run: every call recorded while init ran, and the variables init created.
std::string render_tabulate(const std::vector<TabulateCall>& calls, const Tree& variables,
                            const TabulateOptions& opts);
}  // namespace detail

// nn.tabulate(module, rngs, depth=...)(args...) -> the table as a string.
template <class M, class R>
auto tabulate(const M& module, R rngs, TabulateOptions opts = {}) {
  return [module, rngs = std::move(rngs), opts](const auto&... args) -> std::string {
    static_assert(sizeof...(args) >= 1 && sizeof...(args) <= 2,
                  "nn::tabulate: modules called with one or two arguments");
    auto calls = std::make_shared<std::vector<detail::TabulateCall>>();
    detail::CallRecorderScope record(detail::CallRecorder{
        [calls](const ModuleBase& m, const std::string& method, const Tree& inputs) {
          calls->push_back({m.path(), m.type_name(), method, inputs, Tree::none()});
          return calls->size() - 1;
        },
        [calls](std::size_t call, const Tree& outputs) { (*calls)[call].outputs = outputs; }});
    Tree vars = module.init(rngs, args..., InitOptions{.mutable_ = opts.mutable_});
    return detail::render_tabulate(*calls, vars, opts);
  };
}

}  // namespace linum::nn
