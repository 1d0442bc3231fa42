// Elementwise fusion of a recorded Program: the one table of fusable primitives, and the pass that
// replaces each run of them by a FusedChain eqn (jit_fused_kernels.cpp runs it).
#include <algorithm>
#include <bit>
#include <optional>
#include <unordered_map>

#include <linum/autodiff/ops/simd.hpp>

#include <linum/autodiff/jit_fused.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/recorded_params.hpp>

namespace linum::detail {

namespace {

// What jit knows of a fusable primitive: its code, and its opcode in scalar chains.
struct Fusable {
  const FusedOp* op = nullptr;
  Opcode code = Opcode::call;
  explicit operator bool() const { return op != nullptr; }
};

// The table of fusable primitives, gathered from the files that define them. The arithmetic
// operators (their kernels compute `a + b` etc. in T) get opcodes that scalar code runs inline.
Fusable fusable(const Primitive& p) {
  static const std::unordered_map<const Primitive*, Fusable> table = [] {
    const std::unordered_map<std::string_view, Opcode> inline_ops = {{"add", Opcode::add},
                                                                     {"sub", Opcode::sub},
                                                                     {"mul", Opcode::mul},
                                                                     {"div", Opcode::div},
                                                                     {"neg", Opcode::neg}};
    std::unordered_map<const Primitive*, Fusable> t;
    for (auto entries :
         {elementwise_fused_entries(), math_fused_entries(), special_fused_entries()})
      for (const FusedEntry& e : entries) {
        auto it = inline_ops.find(e.prim->name());
        t.emplace(e.prim, Fusable{&e.op, it != inline_ops.end() ? it->second : Opcode::call});
      }
    return t;
  }();
  auto it = table.find(&p);
  if (it != table.end()) return it->second;
  if (const FusedOp* square = integer_pow_fused_op(p)) return {square, Opcode::square};
  return {};
}

std::int64_t simd_width(DType d) {
  return static_cast<std::int64_t>(d == float32 ? xsimd::batch<float>::size
                                                : xsimd::batch<double>::size);
}

// A chain being fused: its block form, each step's opcode and the values it reads from outside.
struct Chain {
  Blocks blocks;
  std::vector<Opcode> codes;  // per step
  std::vector<Ref> ext;       // the external inputs
};

struct Fuser {
  Program& program;
  const std::vector<ShapeDtype>& var_aval;
  const std::vector<char>& var_weak;
  std::vector<int> last_read;  // per var: the index of its last reader (eqns.size(): an output)
  std::vector<FusedChain*> chain_of;  // per eqn after fuse(): its chain when in block form

  ShapeDtype aval_of(const Ref& r) const {
    if (r.var >= 0) return var_aval[r.var];
    const Array& c = program.consts[r.constant];
    return {c.shape(), c.dtype()};
  }
  // e's entry when it can join a chain over (shape, dtype): a float elementwise primitive whose
  // inputs have that shape, or, for a binary op, are rank-0 scalars or broadcast along the
  // leading dims (a bias: the shape's trailing dims, a whole number of SIMD batches, so that the
  // blocks that wrap around it keep the vector forms where eager kernels use them).
  Fusable chainable(const Eqn& e, const ShapeDtype& like) const {
    if (e.out.size() != 1) return {};
    const Fusable f = fusable(*e.prim);
    if (!f) return {};
    const ShapeDtype& o = var_aval[e.out[0]];
    if (o.dtype != like.dtype || o.shape != like.shape) return {};
    for (const Ref& r : e.in) {
      const ShapeDtype a = aval_of(r);
      if (a.dtype != o.dtype) return {};
      if (a.shape == o.shape || (f.op->arity == 2 && a.shape.empty())) continue;
      const bool suffix = f.op->arity == 2 && a.shape.size() < o.shape.size() &&
                          std::equal(a.shape.begin(), a.shape.end(),
                                     o.shape.end() - static_cast<std::ptrdiff_t>(a.shape.size()));
      if (!suffix || shape_size(a.shape) % simd_width(o.dtype) != 0) return {};
    }
    return f;
  }

