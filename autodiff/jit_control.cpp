// cond/switch_/while_loop on a predicate that jit traces: a FlowPrimitive over programs. Its kernel
// picks or repeats them; its rules, reached under a grad, jvp or vmap inside the jitted function,
// build new branch functions from linum's transforms (jvp of each branch, vjp re-running each
// branch forward as checkpoint does, vmap of each branch), so they themselves transform and reach
// jit as staged flow.
#include <utility>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/jit_program.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/transforms.hpp>

namespace linum::detail {

Arrays bind_switch(const Array& index, const std::vector<FlatFn>& branches,
                   const Arrays& operands) {
  auto flow = std::make_shared<Flow>();
  flow->kind = Flow::Kind::Switch;
  flow->n_operands = operands.size();
  Arrays in{index}, caps;
  in.insert(in.end(), operands.begin(), operands.end());
  for (const FlatFn& b : branches) {
    ClosedProgram c = trace_closed(b, operands);
    flow->programs.push_back(std::move(c.program));
    caps.insert(caps.end(), c.captured.begin(), c.captured.end());
  }
  in.insert(in.end(), caps.begin(), caps.end());
  return linum::bind(std::make_shared<const FlowPrimitive>(std::move(flow)), in);
}

Arrays bind_while(const FlatFn& cond_fn, const FlatFn& body_fn, const Arrays& init) {
  auto flow = std::make_shared<Flow>();
  flow->kind = Flow::Kind::While;
  flow->n_operands = init.size();
  ClosedProgram c = trace_closed(cond_fn, init), b = trace_closed(body_fn, init);
  flow->programs = {c.program, b.program};
  Arrays in = init;
  in.insert(in.end(), c.captured.begin(), c.captured.end());
  in.insert(in.end(), b.captured.begin(), b.captured.end());
  return linum::bind(std::make_shared<const FlowPrimitive>(std::move(flow)), in);
}

namespace {

// Program k of the flow on `rest`: the operands (or carry) followed by every program's captures.
Arrays run_program(const Flow& f, std::size_t k, std::span<const Array> rest) {
  return eval_program(*f.programs[k], rest.first(f.n_operands),
                      captures_of(f, rest.subspan(f.n_operands), k), Run::bind);
}

std::vector<std::size_t> float_positions(std::span<const Array> xs) {
  std::vector<std::size_t> fi;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (is_inexact(xs[i].dtype())) fi.push_back(i);
  return fi;
}

Arrays pick(std::span<const Array> xs, const std::vector<std::size_t>& at) {
  Arrays out;
  for (std::size_t i : at) out.push_back(xs[i]);
  return out;
}

// g's arguments are xs with the entries at `at` replaced by its own (what jvp/vjp differentiate).
template <class G>
auto with_replaced(std::span<const Array> xs, const std::vector<std::size_t>& at, G g) {
  return [all = Arrays(xs.begin(), xs.end()), at, g](const Arrays& fx) {
    Arrays a = all;
    for (std::size_t j = 0; j < at.size(); ++j) a[at[j]] = fx[j];
    return g(a);
  };
}

// One function per branch of a switch, for its jvp/vjp: the branch as a function of the float
// operands fi (the others fixed at in[0, n)) to its float outputs fo, handed to `rule` with the
// rest of in (the tangents or cotangents).
template <class Rule>
std::vector<FlatFn> branch_rules(const Flow& f, const std::vector<std::size_t>& fi,
                                 const std::vector<std::size_t>& fo, std::size_t n, Rule rule) {
  std::vector<FlatFn> fns;
  for (std::size_t k = 0; k < f.programs.size(); ++k)
    fns.push_back([&f, k, fi, fo, n, rule](const Arrays& in) {
      const std::span<const Array> x(in.data(), n);
      auto g =
          with_replaced(x, fi, [&](const Arrays& a) { return pick(run_program(f, k, a), fo); });
      return rule(g, pick(x, fi), Arrays(in.begin() + static_cast<std::ptrdiff_t>(n), in.end()));
    });
  return fns;
}

// Program k of a flow run per example under a fresh vmap level of the rule's size and axis name
// (collectives inside see it): inputs batched along `bdims` (-1: not), each output moved to axis
// 0 unless `keep` lets an unbatched one stay so; `seen` collects which outputs are batched.
struct PerExample {
  const Flow& f;
  std::vector<int> bdims;
  std::int64_t size;
  std::string name;

