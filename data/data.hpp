// linum::data: input pipelines as the Flax examples build them. NumPy's .npy / .npz files
// (npy.hpp), IDX files of the MNIST family (idx.hpp), numeric CSV (csv.hpp), the in-memory
// Dataset with shuffle / batch / repeat / map / prefetch (dataset.hpp), and a training loop's
// progress line (progress.hpp). Not included by <linum/linum.hpp>: with `using namespace linum`,
// a namespace `data` would collide with the many functions and variables of that name.
#pragma once

#include <linum/data/csv.hpp>
#include <linum/data/dataset.hpp>
#include <linum/data/idx.hpp>
#include <linum/data/npy.hpp>
#include <linum/data/progress.hpp>
