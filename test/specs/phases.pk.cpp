// Kernels of dependent phases (one worker, grid-wide barriers between phases), run by
// test/gpu/phases_test.cu at W = 1-4 against float64 references.
#include <pk/spec.h>
using namespace pk;

// z = all-gather of (all-reduce of x): every rank ends with W copies of the sum.
PK_KERNEL void ar_then_ag(Sym<f32, 1> x, Sym<f32, 1> y, Sym<f32, 1> z) {
  all_reduce(Sum, x, y);
  all_gather(y, z);
}

// Tensor-parallel RMSNorm of [rows, 2048] column shards (one per rank, hidden size 2048 x W):
// squared row sums of the shard, their all-reduce, then the scale of the shard.
PK_KERNEL void tp_rms_norm(Tensor<f32, 2> x, Tensor<f32, 2> w, Sym<f32, 2> ss, Sym<f32, 2> total,
                           Tensor<f32, 2> y, float inv_n, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 2048>(x, m, 0);
    store(ss, row_sum(t * t), m, 0);
  }
  all_reduce(Sum, ss, total);
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 2048>(x, m, 0);
    store(y, t * rsqrt(load<8, 1>(total, m, 0) * inv_n + eps) * load<1, 2048>(w, 0, 0), m, 0);
  }
}

// Tiles written into peers beside a collective (grid-wide barriers around the peer phase): a
// ring shift of x into the next rank's y, then z = all-reduce of y (so z is the sum of x).
PK_KERNEL void shift_then_ar(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y.on(next_rank()), load<16, 256>(x, m, n), m, n);
  all_reduce(Sum, y, z);
}

// y = all-reduce of x, then every rank adds 2 y into rank 0's z.
PK_KERNEL void ar_then_add(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z) {
  all_reduce(Sum, x, y);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 256}))
    store_add(z.on(0), load<16, 256>(y, m, n) * 2.0f, m, n);
}

// Local phases only, no collective: the second loop reads tiles of s that other blocks wrote,
// so it must wait for the whole first loop (a grid-wide barrier). y[i] = 2 x[n - 1 - i].
PK_KERNEL void reverse_twice(Tensor<f32, 1> x, Scratch<f32, 1> s, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024})) store(s, load<1024>(x, i) * 2.0f, i);
  for (auto i : tiles(x.size(), {1})) store(y, load<1>(s, x.size() - 1 - i), i);
}

// Two ring shifts in a row, no collective: z on rank r + 2 takes x of rank r.
PK_KERNEL void shift_twice(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y.on(next_rank()), load<16, 256>(x, m, n), m, n);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 256}))
    store(z.on(next_rank()), load<16, 256>(y, m, n), m, n);
}
