// flax.errors for the scope and module layers: one linum::Error subclass per Flax error class,
// with Flax's message text and its documentation-link suffix, so a Flax user recognises each one.
#pragma once

#include <string>

#include <linum/error.hpp>

namespace linum::lift {

// flax.errors.FlaxError, the root: every message ends with the link to its flax.errors entry.
struct FlaxError : Error {
  FlaxError(const std::string& message, const char* class_name)
      : Error(
            message +
            " (https://flax.readthedocs.io/en/latest/api_reference/flax.errors.html#flax.errors." +
            class_name + ")") {}
};

#define LINUM_FLAX_ERROR(Name)                                               \
  struct Name : FlaxError {                                                  \
    explicit Name(const std::string& message) : FlaxError(message, #Name) {} \
  }

LINUM_FLAX_ERROR(ScopeParamShapeError);
LINUM_FLAX_ERROR(ScopeParamNotFoundError);
LINUM_FLAX_ERROR(ScopeCollectionNotFound);
LINUM_FLAX_ERROR(ScopeVariableNotFoundError);
LINUM_FLAX_ERROR(ModifyScopeVariableError);
LINUM_FLAX_ERROR(ApplyScopeInvalidVariablesTypeError);
LINUM_FLAX_ERROR(ApplyScopeInvalidVariablesStructureError);
LINUM_FLAX_ERROR(InvalidRngError);
LINUM_FLAX_ERROR(InvalidFilterError);
LINUM_FLAX_ERROR(InvalidScopeError);
// linen (nn/) errors live here too, so that every Flax-named error has one home.
LINUM_FLAX_ERROR(NameInUseError);
LINUM_FLAX_ERROR(AssignSubModuleError);
LINUM_FLAX_ERROR(CallCompactUnboundModuleError);
LINUM_FLAX_ERROR(CallShareScopeOnUnboundModuleError);
LINUM_FLAX_ERROR(CallSetupUnboundModuleError);
LINUM_FLAX_ERROR(ApplyModuleInvalidMethodError);
LINUM_FLAX_ERROR(TransformTargetError);
LINUM_FLAX_ERROR(TransformedMethodReturnValueError);
LINUM_FLAX_ERROR(LazyInitError);

#undef LINUM_FLAX_ERROR

}  // namespace linum::lift
