// Linen transforms over modules (spec §3.3/§3.4 L cases): transformed module types and the
// direct transforms, against the untransformed model and Flax's printed numbers.
#include <doctest/doctest.h>

#include <optional>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

using namespace linum;
using lift::Filter;

namespace {
// x[i] along the first axis.
Array row(const Array& x, std::int64_t i) {
  return squeeze(take(x, Array(static_cast<int>(i)).reshape({1}), 0), 0);
}
bool allclose(const Array& a, const Array& b, float tol = 1e-5f) {
  return a.shape() == b.shape() && all(less_equal(abs(a - b), tol + tol * abs(b))).item<bool>();
}
void check_values(const Array& a, const std::vector<float>& want, float tol = 2e-6f) {
  REQUIRE(a.size() == static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i)
    CHECK(a.data<float>()[i] == doctest::Approx(want[i]).epsilon(tol));
}

struct MLP : nn::Module<MLP> {
  Array call(const Array& x) {
    Array h = nn::relu(nn::Dense(3).named("layers_0")(x));
    return nn::Dense(4).named("layers_1")(h);
  }
};
}  // namespace

TEST_CASE("nn::vmap with shared params equals the model stacked over the batch (L19)") {
  Array x2 = random::uniform(random::key(2), {5, 4, 4});
  Tree params = MLP().init(random::key(1), row(x2, 0));
  auto vmlp = nn::vmap(
      MLP(), {.variable_axes = {{"params", std::nullopt}}, .split_rngs = {{"params", false}}});
  Array y = vmlp.apply(params, x2);
  for (std::int64_t i = 0; i < 5; ++i)
    CHECK(allclose(row(y, i), MLP().apply(params, row(x2, i)), 1e-6f));
  // Initialised through the transform, the shared params have the plain shapes.
  Tree v = vmlp.init(random::key(1), x2);
  CHECK(v["params"]["layers_0"]["kernel"].leaf().shape() == Shape{4, 3});
}

TEST_CASE("nn::vmap(nn::Dense) keys equal the Flax RNG guide (L60 shared, L62 split)") {
  Array x = ones({3, 2});
  Tree shared = nn::vmap(nn::Dense(2), {.variable_axes = {{"params", std::nullopt}},
                                        .split_rngs = {{"params", false}}})
                    .init(random::key(0), x);
  check_values(shared["params"]["kernel"].leaf(),
               {0.058418754f, -1.166304f, -1.2072171f, 0.54235715f});
  Tree split =
      nn::vmap(nn::Dense(2), {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}})
          .init(random::key(0), x);
  CHECK(split["params"]["kernel"].leaf().shape() == Shape{3, 2, 2});
  check_values(split["params"]["kernel"].leaf(),
               {0.76119637f, 1.0844675f, -0.54567879f, -0.49972105f, -0.23197685f, -0.33653489f,
                0.18674162f, -0.7139582f, 0.21411802f, 0.88457131f, 0.36252701f, 0.9802478f});
  CHECK(split["params"]["bias"].leaf().shape() == Shape{3, 2});
}

namespace {
struct ResidualMLPBlock : nn::Module<ResidualMLPBlock> {
  std::pair<Array, Tree> call(const Array& x) {
    Array h = nn::relu(nn::Dense(2)(x));
    return {x + h, Tree()};
  }
};
nn::Scan<ResidualMLPBlock> scan_block(bool split) {
  return nn::scan(
      ResidualMLPBlock(),
      {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", split}}, .length = 3});
}
}  // namespace

TEST_CASE("nn::scan replays Flax's two traces: kernels drawn with counter 3 (L66, L67)") {
  Array x = ones({3, 2});
  // The transformed module is the root, as in the guide: nn.scan(...)().init(key(0), x, None).
  Tree v = scan_block(true).init(random::key(0), x);
  const Tree& k = v["params"]["Dense_0"]["kernel"];
  CHECK(k.leaf().shape() == Shape{3, 2, 2});
  check_values(k.leaf(),
               {-0.47237748f, 0.9342351f, -0.051814452f, -0.54192263f, 0.45121637f, 1.3581365f,
                0.0040389909f, 0.51114082f, 0.032164656f, -0.17287178f, -0.8439222f, 0.36585602f});
  Tree v2 = scan_block(false).init(random::key(0), x);
  const Array k2 = v2["params"]["Dense_0"]["kernel"].leaf();
  for (int t = 0; t < 3; ++t)
    check_values(row(k2, t), {0.49437523f, -1.5521431f, -1.0780724f, 0.87564963f});
}

namespace {
struct Foo : nn::Module<Foo> {
  std::pair<Tree, Array> call(const Tree& c, const Array& x) { return {c, nn::Dense(4)(x)}; }
};
struct Outer : nn::Module<Outer> {
  Array call(const Array& x) {
    auto s = nn::scan(Foo(), {.variable_broadcast = "params",
                              .split_rngs = {{"params", false}},
                              .in_axes = {1},
                              .out_axes = -1});
    return s(Tree(), x).second;
  }
};
}  // namespace

TEST_CASE("nn::scan names the transformed class ScanFoo; in_axes=1, out_axes=-1 (L23)") {
  Array x = random::normal(random::PRNGKey(1), {1, 2, 3});
  auto [y, v] = Outer().init_with_output(random::key(0), x);
  CHECK(y.shape() == Shape{1, 4, 2});
  CHECK(v["params"]["ScanFoo_0"]["Dense_0"]["kernel"].leaf().shape() == Shape{3, 4});
  CHECK(v["params"]["ScanFoo_0"]["Dense_0"]["bias"].leaf().shape() == Shape{4});
}

namespace {
struct LearnScale : nn::Module<LearnScale> {
  Array call(const Array& x, const Array& y) {
    Array p = param("scale", nn::initializers::ones_init(), Shape{});
    return sum(p * x * y);
  }
};
struct GradFoo : nn::Module<GradFoo> {
  std::tuple<Array, Array, Array> call(const Array& x, const Array& y) {
    LearnScale ls;
    auto [z, grads] = nn::value_and_grad(
        [](LearnScale& mdl, const Array& a, const Array& b) { return mdl(a, b); }, ls, x, y);
    auto [gx, gy] = grads;
    return {z, gx, gy};
  }
};
}  // namespace

TEST_CASE("nn::value_and_grad over a module: grads of sum(p*x*y) are y and x (L54, L56)") {
  Array x = random::uniform(random::key(1), {4});
  Array y = random::uniform(random::key(2), {4});
  auto [out, v] = GradFoo().init_with_output(random::key(0), x, y);
  auto [z, gx, gy] = out;
  CHECK(allclose(z, sum(x * y)));
  CHECK(allclose(gx, y));
  CHECK(allclose(gy, x));
  CHECK(v["params"]["LearnScale_0"]["scale"].leaf().shape() == Shape{});
}
