// RUN: pkc %s --emit=device-mlir 2>&1 | FileCheck %s
// RUN: pkc %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pkc %s --emit=cubin -o %t.cubin
// Tests that kernels of dependent phases (collective -> collective, compute -> collective ->
// compute) run in one worker with a grid-wide barrier before each dependent phase, that the
// protocol checker proves them (no error, no warning), and that they compile for sm_90a.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @ar_then_ag
// CHECK-COUNT-1: pk.worker <communicator> blocks 132
// CHECK: %[[R:.*]] = pk.rank
// CHECK: %[[W:.*]] = pk.world_size
// CHECK: pk.comm.reduce_into
// CHECK: %[[G:.*]] = pk.sync.flag {{[0-9]+}} <grid>
// CHECK: %[[B:.*]] = pk.grid_blocks
// CHECK: %[[ALL:.*]] = arith.muli %[[W]], %[[B]]
// CHECK: pk.sync.signal_all %[[G]]
// CHECK: pk.sync.signal %[[G]] on %[[R]]
// CHECK: pk.sync.wait %[[G]], %[[ALL]]
// CHECK: pk.comm.copy
// CHECK-NOT: pk.worker
// CHECK: pk.return
// EXPLAIN-LABEL: decisions for kernel 'ar_then_ag'
// EXPLAIN: no one-round path: the kernel's phases run in one worker
// EXPLAIN: pk.coll.all_gather at {{.*}}phases.cpp:[[@LINE+3]]:26: this phase uses a tensor an earlier phase of the kernel wrote
// EXPLAIN: one worker of 132 blocks runs the kernel's phases in order (1 grid-wide barrier between dependent phases)
PK_KERNEL void ar_then_ag(Sym<bf16, 1> x, Sym<bf16, 1> y, Sym<bf16, 1> z) {
  all_reduce(Sum, x, y); all_gather(y, z);
}

// EXPLAIN-LABEL: decisions for kernel 'rs_then_ar'
// EXPLAIN: (1 grid-wide barrier between dependent phases)
PK_KERNEL void rs_then_ar(Sym<f32, 1> x, Sym<f32, 1> y, Sym<f32, 1> z) {
  reduce_scatter(Max, x, y); all_reduce(Min, y, z);
}

// Independent collectives keep their separate workers (no barrier needed).
// CHECK-LABEL: pk.kernel @independent
// CHECK-NOT: <grid>
// CHECK: pk.worker
// CHECK: pk.worker
PK_KERNEL void independent(Sym<f32, 1> a, Sym<f32, 1> b, Sym<f32, 1> c, Sym<f32, 1> d) {
  all_reduce(Sum, a, b); all_gather(c, d);
}

// Tensor-parallel RMSNorm: squared row sums of this rank's column shard, an all-reduce of the
// sums, then the scale of the shard.
// EXPLAIN-LABEL: decisions for kernel 'tp_rms_norm'
// EXPLAIN: pk.coll.all_reduce {{.*}}this phase uses a tensor an earlier phase
// EXPLAIN: pk.tile.foreach {{.*}}this phase uses a tensor an earlier phase
// EXPLAIN: (2 grid-wide barriers between dependent phases)
// EXPLAIN-NOT: warning
PK_KERNEL void tp_rms_norm(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Sym<f32, 2> ss, Sym<f32, 2> total,
                           Tensor<bf16, 2> y, float inv_n, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 2048>(x, m, 0));
    store(ss, row_sum(t * t), m, 0);
  }
  all_reduce(Sum, ss, total);
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 2048>(x, m, 0));
    store(y, cast<bf16>(t * rsqrt(load<8, 1>(total, m, 0) * inv_n + eps) * cast<f32>(load<1, 2048>(w, 0, 0))), m, 0);
  }
}

