// The CUDA of a captured element-wise program (compiler/passes/ElementProgram.h): a GEMM's fused
// epilogue (the kernel's `Epi` for pk::gemm::GemmJobT) or an attention's score map (`ScoreMap`
// for pk::attention), and the fields of its Args that the launch description must fill, in the
// struct's order.
#pragma once

#include "pk/Dialect/Pk.h"
#include <string>
#include <vector>

namespace mlir::pk::cuda {

struct EpilogueField {
  enum class Kind { ptr, i32, i64, f32 } kind;
  std::string member;  // inside Params, e.g. "epi.t2"
  int64_t arg;         // the kernel argument it comes from
  std::string value;   // i32, i64: a host expression (pk/runtime/host_check.h)
};

struct ElementCode {
  std::string code;  // `struct Epi { ... };`
  std::vector<EpilogueField> fields;
};

// How the struct is named and called.
struct ElementCodeShape {
  std::string name;     // "Epi", "ScoreMap"
  std::string member;   // the Args member inside the template's Params: "epi", "map"
  std::string what;     // for errors: "GEMM epilogue"
  std::string comment;  // the struct's comment line
  bool head = false;    // apply() also takes the tile's head
  // apply() also takes row and col as floats, which the caller forms by adds (cheaper than a
  // conversion per element)
  bool floatIndices = false;
  // tanh (and the tanh GELU) by the SFU (tanh.approx, about 2^-11 relative), where the result is
  // rounded to bf16 / f16 anyway; false: tanhf, for an f32 output that keeps every bit.
  bool fastTanh = true;
  // Steps that follow only the row (or only the column) go to prepare_row (prepare_col), and
  // apply() takes their results: the GEMM's consumer threads hold few rows and many columns.
  bool splitRowCol = false;
  // false: the template applies no map per element (kActive false); the program computes a
  // value from scalars alone (an attention's scale), which the caller reads from apply().
  bool active = true;
};

FailureOr<ElementCode> emitElementProgram(KernelOp kernel, ArrayAttr program, const ElementCodeShape &shape);

}  // namespace mlir::pk::cuda
