// One-pass leaf updates of scale_by_adam, trace and scale_by_rms / scale_by_stddev (fused.hpp):
// an xsimd loop that reads g and the state leaves once and writes the update and the new state,
// doing the float operations of the linum-op path in the same order (so the results are
// bit-identical), and that path itself for every leaf the loop cannot take.
//
// No contraction of a * b + c into an FMA: the linum-op path rounds every product on its own.
#pragma GCC optimize("fp-contract=off")

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <linum/autodiff/ops/simd.hpp>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/primitive.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/parallel.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/fused.hpp>
#include <linum/optim/tree_utils.hpp>

namespace linum::optim::detail {

namespace {

thread_local bool fused_on = true;
thread_local std::uint64_t fused_leaves = 0;

// A concrete, strongly typed float32/float64 leaf, with every other leaf of the same dtype and
// shape: the kernels' preconditions (concrete arrays are always contiguous). 2-byte leaves take
// the op path, which rounds per op as optax run op by op does.
// Under jit (`in_jit`), g must be a value of the jit trace being recorded and the others values
// of it or concrete: the kernel then runs as a primitive of the program.
bool concrete_or_jit(const Array& a, bool in_jit) {
  return !a.is_tracer() || (in_jit && linum::detail::jit_stageable(a));
}
bool fusable(const Array& g, std::initializer_list<const Array*> others, bool in_jit = false) {
  if (!fused_on || !g.valid() || g.weak_type() || (g.dtype() != float32 && g.dtype() != float64) ||
      g.is_tracer() != in_jit || !concrete_or_jit(g, in_jit))
    return false;
  for (const Array* a : others) {
    if (!a->valid() || !concrete_or_jit(*a, in_jit) || a->weak_type() ||
        a->dtype() != g.dtype() || a->shape() != g.shape())
      return false;
  }
  return true;
}

// Lanes of a loop: full xsimd batches, then single elements for the tail.
template <class T>
struct Scalar {
  using V = T;
  static V load(const T* p) { return *p; }
  static void store(T* p, V v) { *p = v; }
  static V root(V x) { return std::sqrt(x); }
};
template <class T>
struct Simd {
  using V = xsimd::batch<T>;
  static V load(const T* p) { return V::load_unaligned(p); }
  static void store(T* p, V v) { v.store_unaligned(p); }
  static V root(V x) { return xsimd::sqrt(x); }
};
// body.template operator()<A, B, C, L>(i) for every lane L at i of n elements: full xsimd
// batches, then single elements; the three runtime flags become template arguments so that
// each loop is branch-free.
template <class T, bool A, bool B, bool C, class F>
void loop_lanes(std::int64_t n, F& body) {
  constexpr std::int64_t w = xsimd::batch<T>::size;
  linum::detail::parallel_for(n, [&](std::int64_t lo, std::int64_t hi) {
    std::int64_t i = lo;
    for (; i + w <= hi; i += w) body.template operator()<A, B, C, Simd<T>>(i);
    for (; i < hi; ++i) body.template operator()<A, B, C, Scalar<T>>(i);
  });
}
template <class T, class F>
void loop(std::int64_t n, bool a, bool b, bool c, F&& body) {
  auto run = [&](auto A, auto B, auto C) {
    loop_lanes<T, decltype(A)::value, decltype(B)::value, decltype(C)::value>(n, body);
  };
  auto pick_c = [&](auto A, auto B) {
    c ? run(A, B, std::true_type{}) : run(A, B, std::false_type{});
  };
  auto pick_b = [&](auto A) { b ? pick_c(A, std::true_type{}) : pick_c(A, std::false_type{}); };
  a ? pick_b(std::true_type{}) : pick_b(std::false_type{});
}

// The epilogue in the kernels: u + wd * p, then s * u (add_decayed_weights, scale).
template <bool Decay, bool Scaled, class L, class T>
typename L::V epilogue(typename L::V u, const T* p, std::int64_t i, const Epilogue& ep) {
  using V = typename L::V;
  if constexpr (Decay) u = u + V(T(ep.weight_decay)) * L::load(p + i);
  if constexpr (Scaled) u = V(T(ep.scale)) * u;
  return u;
}

// The epilogue with linum ops.
Array epilogue_ops(Array u, const Array* p, const Epilogue& ep) {
  if (ep.decay) {
    if (!p) throw_no_params("add_decayed_weights");
    u = decayed_weights_leaf(u, ep.weight_decay, *p);
  }
  if (ep.scaled) u = scale_leaf(ep.scale, u);
  return u;
}

Array like(const Array& g) { return empty(g.shape(), g.dtype()); }

template <class T>
const T* maybe(const Array* p) {
  return p ? linum::detail::in_ptr<T>(*p) : nullptr;
}

}  // namespace

bool fused_updates_enabled() { return fused_on; }
std::uint64_t fused_leaf_count() { return fused_leaves; }
FusedUpdates::FusedUpdates(bool on) : prev_(fused_on) { fused_on = on; }
FusedUpdates::~FusedUpdates() { fused_on = prev_; }

double Debias::denominator(DType dtype) const {
  std::optional<double>& slot = dtype == float64 ? f64_ : f32_;
  if (!slot) slot = bias_correction_denominator(decay_, count_, dtype).item<double>();
  return *slot;
}

Array decayed_weights_leaf(const Array& g, double weight_decay, const Array& p) {
  return g + weight_decay * p;
}
Array scale_leaf(double step_size, const Array& g) { return step_size * g; }

// ---- scale_by_adam ---------------------------------------------------------------------------

namespace {

// The one-pass adam update with the bias-correction denominators given (c1n: nesterov's).
std::array<Array, 3> adam_kernel(const AdamLeafConfig& c, double c1d, double c2d, double c1nd,
                                 const Array& g, const Array& mu, const Array& nu, const Array* p,
                                 const Epilogue& ep) {
  ++fused_leaves;
  Array u = like(g), m2 = like(g), v2 = like(g);
  linum::detail::dispatch_float(g.dtype(), "scale_by_adam", [&]<class T>() {
    const T b1 = T(c.b1), omb1 = T(1.0 - c.b1), b2 = T(c.b2), omb2 = T(1.0 - c.b2);
    const T c1 = T(c1d), c2 = T(c2d), c1n = T(c1nd);
    const T eps = T(c.eps), eps_root = T(c.eps_root);
    const T *gp = g.data<T>(), *mp = mu.data<T>(), *vp = nu.data<T>(), *pp = maybe<T>(p);
    T *up = linum::detail::out_ptr<T>(u), *m2p = linum::detail::out_ptr<T>(m2),
      *v2p = linum::detail::out_ptr<T>(v2);
    loop<T>(g.size(), c.nesterov, ep.decay, ep.scaled,
            [&]<bool nesterov, bool decay, bool scaled, class L>(std::int64_t i) {
              using V = typename L::V;
              const V gi = L::load(gp + i);
              const V m = V(omb1) * gi + V(b1) * L::load(mp + i);
              const V v = V(omb2) * (gi * gi) + V(b2) * L::load(vp + i);
              V m_hat;
              if constexpr (nesterov)
                m_hat = V(b1) * (m / V(c1n)) + V(omb1) * (gi / V(c1));
              else
                m_hat = m / V(c1);
              const V v_hat = v / V(c2);
              const V ui = m_hat / (L::root(v_hat + V(eps_root)) + V(eps));
              L::store(up + i, epilogue<decay, scaled, L>(ui, pp, i, ep));
              L::store(m2p + i, m);
              L::store(v2p + i, v);
            });
  });
  return {u, m2, v2};
}

// adam_kernel as a primitive, so that a jit program records it where the step count is traced:
// inputs g, mu, nu, count, [count of nesterov's look-ahead], [params when the epilogue decays];
// the denominators are computed from the counts as Debias does, when the program runs.
struct AdamLeafPrim final : Primitive {
  AdamLeafConfig c;
  Epilogue ep;
  AdamLeafPrim(AdamLeafConfig cfg, Epilogue e) : c(std::move(cfg)), ep(e) {}
  const char* name() const override { return "scale_by_adam_leaf"; }
  bool differentiable() const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {in[0], in[0], in[0]};
  }
  Arrays eval(std::span<const Array> in) const override {
    const DType dt = in[0].dtype();
    auto den = [&](double decay, const Array& count) {
      return bias_correction_denominator(decay, count, dt).item<double>();
    };
    const std::size_t next = c.nesterov ? 4 : 3;
    const double c1n = c.nesterov ? den(c.b1, in[4]) : 1.0;
    auto r = adam_kernel(c, den(c.b1, in[3]), den(c.b2, in[3]), c1n, in[0], in[1], in[2],
                         ep.decay ? &in[next + 1] : nullptr, ep);
    return {r[0], r[1], r[2]};
  }
};

}  // namespace