// Local phases without any collective still run in order: the second loop reads tiles of s
// that other blocks wrote, so a grid-wide barrier separates the loops (no barrier, no worker
// before this fix: the loops raced).
// CHECK-LABEL: pk.kernel @reverse_twice
// CHECK: pk.worker <communicator>
// CHECK: pk.tile.foreach
// CHECK: pk.tile.store
// CHECK: pk.sync.flag {{[0-9]+}} <grid>
// CHECK: pk.sync.wait
// CHECK: pk.tile.foreach
// EXPLAIN-LABEL: decisions for kernel 'reverse_twice'
// EXPLAIN: pk.tile.foreach at {{.*}}phases.cpp:[[@LINE+4]]:3: this phase uses a tensor an earlier phase
// EXPLAIN: (1 grid-wide barrier between dependent phases)
PK_KERNEL void reverse_twice(Tensor<f32, 1> x, Scratch<f32, 1> s, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024})) store(s, load<1024>(x, i) * 2.0f, i);
  for (auto i : tiles(x.size(), {1})) store(y, load<1>(s, x.size() - 1 - i), i);
}

// Independent local loops need no barrier and keep the no-wait general path.
// CHECK-LABEL: pk.kernel @two_independent
// CHECK-NOT: pk.worker
// CHECK: pk.return
PK_KERNEL void two_independent(Tensor<f32, 1> x, Tensor<f32, 1> y, Tensor<f32, 1> z) {
  for (auto i : tiles(x.size(), {1024})) store(y, load<1024>(x, i) * 2.0f, i);
  for (auto i : tiles(x.size(), {1024})) store(z, load<1024>(x, i) + 1.0f, i);
}

// Two ring shifts without a collective: barriers before each peer phase and after the last.
// EXPLAIN-LABEL: decisions for kernel 'shift_twice'
// EXPLAIN: (3 grid-wide barriers between dependent phases)
PK_KERNEL void shift_twice(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y.on(next_rank()), load<16, 256>(x, m, n), m, n);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 256}))
    store(z.on(next_rank()), load<16, 256>(y, m, n), m, n);
}

// A count read outside the tile loops (the next loop's bound) waits for the phase that wrote
// it: a grid-wide barrier before the scalar read (before this fix it read the count while the
// first loop was still writing it).
// CHECK-LABEL: pk.kernel @count_then_use
// CHECK: pk.tile.foreach
// CHECK: pk.sync.wait
// CHECK-NEXT: pk.load_scalar
// CHECK: pk.tile.foreach
// EXPLAIN-LABEL: decisions for kernel 'count_then_use'
// EXPLAIN: pk.load_scalar at {{.*}}phases.cpp:[[@LINE+3]]:30: this phase uses a tensor an earlier phase
PK_KERNEL void count_then_use(Tensor<i32, 1> ids, Tensor<i32, 1> counts, Tensor<f32, 1> y) {
  for (auto t : tiles(ids.size(), {256})) store(counts, load<256>(ids, t), t);
  for (auto i : tiles(counts.at(0), {256})) store(y, zeros<f32, 256>(), i);
}

// Tests that phases which never touch peers (no collective, no peer tile) are ordered by a
// barrier inside the rank: each block signals its own rank and waits for grid_blocks signals,
// no signal_all and no world_size in the count.
// CHECK-LABEL: pk.kernel @local_phases
// CHECK: %[[G:.*]] = pk.sync.flag {{[0-9]+}} <grid>
// CHECK-NEXT: %[[R:.*]] = pk.rank
// CHECK-NEXT: %[[B:.*]] = pk.grid_blocks
// CHECK-NEXT: pk.sync.signal %[[G]] on %[[R]]
// CHECK-NEXT: pk.sync.wait %[[G]], %[[B]]
// CHECK-NOT: pk.sync.signal_all
// CHECK: pk.return
// EXPLAIN-LABEL: decisions for kernel 'local_phases'
// EXPLAIN: a grid-wide barrier first, inside this rank (no phase touches peers)
PK_KERNEL void local_phases(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(x, load<16, 128>(x, m, n) * 2.0f, m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, load<16, 128>(x, (m + 16) % x.rows(), n), m, n);
}
