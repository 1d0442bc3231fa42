// jax.random over Array: every key-consuming operation is one primitive whose key input may carry
// leading batch dims (..., 2); its batching rule moves the batch axis to the front and binds the
// same primitive again, so vmap over keys is one kernel call over all keys.
#include <linum/autodiff/random/random.hpp>

#include <algorithm>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/primitive.hpp>
#include <linum/autodiff/random/sampling.hpp>

namespace linum::random {

namespace {

using detail::KeyData;

enum class Kind {
  split,
  fold_in,
  bits,
  uniform,
  normal,
  truncated_normal,
  bernoulli,
  gumbel,
  randint,
  shuffle,
  weighted_choice,
  gumbel_top_k
};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::split:
      return "random_split";
    case Kind::fold_in:
      return "random_fold_in";
    case Kind::bits:
      return "random_bits";
    case Kind::uniform:
      return "random_uniform";
    case Kind::normal:
      return "random_normal";
    case Kind::truncated_normal:
      return "random_truncated_normal";
    case Kind::bernoulli:
      return "random_bernoulli";
    case Kind::gumbel:
      return "random_gumbel";
    case Kind::randint:
      return "random_randint";
    case Kind::shuffle:
      return "random_shuffle";
    case Kind::weighted_choice:
      return "random_weighted_choice";
    case Kind::gumbel_top_k:
      return "random_gumbel_top_k";
  }
  return "random";
}

// The static parameters of one sampling primitive. `shape` is the per-key sample shape (for
// split: the shape of the key grid); the mode is captured when the op is created, so that a
// transform replaying the primitive draws the same numbers.
struct Params {
  Kind kind;
  Shape shape;
  DType dtype = float32;
  double a = 0, b = 0;          // minval/maxval, lower/upper, p
  std::int64_t lo = 0, hi = 0;  // randint bounds
  int axis = 0;                 // shuffle / top-k axis
  std::int64_t k = 0;           // top-k count
  bool flag = false;            // mode "high" (bernoulli, gumbel); replace (weighted choice)
  bool partitionable = true;
  int operand_rank = -1;  // rank of the per-example second operand (-1: none)
};

// Leading-dims broadcast of the key grid (lk) against the second operand's grid (lo): for each
// output grid position, the flat key index and operand index (numpy broadcasting rules).
struct GridMap {
  Shape grid;
  std::vector<std::int64_t> key_index, operand_index;
};

