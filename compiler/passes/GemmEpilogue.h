// The element-wise epilogue of a GEMM tile loop (what the spec computes from the accumulator
// before the final cast and store) as a flat program the GEMM template's storer path can run
// per output element. pk-lower-gemm captures it; the GEMM emission pattern turns it into the
// kernel's `Epi::apply`.
//
// A program is an ArrayAttr of steps, each a DictionaryAttr with `op`:
//   acc                         the fp32 accumulator element
//   map   kind, x[, y]          pk.tile.map <kind> of earlier steps
//   load  arg, row, col         element of 2-D tensor argument `arg`, as f32 (0 outside it), at the
//                               output's row (row = -1) or a fixed row, and likewise col
//   scalar arg                  a float kernel argument
//   index expr                  an integer argument or a tensor extent (a host expression such as
//                               "arg(3)" or "dim(2,1)") as f32
//   iota dim                    the output element's row (dim 0) or column (dim 1) as f32
//   select c, x, y              x where c is not zero, else y
//   const value                 a constant
//   round x, type               x rounded to bf16 or f16 (a narrowing cast, or a map on such tiles)
// The last step is the value stored.
#pragma once

#include "pk/Dialect/Pk.h"
#include <string>

namespace mlir::pk {

// Captures the epilogue that computes `result` (the f32 tile cast for the store) from `acc`
// (the K loop's result) inside a tile loop with tile [bm, bn] and indices (m, n). Values may be
// [bm, bn], [1, bn], [bm, 1] or [1, 1] tiles (broadcast by element). On failure returns null
// and sets `why` to the construct that does not fit.
ArrayAttr captureGemmEpilogue(KernelOp kernel, Value result, Value acc, Value m, Value n,
                              int64_t bm, int64_t bn, llvm::SmallPtrSetImpl<Operation *> &ops,
                              std::string &why);

}  // namespace mlir::pk
