// Integer collectives: reductions of i32 and i64 combine exactly in their own type (no float
// accumulator), and i64 moves as 8-byte elements; integer tiles added into peers' copies
// (red.add, exact). Compiled by pkc at build time and run by
// gpu/int_collectives_test.cu at W = 1-4 against exact host results.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void ar_sum_i32(Sym<i32, 1> x, Sym<i32, 1> y) { all_reduce(Sum, x, y); }
PK_KERNEL void ar_max_i64(Sym<i64, 1> x, Sym<i64, 1> y) { all_reduce(Max, x, y); }
PK_KERNEL void ar_min_i32_rows(Sym<i32, 2> x, Sym<i32, 2> y) { all_reduce(Min, x, y); }
PK_KERNEL void rs_sum_i64(Sym<i64, 1> x, Sym<i64, 1> y) { reduce_scatter(Sum, x, y); }
PK_KERNEL void ag_i64(Sym<i64, 1> x, Sym<i64, 1> y) { all_gather(x, y); }
PK_KERNEL void reduce_sum_i32(Sym<i32, 1> x, Tensor<i32, 1> y, index root) { reduce(Sum, x, y, root); }
// A count summed over ranks, then used: an all-reduce feeding a tile loop.
PK_KERNEL void ar_then_scale_i32(Sym<i32, 1> x, Sym<i32, 1> total, Tensor<i32, 1> z) {
  all_reduce(Sum, x, total);
  for (auto i : tiles(total.dim(0), {256})) store(z, load<256>(total, i) * 3, i);
}
// Every rank adds its x into the next rank's y, and into rank 0's (all ranks at once).
PK_KERNEL void add_to_next_i32(Tensor<i32, 1> x, Sym<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store_add(y.on((rank() + 1) % world_size()), load<256>(x, i), i);
}
PK_KERNEL void add_to_first_i64(Tensor<i64, 1> x, Sym<i64, 1> y) {
  for (auto i : tiles(x.size(), {256})) store_add(y.on(0), load<256>(x, i), i);
}