  Arrays operator()(std::size_t k, const Arrays& x, const std::vector<char>* keep = nullptr,
                    std::vector<char>* seen = nullptr) const {
    BatchTrace bt(size, name);
    TraceScope scope(bt);
    Arrays in = x;
    for (std::size_t i = 0; i < in.size(); ++i)
      if (bdims[i] >= 0) in[i] = bt.wrap(in[i], bdims[i]);
    Arrays outs = run_program(f, k, in);
    for (std::size_t j = 0; j < outs.size(); ++j) {
      auto [v, b] = bt.unwrap(outs[j]);
      if (seen) (*seen)[j] = (*seen)[j] || b >= 0;
      outs[j] = b < 0 && keep && (*keep)[j] ? v : move_bdim(v, b, 0, size);
    }
    return outs;
  }
};

// A per-example predicate of shape [B], reshaped to broadcast against a [B, ...] value.
Array per_example(const Array& p, const Array& like) {
  Shape s(static_cast<std::size_t>(like.ndim()), 1);
  s[0] = p.shape(0);
  return reshape(p, s);
}

[[noreturn]] void throw_while_vjp() {
  throw ValueError(
      "while_loop: reverse-mode differentiation (grad, vjp) does not work for a while_loop, or a "
      "fori_loop with traced bounds, whose predicate jit traces (its trip count is known only when "
      "the program runs, as JAX's lax.while_loop); use fori_loop with concrete bounds (static "
      "arguments of the jitted function) or scan with a fixed length");
}

}  // namespace

const char* FlowPrimitive::name() const {
  return flow->kind == Flow::Kind::Switch ? "cond" : "while";
}

std::span<const Array> captures_of(const Flow& f, std::span<const Array> caps, std::size_t k) {
  std::size_t from = 0;
  for (std::size_t i = 0; i < k; ++i) from += f.programs[i]->capture_vars.size();
  return caps.subspan(from, f.programs[k]->capture_vars.size());
}

// The programs run on their kernels: bind reaches this kernel only when no transform watches the
// inputs, and then none watches the values inside either.
Arrays FlowPrimitive::eval(std::span<const Array> in) const {
  const Flow& f = *flow;
  if (f.kind == Flow::Kind::Switch) {
    const auto k = static_cast<std::size_t>(in[0].item<std::int32_t>());  // clamped when traced
    return eval_program(*f.programs[k], in.subspan(1, f.n_operands),
                        captures_of(f, in.subspan(1 + f.n_operands), k), Run::kernels);
  }
  const auto caps = in.subspan(f.n_operands);
  Arrays carry(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(f.n_operands));
  auto run = [&](std::size_t k) {
    return eval_program(*f.programs[k], carry, captures_of(f, caps, k), Run::kernels);
  };
  while (run(0).front().item<bool>()) carry = run(1);
  return carry;
}

Avals FlowPrimitive::abstract_eval(std::span<const ShapeDtype> in) const {
  if (flow->kind == Flow::Kind::Switch) return flow->programs.front()->out_avals;
  return Avals(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(flow->n_operands));
}

namespace {

// switch(index, k -> tangents of jvp(branch_k)) over (operands, captures, their tangents).
Arrays jvp_switch(const Flow& f, std::span<const Array> primals, std::span<const Array> tangents,
                  std::span<const Array> outs) {
  Arrays touts(outs.size());
  const auto rest = primals.subspan(1);
  std::vector<std::size_t> fi;
  for (std::size_t i = 0; i < rest.size(); ++i)
    if (is_inexact(rest[i].dtype()) && tangents[i + 1].valid()) fi.push_back(i);
  const std::vector<std::size_t> fo = float_positions(outs);
  if (fi.empty() || fo.empty()) return touts;
  const auto fns = branch_rules(f, fi, fo, rest.size(), [](const auto& g, Arrays x, Arrays t) {
    return linum::jvp(g, std::tuple{std::move(x)}, std::tuple{std::move(t)}).second;
  });
  Arrays ops(rest.begin(), rest.end());
  for (std::size_t i : fi) ops.push_back(tangents[i + 1]);
  const Arrays t = bind_switch(primals[0], fns, ops);
  for (std::size_t j = 0; j < fo.size(); ++j) touts[fo[j]] = t[j];
  return touts;
}

// while over (carry, tangents of its float leaves): the cond reads the carry, the body is
// jvp(body); the captures and their tangents are closed over.
Arrays jvp_while(const Flow& f, std::span<const Array> primals, std::span<const Array> tangents,
                 std::span<const Array> outs) {
  Arrays touts(outs.size());
  const std::size_t n = f.n_operands;
  const Arrays carry(primals.begin(), primals.begin() + static_cast<std::ptrdiff_t>(n));
  const Arrays caps(primals.begin() + static_cast<std::ptrdiff_t>(n), primals.end());
  const std::vector<std::size_t> fc = float_positions(carry);
  std::vector<std::size_t> fk;  // captures with a tangent
  for (std::size_t i = 0; i < caps.size(); ++i)
    if (is_inexact(caps[i].dtype()) && tangents[n + i].valid()) fk.push_back(i);
  Arrays init = carry, tcaps;
  for (std::size_t i : fc) init.push_back(tangents[i].valid() ? tangents[i] : zeros_like(carry[i]));
  for (std::size_t i : fk) tcaps.push_back(tangents[n + i]);
  auto cond_fn = [&f, n, caps](const Arrays& c) {
    Arrays a(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n));
    a.insert(a.end(), caps.begin(), caps.end());
    return run_program(f, 0, a);
  };
  auto body_fn = [&f, n, caps, tcaps, fc, fk](const Arrays& c) {
    Arrays a(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n));
    a.insert(a.end(), caps.begin(), caps.end());
    std::vector<std::size_t> at = fc;  // the float carry leaves, then the captures with tangents
    for (std::size_t i : fk) at.push_back(n + i);
    Arrays t(c.begin() + static_cast<std::ptrdiff_t>(n), c.end());
    t.insert(t.end(), tcaps.begin(), tcaps.end());
    auto g = with_replaced(a, at, [&](const Arrays& x) { return run_program(f, 1, x); });
    auto [y, ty] = linum::jvp(g, std::tuple{pick(a, at)}, std::tuple{t});
    for (std::size_t i : fc) y.push_back(ty[i]);
    return y;
  };
  const Arrays out = bind_while(cond_fn, body_fn, init);
  for (std::size_t j = 0; j < fc.size(); ++j) touts[fc[j]] = out[n + j];
  return touts;
}

}  // namespace

