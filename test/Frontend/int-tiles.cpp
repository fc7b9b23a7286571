// RUN: pkc %s --emit=mlir | FileCheck %s
// RUN: not pkc %s -DEXP_OF_INT --emit=mlir 2>&1 | FileCheck %s --check-prefix=EXP
// RUN: not pkc %s -DFLOAT_SCALAR --emit=mlir 2>&1 | FileCheck %s --check-prefix=FLOAT
// RUN: pkc %s -DROW_SUM_INT --emit=mlir 2>&1 | FileCheck %s --check-prefix=ROWSUM
// RUN: not pkc %s -DMASK_TIMES_BOOL --emit=mlir 2>&1 | FileCheck %s --check-prefix=BOOL
// RUN: not pkc %s -DFLOAT_INDEX --emit=mlir 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not pkc %s -DAT_ARITY --emit=mlir 2>&1 | FileCheck %s --check-prefix=ARITY
// RUN: not pkc %s -DFLOAT_COUNTER --emit=mlir 2>&1 | FileCheck %s --check-prefix=COUNTER
// Tests integer tiles and rows moved by index: i32 / i64 element types, integer scalars and %
// on integer tiles, casts, load_rows / store_rows / store_add_rows; and that float-only
// operations on integer tiles, a float scalar beside an integer tile, and a float index tile
// are errors at their source location.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @int_ops(
// CHECK-SAME: !pk.tensor<?x?xi32>, %{{.*}}: !pk.tensor<?x?xi64>, %{{.*}}: !pk.tensor<?x?xf32>, %[[LO:.*]]: index)
// CHECK: %[[X:.*]] = pk.tile.load {{.*}} -> !pk.tile<16x128xi32>
// CHECK: %[[LOS:.*]] = pk.tile.splat %[[LO]] : index -> !pk.tile<16x128xi32>
// CHECK: %[[MASK:.*]] = pk.tile.map <lt> %[[X]], %[[LOS]]
// CHECK: %[[SEVEN:.*]] = pk.tile.splat %{{.*}} : index -> !pk.tile<16x128xi32>
// CHECK: %[[REM:.*]] = pk.tile.map <rem> %[[X]], %[[SEVEN]]
// CHECK: pk.tile.select %[[MASK]], %[[REM]], %[[X]] : !pk.tile<16x128xi32>, !pk.tile<16x128xi32>
// CHECK: pk.tile.cast %{{.*}} : !pk.tile<16x128xi32> to !pk.tile<16x128xi64>
// CHECK: pk.tile.cast %{{.*}} : !pk.tile<16x128xi32> to !pk.tile<16x128xf32>
// CHECK: pk.tile.transpose %{{.*}} : !pk.tile<16x128xi32> -> !pk.tile<128x16xi32>
// CHECK: pk.tile.cast %{{.*}} : !pk.tile<128x16xi32> to !pk.tile<128x16xi64>
PK_KERNEL void int_ops(Tensor<i32, 2> a, Tensor<i64, 2> b, Tensor<f32, 2> f, index lo) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 128})) {
    auto x = load<16, 128>(a, m, n);
    auto r = where(x < lo, x % 7, x);
    store(b, cast<i64>(r), m, n);
    store(f, cast<f32>(r), m, n);
    store(b, cast<i64>(transpose(r)), n, m);
#ifdef EXP_OF_INT
    // EXP: int-tiles.cpp:[[@LINE+1]]:14: error: no matching function for call to 'exp'
    store(f, exp(x), m, n);
#endif
#ifdef FLOAT_SCALAR
    // FLOAT: int-tiles.cpp:[[@LINE+1]]:16: error: invalid operands to binary expression
    store(a, x * 0.5f, m, n);
#endif
#ifdef ROW_SUM_INT
    // An integer row reduction is exact, in the tile's type:
    // ROWSUM: pk.tile.reduce_rows <sum> {{.*}} : !pk.tile<16x128xi32> -> !pk.tile<16x1xi32>
    auto s = row_sum(x);
#endif
#ifdef MASK_TIMES_BOOL
    // A mask times a C++ bool (a comparison of indices) names the fix, not a wall of candidates.
    // BOOL: error: static assertion failed{{.*}}a mask combines with tiles, not with a C++ bool
    // BOOL: int-tiles.cpp:[[@LINE+1]]:{{[0-9]+}}: note: in instantiation of function template specialization 'pk::operator*<bool
    store(a, (x == 3) * (m == 0), m, n);
#endif
  }
}

// CHECK-LABEL: pk.kernel @count_bounded
// CHECK: %[[N:.*]] = pk.load_scalar %{{.*}}[%{{.*}}] : !pk.tensor<?xi64> -> index
// CHECK: pk.tile.foreach (%{{.*}}) to (%[[N]]) step [256]
// CHECK: pk.load_scalar %{{.*}}[%{{.*}}, %{{.*}}] : !pk.tensor<?x?xf32> -> f32
PK_KERNEL void count_bounded(Tensor<i64, 1> counts, Tensor<f32, 2> scales, Tensor<f32, 1> x, index e) {
  for (auto i : tiles(counts.at(e), {256})) store(x, load<256>(x, i) * scales.at(e, 0), i);
#ifdef AT_ARITY
  // ARITY: int-tiles.cpp:[[@LINE+1]]:30: error: give one index per tensor dimension (2)
  for (auto i : tiles(scales.at(e), {256})) store(x, load<256>(x, i), i);
#endif
}