  void fuse() {
    const int never = static_cast<int>(program.eqns.size());
    last_read.assign(program.num_vars, -1);
    for (std::size_t k = 0; k < program.eqns.size(); ++k)
      for (const Ref& r : program.eqns[k].in)
        if (r.var >= 0) last_read[r.var] = static_cast<int>(k);
    for (const Ref& r : program.outputs)
      if (r.var >= 0) last_read[r.var] = never;
    std::vector<Eqn> out;
    std::size_t k = 0;
    const std::size_t n = program.eqns.size();
    while (k < n) {
      const Eqn& first = program.eqns[k];
      const bool float_out = first.out.size() == 1 && (var_aval[first.out[0]].dtype == float32 ||
                                                       var_aval[first.out[0]].dtype == float64);
      std::size_t end = k;
      if (float_out) {
        const ShapeDtype like = var_aval[first.out[0]];
        while (end < n && chainable(program.eqns[end], like)) ++end;
      }
      if (end - k < 2) {
        out.push_back(std::move(program.eqns[k++]));
        chain_of.push_back(nullptr);
        continue;
      }
      out.push_back(fuse_run(k, end));
      k = end;
    }
    program.eqns = std::move(out);
  }

  // The chain of eqns [begin, end): a slot per value, reused once the value's last reader in the
  // chain has run (a step may write in place); values read after the chain are its outputs.
  Chain build(std::size_t begin, std::size_t end, std::vector<int>& outs) const {
    Chain c;
    Blocks& b = c.blocks;
    std::unordered_map<int, int> slot_of;       // var -> slot
    std::unordered_map<long long, int> ext_of;  // ref key -> external index
    std::vector<int> free_slots;
    auto escapes = [&](int v) { return last_read[v] >= static_cast<int>(end); };
    for (std::size_t k = begin; k < end; ++k) {
      const Eqn& q = program.eqns[k];
      const Fusable f = fusable(*q.prim);
      FusedStep step{f.op};
      c.codes.push_back(f.code);
      for (std::size_t j = 0; j < q.in.size(); ++j) {
        const Ref& r = q.in[j];
        auto s = r.var >= 0 ? slot_of.find(r.var) : slot_of.end();
        if (s != slot_of.end()) {
          step.in[j] = s->second;
          continue;
        }
        const long long key = r.var >= 0 ? r.var : -1LL - r.constant;
        auto [it, added] = ext_of.try_emplace(key, static_cast<int>(c.ext.size()));
        if (added) c.ext.push_back(r);
        step.in[j] = -(it->second + 1);
      }
      for (std::size_t j = 0; j < q.in.size(); ++j) {
        const Ref& r = q.in[j];
        if (r.var >= 0 && step.in[j] >= 0 && !escapes(r.var) &&
            last_read[r.var] == static_cast<int>(k) && slot_of.count(r.var)) {
          free_slots.push_back(slot_of[r.var]);
          slot_of.erase(r.var);
        }
      }
      const int v = q.out[0];
      if (!free_slots.empty()) {
        step.out = free_slots.back();
        free_slots.pop_back();
      } else {
        step.out = b.num_slots++;
      }
      slot_of[v] = step.out;
      if (escapes(v)) {
        b.outs.push_back({step.out, static_cast<int>(outs.size()), Layout{}});
        outs.push_back(v);
      }
      b.steps.push_back(step);
    }
    // Where each input lies: the chain's shape, a scalar, or a bias repeated along the rows.
    const std::int64_t n = shape_size(var_aval[program.eqns[begin].out[0]].shape);
    for (const Ref& r : c.ext) {
      const std::int64_t size = shape_size(aval_of(r).shape);
      b.in_layout.push_back(size == n   ? Layout{}
                            : size == 1 ? Layout{0, 0, 0, 0}
                                        : Layout{0, size, 0});
    }
    return c;
  }