GridMap broadcast_grids(const Shape& lk, const Shape& lo, const char* op) {
  GridMap m;
  m.grid = linum::detail::broadcast_shapes(lk, lo, op);
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
  const auto sk = place(lk), so = place(lo);
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

Shape concat(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class RandomPrim final : public Primitive {
 public:
  explicit RandomPrim(Params p) : p_(std::move(p)) {}
  const char* name() const override { return kind_name(p_.kind); }
  bool differentiable() const override { return false; }

  // Keys (lead..., 2) give lead + shape; keyed operands broadcast their grids with the keys'.
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    const Shape lead(in[0].shape.begin(), in[0].shape.end() - 1);
    if (p_.operand_rank >= 0) {
      const Shape& os = in[1].shape;
      const Shape grid = linum::detail::broadcast_shapes(
          lead, Shape(os.begin(), os.end() - p_.operand_rank), name());
      if (p_.kind == Kind::fold_in) return {{concat(grid, {2}), uint32}};
      return {{concat(grid, p_.shape), int32}};
    }
    switch (p_.kind) {
      case Kind::split:
        return {{concat(lead, concat(p_.shape, {2})), uint32}};
      case Kind::bits:
        return {{concat(lead, p_.shape), uint32}};
      case Kind::bernoulli:
        return {{concat(lead, p_.shape), bool_}};
      case Kind::randint:
        return {{concat(lead, p_.shape), p_.dtype == uint32 ? uint32 : int32}};
      case Kind::shuffle:
        return {{concat(lead, p_.shape), int32}};
      default:
        return {{concat(lead, p_.shape), p_.dtype}};
    }
  }

  void print_params(std::ostream& os) const override {
    os << "shape=" << shape_str(p_.shape) << " dtype=" << p_.dtype
       << " partitionable=" << (p_.partitionable ? "true" : "false");
  }

  Arrays eval(std::span<const Array> in) const override {
    const Array& keys = in[0];
    const Shape lead(keys.shape().begin(), keys.shape().end() - 1);
    const auto* kd = linum::detail::in_ptr<std::uint32_t>(keys);
    auto key_at = [&](std::int64_t i) { return KeyData{kd[2 * i], kd[2 * i + 1]}; };
    if (p_.operand_rank >= 0) return {eval_binary(key_at, lead, in[1])};
    const std::int64_t nkeys = shape_size(lead);
    switch (p_.kind) {
      case Kind::split: {
        Array out = empty(concat(lead, concat(p_.shape, {2})), uint32);
        auto* o = reinterpret_cast<KeyData*>(linum::detail::out_ptr<std::uint32_t>(out));
        const std::int64_t n = shape_size(p_.shape);
        for (std::int64_t i = 0; i < nkeys; ++i)
          detail::split(key_at(i), std::span(o + i * n, n), p_.partitionable);
        return {out};
      }
      case Kind::bits:
        return {per_key<std::uint32_t>(lead, key_at, [&](KeyData k, std::span<std::uint32_t> s) {
          detail::random_bits(k, s, p_.partitionable);
        })};
      case Kind::bernoulli:
        return {per_key<std::uint8_t>(lead, key_at, [&](KeyData k, std::span<std::uint8_t> s) {
          linum::detail::dispatch_float(p_.dtype, "bernoulli", [&]<class T>() {
            detail::bernoulli(k, s, static_cast<T>(p_.a), p_.flag, p_.partitionable);
          });
        })};
      case Kind::randint:
        if (p_.dtype == uint32)
          return {per_key<std::uint32_t>(lead, key_at, [&](KeyData k, std::span<std::uint32_t> s) {
            detail::randint(k, s, p_.lo, p_.hi, p_.partitionable);
          })};
        return {per_key<std::int32_t>(lead, key_at, [&](KeyData k, std::span<std::int32_t> s) {
          detail::randint(k, s, p_.lo, p_.hi, p_.partitionable);
        })};
      case Kind::shuffle:
        return {per_key<std::int32_t>(lead, key_at, [&](KeyData k, std::span<std::int32_t> s) {
          detail::shuffle_indices(k, p_.shape, p_.axis, s, p_.partitionable);
        })};
      default:
        return {linum::detail::dispatch_float(p_.dtype, name(), [&]<class T>() {
          return per_key<T>(lead, key_at, [&](KeyData k, std::span<T> s) { draw_float(k, s); });
        })};
    }
  }

  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    auto self = std::make_shared<const RandomPrim>(p_);
    if (p_.operand_rank < 0) {
      const Array keys = linum::detail::move_bdim(in[0], bdims[0], 0, 0);
      return {{bind1(self, {keys})}, {0}};
    }
    // Key (Kb..., 2) and operand (Ob..., core...): give both a leading batch axis (size 1 when
    // unbatched) and the same grid rank, so that the kernel's grid broadcasting lines them up.
    const int key_rank = in[0].ndim() - 1 - (bdims[0] >= 0);
    const int op_rank = in[1].ndim() - p_.operand_rank - (bdims[1] >= 0);
    const int grid_rank = std::max(key_rank, op_rank);
    auto lift = [&](const Array& x, int bdim, int rank) {
      Array y = bdim >= 0 ? moveaxis(x, bdim, 0) : expand_dims(x, 0);
      Shape s = y.shape();
      s.insert(s.begin() + 1, grid_rank - rank, 1);
      return reshape(y, s);
    };
    return {{bind1(self, {lift(in[0], bdims[0], key_rank), lift(in[1], bdims[1], op_rank)})}, {0}};
  }

 private:
  template <class T, class KeyAt, class Draw>
  Array per_key(const Shape& lead, KeyAt key_at, Draw draw) const {
    Array out = empty(concat(lead, p_.shape), dtype_of_storage<T>());
    T* o = linum::detail::out_ptr<T>(out);
    const std::int64_t n = shape_size(p_.shape), nkeys = shape_size(lead);
    for (std::int64_t i = 0; i < nkeys; ++i) draw(key_at(i), std::span<T>(o + i * n, n));
    return out;
  }

  template <class T>
  static DType dtype_of_storage() {
    if constexpr (std::is_same_v<T, std::uint8_t>)
      return bool_;
    else
      return dtype_of<T>();
  }

  template <class T>
  void draw_float(KeyData k, std::span<T> s) const {
    const bool part = p_.partitionable;
    switch (p_.kind) {
      case Kind::uniform:
        return detail::uniform(k, s, static_cast<T>(p_.a), static_cast<T>(p_.b), part);
      case Kind::normal:
        return detail::normal(k, s, part);
      case Kind::truncated_normal:
        return detail::truncated_normal(k, s, static_cast<T>(p_.a), static_cast<T>(p_.b), part);
      case Kind::gumbel:
        return detail::gumbel(k, s, p_.flag, part);
      default:
        throw Error(std::string("internal error: ") + name() + " is not a float sampler");
    }
  }

  // fold_in (operand: uint32 data), weighted_choice (operand: weights p) and gumbel_top_k
  // (operand: logits): one draw per position of the broadcast key/operand grid.
  template <class KeyAt>
  Array eval_binary(KeyAt key_at, const Shape& key_lead, const Array& operand) const {
    const Shape& os = operand.shape();
    const Shape op_lead(os.begin(), os.end() - p_.operand_rank);
    const Shape core(os.end() - p_.operand_rank, os.end());
    const GridMap m = broadcast_grids(key_lead, op_lead, name());
    const std::int64_t core_size = shape_size(core), n = shape_size(m.grid);
    if (p_.kind == Kind::fold_in) {
      Array out = empty(concat(m.grid, {2}), uint32);
      auto* o = linum::detail::out_ptr<std::uint32_t>(out);
      const auto* data = linum::detail::in_ptr<std::uint32_t>(operand);
      for (std::int64_t i = 0; i < n; ++i) {
        const KeyData r = detail::fold_in(key_at(m.key_index[i]), data[m.operand_index[i]]);
        o[2 * i] = r[0];
        o[2 * i + 1] = r[1];
      }
      return out;
    }
    return linum::detail::dispatch_float(operand.dtype(), name(), [&]<class T>() {
      const T* src = linum::detail::in_ptr<T>(operand);
      Array out = empty(concat(m.grid, p_.shape), int32);
      auto* o = linum::detail::out_ptr<std::int32_t>(out);
      const std::int64_t per = shape_size(p_.shape);
      for (std::int64_t i = 0; i < n; ++i) {
        const std::span<const T> x(src + m.operand_index[i] * core_size, core_size);
        const std::span<std::int32_t> dst(o + i * per, per);
        if (p_.kind == Kind::weighted_choice)
          detail::weighted_choice(key_at(m.key_index[i]), x, dst, p_.flag, p_.partitionable);
        else
          detail::gumbel_top_k(key_at(m.key_index[i]), x, core, p_.axis, p_.k, p_.flag, dst,
                               p_.partitionable);
      }
      return out;
    });
  }

  Params p_;
};

