// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: not pkc %s -DINT_INTO_FLOAT -o /dev/null 2>&1 | FileCheck %s --check-prefix=INT
// RUN: not pkc %s -DINTO_FP8 -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8
// Tests that a tile stored into a tensor of another element type is an error at the store that
// says which cast to write (the tensor's type as the spec names it), not only the op's types.
#include <pk/spec.h>
using namespace pk;
#if defined(INT_INTO_FLOAT)
// INT-LABEL: error: store: tile element type 'i32' does not match tensor element type 'f32'
// INT-SAME: ; convert the tile first (cast<f32>(t) in a spec)
PK_KERNEL void k(Tensor<i32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n) * 2, m, n);
}
#elif defined(INTO_FP8)
// FP8-LABEL: error: store: tile element type 'bf16' does not match tensor element type 'f8e4m3'
// FP8-SAME: ; convert the tile first (cast<f8e4m3>(t) in a spec)
PK_KERNEL void k(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}
#else
// BF16: store-elem-type-hint.cpp:[[@LINE+3]]:59: error: store: tile element type 'f32' does not match tensor element type 'bf16'
// BF16-SAME: ; convert the tile first (cast<bf16>(t) in a spec)
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}
#endif
