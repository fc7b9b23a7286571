// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests integers read from memory (`x.at(i)`) in kernels that communicate (specs10 findings 3,
// 10): one that chooses a peer, or bounds a loop that stores into peers, is an error at that use
// (the checker cannot know it on every rank, so the kernel could race); one used only as a value
// compiles, proved; one that bounds a loop of local work leaves the protocol unverified with a
// warning that names the op.
#include <pk/spec.h>
using namespace pk;

// CHECK-NOT: memory-read-values.cpp:{{1[0-9]}}:
PK_KERNEL void count_as_value(Sym<i32, 1> cnt, Tensor<i32, 1> tot, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  all_reduce(Sum, cnt, tot);
  index n = tot.at(1);
  for (auto [m, c] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, c) / float(n + 1), m, c);
}

// CHECK: memory-read-values.cpp:[[@LINE+3]]:59: error: a kernel that communicates cannot use an integer read from memory to choose a peer{{.*}}(pk.load_scalar)
PK_KERNEL void peer_from_memory(Tensor<i32, 1> dst, Sym<f32, 2> x, Sym<f32, 2> y) {
  index p = dst.at(0);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y.on(p), load<16, 64>(x, m, n), m, n);
}

// CHECK: memory-read-values.cpp:[[@LINE+3]]:3: error: a kernel that communicates cannot use an integer read from memory
PK_KERNEL void peer_loop_bound(Sym<i32, 1> cnt, Tensor<i32, 1> tot, Sym<f32, 2> x, Sym<f32, 2> y) {
  all_reduce(Sum, cnt, tot);
  for (auto [m, c] : tiles(tot.at(0), x.cols(), {16, 64}))
    store(y.on(next_rank()), load<16, 64>(x, m, c), m, c);
}

// CHECK: memory-read-values.cpp:[[@LINE+3]]:3: warning: protocol not verified: a value read from memory (pk.load_scalar) decides {{.*}}('pk.tile.foreach')
PK_KERNEL void local_loop_bound(Sym<i32, 1> cnt, Tensor<i32, 1> tot, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  all_reduce(Sum, cnt, tot);
  for (auto [m, c] : tiles(tot.at(0), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, c), m, c);
}

// A range loop bounded by values read from memory that only reads local tensors (a jagged bag's
// rows, summed before an all-reduce): recorded as reads of those whole tensors, whatever its
// trips, so the kernel is proved with no warning. A loop that also stores is the warning above.
// CHECK-NOT: memory-read-values.cpp:{{[0-9]+}}:{{[0-9]+}}: warning
PK_KERNEL void jagged_local_reads(Tensor<i32, 1> off, Tensor<f32, 2> x, Scratch<f32, 2> part, Sym<f32, 2> out) {
  for (auto [b, n] : tiles(part.rows(), part.cols(), {1, 64})) {
    auto acc = zeros<f32, 1, 64>();
    for (auto j : range(off.at(b), off.at(b + 1), 1)) acc = acc + load<1, 64>(x, j, n);
    store(part, acc, b, n);
  }
  all_reduce(Sum, part, out);
}
