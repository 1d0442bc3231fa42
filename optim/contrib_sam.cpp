// SAM's leaf helpers (contrib_sam.hpp).
#include <linum/optim/contrib_sam.hpp>

#include <linum/autodiff/collectives.hpp>

namespace linum::optim::detail {

Array sam_pick_one(const Array& cond, const Array& a, const Array& b) {
  if (!a.valid()) return a;
  if (a.dtype() == bool_) return where(cond, a, b);
  Array c = astype(cond, a.dtype());
  return c * a + (1 - c) * b;
}

Array sam_pmean(const Array& x, const std::string& axis_name) { return pmean(x, axis_name); }

void check_sam(int sync_period) {
  if (sync_period < 1)
    throw ValueError("sam: Synchronization period must be >= 1, got sync_period=" +
                     std::to_string(sync_period));
}

}  // namespace linum::optim::detail
