// The two primitive shapes behind linum::random, each templated on a per-distribution sampler
// (random.cpp): KeyPrim (key -> sample) and KeyOperandPrim (key, operand -> one draw per position
// of the broadcast key/operand grid). Keys may carry leading batch dims (..., 2); the batching
// rule moves the batch axis to the front and binds the same primitive again, so vmap over keys
// is one kernel call over all keys. Internal to the random library.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <type_traits>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/primitive.hpp>
#include <linum/autodiff/random/draw_format.hpp>
#include <linum/autodiff/random/threefry.hpp>

namespace linum::random::detail {

// The keys of a (lead..., 2) uint32 array, by flat lead index.
class Keys {
 public:
  explicit Keys(const Array& keys) : data_(linum::detail::in_ptr<std::uint32_t>(keys)) {}
  KeyData operator[](std::int64_t i) const { return {data_[2 * i], data_[2 * i + 1]}; }

 private:
  const std::uint32_t* data_;
};

// The batch dims of a key array's shape (lead..., 2).
inline Shape key_lead(const Shape& keys) { return Shape(keys.begin(), keys.end() - 1); }

// The static parameters every sampler has: the per-key sample shape (for split: the shape of the
// key grid), the dtype, and the threefry mode, captured when the op is created so that a
// transform replaying the primitive draws the same numbers.
struct SamplerBase {
  Shape shape;
  DType dtype = float32;
  bool partitionable = threefry_partitionable();

  // Output of one key (or one grid position) is `shape` in `dtype`; samplers may hide these.
  Shape out_shape(const Shape& lead) const;
  DType out_dtype() const { return dtype; }
};

// One call draw(key, out) per key, each filling its row-major block of a (lead..., shape) array.
template <class T, class Draw>
Array per_key(const Shape& lead, const Shape& shape, DType out_dtype, Keys keys, Draw draw) {
  Shape full = lead;
  full.insert(full.end(), shape.begin(), shape.end());
  Array out = empty(full, out_dtype);
  T* o = linum::detail::out_ptr<T>(out);
  const std::int64_t n = shape_size(shape), nkeys = shape_size(lead);
  for (std::int64_t i = 0; i < nkeys; ++i) draw(keys[i], std::span<T>(o + i * n, n));
  return out;
}

// Runs draw(std::span<T>) on the elements of out, rounding them to S once at the end when S is a
// 2-byte format.
template <class T, class S, class Draw>
void draw_rounded(std::span<S> out, Draw&& draw) {
  if constexpr (std::is_same_v<T, S>) {
    draw(out);
  } else {
    std::vector<T> v(out.size());
    draw(std::span<T>(v));
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = S(v[i]);
  }
}

// per_key for a float sampler: draw is a generic lambda [&]<class T, class S>(KeyData,
// std::span<T>) instantiated for the sampler's dtype (see dispatch_draw).
template <class Draw>
Array per_key_float(const SamplerBase& s, const char* name, const Shape& lead, Keys keys,
                    Draw draw) {
  return dispatch_draw(s.dtype, name, [&]<class T, class S>() {
    return per_key<S>(lead, s.shape, s.dtype, keys, [&](KeyData k, std::span<S> out) {
      draw_rounded<T>(out, [&](std::span<T> v) { draw.template operator()<T, S>(k, v); });
    });
  });
}

// The elements of a float array as T: a view when it holds T, else a copy (2-byte values widen
// exactly).
template <class T, class S>
std::span<const T> float_view(const Array& a, std::vector<T>& copy) {
  const S* src = linum::detail::in_ptr<S>(a);
  if constexpr (std::is_same_v<T, S>) {
    return {src, static_cast<std::size_t>(a.size())};
  } else {
    copy.resize(a.size());
    for (std::size_t i = 0; i < copy.size(); ++i) copy[i] = static_cast<T>(src[i]);
    return copy;
  }
}

void print_sampler_params(std::ostream& os, const SamplerBase& s);

// What both primitives share: the sampler, its name, no derivative and the params' printing.
template <class Sampler>
class SamplerPrim : public Primitive {
 public:
  explicit SamplerPrim(Sampler s) : s_(std::move(s)) {}
  const char* name() const override { return Sampler::name; }
  bool differentiable() const override { return false; }
  void print_params(std::ostream& os) const override { print_sampler_params(os, s_); }

 protected:
  Sampler s_;
};

// A primitive taking one key array (lead..., 2). Sampler: a SamplerBase with
//   static constexpr const char* name;  Array eval(const Shape& lead, Keys keys) const;
template <class Sampler>
class KeyPrim final : public SamplerPrim<Sampler> {
  using SamplerPrim<Sampler>::s_;

 public:
  using SamplerPrim<Sampler>::SamplerPrim;

  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    const Shape lead = key_lead(in[0].shape);
    return {{s_.out_shape(lead), s_.out_dtype()}};
  }

  Arrays eval(std::span<const Array> in) const override {
    const Shape lead = key_lead(in[0].shape());
    return {s_.eval(lead, Keys(in[0]))};
  }

  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const Array keys = linum::detail::move_bdim(in[0], bdims[0], 0, 0);
    return {{bind1(std::make_shared<const KeyPrim>(s_), {keys})}, {0}};
  }
};

