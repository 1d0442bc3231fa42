// The Dataset pipeline: a stream of example indices (shuffled per pass, repeated, grouped into
// batches), gathered row by row from the source arrays, mapped, and optionally produced ahead
// on a background thread.
//
// The background thread only gathers rows into fresh buffers, draws permutations and runs the
// user's map: linum's per-thread state (the transform stack, the allocator's free lists) is its
// own there, and buffers it allocates may be freed by the loop's thread. The threefry mode of the
// thread that starts the iteration is carried over, so prefetching never changes the order.
#include <linum/data/dataset.hpp>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include <linum/autodiff/random/random.hpp>

namespace linum::data::detail {

struct Pipeline {
  Arrays leaves;
  std::vector<std::string> paths;
  std::shared_ptr<const pytree::TreeDef> def;
  std::int64_t n = 0;
  std::optional<Array> key;
  std::int64_t batch_size = 0;  // 0: elements are single examples
  bool drop_remainder = false;
  bool repeated = false;
  std::int64_t passes = 1;  // -1: forever
  bool repeat_before_batch = false;
  std::vector<ElementFn> maps;
  int prefetch = 0;
};

namespace {

[[noreturn]] void fail(const char* fn, const std::string& what) {
  throw ValueError(std::string("Dataset::") + fn + ": " + what);
}

const char* bytes_of(const Array& a) {
  return static_cast<const char*>(static_cast<const linum::detail::ConcreteImpl&>(*a.impl()).data);
}

}  // namespace

// ---- Stream ----------------------------------------------------------------------------------

struct Stream::Impl {
  std::shared_ptr<const Pipeline> p;
  bool partitionable = true;  // the threefry mode of the thread that started the iteration

  // The index stream.
  std::int64_t pass = 0, pos = 0;
  bool loaded = false, yielded = false, finished = false;
  std::vector<std::int32_t> order;  // this pass's permutation (shuffled pipelines)

  // Prefetching: a bounded queue filled by `worker`; an item without element ends the stream.
  struct Item {
    std::optional<Element> element;
    std::exception_ptr error;
  };
  std::thread worker;
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<Item> queue;
  bool stop = false, ended = false;

  bool has_pass() const { return p->passes < 0 || pass < p->passes; }

  void load_pass() {
    if (loaded || !p->key) return;
    random::ThreefryPartitionableScope mode(partitionable);
    const Array k = pass == 0 ? *p->key : random::fold_in(*p->key, pass);
    const Array perm = random::permutation(k, p->n);
    order.assign(perm.data<std::int32_t>(), perm.data<std::int32_t>() + p->n);
    loaded = true;
  }

  // The example indices of the next element, or nullopt at the end.
  std::optional<std::vector<std::int64_t>> next_indices() {
    const auto want = static_cast<std::size_t>(p->batch_size ? p->batch_size : 1);
    const bool span = !p->batch_size || p->repeat_before_batch;  // may cross passes
    std::vector<std::int64_t> idx;
    while (!finished) {
      if (!has_pass() || p->n == 0) {
        finished = true;
        break;
      }
      load_pass();
      while (pos < p->n && idx.size() < want) {
        idx.push_back(p->key ? order[pos] : pos);
        ++pos;
      }
      if (idx.size() == want) {
        yielded = true;
        return idx;
      }
      // This pass is used up.
      const bool pass_yielded = yielded || (!idx.empty() && !p->drop_remainder);
      ++pass;
      pos = 0;
      loaded = yielded = false;
      if (span) continue;
      if (!idx.empty() && !p->drop_remainder) return idx;
      idx.clear();
      // Every pass has the same size: one that gave nothing means none will (drop_remainder
      // with batches larger than the data), so even repeat() forever ends here.
      if (!pass_yielded) finished = true;
    }
    if (!idx.empty() && !(p->batch_size && p->drop_remainder)) return idx;
    return std::nullopt;
  }

