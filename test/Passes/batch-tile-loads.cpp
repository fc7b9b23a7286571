// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pkc %s --tile-threads=1024 --tile-batch=4 -o - | FileCheck %s --check-prefix=WIDE
// RUN: pkc %s --tile-threads=1024 --tile-batch=1 -o - | FileCheck %s --check-prefix=OFF
// RUN: pkc %s --tile-batch=3 --kernel=copy -o - | FileCheck %s --check-prefix=THREE
// RUN: pkc %s --tile-threads=256 --kernel=three_loads -o - | FileCheck %s --check-prefix=FORCED
// RUN: not pkc %s --tile-batch=9 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not pkc %s --tile-threads=300 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-THREADS
// RUN: pkc %s --tile-stages=3 --kernel=copy -o - | FileCheck %s --check-prefix=STAGES3
// RUN: not pkc %s --tile-stages=5 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-STAGES
// RUN: pkc %s --tile-batch=2 --kernel=scaled_blocks -o - | FileCheck %s --check-prefix=BATCHED-ROWS
// Stages that do not fit a block's shared memory: fewer, or no ring, and --explain says so
// (set 39, finding 5).
// RUN: pkc %s --tile-stages=4 --kernel=softmax --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=FEWER
// FEWER: 4 ring stages (--tile-stages) of 16 KiB exceed the {{[0-9]+}} KiB a block may hold: 3 stages instead
// FEWER: into a 3-stage shared-memory ring
// RUN: pkc %s --tile-threads=256 --kernel=wide_rows --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=NORING
// NORING: no prefetch ring: two stages of this loop's loads (128 KiB) exceed the {{[0-9]+}} KiB of shared memory a block may hold at this block size
// A tile loop nested in another gets neither, and --explain says why (set 39, finding 6):
// RUN: pkc %s --kernel=nested_exp --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: batch-tile-loads.cpp:[[@LINE+193]]:5: no prefetch ring or batched loads: this tile loop is nested in another
// Tests pk-batch-tile-loads: kernels whose blocks never wait on each other get 32 warps per SM
// in the smallest blocks whose live tiles fit 48 registers a thread; their loops copy the next
// tile's loads into a shared-memory ring while computing this one when the ring fits beside
// the blocks' other shared memory; --tile-batch=K instead issues the loads of K tiles into
// registers before computing any; which loops and loads may do either.
#include <pk/spec.h>
using namespace pk;

