// Non-template parts of the transforms: input checks, the reverse sweep driver, vmap plumbing.
#include <linum/autodiff/transforms.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

#include <sstream>

namespace linum::detail {

Array watch_input(TapeTrace& tape, const Array& x, const char* fn) {
  check_valid(x, fn);
  if (!is_floating(x.dtype()))
    throw TypeError(std::string(fn) +
                    " requires real-valued inputs (input dtype that is a sub-dtype of np.inexact), "
                    "but got " + std::string(dtype_name(x.dtype())) +
                    ". If you want to use Boolean- or integer-valued inputs, use vjp or cast with astype.");
  return tape.watch(x);
}

void check_grad_output(const Array& out, const char* fn) {
  check_valid(out, fn);
  if (out.ndim() != 0)
    throw TypeError(std::string(fn) + " requires a scalar output, got shape " + shape_str(out.shape()) +
                    ". For vector-valued functions use vjp, jacrev or jacfwd.");
  if (!is_floating(out.dtype()))
    throw TypeError(std::string(fn) + " requires real-valued outputs (output dtype that is a sub-dtype "
                    "of np.inexact), but got " + std::string(dtype_name(out.dtype())));
}

void check_cotangent(const Array& ct, const Array& primal, const char* fn) {
  check_valid(ct, fn);
  if (ct.shape() != primal.shape() || ct.dtype() != primal.dtype()) {
    std::ostringstream os;
    os << fn << ": the cotangent of shape " << shape_str(ct.shape()) << " and dtype " << ct.dtype()
       << " must have the same shape and dtype as the corresponding primal output, shape "
       << shape_str(primal.shape()) << " and dtype " << primal.dtype();
    throw ValueError(os.str());
  }
}

Arrays pullback(const TapeTrace& tape, const Arrays& out_primals, const std::vector<int>& out_vars,
                const Arrays& cts, const Arrays& inputs, const char* fn) {
  for (std::size_t i = 0; i < cts.size(); ++i) check_cotangent(cts[i], out_primals[i], fn);
  Arrays g = tape.backward(out_vars, cts, static_cast<int>(inputs.size()));
  for (std::size_t i = 0; i < g.size(); ++i)
    if (!g[i].valid()) g[i] = zeros_like(inputs[i]);
  return g;
}

Array jvp_watch(JvpTrace& t, const Array& primal, const Array& tangent) {
  check_valid(primal, "jvp");
  check_valid(tangent, "jvp");
  if (primal.shape() != tangent.shape() || primal.dtype() != tangent.dtype()) {
    std::ostringstream os;
    os << "jvp: primal and tangent arguments do not match: primal has shape "
       << shape_str(primal.shape()) << " and dtype " << primal.dtype() << ", tangent has shape "
       << shape_str(tangent.shape()) << " and dtype " << tangent.dtype();
    throw ValueError(os.str());
  }
  return t.watch(primal, tangent);
}

std::int64_t vmap_axis_size(const Arrays& args, const std::vector<int>& in_axes) {
  if (in_axes.size() != args.size())
    throw ValueError("vmap: in_axes has " + std::to_string(in_axes.size()) + " entries for " +
                     std::to_string(args.size()) + " arguments");
  std::int64_t n = -1;
  std::ostringstream sizes;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (in_axes[i] == VmapOptions::kNone) continue;
    check_valid(args[i], "vmap");
    const int nd = args[i].ndim();
    if (in_axes[i] < -nd || in_axes[i] >= nd)
      throw ValueError("vmap was requested to map its argument along axis " + std::to_string(in_axes[i]) +
                       ", which implies that its rank should be at least " +
                       std::to_string(in_axes[i] < 0 ? -in_axes[i] : in_axes[i] + 1) +
                       ", but is only " + std::to_string(nd) + " (its shape is " +
                       shape_str(args[i].shape()) + ")");
    const std::int64_t s = args[i].shape(in_axes[i]);
    sizes << "\n  argument " << i << " of shape " << shape_str(args[i].shape()) << " has size " << s
          << " on axis " << in_axes[i];
    if (n >= 0 && s != n) n = -2;
    if (n == -1) n = s;
  }
  if (n == -2) throw ValueError("vmap got inconsistent sizes for the mapped axis:" + sizes.str());
  if (n < 0) throw ValueError("vmap must have at least one non-None value in in_axes");
  return n;
}

Array vmap_out(const BatchTrace& t, const Array& y, int out_axis) {
  auto [v, b] = t.unwrap(y);
  const int nd = v.ndim() + (b < 0 ? 1 : 0);
  const int to = out_axis < 0 ? out_axis + nd : out_axis;
  if (to < 0 || to >= nd)
    throw ValueError("vmap: out_axes " + std::to_string(out_axis) + " is out of bounds for an output of rank " +
                     std::to_string(nd - 1));
  return move_bdim(v, b, to, t.axis_size());
}

}  // namespace linum::detail
