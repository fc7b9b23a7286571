// Loads the machine profile named by a pass option (empty: the built-in H200 profile).
#pragma once
#include "pk/CostModel/CostModel.h"
#include "mlir/IR/BuiltinOps.h"
#include <optional>

namespace mlir::pk {
inline std::optional<::pk::MachineProfile> loadProfileOption(ModuleOp module,
                                                             const std::string &path) {
  std::string error;
  auto profile = ::pk::loadProfileOrBuiltin(path, error);
  if (!profile) module.emitError(error);
  return profile;
}
} // namespace mlir::pk
