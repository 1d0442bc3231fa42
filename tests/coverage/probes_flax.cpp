// Probes of the flax.linen names the coverage table marks present: each layer is initialised and
// applied on a small input, each function and transform called once inside a module.
#include <linum/nn/nn.hpp>

#include "probes.hpp"

namespace {

using namespace linum;
using namespace linum::coverage;

Array key() { return random::PRNGKey(0); }
Array batch() { return array({{0.5f, -1.0f, 2.0f}, {1.5f, 0.25f, -0.5f}}); }  // (2, 3)
Array image() { return ones({1, 4, 4, 2}); }                                  // NHWC
Array sequence() { return ones({2, 5, 3}); }  // (batch, time, features)

// init then apply: the layer's output on x.
template <class M, class... A>
auto init_apply(const M& m, const A&... args) {
  Tree v = m.init(key(), args...);
  return m.apply(v, args...);
}

struct ScaleBy : nn::Module<ScaleBy> {
  Array call(const Array& x) {
    Array s = param("scale", nn::initializers::ones_init(), Shape{});
    return s * x;
  }
};
struct ScalarLoss : nn::Module<ScalarLoss> {
  Array call(const Array& x) { return sum(nn::Dense(2)(x)); }
};
struct Counter : nn::Module<Counter> {
  Array call(const Array& x) {
    nn::Variable count = variable("state", "count", [] { return Array(0); });
    if (is_mutable_collection("state")) count.set(Tree(count.value() + 1));
    return x;
  }
};
struct Scoped : nn::Module<Scoped> {
  Array call(const Array& x) {
    return compact_name_scope("up", [&] { return nn::Dense(3)(x); });
  }
};
struct PartitionedDense : nn::Module<PartitionedDense> {
  Array call(const Array& x) {
    lift::meta::LogicalNames names{"in", "out"};
    auto init = nn::with_partitioning(nn::initializers::lecun_normal(), names);
    return nn::Dense({.features = 2, .kernel_init = init})(x);
  }
};
struct LogicalDense : nn::Module<LogicalDense> {
  Array call(const Array& x) {
    auto init = nn::with_logical_partitioning(nn::initializers::lecun_normal(), {"embed", "mlp"});
    return nn::Dense({.features = 2, .kernel_init = init})(x);
  }
};
// A user cell: h' = tanh(Dense(x) + h), its carry a Tree (RNNCellBase's default).
struct TanhCell : nn::RNNCellBase<TanhCell> {
  static constexpr int num_feature_axes = 1;
  std::pair<Tree, Array> call(const Tree& h, const Array& x) {
    Array y = tanh(nn::Dense(2)(x) + h.leaf());
    return {Tree(y), y};
  }
  Tree initialize_carry(const Array&, const Shape& s) const { return Tree(zeros({s[0], 2})); }
};
const nn::LogicalRules kRules{{"embed", std::nullopt}, {"mlp", "model"}};
struct ScanBlock : nn::Module<ScanBlock> {
  std::pair<Array, Array> call(const Array& c, const Array& x) {
    Array h = nn::Dense(3)(c) + x;
    return {h, h};
  }
};

// Modules that run one lifted transform or function inside their call (Flax's docstring forms).
struct MetadataAxis : nn::Module<MetadataAxis> {
  Array call(const Array& x) {
    return nn::add_metadata_axis(
        [](MetadataAxis&, const Array& y) { return PartitionedDense().named("inner")(y); },
        {{"params", 0}}, {{nn::PARTITION_NAME, "layers"}})(*this, x);
  }
};
struct BroadcastScan : nn::Module<BroadcastScan> {
  Array call(const Array& x) {
    // The scanned body gets each row of x and the whole of w (broadcast).
    auto body = [](BroadcastScan&, const Array& c, const Array& row, const Array& w) {
      return std::make_pair(c + row * w, c);
    };
    auto scanned = nn::scan(body, {.variable_broadcast = "params",
                                   .split_rngs = {{"params", false}},
                                   .in_axes = {0, lift::broadcast}});
    return scanned(*this, zeros({x.shape(1)}), x, ones({x.shape(1)})).first;
  }
};
// share_scope: a child Dense registered in setup takes its parent's scope.
struct SharedScopeLoRA : nn::Module<SharedScopeLoRA> {
  nn::Dense child{2};
  void setup() override {
    submodule("child", child);
    nn::share_scope(*this, child);
  }
  Array call(const Array& x) {
    return child(x) + param("bias_delta", nn::initializers::zeros_init(), Shape{2});
  }
};
struct MappedDense : nn::Module<MappedDense> {
  Array call(const Array& x) {
    // The kernel is used negated; at init the variables are created before the mapping.
    auto negate = [](const Tree& t) {
      return linum::detail::tree_apply(t, [](const Array& a) { return -a; });
    };
    return nn::map_variables(nn::Dense(2), "params", negate, nn::identity_variables,
                             {.init = is_initializing()})(x);
  }
};
struct VjpProbe : nn::Module<VjpProbe> {
  Array call(const Array& x) {
    ScaleBy s;
    auto [y, bwd] = nn::vjp([](ScaleBy& mdl, const Array& v) { return mdl(v); }, s, x);
    return std::get<1>(bwd(ones_like(y)));
  }
};
struct JvpProbe : nn::Module<JvpProbe> {
  Array call(const Array& x) {
    ScaleBy s;
    Tree params = s.variables().contains("params") ? s.variables()["params"] : Tree::dict();
    Tree t = linum::detail::tree_apply(params, [](const Array& a) { return ones_like(a); });
    return nn::jvp([](ScaleBy& mdl, const Array& v) { return mdl(v); }, s, std::tuple{x},
                   std::tuple{ones_like(x)}, Tree::dict({{"params", t}}))
        .second;
  }
};
struct ValueAndGradProbe : nn::Module<ValueAndGradProbe> {
  Array call(const Array& x) {
    ScalarLoss l;
    auto out = nn::value_and_grad([](ScalarLoss& mdl, const Array& v) { return mdl(v); }, l, x);
    return out.first;
  }
};
struct GradProbe : nn::Module<GradProbe> {
  Array call(const Array& x) {
    ScalarLoss l;
    auto g = nn::grad([](ScalarLoss& mdl, const Array& v) { return mdl(v); }, l, x);
    (void)g;
    return x;
  }
};
struct CustomVjpProbe : nn::Module<CustomVjpProbe> {
  Array call(const Array& x) {
    auto f = [](nn::Dense& d, const Array& v) { return d(v); };
    auto fwd = [](nn::Dense& d, const Array& v) {
      return std::make_pair(d(v), std::make_pair(d.variables()["params"], v));
    };
    // A made-up rule: no parameter gradient, the cotangent's sum for every input.
    auto bwd = [](const std::pair<Tree, Array>& res, const Array& g) {
      Tree zero =
          linum::detail::tree_apply(res.first, [](const Array& a) { return zeros_like(a); });
      return std::make_tuple(zero, zeros_like(res.second) + sum(g));
    };
    nn::Dense dense(2);
    return nn::custom_vjp(f, fwd, bwd)(dense, x);
  }
};
struct CondProbe : nn::Module<CondProbe> {
  Array call(const Array& x) {
    auto t = [](CondProbe&, const Array& v) { return nn::Dense(2).named("dense")(v); };
    auto f = [](CondProbe&, const Array& v) { return Array(-nn::Dense(2).named("dense")(v)); };
    return nn::cond(Array(true), t, f, *this, x);
  }
};
struct SwitchProbe : nn::Module<SwitchProbe> {
  Array call(const Array& x) {
    std::vector<std::function<Array(SwitchProbe&, const Array&)>> branches{
        [](SwitchProbe&, const Array& v) { return nn::Dense(2).named("dense")(v); },
        [](SwitchProbe&, const Array& v) { return Array(2.0f * nn::Dense(2).named("dense")(v)); }};
    return nn::switch_(Array(1), branches, *this, x);
  }
};
struct WhileProbe : nn::Module<WhileProbe> {
  Array call(const Array& x) {
    auto cond = [](WhileProbe&, const Array& c) { return less(sum(c), Array(100.0f)); };
    auto body = [](WhileProbe&, const Array& c) { return c * 2.0f + 1.0f; };
    return nn::while_loop(cond, body, *this, x);
  }
};

const Probes linen("flax.linen", [](Registrar& r) {
  // ---- layers ----
  r.add("BatchApply", [] {
    return nn::BatchApply([](const Array& a) { return relu(a); })(ones({2, 3, 4}));
  });
  r.add("BatchNorm", [] {
    nn::BatchNorm bn({.use_running_average = false});
    Tree v = bn.init(key(), batch());
    return bn.apply(v, batch(), nn::ApplyOptions{.mutable_ = "batch_stats"});
  });
  r.add("Bidirectional", [] {
    return init_apply(nn::Bidirectional(nn::RNN(nn::LSTMCell(2)), nn::RNN(nn::GRUCell(2))),
                      sequence());
  });
  r.add("Conv", [] {
    return init_apply(nn::Conv({.features = 3, .kernel_size = {2, 2}}), image());
  });
  r.add("ConvLSTMCell", [] {
    return init_apply(nn::RNN(nn::ConvLSTMCell({.features = 2, .kernel_size = {3}})),
                      ones({1, 4, 5, 3}));
  });
  r.add("ConvLocal", [] {
    return init_apply(nn::ConvLocal({.features = 2, .kernel_size = {2, 2}}), image());
  });
  r.add("ConvTranspose", [] {
    return init_apply(nn::ConvTranspose({.features = 3, .kernel_size = {2, 2}}), image());
  });
  r.add("Dense", [] { return init_apply(nn::Dense(4), batch()); });
  r.add("DenseGeneral", [] {
    return init_apply(nn::DenseGeneral({.features = {2, 2}, .axis = {-1}}), batch());
  });
  r.add("Dropout", [] {
    nn::Dropout d(0.5);
    Tree v = d.init(key(), batch(), true);
    return d.apply(v, batch(), false, nn::ApplyOptions{.rngs = {{"dropout", random::PRNGKey(1)}}});
  });
  r.add("Einsum", [] {
    return init_apply(nn::Einsum({.shape = {3, 4}, .einsum_str = "bi,io->bo"}), batch());
  });
  r.add("Embed", [] { return init_apply(nn::Embed(10, 4), array({1, 7, 3})); });
  r.add("GRUCell", [] {
    nn::GRUCell cell(3);
    auto carry = cell.initialize_carry(key(), batch().shape());
    auto fn = [](nn::GRUCell& c, const Array& h, const Array& x) { return c(h, x); };
    Tree v = nn::init(fn, cell)(key(), carry, batch());
    return nn::apply(fn, cell)(v, carry, batch()).second;
  });
  r.add("GroupNorm", [] { return init_apply(nn::GroupNorm({.num_groups = 2}), image()); });
  r.add("InstanceNorm", [] { return init_apply(nn::InstanceNorm(), image()); });
  r.add("LSTMCell", [] {
    nn::LSTMCell cell(3);
    auto carry = cell.initialize_carry(key(), batch().shape());
    auto fn = [](nn::LSTMCell& c, const nn::LSTMCell::Carry& h, const Array& x) { return c(h, x); };
    Tree v = nn::init(fn, cell)(key(), carry, batch());
    return nn::apply(fn, cell)(v, carry, batch()).second;
  });
  r.add("LayerNorm", [] { return init_apply(nn::LayerNorm(), batch()); });
  r.add("MGUCell", [] { return init_apply(nn::RNN(nn::MGUCell(3)), sequence()); });
  r.add("Module", [] { return init_apply(ScaleBy(), batch()); });
  r.add("MultiHeadAttention", [] {
    return init_apply(nn::MultiHeadAttention({.num_heads = 1, .qkv_features = 2}), sequence());
  });
  r.add("MultiHeadDotProductAttention", [] {
    return init_apply(nn::MultiHeadDotProductAttention({.num_heads = 1, .qkv_features = 2}),
                      sequence(), sequence());
  });
  r.add("OptimizedLSTMCell", [] {
    nn::OptimizedLSTMCell cell(3);
    auto carry = cell.initialize_carry(key(), batch().shape());
    auto fn = [](nn::OptimizedLSTMCell& c, const nn::OptimizedLSTMCell::Carry& h, const Array& x) {
      return c(h, x);
    };
    Tree v = nn::init(fn, cell)(key(), carry, batch());
    return nn::apply(fn, cell)(v, carry, batch()).second;
  });
  r.add("PReLU", [] { return init_apply(nn::PReLU(), batch()); });
  r.add("RMSNorm", [] { return init_apply(nn::RMSNorm(), batch()); });
  r.add("RNN", [] { return init_apply(nn::RNN(nn::SimpleCell(2)), sequence()); });
  r.add("RNNCellBase", [] { return init_apply(nn::RNN(TanhCell()), sequence()); });
  r.add("SelfAttention", [] {
    return init_apply(nn::SelfAttention({.num_heads = 1, .qkv_features = 2}), sequence());
  });
  r.add("Sequential", [] { return init_apply(nn::Sequential({nn::Dense(3), nn::relu}), batch()); });
  r.add("SimpleCell", [] { return init_apply(nn::RNN(nn::SimpleCell(3)), sequence()); });
  r.add("SpectralNorm", [] {
    nn::SpectralNorm sn(nn::Dense(2));
    Tree v = sn.init(key(), batch(), true);
    return sn.apply(v, batch(), false);
  });
  r.add("WeightNorm", [] { return init_apply(nn::WeightNorm(nn::Dense(2)), batch()); });

  // ---- the module system ----
  r.add("DenyList", [] {
    // init without the intermediates collection: DenyList('intermediates').
    nn::Filter f = nn::DenyList("intermediates");
    return ScaleBy().init(key(), batch(), nn::InitOptions{.mutable_ = f});
  });
  r.add("FrozenDict", [] {
    pytree::FrozenDict<Array> d{{"a", Tree(x())}};
    return d.at("a").leaf();
  });
  r.add("Variable", [] {
    Counter c;
    Tree v = c.init(key(), batch());
    return c.apply(v, batch(), nn::ApplyOptions{.mutable_ = "state"}).second;
  });
  r.add("apply", [] {
    auto fn = [](nn::Dense& d, const Array& x) { return d(x); };
    Tree v = nn::init(fn, nn::Dense(2))(key(), batch());
    return nn::apply(fn, nn::Dense(2))(v, batch());
  });
  r.add("init", [] {
    return nn::init([](nn::Dense& d, const Array& x) { return d(x); }, nn::Dense(2))(key(),
                                                                                     batch());
  });
  r.add("init_with_output", [] {
    return nn::init_with_output([](nn::Dense& d, const Array& x) { return d(x); }, nn::Dense(2))(
               key(), batch())
        .first;
  });
  r.add("compact", [] { return init_apply(ScalarLoss(), batch()); });
  r.add("compact_name_scope", [] { return init_apply(Scoped(), batch()); });
  r.add("tabulate", [] { return nn::tabulate(nn::Dense(2), key())(batch()); });
  r.add("intercept_methods", [] {
    auto twice = [](const std::function<Tree()>& next, const Tree&, const nn::InterceptorContext&) {
      return Tree(next().leaf() * 2.0f);
    };
    nn::Dense d(2);
    Tree v = d.init(key(), batch());
    return nn::intercept_methods(twice, [&] { return d.apply(v, batch()); });
  });
  r.add("share_scope", [] { return init_apply(SharedScopeLoRA(), batch()); });
  r.add("merge_param", [] { return nn::merge_param<int>("rate", std::nullopt, 2); });

  // ---- metadata boxes ----
  r.add("Partitioned", [] { return PartitionedDense().init(key(), batch()); });
  r.add("with_partitioning", [] { return init_apply(PartitionedDense(), batch()); });
  r.add("unbox", [] { return nn::unbox(PartitionedDense().init(key(), batch())); });
  r.add("PARTITION_NAME", [] { return std::string(nn::PARTITION_NAME); });
  r.add("add_metadata_axis", [] { return init_apply(MetadataAxis(), batch()); });
  r.add("LogicallyPartitioned", [] { return LogicalDense().init(key(), batch()); });
  r.add("with_logical_partitioning", [] { return init_apply(LogicalDense(), batch()); });
  r.add("get_partition_spec",
        [] { return nn::get_partition_spec(LogicalDense().init(key(), batch())); });
  r.add("logical_to_mesh", [] {
    return nn::logical_to_mesh(nn::get_partition_spec(LogicalDense().init(key(), batch())), kRules);
  });
  r.add("logical_to_mesh_axes", [] { return nn::logical_to_mesh_axes({"embed", "mlp"}, kRules); });
  r.add("logical_axis_rules", [] {
    nn::logical_axis_rules scope(kRules);
    return nn::logical_to_mesh_axes({"mlp"});
  });
  r.add("set_logical_axis_rules", [] {
    nn::set_logical_axis_rules(kRules);
    nn::PartitionSpec spec = nn::logical_to_mesh_axes({"mlp"});
    nn::set_logical_axis_rules({});
    return spec;
  });
  r.add("get_logical_axis_rules", [] { return nn::get_logical_axis_rules(); });
  r.add("with_logical_constraint", [] {
    return nn::with_logical_constraint(batch(), nn::PartitionSpec{"embed", "mlp"}, kRules);
  });

  // ---- functions ----
  r.add("avg_pool", [] { return nn::avg_pool(image(), {2, 2}, {2, 2}); });
  r.add("max_pool", [] { return nn::max_pool(image(), {2, 2}, {2, 2}); });
  r.add("pool", [] { return nn::pool(image(), 0.0, WindowReduce::sum, {2, 2}, {2, 2}); });
  r.add("celu", [] { return nn::celu(x()); });
  r.add("elu", [] { return nn::elu(x()); });
  r.add("gelu", [] { return nn::gelu(x()); });
  r.add("glu", [] { return nn::glu(array({1.0f, 2.0f, 3.0f, 4.0f})); });
  r.add("hard_sigmoid", [] { return nn::hard_sigmoid(x()); });
  r.add("hard_silu", [] { return nn::hard_silu(x()); });
  r.add("hard_swish", [] { return nn::hard_swish(x()); });
  r.add("hard_tanh", [] { return nn::hard_tanh(x()); });
  r.add("leaky_relu", [] { return nn::leaky_relu(x()); });
  r.add("log_sigmoid", [] { return nn::log_sigmoid(x()); });
  r.add("log_softmax", [] { return nn::log_softmax(x()); });
  r.add("logsumexp", [] { return nn::logsumexp(x()); });
  r.add("normalize", [] { return nn::normalize(x()); });
  r.add("one_hot", [] { return nn::one_hot(array({0, 2}), 3); });
  r.add("relu", [] { return nn::relu(x()); });
  r.add("relu6", [] { return nn::relu6(x()); });
  r.add("selu", [] { return nn::selu(x()); });
  r.add("sigmoid", [] { return nn::sigmoid(x()); });
  r.add("silu", [] { return nn::silu(x()); });
  r.add("soft_sign", [] { return nn::soft_sign(x()); });
  r.add("softmax", [] { return nn::softmax(x()); });
  r.add("softplus", [] { return nn::softplus(x()); });
  r.add("standardize", [] { return nn::standardize(x()); });
  r.add("swish", [] { return nn::swish(x()); });
  r.add("tanh", [] { return nn::tanh(x()); });
  r.add("ones", [] { return nn::initializers::ones(key(), {2, 2}); });
  r.add("zeros", [] { return nn::initializers::zeros(key(), {2, 2}); });
  r.add("ones_init", [] { return nn::initializers::ones_init()(key(), {2}, float32); });
  r.add("zeros_init", [] { return nn::initializers::zeros_init()(key(), {2}, float32); });

  // ---- attention helpers ----
  r.add("dot_product_attention",
        [] { return nn::dot_product_attention(sequence(), sequence(), sequence()); });
  r.add("dot_product_attention_weights",
        [] { return nn::dot_product_attention_weights(sequence(), sequence()); });
  r.add("make_attention_mask", [] { return nn::make_attention_mask(ones({2, 3}), ones({2, 4})); });
  r.add("make_causal_mask", [] { return nn::make_causal_mask(ones({2, 3})); });
  r.add("combine_masks", [] {
    return nn::combine_masks(
        {nn::make_causal_mask(ones({1, 3})), nn::make_causal_mask(ones({1, 3}))});
  });

  // ---- lifted transforms ----
  r.add("vmap", [] {
    auto dense = nn::vmap(nn::Dense(2),
                          {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}});
    return init_apply(dense, batch());
  });
  r.add("scan", [] {
    auto scanned =
        nn::scan(ScanBlock(), {.variable_broadcast = "params", .split_rngs = {{"params", false}}});
    Tree v = scanned.init(key(), ones({3}), ones({4, 3}));
    return scanned.apply(v, ones({3}), ones({4, 3})).second;
  });
  r.add("broadcast", [] { return init_apply(BroadcastScan(), batch()); });
  r.add("checkpoint", [] { return init_apply(nn::checkpoint(nn::Dense(2)), batch()); });
  r.add("remat", [] { return init_apply(nn::remat(nn::Dense(2)), batch()); });
  r.add("remat_scan", [] { return init_apply(nn::remat_scan(nn::Dense(3), {2, 2}), batch()); });
  r.add("jit", [] { return init_apply(nn::jit(nn::Dense(2)), batch()); });
  r.add("fold_rngs", [] { return init_apply(nn::fold_rngs(nn::Dense(2)), batch()); });
  r.add("map_variables", [] { return init_apply(MappedDense(), batch()); });
  r.add("vjp", [] { return init_apply(VjpProbe(), batch()); });
  r.add("jvp", [] { return init_apply(JvpProbe(), batch()); });
  r.add("value_and_grad", [] { return init_apply(ValueAndGradProbe(), batch()); });
  r.add("grad", [] { return init_apply(GradProbe(), batch()); });
  r.add("custom_vjp", [] { return init_apply(CustomVjpProbe(), batch()); });
  r.add("cond", [] { return init_apply(CondProbe(), batch()); });
  r.add("switch", [] { return init_apply(SwitchProbe(), batch()); });
  r.add("while_loop", [] { return init_apply(WhileProbe(), batch()); });
});

}  // namespace
