#include <linum/lift/jit.hpp>

#include <sstream>

namespace linum::lift::detail {

std::string jit_fingerprint(const Scope& scope) {
  std::ostringstream os;
  os << "mutable=" << scope.mutable_filter();
  for (const auto& [flag, on] : scope.flags()) os << ' ' << flag << '=' << on;
  return os.str();
}

RngCounters counter_delta(const RngCounters& old, const RngCounters& now) {
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
    d.children[name] = std::make_shared<RngCounters>(counter_delta(before, *child));
  }
  return d;
}

void apply_counter_delta(RngCounters& live, const RngCounters& old, const RngCounters& delta) {
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
    apply_counter_delta(*l, before, *child);
  }
}

}  // namespace linum::lift::detail