// ---- argument checks (JAX's messages) ----------------------------------------------------------

void check_key(const Array& key, const char* fn) {
  linum::detail::check_valid(key, fn);
  if (key.dtype() != uint32)
    throw TypeError(std::string(fn) + ": expected a PRNG key (uint32 data of shape (2,)), got " +
                    "dtype " + std::string(dtype_name(key.dtype())));
  if (key.ndim() == 0 || key.shape().back() != 2)
    throw TypeError(std::string(fn) + ": threefry2x32 key data must have trailing shape (2,), " +
                    "got shape " + shape_str(key.shape()));
  if (key.ndim() > 1)
    throw ValueError(std::string(fn) + " accepts a single key, but was given a key array of " +
                     "shape " + shape_str(key.shape()) + " != (). Use jax.vmap for batching.");
}

void check_shape(const Shape& shape, const char* fn) {
  for (std::int64_t d : shape)
    if (d < 0)
      throw ValueError(std::string(fn) + ": shape " + shape_str(shape) +
                       " has a negative dimension");
}

void check_float(DType d, const char* fn) {
  if (!is_floating(d))
    throw ValueError(std::string("dtype argument to `") + fn + "` must be a float dtype, got " +
                     std::string(dtype_name(d)));
}

bool check_mode(std::string_view mode, const char* fn) {
  if (mode == "low") return false;
  if (mode == "high") return true;
  throw ValueError(std::string(fn) + ": got mode='" + std::string(mode) +
                   "', expected 'high' or 'low'");
}

