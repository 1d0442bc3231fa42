// The primitives behind custom_vjp and checkpoint. Both are bound once per call with the flat
// leaves of the arguments; their kernels run the user's function, their rules run the user's
// bwd (custom_vjp) or re-run the function under vjp/jvp (checkpoint), and their batching rules
// bind the same primitive over vmapped versions of the functions.
#include <linum/autodiff/custom.hpp>

#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/transforms.hpp>

#include <climits>
#include <sstream>
#include <string_view>

namespace linum::detail {

bool differentiating() {
  for (int l = 0; l < trace_depth(); ++l)
    if (!dynamic_cast<BatchTrace*>(trace_at(l))) return true;
  return false;
}

int lowest_level(const Arrays& xs) {
  int low = INT_MAX;
  for (const Array& x : xs) {
    Array a = x;
    while (a.is_tracer()) {
      const ArrayImpl* impl = a.impl().get();
      low = std::min(low, impl->level);
      Trace* t = trace_at(impl->level);
      if (auto* b = dynamic_cast<BatchTrace*>(t))
        a = b->unwrap(a).first;
      else if (const Array* p = impl->primal_value())
        a = *p;
      else
        break;
    }
  }
  return low;
}

namespace {

// The outputs of a user function run by a kernel may hold tracers only through closures. A
// grad/jvp tracer there means a captured value is being differentiated, which neither a custom
// rule nor a recomputation from the arguments can account for (JAX's error for custom_vjp).
// Batch tracers are fine below `min_level`; at or above it they would end up nested inside
// that level's own tracers. A batching rule passes its own level as `min_level`.
void check_closure(const Arrays& outs, int min_level, const char* what, bool custom, bool in_rule) {
  for (const Array& o : outs) {
    if (!o.is_tracer()) continue;
    const int lvl = o.impl()->level;
    if (in_rule && lvl < min_level) continue;  // produced by the levels below the rule
    if (dynamic_cast<AbstractTrace*>(trace_at(lvl))) continue;  // evaluated abstractly (eval_shape)
    // Recorded by jit: the kernel ran on jit's tracers as part of its trace, as on values.
    if (std::string_view(trace_at(lvl)->transform_name()) == "jit") continue;
    const bool batch = dynamic_cast<BatchTrace*>(trace_at(lvl)) != nullptr;
    if (custom && !batch)
      throw TypeError(
          "Detected differentiation of a custom_vjp function with respect to a closed-over value. "
          "That isn't supported because the custom VJP rule only specifies how to differentiate "
          "the custom_vjp function with respect to explicit input parameters. Try passing the "
          "closed-over value into the custom_vjp function as an argument, and adapting the "
          "custom_vjp fwd and bwd rules.");
    if (!batch || lvl >= min_level) {
      std::ostringstream os;
      os << what << ": the function closes over an array traced by "
         << trace_at(lvl)->transform_name() << " (an output of shape " << shape_str(o.shape())
         << " depends on it), which " << what
         << " cannot see as an input; pass that array as an argument of the " << what
         << " function instead of capturing it";
      throw ValueError(os.str());
    }
  }
}

bool any_valid(std::span<const Array> xs) {
  for (const auto& x : xs)
    if (x.valid()) return true;
  return false;
}

// The in_axes entry of one list of leaves batched along `bdims` (-1: None).
AxisSpec leaf_spec(std::span<const int> bdims) {
  std::vector<AxisSpec> axes;
  for (int b : bdims) axes.emplace_back(b < 0 ? AxisSpec(std::nullopt) : AxisSpec(b));
  return AxisSpec::seq(std::move(axes));
}
// VmapOptions mapping flat leaves along `bdims` (-1: unbatched) inside the current batch axis.
VmapOptions leaf_axes(std::span<const int> bdims, std::int64_t size, const std::string& name) {
  VmapOptions o;
  o.in_axes = AxisSpec::seq({leaf_spec(bdims)});
  o.out_axes = 0;
  o.axis_name = name;
  o.axis_size = size;
  return o;
}

// Runs g on the floating leaves of xs only (the others, and those not `wanted`, are held
// constant), for vjp/jvp.
template <class G>
auto on_float_leaves(std::span<const Array> xs, G&& g, std::span<const bool> wanted = {}) {
  std::vector<std::size_t> fi;
  Arrays fx;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (is_inexact(xs[i].dtype()) && (wanted.empty() || wanted[i])) {
      fi.push_back(i);
      fx.push_back(xs[i]);
    }
  Arrays all(xs.begin(), xs.end());
  auto merge = [all, fi](const Arrays& f) {
    Arrays a = all;
    for (std::size_t k = 0; k < fi.size(); ++k) a[fi[k]] = f[k];
    return a;
  };
  return g(fx, fi, merge);
}

struct CustomVjpCall final : Primitive {
  std::shared_ptr<CustomVjpState> st;
  explicit CustomVjpCall(std::shared_ptr<CustomVjpState> s) : st(std::move(s)) {}
  const char* name() const override { return "custom_vjp_call"; }
  // The user's functions see the operands' own dtypes; their ops widen on their own.
  bool handles_reduced_floats() const override { return true; }
  // JAX's abstract rule of custom_vjp_call: evaluate fwd on the abstract inputs.
  bool abstract_eval_by_tracing() const override { return true; }

