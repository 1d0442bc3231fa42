// The Dataset pipeline: shuffle orders equal jax.random.permutation's (via lr::permutation,
// which matches JAX bit for bit), batch shapes and remainders, repeat in both orders, map,
// prefetch (same elements, exceptions reach the loop, early exits join the thread), and errors.
#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>
#include <utility>

#include "data_testing.hpp"

namespace test_dataset {

namespace data = linum::data;
namespace lr = linum::random;
using namespace data_test;
using Pair = std::pair<Array, Array>;

namespace {

// n examples: x[i] = (i, 100 + i) as float32 rows, y[i] = i as int32.
Pair examples(std::int64_t n) {
  Vec x;
  for (std::int64_t i = 0; i < n; ++i) {
    x.push_back(static_cast<double>(i));
    x.push_back(100.0 + static_cast<double>(i));
  }
  return {linum::astype(linum::array(x, {n, 2}), linum::float32), linum::arange(n, linum::int32)};
}

// The labels of every element, one vector per element; and checks that each x row matches it.
template <class D>
std::vector<Vec> labels_of(const D& ds) {
  std::vector<Vec> out;
  for (const auto& [x, y] : ds) {
    const Vec ys = values(y), xs = values(x);
    REQUIRE(xs.size() == 2 * ys.size());
    for (std::size_t i = 0; i < ys.size(); ++i) {
      CHECK(xs[2 * i] == ys[i]);
      CHECK(xs[2 * i + 1] == 100 + ys[i]);
    }
    out.push_back(ys);
  }
  return out;
}

std::vector<std::size_t> sizes(const std::vector<Vec>& elements) {
  std::vector<std::size_t> s;
  for (const Vec& e : elements) s.push_back(e.size());
  return s;
}

Vec flat(const std::vector<Vec>& elements) {
  Vec v;
  for (const Vec& e : elements) v.insert(v.end(), e.begin(), e.end());
  return v;
}

}  // namespace

TEST_CASE("shuffle(key): pass 0 is lr::permutation(key, n), pass p uses fold_in(key, p)") {
  const Array key = lr::PRNGKey(42);
  auto ds = data::Dataset(examples(10)).shuffle(key).repeat(3);
  CHECK(ds.cardinality() == 30);
  const std::vector<Vec> got = labels_of(ds);
  REQUIRE(got.size() == 30);
  for (const Vec& e : got) CHECK(e.size() == 1);  // unbatched: one example per element
  Vec want = values(lr::permutation(key, 10));
  for (int p = 1; p < 3; ++p) {
    const Vec v = values(lr::permutation(lr::fold_in(key, p), 10));
    want.insert(want.end(), v.begin(), v.end());
  }
  CHECK(flat(got) == want);
  // Every pass is a permutation (each example once), and iterating again repeats the order.
  Vec pass0(want.begin(), want.begin() + 10);
  std::sort(pass0.begin(), pass0.end());
  CHECK(pass0 == values(linum::arange(10, linum::int32)));
  CHECK(flat(labels_of(ds)) == want);
  // Another key, another order; no shuffle, the data's order.
  CHECK(flat(labels_of(data::Dataset(examples(10)).shuffle(lr::PRNGKey(43)))) !=
        Vec(want.begin(), want.begin() + 10));
  CHECK(flat(labels_of(data::Dataset(examples(4)))) == Vec{0, 1, 2, 3});
}

TEST_CASE("batch: leading axis of the batch size, the remainder kept or dropped") {
  auto ds = data::Dataset(examples(10));
  auto b = ds.batch(4);
  CHECK(b.cardinality() == 3);
  CHECK(b.num_examples() == 10);
  std::vector<linum::Shape> shapes;
  for (const auto& [x, y] : b) {
    shapes.push_back(x.shape());
    CHECK(y.shape() == linum::Shape{x.shape(0)});
    CHECK(x.dtype() == linum::float32);
    CHECK(y.dtype() == linum::int32);
  }
  CHECK(shapes == std::vector<linum::Shape>{{4, 2}, {4, 2}, {2, 2}});
  CHECK(labels_of(b) == std::vector<Vec>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}});
  CHECK(ds.batch(4, true).cardinality() == 2);
  CHECK(sizes(labels_of(ds.batch(4, true))) == std::vector<std::size_t>{4, 4});
  CHECK(sizes(labels_of(ds.batch(5))) == std::vector<std::size_t>{5, 5});
  CHECK(sizes(labels_of(ds.batch(11, true))).empty());
  // Shuffled batches cover the shuffled order in turn.
  const Array key = lr::PRNGKey(7);
  CHECK(flat(labels_of(ds.shuffle(key).batch(3))) == values(lr::permutation(key, 10)));
  // Unbatched, an example loses the leading axis: scalar labels, rows of 2.
  for (const auto& [x, y] : ds) {
    CHECK(x.shape() == linum::Shape{2});
    CHECK(y.shape() == linum::Shape{});
  }
}