std::array<Array, 3> adam_leaf(const AdamLeafConfig& c, const Array& g, const Array& mu,
                               const Array& nu, const Array* p, const Epilogue& ep) {
  if (!g.valid() && !mu.valid() && !nu.valid()) return {};
  const bool in_jit = g.valid() && g.is_tracer();
  const bool fuse = fusable(g, {&mu, &nu}, in_jit) &&
                    (!ep.decay || (p && fusable(g, {p}, in_jit))) &&
                    (!c.mu_dtype || *c.mu_dtype == g.dtype()) &&
                    concrete_or_jit(c.c1.count(), in_jit) &&
                    (!c.c1_next || concrete_or_jit(c.c1_next->count(), in_jit));
  if (!fuse) {
    Array m = update_moment(g, mu, c.b1, 1);
    Array v = update_moment_per_elem_norm(g, nu, c.b2, 2);
    const Array& count = c.c1.count();
    Array m_hat = !c.nesterov ? bias_correction(m, c.b1, count)
                              : c.b1 * bias_correction(m, c.b1, c.c1_next->count()) +
                                    (1.0 - c.b1) * bias_correction(g, c.b1, count);
    Array v_hat = bias_correction(v, c.b2, count);
    Array u = m_hat / (sqrt(v_hat + c.eps_root) + c.eps);
    return {epilogue_ops(u, p, ep), cast(m, c.mu_dtype), astype(v, nu.dtype())};
  }
  if (in_jit) {
    Arrays in{g, mu, nu, c.c1.count()};
    if (c.nesterov) in.push_back(c.c1_next->count());
    if (ep.decay) in.push_back(*p);
    // The primitive keeps the scalars only: the counts are its inputs.
    AdamLeafConfig scalars{c.b1,           c.b2,    c.eps, c.eps_root, c.mu_dtype, c.nesterov,
                           Debias(c.b1, {}), Debias(c.b2, {}), std::nullopt};
    PrimPtr prim = std::make_shared<const AdamLeafPrim>(std::move(scalars), ep);
    Arrays r = linum::bind(prim, in);
    return {r[0], r[1], r[2]};
  }
  return adam_kernel(c, c.c1.denominator(g.dtype()), c.c2.denominator(g.dtype()),
                     c.nesterov ? c.c1_next->denominator(g.dtype()) : 1.0, g, mu, nu, p, ep);
}