  Arrays eval(std::span<const Array> in) const override {
    Arrays outs = st->fwd(Arrays(in.begin(), in.end()), st->n_out);
    check_closure(outs, st->min_level, "custom_vjp", true, false);
    return outs;
  }

  Arrays jvp(std::span<const Array>, std::span<const Array>,
             std::span<const Array>) const override {
    throw TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.");
  }

  Arrays vjp(std::span<const Array> primals, std::span<const Array> cts,
             std::span<const Array> outs) const override {
    const std::size_t n_out = st->n_out;
    Arrays result(primals.size());
    if (any_valid(cts.subspan(0, n_out))) {
      Arrays ct(cts.begin(), cts.begin() + static_cast<std::ptrdiff_t>(n_out));
      for (std::size_t i = 0; i < n_out; ++i)
        if (!ct[i].valid()) ct[i] = zeros_like(outs[i]);
      Arrays res(outs.begin() + static_cast<std::ptrdiff_t>(n_out), outs.end());
      result = st->bwd(res, ct);
      for (std::size_t i = 0; i < primals.size(); ++i) {
        const Array& g = result[i];
        if (g.shape() == primals[i].shape() && g.dtype() == primals[i].dtype()) continue;
        throw ValueError(
            "Custom VJP bwd rule must produce an output with the same shape/dtypes as the args "
            "tuple of the primal function, but at input leaf " +
            std::to_string(i) + " the bwd rule produced an output of shape/dtype " + aval_str(g) +
            " corresponding to an input of shape/dtype " + aval_str(primals[i]));
      }
    }
    // Cotangents of the residuals arise only under higher-order differentiation (an outer
    // grad of the inner bwd): they flow through fwd's own ops, recomputed here.
    if (any_valid(cts.subspan(n_out))) {
      on_float_leaves(primals,
                      [&](const Arrays& fx, const std::vector<std::size_t>& fi, auto merge) {
                        auto res_of = [&](const Arrays& x) {
                          std::size_t n = 0;
                          Arrays o = st->fwd(merge(x), n);
                          return Arrays(o.begin() + static_cast<std::ptrdiff_t>(n), o.end());
                        };
                        auto [res, pull] = linum::vjp(res_of, fx);
                        Arrays rc(cts.begin() + static_cast<std::ptrdiff_t>(n_out), cts.end());
                        for (std::size_t i = 0; i < rc.size(); ++i)
                          if (!rc[i].valid()) rc[i] = zeros_like(res[i]);
                        Arrays g = std::get<0>(pull(rc));
                        for (std::size_t k = 0; k < fi.size(); ++k)
                          result[fi[k]] = result[fi[k]].valid() ? add(result[fi[k]], g[k]) : g[k];
                        return 0;
                      });
    }
    return result;
  }

  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const BatchTrace& t = *current_batch_trace();
    auto sb = std::make_shared<CustomVjpState>();
    // Batch axis of each residual (0 or -1): residuals that do not depend on the mapped inputs
    // (e.g. weights) stay unbatched, as in JAX, instead of being copied axis_size times.
    auto res_bd = std::make_shared<std::vector<int>>();
    std::vector<int> in_bd(bdims.begin(), bdims.end());
    const std::int64_t size = t.axis_size();
    sb->fwd = [st = st, in_bd, res_bd, size, name = t.axis_name()](const Arrays& leaves,
                                                                   std::size_t& n_out) {
      BatchTrace inner(size, name);
      TraceScope scope(inner);
      Arrays l = leaves;
      for (std::size_t i = 0; i < l.size(); ++i)
        if (in_bd[i] >= 0) l[i] = inner.wrap(l[i], in_bd[i]);
      Arrays o = st->fwd(l, st->n_out);
      n_out = st->n_out;
      res_bd->assign(o.size() - n_out, -1);
      for (std::size_t i = 0; i < o.size(); ++i) {
        auto [v, b] = inner.unwrap(o[i]);
        if (i >= n_out && b < 0) {
          o[i] = v;
          continue;
        }
        o[i] = move_bdim(v, b, 0, size);
        if (i >= n_out) (*res_bd)[i - n_out] = 0;
      }
      return o;
    };
    std::vector<int> bd(bdims.begin(), bdims.end());
    sb->bwd = [st = st, res_bd, bd, name = t.axis_name(), size](const Arrays& res,
                                                                const Arrays& cts) {
      VmapOptions o;
      o.in_axes = AxisSpec::seq({leaf_spec(*res_bd), AxisSpec(0)});
      o.axis_name = name;
      o.axis_size = size;
      Arrays g =
          linum::vmap([&](const Arrays& r, const Arrays& c) { return st->bwd(r, c); }, o)(res, cts);
      // Per-example cotangents of an unbatched input add up; batched ones go to their axis.
      for (std::size_t i = 0; i < g.size(); ++i)
        g[i] = bd[i] < 0 ? sum(g[i], 0) : moveaxis(g[i], 0, bd[i]);
      return g;
    };
    Arrays values(in.begin(), in.end());
    sb->min_level = lowest_level(values);
    Arrays outs = linum::bind(std::make_shared<const CustomVjpCall>(sb), values);
    st->n_out = sb->n_out;
    check_closure(outs, t.level(), "custom_vjp", true, true);
    std::vector<int> out_bd(outs.size(), 0);
    for (std::size_t i = 0; i < res_bd->size(); ++i) out_bd[sb->n_out + i] = (*res_bd)[i];
    return {std::move(outs), std::move(out_bd)};
  }
};

struct RematCall final : Primitive {
  std::shared_ptr<RematState> st;
  explicit RematCall(std::shared_ptr<RematState> s) : st(std::move(s)) {}
  const char* name() const override { return "checkpoint"; }
  bool handles_reduced_floats() const override { return true; }  // its ops widen on their own
  bool abstract_eval_by_tracing() const override { return true; }