// No block waits on another. A bf16 1 x 8192 row is 32 registers a thread in a 256-thread
// block, so four such blocks share an SM and the grid is four per SM. Two 16 KiB stages of the
// row fit beside the reductions' partials (two halves of 8 floats, no stage: the row statistic
// is one element): the first tile's copy starts before the loop, each trip copies the next
// tile's into the other stage, waits for its own and reads the row from there; whether each
// copy was made (the row lies inside the tensor) is a bit the reading trip tests, not the origin.
// CHECK: constexpr int kThreads = 256;
// CHECK: constexpr int kBlocks = 528;
// CHECK: constexpr int kBlocksPerSm = 4;
// CHECK: constexpr unsigned kSharedBytes = 32768;
// CHECK: // pk-launch softmax threads=256 blocks=528 flag_slots=0 blocks_per_sm=4 smem=32768 args=
// CHECK-LABEL: void __launch_bounds__(256, 4) softmax(
// CHECK-NOT: pk_stage[
// CHECK: __shared__ float pk_partials[2 * 8];
// CHECK: extern __shared__ __align__(16) unsigned char pk_ring[];
// The block's tiles are walked without dividing (pk/tile/walk.cuh).
// CHECK: pk::tile::TileWalk<2> [[W:pk_walk[0-9]+]](blockIdx.x, gridDim.x, {[[C0:pk_tiles[0-9]+]], [[C1:pk_tiles[0-9]+]]});
// CHECK: if (blockIdx.x + 0LL * gridDim.x < [[TOTAL:.*]]) {
// CHECK: const auto [[W0:pk_walk[0-9]+]] = [[W]].ahead(0);
// CHECK: = [[W0]].at(1) * 8192;
// CHECK: pk::tile::note_copy([[F0:pk_fits[0-9]+]], (0) * 1 + 0, pk::tile::prefetch<pk::tile::rt<pk::bf16, 2, 1, 8192, 1, 1, 256>>(reinterpret_cast<pk::bf16*>(pk_ring + (0) * 16384 + 0), arg0.data
// CHECK: pk::tile::prefetch_commit();
// CHECK: for (long long [[T:pk_tile[0-9]+]] = blockIdx.x, [[S:pk_slot[0-9]+]] = 0; [[T]] < [[TOTAL]]; [[T]] += gridDim.x, [[S]] = [[S]] + 1 == 2 ? 0 : [[S]] + 1, [[W]].advance()) {
// CHECK: if ([[T]] + 1LL * gridDim.x < [[TOTAL]]) {
// CHECK: = [[W]].ahead(1);
// CHECK: pk::tile::prefetch<{{.*}}(pk_ring + (([[S]] + 1) % 2) * 16384 + 0), arg0.data
// CHECK: pk::tile::prefetch_commit();
// CHECK-NEXT: pk::tile::prefetch_wait<1>();
// CHECK: pk::tile::load_prefetched({{tile[0-9]+}}, reinterpret_cast<const pk::bf16*>(pk_ring + ([[S]]) * 16384 + 0), ([[F:pk_fits[0-9]+]] >> (([[S]]) * 1 + 0)) & 1u, arg0.data
// CHECK: pk::tile::reduce_rows({{.*}}, pk::tile::RowOp::max, pk_partials, 8, pk_parity);
// CHECK: pk::tile::reduce_rows({{.*}}, pk::tile::RowOp::sum, pk_partials, 8, pk_parity);
// CHECK: pk::tile::prefetch_wait<0>();
// In 1024-thread blocks the row is 8 registers a thread, and --tile-batch=4 takes four rows
// into registers: the loads of all four come first (the last ones clamped to the loop's last
// tile), then each row's reductions and stores behind a guard.
// WIDE: constexpr int kThreads = 1024;
// WIDE-LABEL: void __launch_bounds__(1024, 1) softmax(
// WIDE: for (long long [[T:pk_tile[0-9]+]] = blockIdx.x; [[T]] < [[TOTAL:.*]]; [[T]] += 4LL * gridDim.x) {
// WIDE: min([[T]] + 0LL * gridDim.x, [[TOTAL]] - 1);
// WIDE: pk::tile::load([[A:tile[0-9]+]], arg0.data
// WIDE: min([[T]] + 3LL * gridDim.x, [[TOTAL]] - 1);
// WIDE: pk::tile::load([[D:tile[0-9]+]], arg0.data
// WIDE-NOT: pk::tile::load
// WIDE: if ([[T]] + 0LL * gridDim.x < [[TOTAL]]) {
// WIDE: pk::tile::cast({{tile[0-9]+}}, [[A]]);
// WIDE: if ([[T]] + 3LL * gridDim.x < [[TOTAL]]) {
// WIDE: pk::tile::cast({{tile[0-9]+}}, [[D]]);
// EXPLAIN: general path: pk.kernel at {{.*}}batch-tile-loads.cpp:[[@LINE+5]]:16: 256 threads per block, 4 block(s) per SM (the launch has 4 x the worker's blocks): no block waits on another{{.*}}the smallest block whose live tiles fit 48 registers a thread
// EXPLAIN: general path: pk.tile.foreach at {{.*}}batch-tile-loads.cpp:{{[0-9]+}}:3: each block copies 1 load(s) of its next tile into a 2-stage shared-memory ring (32 KiB a block, cp.async)
// OFF-LABEL: softmax(
// OFF: [[T:pk_tile[0-9]+]] += gridDim.x, {{pk_walk[0-9]+}}.advance()) {
// OFF-NOT: pk::tile::prefetch
PK_KERNEL void softmax(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 8192})) {
    auto t = cast<f32>(load<1, 8192>(x, m, n));
    auto e = exp(t - row_max(t));
    store(y, cast<bf16>(e / row_sum(e)), m, n);
  }
}

// The load of y follows a store into y in the same tile, so it stays where it is (it must see
// that store); only the load of x moves ahead: into the ring, or four tiles of it.
// CHECK-LABEL: reload(
// CHECK-NOT: pk::tile::prefetch<{{.*}}arg1.data
// CHECK: pk::tile::load_prefetched({{tile[0-9]+}}, {{.*}}arg0.data
// CHECK: pk::tile::store({{tile[0-9]+}}, arg1.data
// CHECK: pk::tile::load({{tile[0-9]+}}, arg1.data
// WIDE-LABEL: reload(
// WIDE: += 4LL * gridDim.x) {
// WIDE-COUNT-4: pk::tile::load({{tile[0-9]+}}, arg0.data
// WIDE-NOT: pk::tile::load
// WIDE: if (
// WIDE: pk::tile::store({{tile[0-9]+}}, arg1.data
// WIDE-NEXT: pk::tile::rt
// WIDE-NEXT: pk::tile::load({{tile[0-9]+}}, arg1.data
// WIDE: pk::tile::store({{tile[0-9]+}}, arg2.data
PK_KERNEL void reload(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 8192})) {
    auto t = load<1, 8192>(x, m, n);
    store(y, t / row_sum(t), m, n);
    store(z, load<1, 8192>(y, m, n) * 2.0f, m, n);
  }
}

