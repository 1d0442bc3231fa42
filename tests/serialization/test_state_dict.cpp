// flax.serialization state dicts: Flax's conventions (sequences keyed "0", "1", ..., structs as
// dicts of fields, None kept), from_state_dict's checks with Flax's messages, and TrainState.
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "helpers.hpp"

namespace test_state_dict {

namespace ser = linum::serialization;
namespace optim = linum::optim;
using namespace ser_test;
using linum::FrozenDict;

namespace {

Tree small_tree() {
  return Tree{{"a", linum::array({1.0f, 2.0f})},
              {"seq", Tree::tuple({Tree(linum::array({3})), Tree::list({Tree(Array(4.0))})})},
              {"nothing", Tree()}};
}

}  // namespace

TEST_SUITE("serialization state dicts") {
  TEST_CASE("tuples and lists become dicts keyed '0', '1', ...; None stays None") {
    Tree sd = ser::to_state_dict(small_tree());
    REQUIRE(sd.is_dict());
    CHECK(sd["seq"].is_dict());
    CHECK(sd["seq"].as_dict().keys() == std::vector<std::string>{"0", "1"});
    CHECK(sd["seq"]["1"].is_dict());
    CHECK(values(sd["seq"]["1"]["0"].leaf()) == Vec{4.0});
    CHECK(sd["nothing"].is_none());
    // Restoring into the original tree brings the tuple and the list back.
    Tree back = ser::from_state_dict(small_tree(), sd);
    CHECK(back["seq"].is_tuple());
    CHECK(back["seq"][1].is_list());
    CHECK(values(back["seq"][0].leaf()) == Vec{3.0});
  }

  TEST_CASE("std::tuple, std::vector, std::map, std::optional and FrozenDict follow Flax") {
    using T = std::tuple<Array, std::vector<Array>, std::map<std::string, Array>,
                         std::optional<Array>, FrozenDict<Array>>;
    T x{linum::array({1.0f}),
        {linum::array({2}), linum::array({3})},
        {{"k", linum::array({4.0})}},
        std::nullopt,
        FrozenDict<Array>{{"f", Array(5.0f)}}};
    Tree sd = ser::to_state_dict(x);
    CHECK(sd.as_dict().keys() == std::vector<std::string>{"0", "1", "2", "3", "4"});
    CHECK(sd["1"].as_dict().keys() == std::vector<std::string>{"0", "1"});
    CHECK(sd["3"].is_none());
    CHECK(values(sd["4"]["f"].leaf()) == Vec{5.0});
    T zero{linum::zeros({1}),
           {linum::zeros({1}, linum::int32), linum::zeros({1}, linum::int32)},
           {{"k", linum::zeros({1})}},
           std::nullopt,
           FrozenDict<Array>{{"f", Array(0.0f)}}};
    T back = ser::from_state_dict(zero, sd);
    CHECK(values(std::get<1>(back)[1]) == Vec{3.0});
    CHECK(values(std::get<2>(back).at("k")) == Vec{4.0});
    CHECK(!std::get<3>(back).has_value());
    CHECK(values(std::get<4>(back)["f"].leaf()) == Vec{5.0});
  }

  TEST_CASE("a FrozenDict node in a Tree: a plain dict in the state, a FrozenDict on restore") {
    Tree t{{"params", Tree(FrozenDict<Array>{{"w", linum::array({1.0f, 2.0f})}})},
           {"b", linum::array({3.0f})}};
    Tree sd = ser::to_state_dict(t);
    REQUIRE(sd["params"].is_dict());  // Flax's state dict of a FrozenDict is a plain dict
    CHECK(values(sd["params"]["w"].leaf()) == Vec{1.0, 2.0});
    Tree zero = linum::pytree::tree_map([](const Array& a) { return linum::zeros_like(a); }, t);
    for (const Tree& back :
         {ser::from_state_dict(zero, sd), ser::from_bytes(zero, ser::to_bytes(t))}) {
      REQUIRE(back["params"].is_frozen_dict());
      CHECK(values(back["params"]["w"].leaf()) == Vec{1.0, 2.0});
      CHECK(values(back["b"].leaf()) == Vec{3.0});
    }
    Tree bad = sd;
    bad["params"] = Tree{{"v", linum::array({0.0f})}};
    check_error<linum::ValueError>([&] { ser::from_state_dict(zero, bad); },
                                   {"target dict contains keys {'w'} which are not present in "
                                    "state dict at path ./params"});
    // msgpack packs exact dicts only, so Flax's msgpack_serialize rejects a FrozenDict too.
    CHECK_THROWS_WITH_AS(ser::msgpack_serialize(t),
                         "msgpack_serialize: can not serialize a FrozenDict; to_bytes writes its "
                         "state dict, a plain dict",
                         linum::TypeError);
  }

  TEST_CASE("an Adam state is {'0': {count, mu, nu}, '1': {}} as optax's NamedTuples give") {
    Tree params{{"w", linum::array({1.0f, 2.0f})}};
    auto tx = optim::adam(1e-3);
    auto state = tx.init(params);
    Tree sd = ser::to_state_dict(state);
    CHECK(sd.as_dict().keys() == std::vector<std::string>{"0", "1"});
    CHECK(sd["0"].as_dict().keys() == std::vector<std::string>{"count", "mu", "nu"});
    CHECK(sd["1"].is_dict());
    CHECK(sd["1"].size() == 0);
    CHECK(sd["0"]["mu"]["w"].leaf().shape() == linum::Shape{2});
  }

  TEST_CASE("from_state_dict names the first mismatching path with Flax's messages") {
    Tree target{{"params", Tree{{"Dense_0", Tree{{"kernel", linum::zeros({3, 4})}}}}},
                {"seq", Tree::tuple({Tree(linum::zeros({2})), Tree(linum::zeros({2}))})}};
    Tree good = ser::to_state_dict(target);

    Tree missing = good;
    missing["params"]["Dense_0"].as_dict().erase("kernel");
    check_error<linum::ValueError>([&] { ser::from_state_dict(target, missing); },
                                   {"The target dict keys and state dict keys do not match, "
                                    "target dict contains keys {'kernel'} which are not present "
                                    "in state dict at path ./params/Dense_0"});

    Tree shorter = good;
    shorter["seq"].as_dict().erase("1");
    check_error<linum::ValueError>(
        [&] { ser::from_state_dict(target, shorter); },
        {"The size of the list and the state dict do not match, got 2 and 1 at path ./seq"});

    Tree reshaped = good;
    reshaped["params"]["Dense_0"]["kernel"] = linum::zeros({4, 3});
    check_error<linum::ValueError>([&] { ser::from_state_dict(target, reshaped); },
                                   {"./params/Dense_0/kernel", "(4, 3)", "(3, 4)"});

    Tree kind = good;
    kind["params"]["Dense_0"] = linum::zeros({1});
    check_error<linum::TypeError>([&] { ser::from_state_dict(target, kind); },
                                  {"./params/Dense_0", "expected a dict"});

    // Extra entries in the state are dropped, as Flax's _restore_dict does.
    Tree extra = good;
    extra["unused"] = linum::zeros({1});
    CHECK(!ser::from_state_dict(target, extra).contains("unused"));
  }

  TEST_CASE("a struct's state dict must have exactly its fields") {
    Tree params{{"w", linum::array({1.0f, 2.0f})}};
    auto tx = optim::adam(1e-3);
    auto state = tx.init(params);
    Tree sd = ser::to_state_dict(state);
    sd["0"].as_dict().erase("nu");
    sd["0"]["extra"] = linum::zeros({1});
    check_error<linum::ValueError>(
        [&] { ser::from_state_dict(state, sd); },
        {"The field names of the state dict and the named tuple do not match, got {'count', "
         "'extra', 'mu'} and {'count', 'mu', 'nu'} at path ./0"});
  }

  TEST_CASE("from_bytes into a TrainState restores step, params and opt_state and keeps tx") {
    using State = optim::TrainState<Tree>;
    Tree p0{{"w", linum::array({1.0f, -2.0f})}, {"b", linum::array({0.5f})}};
    State s = State::create(nullptr, p0, optim::GradientTransformation<Tree>(optim::adam(0.1)));
    Tree g{{"w", linum::array({0.3f, 0.1f})}, {"b", linum::array({-1.0f})}};
    s = s.apply_gradients(g).apply_gradients(g);
    const std::string bytes = ser::to_bytes(s);

    Tree zeros{{"w", linum::zeros({2})}, {"b", linum::zeros({1})}};
    State fresh =
        State::create(nullptr, zeros, optim::GradientTransformation<Tree>(optim::adam(0.1)));
    State r = ser::from_bytes(fresh, bytes);
    CHECK(r.step.item<int>() == 2);
    CHECK(values(r.params["w"].leaf()) == values(s.params["w"].leaf()));
    CHECK(values(r.opt_state[0]["nu"]["b"].leaf()) == values(s.opt_state[0]["nu"]["b"].leaf()));
    CHECK(r.opt_state.is_tuple());
    // The restored state trains on exactly as the original.
    CHECK(values(r.apply_gradients(g).params["w"].leaf()) ==
          values(s.apply_gradients(g).params["w"].leaf()));
  }
}

}  // namespace test_state_dict