TEST_CASE("repeat: after batch each pass is batched alone; before it batches run on") {
  auto ds = data::Dataset(examples(10));
  CHECK(ds.batch(4).repeat(2).cardinality() == 6);
  CHECK(sizes(labels_of(ds.batch(4).repeat(2))) == std::vector<std::size_t>{4, 4, 2, 4, 4, 2});
  CHECK(ds.repeat(2).batch(4).cardinality() == 5);
  CHECK(labels_of(ds.repeat(2).batch(4))[2] == Vec{8, 9, 0, 1});
  CHECK(sizes(labels_of(ds.repeat(2).batch(4))) == std::vector<std::size_t>{4, 4, 4, 4, 4});
  CHECK(ds.batch(3, true).repeat(2).cardinality() == 6);
  CHECK(sizes(labels_of(ds.batch(3, true).repeat(2))) == std::vector<std::size_t>(6, 3));
  CHECK(ds.repeat(3).batch(4, true).cardinality() == 7);
  CHECK(ds.repeat(0).cardinality() == 0);
  CHECK(labels_of(ds.repeat(0)).empty());
  // Forever: an infinite cardinality, and the loop decides when to stop.
  auto forever = ds.shuffle(lr::PRNGKey(1)).batch(4).repeat();
  CHECK(forever.cardinality() == data::kInfiniteCardinality);
  int seen = 0;
  for (const auto& [x, y] : forever) {
    CHECK(x.shape(0) > 0);
    if (++seen == 50) break;
  }
  CHECK(seen == 50);
  // A pass that yields nothing ends even repeat() forever instead of spinning.
  CHECK(ds.batch(20, true).repeat().cardinality() == 0);
  CHECK(labels_of(ds.batch(20, true).repeat()).empty());
}

TEST_CASE("Dataset over named arrays and Trees; map transforms the yielded elements") {
  std::map<std::string, Array> named = {
      {"image", linum::reshape(linum::arange(12, linum::float32), {6, 2})},
      {"label", linum::arange(6, linum::int32) * 10}};
  auto ds = data::Dataset(named).batch(4);
  std::vector<Vec> images;
  for (const auto& batch : ds) {
    CHECK(batch.size() == 2);
    images.push_back(values(batch.at("image")));
    CHECK(values(batch.at("label")).front() == 10 * values(batch.at("image")).front() / 2);
  }
  CHECK(images == std::vector<Vec>{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11}});
  // map: the images scaled and the labels one-hot, into another pytree type.
  auto mapped = ds.map([](const std::map<std::string, Array>& b) {
    return std::make_pair(b.at("image") / 2.0f, linum::one_hot(b.at("label") / 10, 6));
  });
  std::vector<Pair> out;
  for (const auto& e : mapped) out.push_back(e);
  REQUIRE(out.size() == 2);
  CHECK(values(out[1].first) == Vec{4, 4.5, 5, 5.5});
  CHECK(out[1].second.shape() == linum::Shape{2, 6});
  CHECK(values(out[1].second) == Vec{0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1});
  // A dynamic Tree works the same way.
  linum::Tree t{{"a", linum::arange(3, linum::float32)}, {"b", linum::zeros({3, 5})}};
  int n = 0;
  for (const linum::Tree& e : data::Dataset(t).batch(2)) {
    CHECK(e["b"].leaf().shape(1) == 5);
    ++n;
  }
  CHECK(n == 2);
}

