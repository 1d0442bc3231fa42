// After fusion: splits that chains read, concatenations of chains' results and chains that only
// another chain reads become layouts of the chains that remain (jit_fusion.cpp makes the chains,
// jit_fused_kernels.cpp runs them).
#include <algorithm>
#include <optional>

#include <linum/autodiff/jit_fused.hpp>
#include <linum/autodiff/ops/recorded_params.hpp>

namespace linum::detail {

namespace {

struct Relayout {
  Program& program;
  const std::vector<ShapeDtype>& var_aval;
  const std::vector<char>& var_weak;
  std::vector<FusedChain*> chain_of;  // per eqn: its chain when in block form

  ShapeDtype aval_of(const Ref& r) const {
    if (r.var >= 0) return var_aval[r.var];
    const Array& c = program.consts[r.constant];
    return {c.shape(), c.dtype()};
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
    // The axis: the one dim where the pieces differ from the result.
    if (chain.shape.size() != dst.shape.size()) return;
    int axis = -1;
    for (std::size_t d = 0; d < dst.shape.size(); ++d)
      if (dst.shape[d] != chain.shape[d]) {
        if (axis >= 0) return;
        axis = static_cast<int>(d);
      }
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

  // Where element i of a chain lies in an input of another chain that the first reads, at
  // `outer`, as that chain's result, which read the input at `inner`: inner ∘ outer, for the
  // layouts a split leaves (whole, a scalar, a bias repeated along rows, a block of columns);
  // nullopt otherwise.
  static std::optional<Layout> compose(const Layout& inner, const Layout& outer) {
    const bool whole_outer = !outer.row && outer.step == 1 && outer.offset == 0;
    if (!inner.row && inner.step == 0) return inner;                       // a scalar
    if (!inner.row && inner.step == 1 && inner.offset == 0) return outer;  // whole
    if (whole_outer) return inner;
    if (inner.row && inner.row_stride == 0 && inner.offset == 0) {  // a bias of `row` elements
      const std::int64_t r = inner.row;
      if (!outer.row && outer.step == 1 && outer.offset % r == 0) return inner;
      if (outer.row && outer.row_stride % r == 0 && outer.offset % r + outer.row <= r)
        return Layout{outer.offset % r, outer.row, 0};
    }
    return std::nullopt;
  }

  // A chain whose one result only chain `k` reads (at the layouts a split left) is computed
  // inside k, once per layout it is read at, so that the result never goes through memory (an
  // LSTM step's gate pre-activations, split four ways, feeding the gates). False when a layout
  // does not compose; nothing is changed then.
  bool inline_producer(int def, int k) {
    const Eqn& pe = program.eqns[def];
    Eqn& ce = program.eqns[k];
    const Blocks& pb = std::get<Blocks>(chain_of[def]->code);
    Blocks& cb = std::get<Blocks>(chain_of[k]->code);
    const int z = pe.out[0];
    Blocks nb;
    std::vector<Ref> nin;
    auto ext_index = [&](const Ref& r, const Layout& l) {
      for (std::size_t q = 0; q < nin.size(); ++q) {
        const Layout& m = nb.in_layout[q];
        if (nin[q] == r && m.offset == l.offset && m.row == l.row && m.row_stride == l.row_stride &&
            m.step == l.step)
          return static_cast<int>(q);
      }
      nin.push_back(r);
      nb.in_layout.push_back(l);
      return static_cast<int>(nin.size()) - 1;
    };
    std::vector<int> operand(ce.in.size());  // the consumer's external input p, as an operand
    nb.num_slots = cb.num_slots;             // the consumer's slots keep their numbers
    for (std::size_t p = 0; p < ce.in.size(); ++p) {
      if (ce.in[p].var == z) {
        const int base = nb.num_slots;
        nb.num_slots += pb.num_slots;
        std::vector<int> pext(pe.in.size());
        for (std::size_t q = 0; q < pe.in.size(); ++q) {
          const auto l = compose(pb.in_layout[q], cb.in_layout[p]);
          if (!l) return false;
          pext[q] = ext_index(pe.in[q], *l);
        }
        for (FusedStep st : pb.steps) {
          for (int j = 0; j < st.op->arity; ++j)
            st.in[j] = st.in[j] >= 0 ? base + st.in[j] : -(pext[-st.in[j] - 1] + 1);
          st.out += base;
          nb.steps.push_back(st);
        }
        operand[p] = base + pb.outs[0].slot;
      } else {
        operand[p] = -(ext_index(ce.in[p], cb.in_layout[p]) + 1);
      }
    }
    for (FusedStep st : cb.steps) {
      for (int j = 0; j < st.op->arity; ++j)
        if (st.in[j] < 0) st.in[j] = operand[-st.in[j] - 1];
      nb.steps.push_back(st);
    }
    nb.outs = std::move(cb.outs);
    cb = std::move(nb);
    ce.in = std::move(nin);
    ce.size += pe.size;
    return true;
  }

  void inline_producers(const std::vector<std::vector<int>>& readers, std::vector<char>& drop) {
    for (std::size_t k = 0; k < program.eqns.size(); ++k) {
      if (drop[k] || !chain_of[k]) continue;
      for (bool changed = true; changed;) {
        changed = false;
        for (const Ref& r : program.eqns[k].in) {
          const int def = r.var >= 0 ? defining(r.var, static_cast<int>(k)) : -1;
          if (def < 0 || drop[def] || !chain_of[def] || program.eqns[def].out.size() != 1) continue;
          bool only_k = true;
          for (int q : readers[r.var])
            only_k = only_k && (q == static_cast<int>(k) || (q >= 0 && drop[q]));
          if (!only_k || !inline_producer(def, static_cast<int>(k))) continue;
          drop[def] = 1;
          changed = true;
          break;
        }
      }
    }
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
    inline_producers(rd, drop);
    rd = readers();
    for (std::size_t k = 0; k < program.eqns.size(); ++k)
      if (!drop[k]) absorb_concatenate(static_cast<int>(k), rd, drop);
    std::vector<Eqn> kept;
    std::vector<FusedChain*> kept_chains;
    for (std::size_t k = 0; k < program.eqns.size(); ++k)
      if (!drop[k]) {
        kept.push_back(std::move(program.eqns[k]));
        kept_chains.push_back(chain_of[k]);
      }
    program.eqns = std::move(kept);
    chain_of = std::move(kept_chains);
  }

  // A concatenation along the leading axis of results of several chains (an RNN's states step by
  // step, read at the end by one batched weight gradient) is made in place: a buffer is made
  // before the first of those chains, each writes its result into its piece of the buffer (the
  // result is a view of it), and the concatenation only copies the pieces no chain wrote.
  void place_concatenations() {
    std::vector<std::pair<std::size_t, Eqn>> buffers;  // each made before the eqn at .first
    for (std::size_t k = 0; k < program.eqns.size(); ++k) {
      Eqn& e = program.eqns[k];
      const auto axis = concatenate_axis_of(*e.prim);
      const ShapeDtype dst = var_aval[e.out[0]];
      // A view needs a buffer on the heap, not in an array's inline storage.
      if (!axis || *axis != 0 || e.in.size() < 2 ||
          static_cast<std::size_t>(shape_size(dst.shape)) * itemsize(dst.dtype) <=
              sizeof(ConcreteImpl::small))
        continue;
      const std::int64_t row = shape_size(Shape(dst.shape.begin() + 1, dst.shape.end()));
      struct Piece {
        int def = -1, output = -1;
        std::int64_t offset = 0;
      };
      std::vector<Piece> pieces;
      std::vector<int> defs;
      std::int64_t start = 0;
      for (const Ref& r : e.in) {
        Piece p{-1, -1, start * row};
        const int def = r.var >= 0 ? defining(r.var, static_cast<int>(k)) : -1;
        if (def >= 0 && chain_of[def] && std::find(defs.begin(), defs.end(), def) == defs.end()) {
          const auto& outs = program.eqns[def].out;
          p.def = def;
          p.output = static_cast<int>(std::find(outs.begin(), outs.end(), r.var) - outs.begin());
          defs.push_back(def);
        }
        pieces.push_back(p);
        start += aval_of(r).shape[0];
      }
      if (defs.size() < 2) continue;
      const int buffer = program.num_vars++;
      std::vector<Ref> rest{Ref{buffer, -1}};
      std::vector<std::int64_t> rest_at;
      for (std::size_t j = 0; j < pieces.size(); ++j) {
        const Piece& p = pieces[j];
        if (p.def < 0) {
          rest.push_back(e.in[j]);
          rest_at.push_back(p.offset);
          continue;
        }
        Eqn& producer = program.eqns[static_cast<std::size_t>(p.def)];
        producer.in.push_back(Ref{buffer, -1});
        chain_of[p.def]->placed.push_back(
            {p.output, static_cast<int>(producer.in.size()) - 1, p.offset});
      }
      e.prim = std::make_shared<ConcatRest>(std::move(rest_at));
      e.in = std::move(rest);
      Eqn make;
      make.prim =
          std::make_shared<ConcatBuffer>(ShapeDtype{dst.shape, dst.dtype, var_weak[e.out[0]] != 0});
      make.out = {buffer};
      make.size = 0;  // no recorded primitive
      buffers.emplace_back(static_cast<std::size_t>(*std::min_element(defs.begin(), defs.end())),
                           std::move(make));
    }
    if (buffers.empty()) return;
    std::sort(buffers.begin(), buffers.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Eqn> out;
    auto next = buffers.begin();
    for (std::size_t k = 0; k < program.eqns.size(); ++k) {
      for (; next != buffers.end() && next->first == k; ++next)
        out.push_back(std::move(next->second));
      out.push_back(std::move(program.eqns[k]));
    }
    program.eqns = std::move(out);
  }
};

}  // namespace

void absorb_into_chains(Program& p, const std::vector<ShapeDtype>& var_aval,
                        const std::vector<char>& var_weak, std::vector<FusedChain*> chain_of) {
  Relayout r{p, var_aval, var_weak, std::move(chain_of)};
  r.absorb();
  r.place_concatenations();
}

}  // namespace linum::detail