// CHECK-LABEL: pk.kernel @moe_rows
// CHECK: %[[IDS:.*]] = pk.tile.load {{.*}} -> !pk.tile<32xi32>
// CHECK: %[[ROWS:.*]] = pk.tile.load_rows %{{.*}}[%[[IDS]], %{{.*}}] : !pk.tensor<?x?xbf16>, !pk.tile<32xi32> -> !pk.tile<32x256xbf16>
// CHECK: pk.tile.store_rows %[[ROWS]], %{{.*}}[%[[IDS]], %{{.*}}] : !pk.tile<32x256xbf16>, !pk.tensor<?x?xbf16>, !pk.tile<32xi32>
// CHECK: pk.tile.store_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {add} : !pk.tile<32x256xf32>, !pk.tensor<?x?xf32>, !pk.tile<32x1xi64>
// CHECK: %[[H:.*]] = pk.tile.histogram %[[IDS]] : !pk.tile<32xi32> -> !pk.tile<16xi32>
// CHECK: pk.tile.cumsum %[[H]] : !pk.tile<16xi32>
PK_KERNEL void moe_rows(Tensor<i32, 1> ids, Tensor<i64, 2> slots, Tensor<bf16, 2> x, Tensor<bf16, 2> y,
                        Tensor<f32, 2> z) {
  for (auto [t, n] : tiles(ids.size(), x.cols(), {32, 256})) {
    auto id = load<32>(ids, t);
    auto rows = load_rows<32, 256>(x, id, n);
    store_rows(y, rows, id, n);
    store_add_rows(z, cast<f32>(rows), load<32, 1>(slots, t, 0), n);
    auto offsets = cumsum(histogram<16>(id));
    store_rows(y, load_rows<16, 256>(x, offsets, n), offsets, n);
#ifdef FLOAT_INDEX
    // INDEX: error: static assertion failed{{.*}}rows move by an integer index tile (i32 or i64): cast it first
    // INDEX: int-tiles.cpp:[[@LINE+1]]:5: note: in instantiation
    store_rows(y, rows, cast<f32>(id), n);
#endif
  }
}

// Rows into and out of peers' copies, and slots claimed from a counter.
// CHECK-LABEL: pk.kernel @peer_rows
// CHECK: %[[E:.*]] = pk.tile.load {{.*}} -> !pk.tile<16x1xi32>
// CHECK: %[[S:.*]] = pk.tile.claim %{{.*}}[%[[E]]] : !pk.sym<?xi32>, !pk.tile<16x1xi32> -> !pk.tile<16x1xi32>
// CHECK: %[[P:.*]] = arith.remsi
// CHECK: pk.tile.store_rows %{{.*}}, %{{.*}}[%[[S]], %{{.*}}] on %[[P]] : !pk.tile<16x256xbf16>, !pk.sym<?x?xbf16>, !pk.tile<16x1xi32>
// CHECK: pk.tile.store_rows %{{.*}}, %{{.*}}[%[[S]], %{{.*}}] on %{{.*}} {add} : !pk.tile<16x256xf32>, !pk.sym<?x?xf32>, !pk.tile<16x1xi32>
// CHECK: pk.tile.load_rows %{{.*}}[%[[S]], %{{.*}}] on %{{.*}} : !pk.sym<?x?xbf16>, !pk.tile<16x1xi32> -> !pk.tile<16x256xbf16>
PK_KERNEL void peer_rows(Tensor<i32, 2> ids, Tensor<bf16, 2> x, Scratch<i32, 1> fill, Sym<bf16, 2> y,
                         Sym<f32, 2> z, Tensor<bf16, 2> back) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto place = claim(fill, load<16, 1>(ids, t, 0));
    auto rows = load<16, 256>(x, t, n);
    store_rows(y.on(next_rank()), rows, place, n);
    store_add_rows(z.on(0), cast<f32>(rows), place, n);
    store(back, load_rows<16, 256>(y.on(prev_rank()), place, n), t, n);
#ifdef FLOAT_COUNTER
    // COUNTER: int-tiles.cpp:[[@LINE+1]]:5: error: no matching function for call to 'claim'
    claim(z, place);
#endif
  }
}

// Tests that cumsum of a 2-D tile sums along each row (the tile library's segmented scan).
// CHECK-LABEL: pk.kernel @row_cumsum
// CHECK: pk.tile.cumsum %{{.*}} : !pk.tile<16x64xi64>
PK_KERNEL void row_cumsum(Tensor<i64, 2> p, Tensor<i64, 2> c) {
  for (auto [m, n] : tiles(p.rows(), p.cols(), {16, 64})) store(c, cumsum(load<16, 64>(p, m, n)), m, n);
}