  Eqn fuse_run(std::size_t begin, std::size_t end) {
    const ShapeDtype like = var_aval[program.eqns[begin].out[0]];
    Eqn e;
    e.size = end - begin;
    Chain c = build(begin, end, e.out);
    auto chain = std::make_shared<FusedChain>(like.shape, like.dtype);
    for (int v : e.out) chain->outs.push_back({like.shape, like.dtype, var_weak[v] != 0});
    bool compiled = false;
    if (shape_size(like.shape) == 1)
      compiled = like.dtype == float32
                     ? compile(c, e.in, chain->code.emplace<ScalarCode<float>>())
                     : compile(c, e.in, chain->code.emplace<ScalarCode<double>>());
    if (!compiled) {
      e.in = std::move(c.ext);
      chain->code = std::move(c.blocks);
    }
    chain_of.push_back(compiled ? nullptr : chain.get());
    e.prim = std::move(chain);
    return e;
  }

  // A one-element chain as register code. The constants it reads become registers holding their
  // values, so the eqn reads only its variable inputs. Returns false (leaving `in`) when the
  // chain needs more registers or called functions than an instruction encodes.
  template <class T>
  bool compile(const Chain& c, std::vector<Ref>& in, ScalarCode<T>& sc) const {
    std::vector<std::uint32_t> reg_of_ext(c.ext.size());
    std::vector<Ref> vars;
    for (std::size_t k = 0; k < c.ext.size(); ++k)
      if (c.ext[k].var >= 0) {
        reg_of_ext[k] = static_cast<std::uint32_t>(vars.size());
        vars.push_back(c.ext[k]);
      }
    sc.num_inputs = static_cast<std::uint32_t>(vars.size());
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    std::unordered_map<Bits, std::uint32_t> reg_of_value;
    for (std::size_t k = 0; k < c.ext.size(); ++k) {
      if (c.ext[k].var >= 0) continue;
      const T v = *in_ptr<T>(program.consts[c.ext[k].constant]);
      auto [it, added] = reg_of_value.try_emplace(
          std::bit_cast<Bits>(v), static_cast<std::uint32_t>(sc.num_inputs + sc.constants.size()));
      if (added) sc.constants.push_back(v);
      reg_of_ext[k] = it->second;
    }
    const auto first_slot = static_cast<std::uint32_t>(sc.num_inputs + sc.constants.size());
    const Blocks& b = c.blocks;
    if (first_slot + static_cast<std::uint64_t>(b.num_slots) > UINT32_MAX) return false;
    sc.num_regs = first_slot + static_cast<std::uint32_t>(b.num_slots);
    auto reg = [&](int r) {
      return r >= 0 ? first_slot + static_cast<std::uint32_t>(r) : reg_of_ext[-r - 1];
    };
    std::unordered_map<FusedScalar<T>, std::uint8_t> fn_index;
    std::uint32_t prev = UINT32_MAX;  // the register the previous instruction wrote
    for (std::size_t k = 0; k < b.steps.size(); ++k) {
      const FusedStep& st = b.steps[k];
      Instr x{reg(st.in[0]), 0, reg(st.out), Instr::Op::add, 0};
      x.b = st.op->arity == 2 ? reg(st.in[1]) : x.a;
      // The three forms of each op are consecutive: memory, a = acc, b = acc (unary: two).
      const int form = x.a == prev ? 1 : x.b == prev && st.op->arity == 2 ? 2 : 0;
      const auto base = [&] {
        switch (c.codes[k]) {
          case Opcode::add: return Instr::Op::add;
          case Opcode::sub: return Instr::Op::sub;
          case Opcode::mul: return Instr::Op::mul;
          case Opcode::div: return Instr::Op::div;
          case Opcode::neg: return Instr::Op::neg;
          case Opcode::square: return Instr::Op::mul;  // x * x: b = a
          case Opcode::call: return Instr::Op::call;
        }
        return Instr::Op::call;
      }();
      x.op = static_cast<Instr::Op>(static_cast<int>(base) + form);
      if (c.codes[k] == Opcode::call) {
        FusedScalar<T> fn;
        if constexpr (std::is_same_v<T, float>)
          fn = st.op->s32;
        else
          fn = st.op->s64;
        auto [it, added] = fn_index.try_emplace(fn, static_cast<std::uint8_t>(sc.fns.size()));
        if (added) {
          if (sc.fns.size() == 256) return false;
          sc.fns.push_back(fn);
        }
        x.fn = it->second;
      }
      sc.code.push_back(x);
      prev = x.dst;
    }
    sc.code.push_back({0, 0, 0, Instr::Op::halt, 0});
    for (const Blocks::Out& o : b.outs) sc.out_regs.push_back(reg(o.slot));
    in = std::move(vars);
    return true;
  }