// Element-wise loops take the ring too; --tile-batch sets K for them.
// CHECK: // pk-launch copy threads=256 blocks=528 flag_slots=0 blocks_per_sm=4 smem=32768 args=
// CHECK-LABEL: void __launch_bounds__(256, 4) copy(
// CHECK: pk::tile::load_prefetched(
// THREE: += 3LL * gridDim.x) {
// --tile-stages=3 keeps two tiles in flight ahead of the one computed: a ring of three stages.
// STAGES3: // pk-launch copy threads=256 blocks=528 flag_slots=0 blocks_per_sm=4 smem=49152 args=
// STAGES3: pk_slot{{[0-9]+}} + 1 == 3 ? 0
// STAGES3: pk::tile::prefetch_wait<2>();
PK_KERNEL void copy(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 1024})) store(y, load<8, 1024>(x, m, n), m, n);
}

// The weight row's origin does not move with the row index m, so it goes through the ring
// only when it moves (one RingReuse for w and b, which share the origin); x is copied every
// trip. Each trip reads w and b from the stage their latest copy went to.
// CHECK-LABEL: weighted(
// CHECK: pk::tile::RingReuse<2, 2> [[R:pk_reuse[0-9]+]];
// CHECK-NOT: RingReuse
// CHECK: for (long long [[T:pk_tile[0-9]+]] = blockIdx.x, [[S:pk_slot[0-9]+]] = 0;
// CHECK: pk::tile::prefetch<{{.*}}(pk_ring + (([[S]] + 1) % 2) * 49152 + 0), arg0.data
// CHECK: const bool [[M:pk_moved[0-9]+]] = [[R]].moved({{{.*}}}, ([[S]] + 1) % 2);
// CHECK: if ([[M]]) pk::tile::note_copy({{pk_fits[0-9]+}}, ([[R]].latest) * 3 + 1, pk::tile::prefetch<{{.*}}(pk_ring + ([[R]].latest) * 49152 + 16384), arg1.data
// CHECK: if ([[M]]) pk::tile::note_copy({{pk_fits[0-9]+}}, ([[R]].latest) * 3 + 2, pk::tile::prefetch<{{.*}}(pk_ring + ([[R]].latest) * 49152 + 32768), arg2.data
// CHECK: pk::tile::load_prefetched({{tile[0-9]+}}, {{.*}}(pk_ring + ([[S]]) * 49152 + 0), ({{pk_fits[0-9]+}} >> (([[S]]) * 3 + 0)) & 1u, arg0.data
// CHECK: pk::tile::load_prefetched({{tile[0-9]+}}, {{.*}}(pk_ring + ([[R]].of([[S]])) * 49152 + 16384), ({{pk_fits[0-9]+}} >> (([[R]].of([[S]])) * 3 + 1)) & 1u, arg1.data
// CHECK: pk::tile::load_prefetched({{tile[0-9]+}}, {{.*}}(pk_ring + ([[R]].of([[S]])) * 49152 + 32768), ({{pk_fits[0-9]+}} >> (([[R]].of([[S]])) * 3 + 2)) & 1u, arg2.data
// EXPLAIN: general path: pk.tile.foreach at {{.*}}batch-tile-loads.cpp:[[@LINE+2]]:3: each block copies 3 load(s) {{.*}}; 2 of them do not move with the loop's first index (a weight row), so each is copied only when its origin moved
PK_KERNEL void weighted(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> b, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 8192})) {
    auto t = cast<f32>(load<1, 8192>(x, m, n));
    store(y, cast<bf16>(t * cast<f32>(load<1, 8192>(w, 0, n)) + cast<f32>(load<1, 8192>(b, 0, n))), m, n);
  }
}