// ---- trace -------------------------------------------------------------------------------------

std::array<Array, 2> trace_leaf(const TraceLeafConfig& c, const Array& g, const Array& trace,
                                const Array* p, const Epilogue& ep) {
  if (!g.valid() && !trace.valid()) return {};
  if (!fusable(g, {&trace}) || (ep.decay && !(p && fusable(g, {p})))) {
    Array t = g + c.decay * trace;
    Array u = c.nesterov ? g + c.decay * t : t;
    return {epilogue_ops(u, p, ep), astype(t, trace.dtype())};
  }
  ++fused_leaves;
  Array u = like(g), t2 = like(g);
  linum::detail::dispatch_float(g.dtype(), "trace", [&]<class T>() {
    const T d = T(c.decay);
    const T *gp = g.data<T>(), *tp = trace.data<T>(), *pp = maybe<T>(p);
    T *up = linum::detail::out_ptr<T>(u), *t2p = linum::detail::out_ptr<T>(t2);
    loop<T>(g.size(), c.nesterov, ep.decay, ep.scaled,
            [&]<bool nesterov, bool decay, bool scaled, class L>(std::int64_t i) {
              using V = typename L::V;
              const V gi = L::load(gp + i);
              const V t = gi + V(d) * L::load(tp + i);
              V ui = t;
              if constexpr (nesterov) ui = gi + V(d) * t;
              L::store(up + i, epilogue<decay, scaled, L>(ui, pp, i, ep));
              L::store(t2p + i, t);
            });
  });
  return {u, t2};
}