Params params(Kind kind, Shape shape, DType dtype) {
  Params p;
  p.kind = kind;
  p.shape = std::move(shape);
  p.dtype = dtype;
  p.partitionable = threefry_partitionable();
  return p;
}

Array sample(Params p, const Array& key, const char* fn) {
  check_key(key, fn);
  check_shape(p.shape, fn);
  return bind1(std::make_shared<const RandomPrim>(std::move(p)), {key});
}

int normalize(int axis, int ndim, const char* fn) {
  return linum::detail::normalize_axis(axis, ndim, fn);
}

}  // namespace

// ---- keys
// ----------------------------------------------------------------------------------------

Array PRNGKey(std::int64_t seed, SeedBits bits) {
  const KeyData k = detail::seed_key(seed, bits == SeedBits::x64);
  return array(std::vector<std::uint32_t>{k[0], k[1]});
}

Array key(std::int64_t seed, SeedBits bits) { return PRNGKey(seed, bits); }

Array key_data(const Array& keys) {
  linum::detail::check_valid(keys, "key_data");
  return keys;
}

Array wrap_key_data(const Array& data) {
  linum::detail::check_valid(data, "wrap_key_data");
  if (data.dtype() != uint32 || data.ndim() == 0 || data.shape().back() != 2)
    throw TypeError(
        "wrap_key_data: threefry2x32 key data must be uint32 with trailing shape "
        "(2,), got " +
        std::string(dtype_name(data.dtype())) + " of shape " + shape_str(data.shape()));
  return data;
}

Array split(const Array& key, std::int64_t num) { return random::split(key, Shape{num}); }

Array split(const Array& key, const Shape& shape) {
  return sample(params(Kind::split, shape, uint32), key, "split");
}

Array fold_in(const Array& key, const Array& data) {
  check_key(key, "fold_in");
  linum::detail::check_valid(data, "fold_in");
  if (data.ndim() != 0)
    throw TypeError("fold_in accepts a scalar, but was given an array of shape " +
                    shape_str(data.shape()) + " != (). Use jax.vmap for batching.");
  if (!is_integer(data.dtype()) && data.dtype() != bool_)
    throw TypeError(std::string("fold_in: data must be an integer, got dtype ") +
                    std::string(dtype_name(data.dtype())));
  Params p = params(Kind::fold_in, {}, uint32);
  p.operand_rank = 0;
  return bind1(std::make_shared<const RandomPrim>(std::move(p)), {key, astype(data, uint32)});
}

Array fold_in(const Array& key, std::int64_t data) {
  return fold_in(key, Array(static_cast<std::uint32_t>(data)));
}

// ---- samplers
// ------------------------------------------------------------------------------------

Array bits(const Array& key, const Shape& shape, DType dtype) {
  if (dtype != uint32)
    throw ValueError("dtype argument to `bits` must be an unsigned int dtype, got " +
                     std::string(dtype_name(dtype)) +
                     " (linum arrays have uint32 as their only unsigned dtype)");
  return sample(params(Kind::bits, shape, uint32), key, "bits");
}