TEST_CASE("prefetch: the same elements as without it, from a background thread") {
  const Array key = lr::PRNGKey(3);
  auto base = data::Dataset(examples(37)).shuffle(key).batch(5).repeat(3);
  const std::vector<Vec> want = labels_of(base);
  CHECK(labels_of(base.prefetch(1)) == want);
  CHECK(labels_of(base.prefetch(4)) == want);
  CHECK(labels_of(base.prefetch(0)) == want);
  // The threefry mode of the thread that starts the loop decides the order, also when the
  // permutations are drawn on the prefetch thread.
  {
    lr::ThreefryPartitionableScope legacy(!lr::threefry_partitionable());
    const std::vector<Vec> other = labels_of(base);
    CHECK(other != want);
    CHECK(labels_of(base.prefetch(2)) == other);
    const Vec all = flat(other);
    CHECK(all.size() == 111);
    CHECK(Vec(all.begin(), all.begin() + 37) == values(lr::permutation(key, 37)));
  }
  // Training-like use: grads on the loop's thread while the next batches are gathered.
  auto loss = [](const Array& w, const Array& x) {
    return linum::sum(linum::matmul(x, w) * linum::matmul(x, w));
  };
  const Array w = linum::ones({2, 1});
  Vec plain, ahead;
  for (const auto& [x, y] : base)
    plain.push_back(linum::sum(linum::grad(loss)(w, x)).item<double>());
  for (const auto& [x, y] : base.prefetch(3))
    ahead.push_back(linum::sum(linum::grad(loss)(w, x)).item<double>());
  CHECK(plain == ahead);
}

TEST_CASE("prefetch: an exception in the pipeline reaches the loop; early exits stop the thread") {
  std::atomic<int> calls{0};
  auto failing = data::Dataset(examples(20)).batch(2).map([&calls](const Pair& b) {
    if (++calls == 3) throw linum::ValueError("bad batch 3");
    return b;
  });
  for (int depth : {0, 1, 4}) {
    CAPTURE(depth);
    calls = 0;
    int got = 0;
    check_error<linum::ValueError>(
        [&] {
          for (const auto& [x, y] : failing.prefetch(depth)) {
            (void)x;
            ++got;
          }
        },
        {"bad batch 3"});
    CHECK(got == 2);  // the two batches before the failing one arrived, in order
  }
  // Leaving a forever-repeating, prefetching loop early joins its thread; so does dropping an
  // iterator that was never advanced, and one whose producer is blocked on a full queue.
  auto forever = data::Dataset(examples(100)).shuffle(lr::PRNGKey(0)).batch(8).repeat().prefetch(4);
  for (int trial = 1; trial <= 20; ++trial) {
    int n = 0;
    for (const auto& [x, y] : forever) {
      (void)y;
      if (++n == trial) break;
    }
  }
  { auto it = forever.begin(); }
  {
    auto it = forever.begin();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the queue fill
    CHECK(it != forever.end());
  }
}

TEST_CASE("Dataset: bad arrays and misordered calls are ValueErrors saying what to do") {
  using linum::ValueError;
  std::map<std::string, Array> ragged = {{"a", linum::zeros({3})}, {"b", linum::zeros({4, 2})}};
  check_error<ValueError>([&] { data::Dataset d(ragged); },
                          {"share their leading axis", "['a'] has 3", "['b'] has 4", "(4, 2)"});
  check_error<ValueError>([] { data::Dataset d(std::make_pair(linum::zeros({3}), Array(1.0f))); },
                          {"[1] is a scalar"});
  check_error<ValueError>([] { data::Dataset d(std::map<std::string, Array>{}); }, {"no arrays"});
  linum::grad([](const Array& x) {
    check_error<ValueError>([&] { data::Dataset d(x); }, {"tracer"});
    return linum::sum(x);
  })(linum::ones({3}));
  auto ds = data::Dataset(examples(4));
  const Array key = lr::PRNGKey(0);
  check_error<ValueError>([&] { ds.batch(2).shuffle(key); }, {"Dataset::shuffle", "before batch"});
  check_error<ValueError>([&] { ds.repeat(2).shuffle(key); }, {"before repeat"});
  check_error<ValueError>([&] { ds.shuffle(key).shuffle(key); }, {"already shuffled"});
  check_error<ValueError>([&] { ds.shuffle(linum::zeros({2})); }, {"PRNGKey", "float32(2,)"});
  check_error<ValueError>([&] { ds.batch(0); },
                          {"Dataset::batch", "batch_size must be >= 1, got 0"});
  check_error<ValueError>([&] { ds.batch(2).batch(2); }, {"already batched"});
  check_error<ValueError>([&] { ds.map([](const Pair& p) { return p; }).batch(2); },
                          {"call batch before map"});
  check_error<ValueError>([&] { ds.repeat(-1); }, {"Dataset::repeat", "count must be >= 0"});
  check_error<ValueError>([&] { ds.repeat(1).repeat(1); }, {"already repeats"});
  check_error<ValueError>([&] { ds.prefetch(-1); }, {"Dataset::prefetch", "buffer_size"});
}

}  // namespace test_dataset