Arrays FlowPrimitive::jvp(std::span<const Array> primals, std::span<const Array> tangents,
                          std::span<const Array> outs) const {
  return flow->kind == Flow::Kind::Switch ? jvp_switch(*flow, primals, tangents, outs)
                                          : jvp_while(*flow, primals, tangents, outs);
}

Arrays FlowPrimitive::vjp(std::span<const Array> primals, std::span<const Array> cts,
                          std::span<const Array> outs) const {
  return vjp_needed(primals, cts, outs, {});
}

Arrays FlowPrimitive::vjp_needed(std::span<const Array> primals, std::span<const Array> cts,
                                 std::span<const Array> outs, std::span<const bool> needed) const {
  if (flow->kind == Flow::Kind::While) throw_while_vjp();
  // switch(index, k -> vjp(branch_k)(ct)) over (operands, captures, cotangents): each backward
  // branch re-runs its forward, so no residuals need joining across branches. The index (an
  // integer) gets no cotangent.
  const Flow& f = *flow;
  const auto rest = primals.subspan(1);
  std::vector<std::size_t> fi;
  for (std::size_t i = 0; i < rest.size(); ++i)
    if (is_inexact(rest[i].dtype()) && (needed.empty() || needed[i + 1])) fi.push_back(i);
  const std::vector<std::size_t> fo = float_positions(outs);
  Arrays result(primals.size());
  if (fi.empty() || fo.empty()) return result;
  const auto fns = branch_rules(f, fi, fo, rest.size(), [](const auto& g, Arrays x, Arrays ct) {
    auto [y, pull] = linum::vjp(g, std::move(x));
    return std::get<0>(pull(ct));
  });
  Arrays ops(rest.begin(), rest.end());
  for (std::size_t j : fo) ops.push_back(cts[j].valid() ? cts[j] : zeros_like(outs[j]));
  const Arrays g = bind_switch(primals[0], fns, ops);
  for (std::size_t j = 0; j < fi.size(); ++j) result[fi[j] + 1] = g[j];
  return result;
}