Array uniform(const Array& key, const Shape& shape, DType dtype, double minval, double maxval) {
  check_float(dtype, "uniform");
  Params p = params(Kind::uniform, shape, dtype);
  p.a = minval;
  p.b = maxval;
  return sample(std::move(p), key, "uniform");
}

Array normal(const Array& key, const Shape& shape, DType dtype) {
  check_float(dtype, "normal");
  return sample(params(Kind::normal, shape, dtype), key, "normal");
}

Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape,
                       DType dtype) {
  check_float(dtype, "truncated_normal");
  Params p = params(Kind::truncated_normal, shape, dtype);
  p.a = lower;
  p.b = upper;
  return sample(std::move(p), key, "truncated_normal");
}

Array bernoulli(const Array& key, double prob, const Shape& shape, std::string_view mode,
                DType dtype) {
  if (!is_floating(dtype))
    throw TypeError("bernoulli probability `p` must have a floating dtype, got " +
                    std::string(dtype_name(dtype)));
  Params p = params(Kind::bernoulli, shape, dtype);
  p.a = prob;
  p.flag = check_mode(mode, "bernoulli");
  return sample(std::move(p), key, "bernoulli");
}

Array randint(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
              DType dtype) {
  if (!is_integer(dtype))
    throw TypeError("randint only accepts integer dtypes, got " + std::string(dtype_name(dtype)));
  Params p = params(Kind::randint, shape, dtype);
  p.lo = minval;
  p.hi = maxval;
  return sample(std::move(p), key, "randint");
}

Array gumbel(const Array& key, const Shape& shape, DType dtype, std::string_view mode) {
  check_float(dtype, "gumbel");
  if (mode != "low" && mode != "high")
    throw ValueError("Must provide valid mode for gumbel got: " + std::string(mode));
  Params p = params(Kind::gumbel, shape, dtype);
  p.flag = mode == "high";
  return sample(std::move(p), key, "gumbel");
}

Array categorical(const Array& key, const Array& logits, int axis,
                  const std::optional<Shape>& shape, bool replace, std::string_view mode) {
  check_key(key, "categorical");
  linum::detail::check_valid(logits, "categorical");
  const Array lg = is_floating(logits.dtype()) ? logits : astype(logits, float32);
  const int nd = lg.ndim();
  if (nd == 0) throw ValueError("categorical: logits must have at least one dimension");
  const int ax = normalize(axis, nd, "categorical");
  Shape batch = lg.shape();
  batch.erase(batch.begin() + ax);
  Shape out_shape = shape.value_or(batch);
  check_shape(out_shape, "categorical");
  if (out_shape.size() < batch.size() ||
      linum::detail::broadcast_shapes(out_shape, batch, "categorical") != out_shape)
    throw ValueError(
        "categorical parameter shapes must be broadcast-compatible with shape "
        "argument, and the result of broadcasting the shapes must equal the shape "
        "argument, but got result " +
        shape_str(linum::detail::broadcast_shapes(out_shape, batch, "categorical")) +
        " for shape argument " + shape_str(out_shape) + ".");
  const std::size_t n_prefix = out_shape.size() - batch.size();
  const Shape prefix(out_shape.begin(), out_shape.begin() + n_prefix);
  if (replace) {
    // Gumbel-max: argmax over `axis` of gumbel noise (prefix + logits-shaped) plus the logits.
    Shape noise_shape(out_shape.begin() + n_prefix, out_shape.end());
    noise_shape.insert(noise_shape.begin() + ax, lg.shape(ax));
    noise_shape.insert(noise_shape.begin(), prefix.begin(), prefix.end());
    Array x = lg;
    for (std::size_t i = 0; i < n_prefix; ++i) x = expand_dims(x, 0);
    Array g = gumbel(key, noise_shape, lg.dtype(), mode);
    return argmax(add(g, x), ax - nd);
  }
  // Gumbel top-k: k = prod(prefix) indices per distribution, placed along the leading axes.
  Params p = params(Kind::gumbel_top_k, concat(batch, {shape_size(prefix)}), lg.dtype());
  p.axis = ax;
  p.k = shape_size(prefix);
  p.flag = check_mode(mode, "categorical");
  p.operand_rank = nd;
  Array idx = bind1(std::make_shared<const RandomPrim>(std::move(p)), {key, lg});
  return reshape(moveaxis(idx, -1, 0), out_shape);
}