  Arrays eval(std::span<const Array> in) const override {
    Arrays outs = st->run(Arrays(in.begin(), in.end()));
    check_closure(outs, st->min_level, "checkpoint", false, false);
    return outs;
  }

  Arrays jvp(std::span<const Array> primals, std::span<const Array> tangents,
             std::span<const Array> outs) const override {
    return on_float_leaves(
        primals, [&](const Arrays& fx, const std::vector<std::size_t>& fi, auto merge) {
          Arrays tx;
          for (std::size_t k = 0; k < fi.size(); ++k)
            tx.push_back(tangents[fi[k]].valid() ? tangents[fi[k]] : zeros_like(fx[k]));
          auto [y, ty] = linum::jvp([&](const Arrays& x) { return st->run(merge(x)); },
                                    std::tuple{fx}, std::tuple{tx});
          for (std::size_t i = 0; i < ty.size(); ++i)
            if (!is_inexact(outs[i].dtype())) ty[i] = Array();
          return ty;
        });
  }

  Arrays vjp(std::span<const Array> primals, std::span<const Array> cts,
             std::span<const Array> outs) const override {
    return vjp_needed(primals, cts, outs, {});
  }

  // The recomputation watches only the inputs that want a cotangent.
  Arrays vjp_needed(std::span<const Array> primals, std::span<const Array> cts,
                    std::span<const Array> outs, std::span<const bool> needed) const override {
    Arrays result(primals.size());
    on_float_leaves(
        primals,
        [&](const Arrays& fx, const std::vector<std::size_t>& fi, auto merge) {
          auto [y, pull] = linum::vjp([&](const Arrays& x) { return st->run(merge(x)); }, fx);
          Arrays c(cts.begin(), cts.end());
          for (std::size_t i = 0; i < c.size(); ++i)
            if (!c[i].valid()) c[i] = zeros_like(outs[i]);
          Arrays g = std::get<0>(pull(c));
          for (std::size_t k = 0; k < fi.size(); ++k) result[fi[k]] = g[k];
          return 0;
        },
        needed);
    return result;
  }

  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const BatchTrace& t = *current_batch_trace();
    auto sb = std::make_shared<RematState>();
    VmapOptions opts = leaf_axes(bdims, t.axis_size(), t.axis_name());
    sb->run = [st = st, opts](const Arrays& leaves) {
      return linum::vmap([&](const Arrays& l) { return st->run(l); }, opts)(leaves);
    };
    Arrays values(in.begin(), in.end());
    sb->min_level = lowest_level(values);
    Arrays outs = linum::bind(std::make_shared<const RematCall>(sb), values);
    check_closure(outs, t.level(), "checkpoint", false, true);
    std::vector<int> zero(outs.size(), 0);
    return {std::move(outs), std::move(zero)};
  }
};

}  // namespace