  Element gather(const std::vector<std::int64_t>& idx) const {
    Element e{{}, p->def};
    e.leaves.reserve(p->leaves.size());
    for (const Array& a : p->leaves) {
      Shape shape(a.shape().begin() + 1, a.shape().end());
      const std::size_t row = static_cast<std::size_t>(shape_size(shape)) * itemsize(a.dtype());
      if (p->batch_size) shape.insert(shape.begin(), static_cast<std::int64_t>(idx.size()));
      Array out = empty(shape, a.dtype());
      // A fresh buffer that nothing else references yet: filled in place.
      char* dst =
          static_cast<char*>(static_cast<const linum::detail::ConcreteImpl&>(*out.impl()).data);
      const char* src = bytes_of(a);
      for (std::size_t k = 0; k < idx.size(); ++k)
        std::memcpy(dst + k * row, src + static_cast<std::size_t>(idx[k]) * row, row);
      e.leaves.push_back(std::move(out));
    }
    return e;
  }

  std::optional<Element> produce() {
    auto idx = next_indices();
    if (!idx) return std::nullopt;
    Element e = gather(*idx);
    for (const ElementFn& fn : p->maps) e = fn(std::move(e));
    return e;
  }

  void run() {
    try {
      while (true) {
        std::optional<Element> e = produce();
        const bool last = !e;
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return stop || queue.size() < static_cast<std::size_t>(p->prefetch); });
        if (stop) return;
        queue.push_back({std::move(e), nullptr});
        cv.notify_all();
        if (last) return;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back({std::nullopt, std::current_exception()});
      cv.notify_all();
    }
  }
};

Stream::Stream(std::shared_ptr<const Pipeline> pipeline) : impl_(std::make_unique<Impl>()) {
  impl_->p = std::move(pipeline);
  impl_->partitionable = random::threefry_partitionable();
  if (impl_->p->prefetch > 0) impl_->worker = std::thread([impl = impl_.get()] { impl->run(); });
}

Stream::~Stream() {
  if (impl_->worker.joinable()) {
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      impl_->stop = true;
    }
    impl_->cv.notify_all();
    impl_->worker.join();
  }
}

std::optional<Element> Stream::next() {
  Impl& s = *impl_;
  if (!s.worker.joinable()) return s.produce();
  std::unique_lock<std::mutex> lock(s.mutex);
  if (s.ended) return std::nullopt;
  s.cv.wait(lock, [&] { return !s.queue.empty(); });
  Impl::Item item = std::move(s.queue.front());
  s.queue.pop_front();
  s.cv.notify_all();
  if (!item.element) s.ended = true;  // the end, or an error: the worker has stopped
  if (item.error) std::rethrow_exception(item.error);
  return std::move(item.element);
}

// ---- DatasetCore ------------------------------------------------------------------------------

DatasetCore::DatasetCore(Arrays leaves, std::vector<std::string> paths, pytree::TreeDef def) {
  if (leaves.empty()) fail("Dataset", "the examples have no arrays (an empty pytree)");
  auto p = std::make_shared<Pipeline>();
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const Array& a = leaves[i];
    const std::string where = paths[i].empty() ? "the array" : "the array at " + paths[i];
    if (!a.valid()) fail("Dataset", where + " is an empty handle");
    if (a.is_tracer())
      fail("Dataset", where +
                          " is a tracer; a Dataset holds concrete arrays (build it outside "
                          "jit, grad and vmap)");
    if (a.ndim() == 0)
      fail("Dataset", where + " is a scalar; every array needs a leading axis of examples");
    if (i > 0 && a.shape(0) != p->n)
      fail("Dataset", "the arrays must share their leading axis (examples): " +
                          (paths[0].empty() ? "the first" : paths[0]) + " has " +
                          std::to_string(p->n) + ", " + (paths[i].empty() ? "another" : paths[i]) +
                          " has " + std::to_string(a.shape(0)) + " (shapes " +
                          shape_str(leaves[0].shape()) + " and " + shape_str(a.shape()) + ")");
    p->n = a.shape(0);
  }
  p->leaves = std::move(leaves);
  p->paths = std::move(paths);
  p->def = std::make_shared<const pytree::TreeDef>(std::move(def));
  p_ = std::move(p);
}

