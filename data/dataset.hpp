// linum::data::Dataset: an in-memory input pipeline over a pytree of Arrays whose leaves share a
// leading axis of n examples (a std::pair of images and labels, a std::map of named arrays, a
// Tree), in tf.data's words as the Flax examples use them:
//
//   auto ds = data::Dataset(std::pair{images, labels});
//   for (auto [x, y] : ds.shuffle(random::fold_in(key, epoch)).batch(128).prefetch(2)) ...
//
// shuffle(key): each pass over the examples is in the order jax.random.permutation(k, n), with
//   k = key for the first pass and fold_in(key, p) for pass p >= 1 (repeat), so an epoch's order
//   is reproducible from a PRNGKey and equal to JAX's. Call it first: linum shuffles examples.
// batch(b, drop_remainder): elements of b examples (the leaves gain a leading axis of b); the
//   last, smaller batch of a pass is kept unless drop_remainder. Without batch, elements are
//   single examples (the leading axis removed).
// repeat(count): count passes, or forever without a count. After batch, batches stay within a
//   pass; before it, they run on into the next pass (tf.data's two orders).
// map(fn): fn applied to each element as it is yielded (batches, when batched), e.g. a
//   normalisation or one_hot; it runs on the prefetch thread when there is one. Call it last.
// prefetch(k): the next k elements are prepared on one background thread while the loop works;
//   its exceptions reach the loop, and leaving the loop early stops and joins it.
//
// Iterating (range-for) starts a fresh iteration from the first pass each time; a Dataset is an
// immutable description, cheap to copy. The arrays must be concrete (not tracers).
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/pytree/key_path.hpp>
#include <linum/pytree/tree_util.hpp>

namespace linum::data {

// cardinality() of a Dataset that repeats forever (tf.data.INFINITE_CARDINALITY).
inline constexpr std::int64_t kInfiniteCardinality = -1;

namespace detail {

// One element of the pipeline, type-erased: its leaves and their structure.
struct Element {
  Arrays leaves;
  std::shared_ptr<const pytree::TreeDef> def;
};
using ElementFn = std::function<Element(Element)>;

struct Pipeline;

// One iteration over a pipeline: elements in order, produced by the caller or, with prefetch,
// by a background thread.
class Stream {
 public:
  explicit Stream(std::shared_ptr<const Pipeline> pipeline);
  ~Stream();                      // stops and joins the background thread
  std::optional<Element> next();  // nullopt at the end; rethrows the producer's exception
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The pipeline description behind Dataset<T>, independent of T (dataset.cpp).
class DatasetCore {
 public:
  DatasetCore(Arrays leaves, std::vector<std::string> paths, pytree::TreeDef def);
  DatasetCore shuffle(const Array& key) const;
  DatasetCore batch(std::int64_t batch_size, bool drop_remainder) const;
  DatasetCore repeat(std::optional<std::int64_t> count) const;
  DatasetCore prefetch(int buffer_size) const;
  DatasetCore map(ElementFn fn) const;
  std::int64_t num_examples() const;
  std::int64_t cardinality() const;
  std::unique_ptr<Stream> stream() const;

 private:
  explicit DatasetCore(std::shared_ptr<const Pipeline> p) : p_(std::move(p)) {}
  std::shared_ptr<const Pipeline> p_;
};

}  // namespace detail

template <class T>
class Dataset {
 public:
  // The examples: every leaf of `examples` has the same leading dimension (a ValueError naming
  // the leaves' key paths otherwise).
  explicit Dataset(const T& examples) : core_(make_core(examples)) {}

  Dataset shuffle(const Array& key) const { return Dataset(core_.shuffle(key)); }
  Dataset batch(std::int64_t batch_size, bool drop_remainder = false) const {
    return Dataset(core_.batch(batch_size, drop_remainder));
  }
  Dataset repeat(std::optional<std::int64_t> count = std::nullopt) const {
    return Dataset(core_.repeat(count));
  }
  Dataset prefetch(int buffer_size = 1) const { return Dataset(core_.prefetch(buffer_size)); }
  // A Dataset of fn's results: fn takes a const T& and returns a pytree of Arrays.
  template <class F>
  auto map(F fn) const {
    using U = std::remove_cvref_t<std::invoke_result_t<const F&, const T&>>;
    return Dataset<U>(core_.map([fn = std::move(fn)](detail::Element e) -> detail::Element {
      const T in = pytree::tree_unflatten<T>(*e.def, std::move(e.leaves));
      auto [leaves, def] = pytree::tree_flatten<Array>(fn(in));
      return {std::move(leaves), std::make_shared<const pytree::TreeDef>(std::move(def))};
    }));
  }

  // Examples in one pass.
  std::int64_t num_examples() const { return core_.num_examples(); }
  // Elements one iteration yields (batches when batched), or kInfiniteCardinality.
  std::int64_t cardinality() const { return core_.cardinality(); }

  class iterator {
   public:
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(std::unique_ptr<detail::Stream> s) : stream_(std::move(s)) { advance(); }
    const T& operator*() const { return *current_; }
    const T* operator->() const { return &*current_; }
    iterator& operator++() {
      advance();
      return *this;
    }
    void operator++(int) { advance(); }
    friend bool operator==(const iterator& it, std::default_sentinel_t) { return !it.current_; }

   private:
    void advance() {
      current_.reset();
      if (!stream_) return;
      std::optional<detail::Element> e = stream_->next();
      if (e)
        current_.emplace(pytree::tree_unflatten<T>(*e->def, std::move(e->leaves)));
      else
        stream_.reset();  // joins a prefetch thread as soon as the end is reached
    }
    std::unique_ptr<detail::Stream> stream_;
    std::optional<T> current_;
  };
  iterator begin() const { return iterator(core_.stream()); }
  std::default_sentinel_t end() const { return {}; }

 private:
  template <class U>
  friend class Dataset;
  explicit Dataset(detail::DatasetCore core) : core_(std::move(core)) {}

  static detail::DatasetCore make_core(const T& examples) {
    auto [with_path, def] = pytree::tree_flatten_with_path<Array>(examples);
    Arrays leaves;
    std::vector<std::string> paths;
    for (auto& [path, leaf] : with_path) {
      paths.push_back(pytree::keystr(path));
      leaves.push_back(std::move(leaf));
    }
    return detail::DatasetCore(std::move(leaves), std::move(paths), std::move(def));
  }

  detail::DatasetCore core_;
};

template <class T>
Dataset(const T&) -> Dataset<T>;

}  // namespace linum::data
