// A kernel value as an expression the host evaluates before a launch (pk/runtime/host_check.h):
// the typed launchers' and the JIT's host checks, and the bounds of a host loop of launches.
#pragma once
#include "pk/Dialect/Pk.h"

#include <optional>

#include <pk/runtime/host_check.h>

namespace mlir::pk {
/// `v` over the kernel's entry block `entry`, or nullopt when the host cannot know it (the
/// rank, data loaded on the device, anything not recognised): argument extents, integer scalar
/// arguments, the world size, index constants and integer arithmetic (min / max included) and
/// comparisons of them. `withRank`: the rank too, for per-launch values (a template's field, an
/// element program's integer) that may differ between ranks; never for what every rank must
/// agree on (a host loop's trips).
std::optional<::pk::HostExpr> hostExprOf(Value v, Block &entry, bool withRank = false);
} // namespace mlir::pk
