// optax.tree_utils's state utilities (state_utils.hpp): tree_get, tree_get_all_with_path and
// tree_set on the examples of optax's docstrings, with their key paths (NamedTupleKey entries
// for the fields of a state, printed as optax prints them) and filters.
#include <map>
#include <string>
#include <variant>

#include "helpers.hpp"

namespace test_state_utils {

using namespace linum;
using optim_test::check_close;
using optim_test::values;
using testing::check_error;
namespace tu = optim::tree_utils;

namespace {
// optax's inject_hyperparams(sgd)(learning_rate=lambda count: 1 / (count + 1)).
auto injected_sgd() {
  return optim::inject_hyperparams(
      [](const optim::Hyperparams& h) { return optim::sgd(h.at("learning_rate")); },
      {{"learning_rate", [](std::int64_t count) { return 1.0 / (count + 1); }}});
}

// Whether the path's last entry is a field of the state named tuple_name.
tu::StateFilter in_state(const std::string& tuple_name) {
  return [tuple_name](const tu::StateKeyPath& path, const Tree&) {
    const auto* k = path.empty() ? nullptr : std::get_if<tu::NamedTupleKey>(&path.back());
    return k && k->tuple_name == tuple_name;
  };
}
}  // namespace

TEST_CASE("tree_get_all_with_path: key paths with NamedTupleKey, and a filter") {
  Array params = array({1.0f, 2.0f, 3.0f});
  auto state = injected_sgd().init(params);
  auto found = tu::tree_get_all_with_path(state, "learning_rate");
  REQUIRE(found.size() == 2);
  CHECK(tu::keystr(found[0].first) ==
        "InjectStatefulHyperparamsState.hyperparams['learning_rate']");
  CHECK(found[0].second.leaf().item<float>() == 1.0f);
  CHECK(tu::keystr(found[1].first) ==
        "InjectStatefulHyperparamsState.hyperparams_states['learning_rate']");
  CHECK(found[1].second["count"].leaf().item<int>() == 0);
  CHECK(found[0].first[0] ==
        tu::StateKeyEntry(tu::NamedTupleKey{"InjectStatefulHyperparamsState", "hyperparams"}));
  CHECK(found[0].first[1] == tu::StateKeyEntry(pytree::DictKey{"learning_rate"}));
  // optax's filter "isinstance(value, tuple)" keeps the schedule's state; here the state is the
  // dict of its fields.
  auto states = tu::tree_get_all_with_path(
      state, "learning_rate", [](const tu::StateKeyPath&, const Tree& v) { return v.is_dict(); });
  REQUIRE(states.size() == 1);
  CHECK(tu::keystr(states[0].first) ==
        "InjectStatefulHyperparamsState.hyperparams_states['learning_rate']");
  // A value only: tree_get with a filter.
  auto lr = tu::tree_get(state, "learning_rate",
                         [](const tu::StateKeyPath&, const Tree& v) { return v.is_leaf(); });
  REQUIRE(lr.has_value());
  CHECK(lr->leaf().item<float>() == 1.0f);
  // Inside a chain: the index comes first.
  auto adam_state = optim::adam(1.0).init(params);
  auto counts = tu::tree_get_all_with_path(adam_state, "count");
  REQUIRE(counts.size() == 1);
  CHECK(tu::keystr(counts[0].first) == "[0]ScaleByAdamState.count");
}

TEST_CASE("tree_get: by field, by state name, and the same field in two states") {
  Array params = array({1.0f, 2.0f, 3.0f});
  CHECK(tu::tree_get(optim::adam(1.0).init(params), "count")->leaf().item<int>() == 0);
  auto tx = optim::chain(optim::add_noise(1.0, 0.9, 0), optim::scale_by_adam());
  auto state = tx.init(params);
  auto noise = tu::tree_get(state, "AddNoiseState");
  REQUIRE(noise.has_value());
  CHECK(noise->contains("rng_key"));
  // Both states have a count: KeyError, unless a filter picks one by its NamedTupleKey.
  check_error<KeyError>(
      [&] { tu::tree_get(state, "count"); },
      {"Found multiple values for 'count'", "[0]AddNoiseState.count", "[1]ScaleByAdamState.count"});
  auto c = tu::tree_get(state, "count", in_state("ScaleByAdamState"));
  REQUIRE(c.has_value());
  CHECK(c->leaf().item<int>() == 0);
  CHECK(!tu::tree_get(state, "nothing").has_value());
}

TEST_CASE("tree_set: replaces what the key names, as the filter allows") {
  Array params = array({1.0f, 2.0f, 3.0f});
  auto state = optim::adam(1.0).init(params);
  auto set = tu::tree_set(state, "count", Array(2));
  CHECK(std::get<0>(set).count.item<int>() == 2);
  // Only the adam state's count of a chain with two counts.
  auto tx = optim::chain(optim::add_noise(1.0, 0.9, 0), optim::scale_by_adam());
  auto s2 = tu::tree_set(tx.init(params), "count", Array(5), in_state("ScaleByAdamState"));
  CHECK(std::get<0>(s2).count.item<int>() == 0);
  CHECK(std::get<1>(s2).count.item<int>() == 5);
  // optax's example: the learning rate of inject_hyperparams, not its schedule's state.
  auto inj = injected_sgd().init(params);
  auto leaf_only = [](const tu::StateKeyPath&, const Tree& v) { return v.is_leaf(); };
  auto s3 = tu::tree_set(inj, "learning_rate", Array(0.1f), leaf_only);
  CHECK(s3.hyperparams.at("learning_rate").item<float>() == 0.1f);
  CHECK(s3.hyperparams_states.at("learning_rate").count.item<int>() == 0);
  check_error<KeyError>([&] { tu::tree_set(state, "nothing", Array(1)); },
                        {"Found no values matching 'nothing'"});
  check_error<KeyError>([&] { tu::tree_set(state, "count", Array(1), in_state("AddNoiseState")); },
                        {"Found no values matching 'count' given the filtering operation"});
}

}  // namespace test_state_utils