  // The layout of the piece [start, start + size) of `axis` in a buffer of shape `s`, for a chain
  // over the piece's shape; nullopt when its rows are not whole SIMD batches.
  static std::optional<Layout> piece(const Shape& s, int axis, std::int64_t start,
                                     std::int64_t size, DType dtype) {
    const std::int64_t inner = shape_size(Shape(s.begin() + axis + 1, s.end()));
    if (axis == 0) return Layout{start * inner};
    if ((size * inner) % simd_width(dtype) != 0) return std::nullopt;
    return Layout{start * inner, size * inner, s[static_cast<std::size_t>(axis)] * inner};
  }

  // Which eqns read each var (an eqn reading it twice, twice) after fuse().
  std::vector<std::vector<int>> readers() const {
    std::vector<std::vector<int>> r(program.num_vars);
    for (std::size_t k = 0; k < program.eqns.size(); ++k)
      for (const Ref& x : program.eqns[k].in)
        if (x.var >= 0) r[x.var].push_back(static_cast<int>(k));
    for (const Ref& x : program.outputs)
      if (x.var >= 0) r[x.var].push_back(-1);
    return r;
  }

  // A split whose pieces only chains read (over the pieces' shapes) goes: each chain reads its
  // piece in place, as a layout of the split's input.
  void absorb_split(int k, const std::vector<std::vector<int>>& readers, std::vector<char>& drop) {
    const Eqn& e = program.eqns[k];
    const auto pieces = split_pieces_of(*e.prim);
    if (!pieces) return;
    const ShapeDtype src = aval_of(e.in[0]);
    std::vector<std::optional<Layout>> at;
    for (std::size_t j = 0; j < e.out.size(); ++j) {
      at.push_back(piece(src.shape, pieces->axis, pieces->starts[j], pieces->sizes[j], src.dtype));
      for (int r : readers[e.out[j]])
        if (!at.back() || r < 0 || !chain_of[r] || chain_of[r]->shape != var_aval[e.out[j]].shape)
          return;
    }
    int first = -1;
    for (std::size_t j = 0; j < e.out.size(); ++j)
      for (int r : readers[e.out[j]]) {
        Eqn& reader = program.eqns[r];
        for (std::size_t p = 0; p < reader.in.size(); ++p)
          if (reader.in[p].var == e.out[j]) {
            reader.in[p] = e.in[0];
            std::get<Blocks>(chain_of[r]->code).in_layout[p] = *at[j];
          }
        first = first < 0 ? r : std::min(first, r);
      }
    if (first >= 0) program.eqns[first].size += e.size;  // the split's primitive, counted once
    drop[k] = 1;
  }

