// linum's exception hierarchy, shared by every layer. Python's exception names where they exist,
// so that a Flax/JAX user recognises the failure; each message names the function, what it
// expected and what it got.
#pragma once

#include <stdexcept>

namespace linum {

// Root of every error linum throws.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A value of the right type but the wrong content (mismatched tree structures, bad shapes).
struct ValueError : Error {
  using Error::Error;
};

// A value of the wrong kind (a list where a dict was expected).
struct TypeError : Error {
  using Error::Error;
};

// A missing key in a mapping.
struct KeyError : Error {
  using Error::Error;
};

// A sequence index out of range.
struct IndexError : Error {
  using Error::Error;
};

// A tracer used outside the transform that created it (JAX's UnexpectedTracerError).
struct UnexpectedTracerError : Error {
  using Error::Error;
};

// An allocation that failed (Python's MemoryError): names the op and the byte count.
struct MemoryError : Error {
  using Error::Error;
};

// A number outside the range of the type it must become (Python's OverflowError), e.g. a
// Python-int-like seed or fold_in datum beyond uint32.
struct OverflowError : Error {
  using Error::Error;
};

// A concrete value read from an abstract one (eval_shape): JAX's ConcretizationTypeError.
struct ConcretizationTypeError : TypeError {
  using TypeError::TypeError;
};

// A rule a primitive does not have (e.g. vmap of a primitive without a batching rule).
struct NotImplementedError : Error {
  using Error::Error;
};

}  // namespace linum
