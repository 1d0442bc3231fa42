// Concatenations written in place: the fused chains that make a concatenation's pieces write them
// straight into its buffer, each piece a view of it, so that the concatenation copies nothing.
#include <algorithm>
#include <cstring>
#include <string_view>

#include <linum/autodiff/jit_fused.hpp>

namespace linum::detail {

namespace {

// A view of `shape` at element `offset` of `buffer`; it keeps the buffer alive.
Array view_of(const Array& buffer, std::int64_t offset, const Shape& shape) {
  auto& b = static_cast<ConcreteImpl&>(*buffer.impl());
  auto* data =
      static_cast<std::byte*>(b.data) + offset * static_cast<std::int64_t>(itemsize(b.dtype));
  return Array(
      make_small<ConcreteImpl>(shape, b.dtype, std::shared_ptr<void>(buffer.impl()), data));
}

}  // namespace

void place_concatenated_pieces(Program& p, const std::vector<ShapeDtype>& var_aval) {
  struct Maker {
    int eqn = -1, output = -1;
  };
  std::vector<Maker> made_by(static_cast<std::size_t>(p.num_vars));
  for (std::size_t k = 0; k < p.eqns.size(); ++k)
    if (dynamic_cast<const FusedChain*>(p.eqns[k].prim.get()))
      for (std::size_t j = 0; j < p.eqns[k].out.size(); ++j)
        made_by[static_cast<std::size_t>(p.eqns[k].out[j])] = {static_cast<int>(k),
                                                               static_cast<int>(j)};
  std::vector<char> placed(static_cast<std::size_t>(p.num_vars), 0);
  auto aval_of = [&](const Ref& r) -> ShapeDtype {
    if (r.var >= 0) return var_aval[static_cast<std::size_t>(r.var)];
    const Array& c = p.consts[static_cast<std::size_t>(r.constant)];
    return {c.shape(), c.dtype()};
  };
  for (Eqn& e : p.eqns) {
    if (std::string_view(e.prim->name()) != "concatenate" || e.in.size() < 2) continue;
    const ShapeDtype& dst = var_aval[static_cast<std::size_t>(e.out[0])];
    std::vector<ShapeDtype> pieces;
    for (const Ref& r : e.in) pieces.push_back(aval_of(r));
    // Only a leading axis (all dims before it of size 1) makes each piece one contiguous block.
    const int axis = concatenated_axis(dst.shape, pieces[0].shape);
    if (axis < 0) continue;
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= dst.shape[static_cast<std::size_t>(d)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < dst.shape.size(); ++d)
      inner *= dst.shape[d];
    const bool same_dtype = std::all_of(pieces.begin(), pieces.end(),
                                        [&](const ShapeDtype& a) { return a.dtype == dst.dtype; });
    if (outer != 1 || !same_dtype) continue;
    const int buffer = static_cast<int>(p.buffers.size());
    std::int64_t start = 0;
    for (std::size_t k = 0; k < e.in.size(); ++k) {
      const Ref& r = e.in[k];
      const std::int64_t offset = start * inner;
      start += pieces[k].shape[static_cast<std::size_t>(axis)];
      if (r.var < 0 || placed[static_cast<std::size_t>(r.var)]) continue;
      const Maker m = made_by[static_cast<std::size_t>(r.var)];
      // Pieces stay 64-byte aligned, as every buffer of the caching allocator is.
      if (m.eqn < 0 || offset * static_cast<std::int64_t>(itemsize(dst.dtype)) % 64) continue;
      p.eqns[static_cast<std::size_t>(m.eqn)].placed.push_back({m.output, buffer, offset});
      placed[static_cast<std::size_t>(r.var)] = 1;
      e.fills = buffer;
    }
    if (e.fills == buffer) p.buffers.push_back(dst);
  }
}

Arrays eval_in_place(const Program& p, const Eqn& e, std::span<const Array> in,
                     std::vector<Array>& buffers) {
  auto buffer = [&](int b) -> Array& {
    Array& a = buffers[static_cast<std::size_t>(b)];
    if (!a.valid())
      a = empty(p.buffers[static_cast<std::size_t>(b)].shape,
                p.buffers[static_cast<std::size_t>(b)].dtype);
    return a;
  };
  if (e.fills < 0) {
    const auto& chain = static_cast<const FusedChain&>(*e.prim);
    Arrays outs(e.out.size());
    for (const Eqn::Placed& pl : e.placed)
      outs[static_cast<std::size_t>(pl.output)] = view_of(
          buffer(pl.buffer), pl.offset, chain.outs[static_cast<std::size_t>(pl.output)].shape);
    return chain.eval_into(in, std::move(outs));
  }
  // The concatenation: copies in the pieces that were not written in place.
  Array out = std::move(buffer(e.fills));
  auto* dst = static_cast<std::byte*>(static_cast<ConcreteImpl&>(*out.impl()).data);
  for (const Array& x : in) {
    const auto bytes = static_cast<std::size_t>(x.size()) * itemsize(x.dtype());
    const auto* src =
        static_cast<const std::byte*>(static_cast<const ConcreteImpl&>(*x.impl()).data);
    if (src != dst && bytes) std::memcpy(dst, src, bytes);
    dst += bytes;
  }
  return {std::move(out)};
}

}  // namespace linum::detail
