// grad over a tree whose leaves are ints: a leaf that cannot hold a differentiated value.
// expected-error: it has a leaf that is not an Array
#include <vector>

#include <linum/autodiff/transforms.hpp>

int main() {
  auto f = [](const std::vector<int>&) { return linum::Array(1.0f); };
  linum::grad(f)(std::vector<int>{1, 2});
}
