// The non-template pieces of keyed_primitive.hpp: grid broadcasting and parameter printing.
#include <linum/autodiff/random/keyed_primitive.hpp>

namespace linum::random::detail {

Shape SamplerBase::out_shape(const Shape& lead) const {
  Shape s = lead;
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

void print_sampler_params(std::ostream& os, const SamplerBase& s) {
  os << "shape=" << shape_str(s.shape) << " dtype=" << s.dtype
     << " partitionable=" << (s.partitionable ? "true" : "false");
}

GridMap broadcast_grids(const Shape& key_lead, const Shape& operand_lead, const char* op) {
  GridMap m;
  m.grid = linum::detail::broadcast_shapes(key_lead, operand_lead, op);
  const int nd = static_cast<int>(m.grid.size());
  const std::int64_t n = shape_size(m.grid);
  auto place = [&](const Shape& s) {
    std::vector<std::int64_t> st(nd, 0);
    const auto own = linum::detail::strides_of(s);
    const int off = nd - static_cast<int>(s.size());
    for (int d = 0; d < static_cast<int>(s.size()); ++d)
      if (s[d] != 1) st[off + d] = own[d];
    return st;
  };
  const auto sk = place(key_lead), so = place(operand_lead);
  m.key_index.resize(n);
  m.operand_index.resize(n);
  std::vector<std::int64_t> idx(nd, 0);
  std::int64_t ik = 0, io = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    m.key_index[i] = ik;
    m.operand_index[i] = io;
    for (int d = nd - 1; d >= 0; --d) {
      ik += sk[d];
      io += so[d];
      if (++idx[d] < m.grid[d]) break;
      ik -= sk[d] * m.grid[d];
      io -= so[d] * m.grid[d];
      idx[d] = 0;
    }
  }
  return m;
}

}  // namespace linum::random::detail