Array permutation(const Array& key, std::int64_t n) {
  if (n < 0) throw ValueError("permutation: n must be non-negative, got " + std::to_string(n));
  Params p = params(Kind::shuffle, {n}, int32);
  return sample(std::move(p), key, "permutation");
}

Array permutation(const Array& key, const Array& x, int axis, bool independent) {
  linum::detail::check_valid(x, "permutation");
  if (x.ndim() == 0) {
    if (!is_integer(x.dtype())) throw TypeError("x must be an integer or at least 1-dimensional");
    return permutation(key, x.concrete().item<std::int64_t>());
  }
  const int ax = normalize(axis, x.ndim(), "permutation");
  if (independent || x.ndim() == 1) {
    Params p = params(Kind::shuffle, x.shape(), int32);
    p.axis = ax;
    return take_along_axis(x, sample(std::move(p), key, "permutation"), ax);
  }
  return take(x, permutation(key, x.shape(ax)), ax);
}

Array choice(const Array& key, std::int64_t n, const Shape& shape, bool replace,
             const std::optional<Array>& p) {
  return choice(key, Array(static_cast<std::int32_t>(n)), shape, replace, p, 0);
}

Array choice(const Array& key, const Array& a, const Shape& shape, bool replace,
             const std::optional<Array>& p, int axis) {
  check_key(key, "choice");
  linum::detail::check_valid(a, "choice");
  check_shape(shape, "choice");
  const bool scalar = a.ndim() == 0;
  const int ax = scalar ? 0 : normalize(axis, a.ndim(), "choice");
  const std::int64_t n_inputs = scalar ? a.concrete().item<std::int64_t>() : a.shape(ax);
  const std::int64_t n_draws = shape_size(shape);
  if (n_draws == 0) return zeros(shape, a.dtype());
  if (n_inputs <= 0) throw ValueError("a must be greater than 0 unless no samples are taken");
  if (!replace && n_draws > n_inputs)
    throw ValueError("Cannot take a larger sample (size " + std::to_string(n_draws) +
                     ") than population (size " + std::to_string(n_inputs) +
                     ") when 'replace=False'");
  Shape result_shape = shape;
  if (!scalar) {
    result_shape = Shape(a.shape().begin(), a.shape().begin() + ax);
    result_shape.insert(result_shape.end(), shape.begin(), shape.end());
    result_shape.insert(result_shape.end(), a.shape().begin() + ax + 1, a.shape().end());
  }
  Array ind;
  if (!p) {
    if (replace) {
      ind = randint(key, shape, 0, n_inputs);
    } else {
      Array perm = scalar ? permutation(key, n_inputs) : permutation(key, a, ax);
      std::vector<Slice> slices(ax + 1);
      slices[ax] = Slice{0, n_draws};
      return reshape(slice(perm, slices), result_shape);
    }
  } else {
    linum::detail::check_valid(*p, "choice");
    if (p->shape() != Shape{n_inputs})
      throw ValueError(
          "p must be None or a 1D vector with the same size as a.shape[axis]. p has "
          "shape " +
          shape_str(p->shape()) + " and a.shape[axis] is " + std::to_string(n_inputs) + ".");
    const Array weights = is_floating(p->dtype()) ? *p : astype(*p, float32);
    Params prm = params(Kind::weighted_choice, shape, weights.dtype());
    prm.flag = replace;
    prm.operand_rank = 1;
    ind = bind1(std::make_shared<const RandomPrim>(std::move(prm)), {key, weights});
  }
  return reshape(scalar ? ind : take(a, ind, ax), result_shape);
}

}  // namespace linum::random