// Leading-dims broadcast of the key grid against the second operand's grid: for each output grid
// position, the flat key index and operand index (numpy broadcasting rules).
struct GridMap {
  Shape grid;
  std::vector<std::int64_t> key_index, operand_index;
};
GridMap broadcast_grids(const Shape& key_lead, const Shape& operand_lead, const char* op);

// For weighted_choice and gumbel_top_k: one call draw.template operator()<T, S>(key, x, dst) per
// grid position, x the position's float operand core (as T), dst its int32 block of shape
// s.shape.
template <class Draw>
Array per_position_int32(const SamplerBase& s, const char* name, const GridMap& m, Keys keys,
                         const Array& operand, std::int64_t core_size, Draw draw) {
  return dispatch_draw(operand.dtype(), name, [&]<class T, class S>() {
    std::vector<T> copy;
    const T* src = float_view<T, S>(operand, copy).data();
    Array out = empty(s.out_shape(m.grid), int32);
    auto* o = linum::detail::out_ptr<std::int32_t>(out);
    const std::int64_t per = shape_size(s.shape), n = shape_size(m.grid);
    for (std::int64_t i = 0; i < n; ++i)
      draw.template operator()<T, S>(
          keys[m.key_index[i]], std::span<const T>(src + m.operand_index[i] * core_size, core_size),
          std::span<std::int32_t>(o + i * per, per));
    return out;
  });
}

// A primitive taking a key array (Kb..., 2) and an operand (Ob..., core...) whose last
// Sampler::operand_rank dims are one draw's input; the leading grids broadcast. Sampler: a
// SamplerBase with static constexpr const char* name; int operand_rank;
//   Array eval(const GridMap& m, Keys keys, const Array& operand, const Shape& core) const;
// A sampler that also has `Array operand_partial(const Array& operand, const Array& out) const`
// (d out / d operand per element, as gamma's implicit reparameterization) is differentiable in
// its operand.
template <class Sampler>
class KeyOperandPrim final : public SamplerPrim<Sampler> {
  using SamplerPrim<Sampler>::s_;
  static constexpr bool kDiff = requires(const Sampler& s, const Array& a) {
    { s.operand_partial(a, a) } -> std::convertible_to<Array>;
  };

 public:
  using SamplerPrim<Sampler>::SamplerPrim;

  bool differentiable() const override { return kDiff; }

  Arrays jvp(std::span<const Array> primals, std::span<const Array> tangents,
             std::span<const Array> outs) const override {
    if constexpr (kDiff) {
      if (!tangents[1].valid()) return {Array()};
      return {multiply(tangents[1], s_.operand_partial(primals[1], outs[0]))};
    } else {
      return Primitive::jvp(primals, tangents, outs);
    }
  }

  Arrays vjp(std::span<const Array> primals, std::span<const Array> cts,
             std::span<const Array> outs) const override {
    if constexpr (kDiff) {
      if (!cts[0].valid()) return {Array(), Array()};
      const Array g = multiply(cts[0], s_.operand_partial(primals[1], outs[0]));
      return {Array(), linum::detail::sum_to_shape(g, primals[1].shape())};
    } else {
      return Primitive::vjp(primals, cts, outs);
    }
  }

  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    const Shape lead = key_lead(in[0].shape);
    const Shape& os = in[1].shape;
    const Shape grid = linum::detail::broadcast_shapes(
        lead, Shape(os.begin(), os.end() - s_.operand_rank), this->name());
    return {{s_.out_shape(grid), s_.out_dtype()}};
  }

  Arrays eval(std::span<const Array> in) const override {
    const Shape lead = key_lead(in[0].shape());
    const Shape& os = in[1].shape();
    const Shape op_lead(os.begin(), os.end() - s_.operand_rank);
    const Shape core(os.end() - s_.operand_rank, os.end());
    return {s_.eval(broadcast_grids(lead, op_lead, this->name()), Keys(in[0]), in[1], core)};
  }

  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    // Key (Kb..., 2) and operand (Ob..., core...): give both a leading batch axis (size 1 when
    // unbatched) and the same grid rank, so that the kernel's grid broadcasting lines them up.
    const int key_rank = in[0].ndim() - 1 - (bdims[0] >= 0);
    const int op_rank = in[1].ndim() - s_.operand_rank - (bdims[1] >= 0);
    const int grid_rank = std::max(key_rank, op_rank);
    auto lift = [&](const Array& x, int bdim, int rank) {
      Array y = bdim >= 0 ? moveaxis(x, bdim, 0) : expand_dims(x, 0);
      Shape s = y.shape();
      s.insert(s.begin() + 1, grid_rank - rank, 1);
      return reshape(y, s);
    };
    auto self = std::make_shared<const KeyOperandPrim>(s_);
    return {{bind1(self, {lift(in[0], bdims[0], key_rank), lift(in[1], bdims[1], op_rank)})}, {0}};
  }
};

}  // namespace linum::random::detail
