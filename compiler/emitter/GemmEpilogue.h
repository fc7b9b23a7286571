// The CUDA of a GEMM's fused element-wise epilogue (a program captured by pk-lower-gemm, see
// compiler/passes/GemmEpilogue.h): the kernel's `Epi` struct for pk::gemm::GemmJobT, and the
// fields of its Args that the launch description must fill, in the struct's order.
#pragma once

#include "pk/Dialect/Pk.h"
#include <string>
#include <vector>

namespace mlir::pk::cuda {

struct EpilogueField {
  enum class Kind { ptr, i32, f32 } kind;
  std::string member;  // inside Params, e.g. "epi.t2"
  int64_t arg;         // the kernel argument it comes from
  std::string value;   // i32: a host expression (pk/runtime/host_check.h)
};

struct GemmEpilogueCode {
  std::string code;  // `struct Epi { ... };`
  std::vector<EpilogueField> fields;
};

FailureOr<GemmEpilogueCode> emitGemmEpilogue(KernelOp kernel, ArrayAttr program);

}  // namespace mlir::pk::cuda
