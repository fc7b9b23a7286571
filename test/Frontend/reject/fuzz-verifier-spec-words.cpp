// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=STORE
// RUN: not pkc %s -DCOLL -o /dev/null 2>&1 | FileCheck %s --check-prefix=COLL
// RUN: not pkc %s -DPEER -o /dev/null 2>&1 | FileCheck %s --check-prefix=PEER
// RUN: not pkc %s -DROWS -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROWS
// Tests that the dialect verifiers' errors on a C++ spec name the construct the spec wrote and
// its types as pk/spec.h spells them, never the op ('pk.tile.store' op) or IR types
// (f8E5M2, !pk.tile<1x16xi64>); fuzzing found these on element-type and extent mutants.
#include <pk/spec.h>
using namespace pk;
#if defined(COLL)
// COLL: fuzz-verifier-spec-words.cpp:[[@LINE+2]]:51: error: broadcast: input and output element types differ
// COLL-NOT: pk.coll
PK_KERNEL void k(Sym<f32, 1> x, Sym<bf16, 1> y) { broadcast(x, y, 0); }
#elif defined(PEER)
// PEER: fuzz-verifier-spec-words.cpp:[[@LINE+3]]:59: error: store_add: tile element type 'bf16' does not match tensor element type 'f8e5m2'; convert the tile first (cast<f8e5m2>(t) in a spec)
// PEER-NOT: pk.comm
PK_KERNEL void k(Tensor<bf16, 2> x, Sym<f8e5m2, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store_add(y.on(next_rank()), load<16, 32>(x, m, n), m, n);
}
#elif defined(ROWS)
// ROWS: fuzz-verifier-spec-words.cpp:[[@LINE+3]]:5: error: store_rows: row indices must be a register tile of 16 (or 16x1), one per tile row; got 'Tile<i64, 1, 16>'
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<i64, 2> ids, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
    store_rows(y, load<16, 32>(x, m, n), load<1, 16>(ids, 0, m), n);
}
#else
// STORE: fuzz-verifier-spec-words.cpp:[[@LINE+3]]:59: error: store: tile element type 'f8e5m2' does not match tensor element type 'f32'; convert the tile first (cast<f32>(t) in a spec)
// STORE-NOT: pk.tile
PK_KERNEL void k(Tensor<f8e5m2, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}
#endif
