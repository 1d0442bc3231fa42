#include <linum/lift/jit.hpp>

#include <sstream>

namespace linum::lift::detail {

std::string jit_fingerprint(const std::vector<Scope>& scopes) {
  std::ostringstream os;
  for (std::size_t i = 0; i < scopes.size(); ++i) {
    os << (i ? "; " : "") << "mutable=" << scopes[i].mutable_filter();
    for (const auto& [flag, on] : scopes[i].flags()) os << ' ' << flag << '=' << on;
  }
  return os.str();
}

namespace {

RngCounters scope_delta(const RngCounters& old, const RngCounters& now) {
  static const RngCounters none;
  RngCounters d;
  for (const auto& [stream, n] : now.count) {
    auto it = old.count.find(stream);
    d.count[stream] = n - (it == old.count.end() ? 0 : it->second);
  }
  for (const auto& [name, child] : now.children) {
    if (!child) continue;
    auto it = old.children.find(name);
    const RngCounters& before = it != old.children.end() && it->second ? *it->second : none;
    d.children[name] = std::make_shared<RngCounters>(scope_delta(before, *child));
  }
  return d;
}

void apply_scope_delta(RngCounters& live, const RngCounters& old, const RngCounters& delta) {
  static const RngCounters none;
  for (const auto& [stream, n] : delta.count) {
    auto it = old.count.find(stream);
    live.count[stream] = (it == old.count.end() ? 0 : it->second) + n;
  }
  for (const auto& [name, child] : delta.children) {
    auto& l = live.children[name];
    if (!l) l = std::make_shared<RngCounters>();
    auto it = old.children.find(name);
    const RngCounters& before = it != old.children.end() && it->second ? *it->second : none;
    apply_scope_delta(*l, before, *child);
  }
}

}  // namespace

CounterSnapshot counter_delta(const CounterSnapshot& old, const CounterSnapshot& now) {
  CounterSnapshot d;
  for (std::size_t r = 0; r < now.size(); ++r) d.push_back(scope_delta(old[r], now[r]));
  return d;
}

void apply_counter_delta(const Pack& p, const CounterSnapshot& old, const CounterSnapshot& delta) {
  for (std::size_t r = 0; r < delta.size(); ++r)
    apply_scope_delta(*p.scopes()[r].rng_counters(), old[r], delta[r]);
}

}  // namespace linum::lift::detail