// ---- scale_by_rms / scale_by_stddev ------------------------------------------------------------

std::array<Array, 3> second_moment_leaf(const SecondMomentLeafConfig& c, const Array& g,
                                        const Array& mu, const Array& nu, const Array* p,
                                        const Epilogue& ep) {
  if (!g.valid() && !mu.valid() && !nu.valid()) return {};
  const bool fuse = fusable(g, {&nu}) && (!c.centered || fusable(g, {&mu})) &&
                    (!ep.decay || (p && fusable(g, {p}))) &&
                    (!c.debias || !c.debias->count().is_tracer());
  if (!fuse) {
    Array m = c.centered ? update_moment(g, mu, c.decay, 1) : mu;
    Array v = update_moment_per_elem_norm(g, nu, c.decay, 2);
    auto debiased = [&](const Array& x) {
      return c.debias ? bias_correction(x, c.decay, c.debias->count()) : x;
    };
    auto inv_root = [&](const Array& x) {
      return c.eps_in_sqrt ? rsqrt(x + c.eps) : 1.0 / (sqrt(x) + c.eps);
    };
    Array v_hat = debiased(v);
    Array u;
    if (c.centered) {
      Array m_hat = debiased(m);
      u = inv_root(v_hat - m_hat * m_hat) * g;
    } else {
      u = inv_root(v_hat) * g;
    }
    return {epilogue_ops(u, p, ep), m, v};
  }
  ++fused_leaves;
  Array u = like(g), v2 = like(g);
  Array m2 = c.centered ? like(g) : mu;
  linum::detail::dispatch_float(g.dtype(), "scale_by_rms", [&]<class T>() {
    const T d = T(c.decay), omd = T(1.0 - c.decay), eps = T(c.eps);
    const T den = c.debias ? T(c.debias->denominator(g.dtype())) : T(1);
    const T *gp = g.data<T>(), *vp = nu.data<T>(), *pp = maybe<T>(p);
    const T* mp = c.centered ? mu.data<T>() : nullptr;
    T *up = linum::detail::out_ptr<T>(u), *v2p = linum::detail::out_ptr<T>(v2);
    T* m2p = c.centered ? linum::detail::out_ptr<T>(m2) : nullptr;
    const bool debias = c.debias.has_value(), eps_in_sqrt = c.eps_in_sqrt;
    loop<T>(g.size(), c.centered, ep.decay, ep.scaled,
            [&]<bool centered, bool decay, bool scaled, class L>(std::int64_t i) {
              using V = typename L::V;
              const V gi = L::load(gp + i);
              const V v = V(omd) * (gi * gi) + V(d) * L::load(vp + i);
              const V v_hat = debias ? v / V(den) : v;
              V x = v_hat;
              if constexpr (centered) {
                const V m = V(omd) * gi + V(d) * L::load(mp + i);
                const V m_hat = debias ? m / V(den) : m;
                x = v_hat - m_hat * m_hat;
                L::store(m2p + i, m);
              }
              const V inv =
                  eps_in_sqrt ? V(T(1)) / L::root(x + V(eps)) : V(T(1)) / (L::root(x) + V(eps));
              L::store(up + i, epilogue<decay, scaled, L>(inv * gi, pp, i, ep));
              L::store(v2p + i, v);
            });
  });
  return {u, m2, v2};
}

}  // namespace linum::optim::detail
