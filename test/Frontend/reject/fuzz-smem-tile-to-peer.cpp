// RUN: not pkc %s --emit=cuda -o %t.cu 2>&1 | FileCheck %s
// RUN: not pkc %s --emit=cuda -DADD -o %t.cu 2>&1 | FileCheck %s --check-prefix=ADD
// RUN: not test -e %t.cu
// Tests that a shared-memory tile stored into a peer's copy is an error at the store that says
// to load it into registers; fuzzing found it reached the CUDA emitter ("no CUDA emission
// pattern for pk.comm.store_async of a shared-memory tile"), also through a named peer.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Sym<f32, 2> y) {
  auto ny = y.on(next_rank());
#ifdef ADD
// ADD: fuzz-smem-tile-to-peer.cpp:[[@LINE+1]]:59: error: store_add into a peer's copy takes a register tile: load it with load<...>, not load_smem (shared-memory tiles are for mma and mma_t operands)
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store_add(y.on(prev_rank()), load_smem<16, 32>(x, m, n), m, n);
#else
// CHECK: fuzz-smem-tile-to-peer.cpp:[[@LINE+1]]:59: error: store into a peer's copy takes a register tile: load it with load<...>, not load_smem (shared-memory tiles are for mma and mma_t operands)
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(ny, load_smem<16, 32>(x, m, n), m, n);
#endif
}
