// linum::lift: flax.core — scopes, collection filters, rng streams, init/apply, and the lifted
// transforms that carry variables and rngs across linum's function transforms.
#pragma once

#include <linum/lift/errors.hpp>
#include <linum/lift/filters.hpp>
#include <linum/lift/jit.hpp>
#include <linum/lift/lazy_init.hpp>
#include <linum/lift/meta.hpp>
#include <linum/lift/pack.hpp>
#include <linum/lift/rng.hpp>
#include <linum/lift/scope.hpp>
#include <linum/lift/transforms.hpp>
#include <linum/lift/transforms_ad.hpp>
#include <linum/lift/transforms_cf.hpp>
#include <linum/lift/transforms_vars.hpp>
