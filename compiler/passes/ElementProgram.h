// An element-wise computation inside a tile loop (a GEMM's epilogue: what the spec computes from
// the accumulator before the final cast and store; an attention's score map: what it computes
// from q k^T before the softmax) as a flat program a template can run per element in its
// consumers' registers. pk-lower-gemm and pk-lower-attention capture it; the emission patterns
// turn it into the kernel's `Epi::apply` or `ScoreMap::apply` (emitter/ElementProgram.h).
//
// A program is an ArrayAttr of steps, each a DictionaryAttr with `op`. Every step is an f32
// value unless it says int:
//   acc                         the fp32 accumulator element (the raw score, for attention)
//   map   kind, x[, y]          pk.tile.map <kind> of earlier steps (or the scalar form of a kind:
//                               arith's float ops and pk.scalar_map)
//   load  arg, row, col         element of tensor argument `arg`, as f32 (0 outside it), at the
//                               output's row (row = -1) or a fixed row, and likewise col; a fixed
//                               coordinate may be an int step instead (rowv, colv); a 3-D tensor
//                               [planes, rows, cols] also has plane (constant) or planev (step);
//                               a 1-D one is read as a 1 x N (view "row") or N x 1 ("col") tensor;
//                               `int`: an i32 tensor, read as int
//   scalar arg                  a float kernel argument
//   index expr                  an integer argument or a tensor extent (a host expression such as
//                               "arg(3)" or "dim(2,1)") as f32
//   iota dim                    the output element's row (dim 0) or column (dim 1) as f32
//   select c, x, y              x where c is not zero, else y
//   const value                 a constant
//   round x, type               x rounded to bf16 or f16 (a narrowing cast, or a map on such tiles)
//   head                        int: the tile's head (attention over [H, S, D]: the loop's h)
//   iconst value                int: a constant
//   ihost expr                  int: a host expression, as `index` but not converted
//   iop kind, x[, y]            int: add, sub, mul (wrapping), div (truncating), rem (0 for a zero
//                               divisor), min, max, neg, abs, or lt ... ne (0 or 1) of int steps
//   tofloat x                   an int step converted to f32
//   toint x                     int: an f32 step rounded toward zero, saturating (NaN gives 0)
//   iota and select with `int`  int: the row / column, or a choice between int steps
// The last step is the result.
#pragma once

#include "pk/Dialect/Pk.h"
#include <string>

namespace mlir::pk {

// Where a program runs: a tile loop with tile [bm, bn] whose element (row, col) is (m + i, n + j);
// `acc` is the value the `acc` step reads; `head`, when set, the loop index the `head` step
// reads (scalars may be computed from it).
struct ElementScope {
  KernelOp kernel;
  Value acc, m, n;
  int64_t bm, bn;
  Value head;
  StringRef noun;  // what messages call the program: "epilogue", "score map"
};

// Builds a program step by step. Every captured op lands in `ops` (the caller drops or keeps
// them); the first construct that does not fit sets `why`, and every later call fails too.
class ElementProgram {
public:
  ElementProgram(ElementScope scope, llvm::SmallPtrSetImpl<Operation *> &ops, std::string &why);
  ~ElementProgram();
  // The step computing `v` (captured with everything it reads), or -1.
  int64_t value(Value v);
  int64_t constant(double v);
  int64_t map(MapKind kind, int64_t x, int64_t y = -1);
  int64_t select(int64_t c, int64_t x, int64_t y);
  ArrayAttr steps() const;

private:
  struct Capture;
  std::unique_ptr<Capture> c;
};

// Captures the epilogue that computes `result` (the f32 tile cast for the store) from `acc`
// (the K loop's result) inside a tile loop with tile [bm, bn] and indices (m, n). Values may be
// [bm, bn], [1, bn], [bm, 1] or [1, 1] tiles (broadcast by element). `batch` (a batched GEMM's
// batch index, else null) may appear as the program's head: per-batch scalars and planes. On
// failure returns null and sets `why` to the construct that does not fit.
ArrayAttr captureGemmEpilogue(KernelOp kernel, Value result, Value acc, Value m, Value n,
                              int64_t bm, int64_t bn, llvm::SmallPtrSetImpl<Operation *> &ops,
                              std::string &why, Value batch = Value());

}  // namespace mlir::pk