Arrays custom_vjp_call(const std::shared_ptr<CustomVjpState>& state, const Arrays& inputs) {
  state->min_level = lowest_level(inputs);
  return linum::bind(std::make_shared<const CustomVjpCall>(state), inputs);
}

void check_fwd_primal(const Arrays& fwd_out, const Arrays& f_out, const std::string& fwd_tree,
                      const std::string& f_tree) {
  const std::string head =
      "Custom VJP fwd rule must produce a pair (list or tuple of length two) where the first "
      "element represents the primal output (equal to the output of the custom_vjp-decorated "
      "function) and the second element represents residuals (i.e. values stored from the "
      "forward pass for use on the backward pass), but instead the fwd rule output's first "
      "element had ";
  if (fwd_tree != f_tree || fwd_out.size() != f_out.size())
    throw TypeError(head + "container/pytree structure:\n    " + fwd_tree +
                    "\nwhile the custom_vjp-decorated function had output container/pytree "
                    "structure:\n    " +
                    f_tree + ".");
  auto avals = [](const Arrays& xs) {
    std::string s = "[";
    for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + aval_str(xs[i]);
    return s + "]";
  };
  for (std::size_t i = 0; i < f_out.size(); ++i) {
    check_valid(fwd_out[i], "custom_vjp fwd rule");
    if (fwd_out[i].shape() != f_out[i].shape() || fwd_out[i].dtype() != f_out[i].dtype())
      throw TypeError(head + "shapes/dtypes of:\n    " + avals(fwd_out) +
                      "\nwhile the custom_vjp-decorated function had output shapes/dtypes "
                      "of:\n    " +
                      avals(f_out));
  }
}

void throw_bwd_structure(std::size_t arg, const std::string& ct_tree, const std::string& arg_tree) {
  throw TypeError(
      "Custom VJP bwd rule must produce an output with the same container (pytree) structure as "
      "the args tuple of the primal function, and in particular must produce a tuple of length "
      "equal to the number of arguments to the primal function, but got bwd output structure " +
      ct_tree + " for primal input structure " + arg_tree + " (differentiable argument " +
      std::to_string(arg) + ")");
}

Arrays remat_call(const std::shared_ptr<RematState>& state, const Arrays& inputs) {
  state->min_level = lowest_level(inputs);
  return linum::bind(std::make_shared<const RematCall>(state), inputs);
}

}  // namespace linum::detail