// The f32 rows it loads and computes exceed 48 registers a thread at 256 threads and fit at
// 512: two 512-thread blocks per SM. Two stages of three 32 KiB rows do not fit beside each
// other block's, so no ring, and the rows leave no registers for a second tile either.
// CHECK: // pk-launch three_loads threads=512 blocks=264 flag_slots=0 blocks_per_sm=2 args=
// CHECK-LABEL: void __launch_bounds__(512, 2) three_loads(
// CHECK: += gridDim.x, {{pk_walk[0-9]+}}.advance()) {
// --tile-threads overrides the choice.
// FORCED: // pk-launch three_loads threads=256 blocks=528 flag_slots=0 blocks_per_sm=4 args=
// CHECK-NOT: pk::tile::prefetch
// WIDE-LABEL: three_loads(
// WIDE: += 4LL * gridDim.x) {
PK_KERNEL void three_loads(Tensor<f32, 2> x, Tensor<f32, 2> w, Tensor<f32, 2> b, Tensor<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 8192})) {
    auto t = load<1, 8192>(x, m, n);
    store(z, t / row_sum(t) * load<1, 8192>(w, 0, n) + load<1, 8192>(b, 0, n), m, n);
  }
}

// A 1 x 16384 f32 row is 32 registers a thread at 512 threads, and the row and its square
// live together: 64 registers, so one 1024-thread block per SM, with a ring of two 64 KiB rows.
// CHECK: // pk-launch wide_rows threads=1024 blocks=132 flag_slots=0 smem=131072 args=
// CHECK-LABEL: void __launch_bounds__(1024, 1) wide_rows(
PK_KERNEL void wide_rows(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 16384})) {
    auto t = load<1, 16384>(x, m, n);
    store(y, t * row_sum(t * t), m, n);
  }
}

// A kernel with a collective keeps one 512-thread block per SM (its blocks wait on flags), and
// its loads in registers.
// CHECK: constexpr int kBlocks = 132;
// CHECK-NEXT: constexpr int kBlocksPerSm = 1;
// CHECK-NEXT: constexpr int kFlagSlots = {{[0-9]+}};
// CHECK-NEXT: constexpr unsigned kSharedBytes = 0;
// CHECK: // pk-launch scale_then_sum threads=512 blocks=132 flag_slots={{[0-9]+}} args=
// CHECK-LABEL: void __launch_bounds__(512, 1) scale_then_sum(
// WIDE-LABEL: void __launch_bounds__(512, 1) scale_then_sum(
PK_KERNEL void scale_then_sum(Tensor<f32, 1> x, Sym<f32, 1> y, Sym<f32, 1> z) {
  for (auto i : tiles(x.size(), {4096})) store(y, load<4096>(x, i) * 2.0f, i);
  all_reduce(Sum, y, z);
}
// A batched loop emits its body once per tile; a row vector (the scale column, rebuilt by every
// thread) is declared in each tile's scope from that tile's origin, never reused across them.
// BATCHED-ROWS-LABEL: scaled_blocks(
// BATCHED-ROWS: if (pk_tile{{[0-9]+}} + 0LL * gridDim.x <
// BATCHED-ROWS: const auto [[A:rowvec[0-9]+]] = pk::tile::row_values<{{.*}}read_column(arg1.data, arg1.shape, [[I:i[0-9]+]], r, [[J:v[0-9]+]]){{.*}}
// BATCHED-ROWS: map_broadcast({{.*}}, [[A]], false,
// BATCHED-ROWS: if (pk_tile{{[0-9]+}} + 1LL * gridDim.x <
// BATCHED-ROWS-NOT: [[A]]
// BATCHED-ROWS: const auto [[B:rowvec[0-9]+]] = pk::tile::row_values<{{.*}}read_column(arg1.data, arg1.shape, {{i[0-9]+}}, r, {{v[0-9]+}}){{.*}}
// BATCHED-ROWS-NOT: [[A]]
// BATCHED-ROWS: map_broadcast({{.*}}, [[B]], false,
PK_KERNEL void scaled_blocks(Tensor<bf16, 2> q, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 128}))
    store(y, cast<bf16>(cast<f32>(load<16, 128>(q, m, n)) * load<16, 1>(s, m, n / 128)), m, n);
}

// BAD: --tile-batch must be 0 (chosen by pkc) or a tile count from 1 to 8
// BAD-THREADS: --tile-threads must be 0 (chosen by pkc), 256, 512 or 1024
// BAD-STAGES: --tile-stages must be 2, 3 or 4

// A nested tile loop (the NESTED check above): its tiles run in order inside the outer block.
PK_KERNEL void nested_exp(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto n : tiles(x.cols(), {64})) store(y, exp(load<16, 64>(x, m, n)), m, n);
}