namespace {

// switch under vmap. One index for every example: a switch over the vmapped branches, an output
// unbatched when no branch batches it (a first trace of each branch tells). An index per example:
// every branch runs, each example selects its own.
Batched vmap_switch(const Flow& f, std::span<const Array> in, std::span<const int> bdims,
                    const BatchTrace& t) {
  const std::int64_t size = t.axis_size();
  const PerExample per{f, std::vector<int>(bdims.begin() + 1, bdims.end()), size, t.axis_name()};
  const Arrays ops(in.begin() + 1, in.end());
  const std::size_t n_out = f.programs.front()->outputs.size();
  if (bdims[0] < 0) {
    std::vector<char> seen(n_out, 0);
    for (std::size_t k = 0; k < f.programs.size(); ++k)
      trace_closed([&](const Arrays& x) { return per(k, x, nullptr, &seen); }, ops);
    std::vector<char> keep(n_out);
    std::vector<int> out_bd(n_out);
    for (std::size_t j = 0; j < n_out; ++j) {
      keep[j] = !seen[j];
      out_bd[j] = seen[j] ? 0 : -1;
    }
    std::vector<FlatFn> fns;
    for (std::size_t k = 0; k < f.programs.size(); ++k)
      fns.push_back([&per, &keep, k](const Arrays& x) { return per(k, x, &keep); });
    return {bind_switch(in[0], fns, ops), std::move(out_bd)};
  }
  const Array idx = moveaxis(in[0], bdims[0], 0);
  Arrays outs = per(f.programs.size() - 1, ops);
  for (std::size_t k = f.programs.size() - 1; k-- > 0;) {
    const Arrays bk = per(k, ops);
    const Array hit = equal(idx, Array(static_cast<int>(k)));
    for (std::size_t j = 0; j < outs.size(); ++j)
      outs[j] = where(per_example(hit, outs[j]), bk[j], outs[j]);
  }
  return {outs, std::vector<int>(n_out, 0)};
}

// while under vmap, as JAX batches it: a carry leaf is batched when it starts so or the body makes
// it so from batched ones (a fixpoint over traces of the vmapped body). An unbatched predicate
// then runs cond and body vmapped as they are; a per-example one batches the whole carry and
// loops while any example's holds, finished examples keeping their carry (as eager vmap does).
struct WhileUnderVmap {
  const Flow& f;
  std::span<const Array> in;
  std::span<const int> bdims;
  const BatchTrace& t;

  std::size_t n() const { return f.n_operands; }
  Arrays with_caps(const Arrays& c) const {
    Arrays a(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n()));
    a.insert(a.end(), in.begin() + static_cast<std::ptrdiff_t>(n()), in.end());
    return a;
  }
  PerExample per_for(const std::vector<char>& bat) const {
    std::vector<int> bd;
    for (std::size_t i = 0; i < n(); ++i) bd.push_back(bat[i] ? 0 : -1);
    bd.insert(bd.end(), bdims.begin() + static_cast<std::ptrdiff_t>(n()), bdims.end());
    return PerExample{f, std::move(bd), t.axis_size(), t.axis_name()};
  }
  Arrays carry_for(const std::vector<char>& bat) const {
    Arrays c;
    for (std::size_t i = 0; i < n(); ++i)
      c.push_back(bat[i] ? move_bdim(in[i], bdims[i], 0, t.axis_size()) : in[i]);
    return c;
  }
  // Which carry leaves are batched, and whether program k (0: cond, 1: body) batches its outputs.
  std::vector<char> batched_outputs(std::size_t k, const std::vector<char>& bat,
                                    std::vector<char> seen) const {
    const PerExample per = per_for(bat);
    trace_closed([&](const Arrays& c) { return per(k, with_caps(c), nullptr, &seen); },
                 carry_for(bat));
    return seen;
  }

  Batched operator()() const {
    std::vector<char> bat(n());
    for (std::size_t i = 0; i < n(); ++i) bat[i] = bdims[i] >= 0;
    for (std::vector<char> next = batched_outputs(1, bat, bat); next != bat;)
      bat = std::exchange(next, batched_outputs(1, next, next));
    if (!batched_outputs(0, bat, {0})[0]) {
      const PerExample per = per_for(bat);
      std::vector<char> keep(n());
      std::vector<int> out_bd(n());
      for (std::size_t i = 0; i < n(); ++i) {
        keep[i] = !bat[i];
        out_bd[i] = bat[i] ? 0 : -1;
      }
      const std::vector<char> keep_pred{1};
      auto cond_fn = [&](const Arrays& c) { return per(0, with_caps(c), &keep_pred); };
      auto body_fn = [&](const Arrays& c) { return per(1, with_caps(c), &keep); };
      return {bind_while(cond_fn, body_fn, carry_for(bat)), std::move(out_bd)};
    }
    const std::vector<char> all(n(), 1);
    const PerExample per = per_for(all);
    auto cond_fn = [&](const Arrays& c) { return Arrays{any(per(0, with_caps(c)).front())}; };
    auto body_fn = [&](const Arrays& c) {
      const Array p = per(0, with_caps(c)).front();
      Arrays next = per(1, with_caps(c));
      for (std::size_t j = 0; j < next.size(); ++j)
        next[j] = where(per_example(p, next[j]), next[j], c[j]);
      return next;
    };
    return {bind_while(cond_fn, body_fn, carry_for(all)), std::vector<int>(n(), 0)};
  }
};

}  // namespace

Batched FlowPrimitive::vmap(std::span<const Array> in, std::span<const int> bdims) const {
  const BatchTrace& t = *current_batch_trace();
  if (flow->kind == Flow::Kind::Switch) return vmap_switch(*flow, in, bdims, t);
  return WhileUnderVmap{*flow, in, bdims, t}();
}

}  // namespace linum::detail
