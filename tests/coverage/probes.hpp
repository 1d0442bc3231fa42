// Probes of the coverage table (docs/coverage/<module>.tsv): for every name a table marks
// present, a small call of its linum spelling on tiny inputs. The coverage test runs each one,
// so that the table cannot claim a function that does not exist, does not run, or is missing a
// probe. Probes live in probes_<module>.cpp files, one registration object per module:
//
//   const Probes trig("jax.numpy", [](Registrar& r) {
//     r.add("tan", [] { return tan(x()); });
//   });
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <linum/linum.hpp>

namespace linum::coverage {

// A probe returns something it computed (an Array, a pair, ...); the test checks it ran.
using Probe = std::function<void()>;

// module -> name -> probe, filled by the Probes objects of the probe files.
std::map<std::string, std::map<std::string, Probe>>& registry();

void add_probe(const std::string& module, const std::string& name, Probe p);

// Adds one module's probes: r.add(name, lambda), the lambda returning what it computed.
class Registrar {
 public:
  explicit Registrar(std::string module) : module_(std::move(module)) {}
  template <class F>
  void add(const std::string& name, F f) {
    add_probe(module_, name, [f] { (void)f(); });
  }

 private:
  std::string module_;
};

// Registers the probes that `fill` adds for `module` when the test program starts.
struct Probes {
  template <class F>
  Probes(const std::string& module, F fill) {
    Registrar r(module);
    fill(r);
  }
};

// Names registered more than once, as "module:name" (reported by the test).
std::vector<std::string>& duplicate_probes();

// Tiny inputs: float32 vectors and matrices, positive values, int32 vectors.
inline Array x() { return array({0.25f, -0.5f, 0.75f}); }
inline Array pos() { return array({0.25f, 0.5f, 2.0f}); }
inline Array unit() { return array({0.1f, 0.5f, 0.9f}); }
inline Array m() { return array({{1.0f, 2.0f}, {3.0f, 4.0f}}); }
inline Array ints() { return array({3, -6, 9}); }

}  // namespace linum::coverage
