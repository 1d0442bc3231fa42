// optax.assignment: the linear assignment problem (a minimum-cost matching of the rows and
// columns of a cost matrix), solved by optax's two Hungarian algorithms. Both run on the host as
// one primitive each, so they work under vmap (a batch of matrices) and jit, and return
// optax's answer including its choice among equally cheap assignments.
//
//   auto [i, j] = optim::assignment::hungarian_algorithm(cost);  // cost[i, j].sum() is minimal
#pragma once

#include <utility>

#include <linum/autodiff/array.hpp>

namespace linum::optim::assignment {

// optax.assignment.hungarian_algorithm(cost_matrix): (i, j), int32 row and column indices of the
// min(n, m) assigned pairs, for an (n, m) cost matrix; Scenic's variant of the algorithm.
// When n < m the rows come in decreasing order, when n > m the columns do (optax's top_k), and a
// square matrix gives (the row of each column, arange(n)). The costs are read in float32 (float64
// stays float64). ValueError for a matrix with NaN or -inf, or no assignment of finite cost.
std::pair<Array, Array> hungarian_algorithm(const Array& cost_matrix);

// optax.assignment.base_hungarian_algorithm(cost_matrix): the same problem by Crouse's shortest
// augmenting path (optax's loop, with its tie-breaking): i is arange(n) (when n <= m) or the
// assigned rows in increasing order.
std::pair<Array, Array> base_hungarian_algorithm(const Array& cost_matrix);

}  // namespace linum::optim::assignment