DatasetCore DatasetCore::shuffle(const Array& key) const {
  if (p_->key) fail("shuffle", "the dataset is already shuffled");
  if (p_->batch_size)
    fail("shuffle", "call shuffle before batch: linum shuffles examples, not batches");
  if (p_->repeated) fail("shuffle", "call shuffle before repeat: each pass is shuffled anew");
  if (!p_->maps.empty()) fail("shuffle", "call shuffle before map");
  if (!key.valid() || key.is_tracer() || key.dtype() != uint32 || key.shape() != Shape{2})
    fail("shuffle",
         "the key must be a concrete PRNGKey (uint32 of shape (2,)), got " +
             (key.valid() ? std::string(key.is_tracer() ? "a tracer " : "") +
                                std::string(dtype_name(key.dtype())) + shape_str(key.shape())
                          : std::string("an empty handle")));
  if (p_->n > std::numeric_limits<std::int32_t>::max())
    fail("shuffle",
         "permutations index with int32: at most 2^31 - 1 examples, got " + std::to_string(p_->n));
  auto p = std::make_shared<Pipeline>(*p_);
  p->key = key;
  return DatasetCore(std::move(p));
}

DatasetCore DatasetCore::batch(std::int64_t batch_size, bool drop_remainder) const {
  if (batch_size < 1) fail("batch", "batch_size must be >= 1, got " + std::to_string(batch_size));
  if (p_->batch_size)
    fail("batch", "the dataset is already batched (batches of batches are not supported)");
  if (!p_->maps.empty()) fail("batch", "call batch before map (map works on the yielded batches)");
  auto p = std::make_shared<Pipeline>(*p_);
  p->batch_size = batch_size;
  p->drop_remainder = drop_remainder;
  return DatasetCore(std::move(p));
}

DatasetCore DatasetCore::repeat(std::optional<std::int64_t> count) const {
  if (count && *count < 0) fail("repeat", "count must be >= 0, got " + std::to_string(*count));
  if (p_->repeated) fail("repeat", "the dataset already repeats");
  if (!p_->maps.empty()) fail("repeat", "call repeat before map");
  auto p = std::make_shared<Pipeline>(*p_);
  p->repeated = true;
  p->passes = count ? *count : -1;
  p->repeat_before_batch = p->batch_size == 0;
  return DatasetCore(std::move(p));
}

DatasetCore DatasetCore::prefetch(int buffer_size) const {
  if (buffer_size < 0)
    fail("prefetch", "buffer_size must be >= 0, got " + std::to_string(buffer_size));
  auto p = std::make_shared<Pipeline>(*p_);
  p->prefetch = buffer_size;
  return DatasetCore(std::move(p));
}

DatasetCore DatasetCore::map(ElementFn fn) const {
  auto p = std::make_shared<Pipeline>(*p_);
  p->maps.push_back(std::move(fn));
  return DatasetCore(std::move(p));
}

std::int64_t DatasetCore::num_examples() const { return p_->n; }

std::int64_t DatasetCore::cardinality() const {
  const Pipeline& p = *p_;
  const std::int64_t b = p.batch_size;
  auto batches = [&](std::int64_t examples) {
    return b == 0 ? examples : examples / b + (!p.drop_remainder && examples % b != 0);
  };
  // A count past int64 (repeat(huge)) saturates.
  auto times = [](std::int64_t a, std::int64_t c) {
    std::int64_t r;
    return __builtin_mul_overflow(a, c, &r) ? std::numeric_limits<std::int64_t>::max() : r;
  };
  if (!b || p.repeat_before_batch) {  // the examples of every pass form one stream
    if (p.passes < 0) return p.n == 0 ? 0 : kInfiniteCardinality;
    return batches(times(p.n, p.passes));
  }
  const std::int64_t per_pass = batches(p.n);
  if (p.passes < 0) return per_pass == 0 ? 0 : kInfiniteCardinality;
  return times(per_pass, p.passes);
}

std::unique_ptr<Stream> DatasetCore::stream() const { return std::make_unique<Stream>(p_); }

}  // namespace linum::data::detail