  // A concatenation of outputs of one chain (over their shapes) that nothing else reads goes: the
  // chain writes the concatenation, each value as a layout of it.
  void absorb_concatenate(int k, const std::vector<std::vector<int>>& readers,
                          std::vector<char>& drop) {
    const Eqn& e = program.eqns[k];
    if (std::string_view(e.prim->name()) != "concatenate" || e.in.size() < 2) return;
    const ShapeDtype dst = var_aval[e.out[0]];
    const int def = e.in[0].var >= 0 ? defining(e.in[0].var, k) : -1;
    if (def < 0 || !chain_of[def]) return;
    FusedChain& chain = *chain_of[def];
    const int axis = concatenated_axis(dst.shape, chain.shape);
    if (axis < 0) return;
    std::vector<Layout> at;
    std::int64_t start = 0;
    for (const Ref& r : e.in) {
      const Shape& s = r.var >= 0 ? var_aval[r.var].shape : Shape{};
      if (r.var < 0 || readers[r.var].size() != 1 || defining(r.var, k) != def || s != chain.shape)
        return;
      const auto l = piece(dst.shape, axis, start, s[static_cast<std::size_t>(axis)], dst.dtype);
      if (!l) return;
      at.push_back(*l);
      start += s[static_cast<std::size_t>(axis)];
    }
    Eqn& producer = program.eqns[def];
    Blocks& b = std::get<Blocks>(chain.code);
    std::vector<int> index_of(producer.out.size(), -1);  // old output -> new output
    std::vector<int> kept_out;
    Avals kept_avals;
    for (std::size_t o = 0; o < producer.out.size(); ++o) {
      if (std::find(e.in.begin(), e.in.end(), Ref{producer.out[o], -1}) != e.in.end()) continue;
      index_of[o] = static_cast<int>(kept_out.size());
      kept_out.push_back(producer.out[o]);
      kept_avals.push_back(chain.outs[o]);
    }
    const int joined = static_cast<int>(kept_out.size());
    for (Blocks::Out& o : b.outs) {
      const int v = producer.out[static_cast<std::size_t>(o.output)];
      const auto j = std::find(e.in.begin(), e.in.end(), Ref{v, -1}) - e.in.begin();
      if (index_of[static_cast<std::size_t>(o.output)] >= 0) {
        o.output = index_of[static_cast<std::size_t>(o.output)];
      } else {
        o.output = joined;
        o.at = at[static_cast<std::size_t>(j)];
      }
    }
    kept_out.push_back(e.out[0]);
    kept_avals.push_back({dst.shape, dst.dtype, var_weak[e.out[0]] != 0});
    producer.out = std::move(kept_out);
    chain.outs = std::move(kept_avals);
    producer.size += e.size;
    drop[k] = 1;
  }

  // The eqn before `before` that writes var v, or -1.
  int defining(int v, int before) const {
    for (int k = before; k-- > 0;)
      for (int o : program.eqns[k].out)
        if (o == v) return k;
    return -1;
  }

  // Splits feeding chains and concatenations of a chain's outputs become layouts of the chains
  // (the splits first: they change who reads what).
  void absorb() {
    std::vector<char> drop(program.eqns.size(), 0);
    auto rd = readers();
    for (std::size_t k = 0; k < program.eqns.size(); ++k)
      absorb_split(static_cast<int>(k), rd, drop);
    rd = readers();
    for (std::size_t k = 0; k < program.eqns.size(); ++k)
      if (!drop[k]) absorb_concatenate(static_cast<int>(k), rd, drop);
    std::vector<Eqn> kept;
    for (std::size_t k = 0; k < program.eqns.size(); ++k)
      if (!drop[k]) kept.push_back(std::move(program.eqns[k]));
    program.eqns = std::move(kept);
  }
};

}  // namespace

int concatenated_axis(const Shape& result, const Shape& piece) {
  if (piece.size() != result.size()) return -1;
  int axis = -1;
  for (std::size_t d = 0; d < result.size(); ++d)
    if (result[d] != piece[d]) {
      if (axis >= 0) return -1;
      axis = static_cast<int>(d);
    }
  return axis;
}

void fuse_elementwise_chains(Program& p, const std::vector<ShapeDtype>& var_aval,
                             const std::vector<char>& var_weak) {
  Fuser f{p, var_aval, var_weak, {}, {}};
  f.fuse();
  f.absorb();
}

}  // namespace linum::detail
