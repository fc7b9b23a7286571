// A clipped load's padding loads as zero and is computed on like any value: row reductions and
// cumsum count it as the tile holds it, and a mask over it works, on each of the reductions' three
// routes: in warps (rows of up to 256), block-wide (rows of whole runs of every thread) and
// through the stage. GPU test: test/gpu/row_padding_jit_test.cu.
#include <pk/spec.h>
using namespace pk;

// Softmax of rows of N <= 64 values in one 64-wide tile, the padding columns masked (in warps).
PK_KERNEL void softmax_short_rows(Tensor<f32, 2> x, Tensor<f32, 2> p) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = where(col_index<16, 64>(0) < float(x.cols()), load<16, 64>(x, m, 0), -1e30f);
    auto e = exp(t - row_max(t));
    store(p, e / row_sum(e), m, 0);
  }
}

// The sum of exp(x - 1) over the 64 columns of each row's tile, unmasked: each padding column adds
// exp(0 - 1) (set 19's probe, finding 5).
PK_KERNEL void sum_exp_short_rows(Tensor<f32, 2> x, Tensor<f32, 2> s) {
  for (auto m : tiles(x.rows(), {16})) store(s, row_sum(exp(load<16, 64>(x, m, 0) - 1.0f)), m, 0);
}

// Greedy speculative decoding's accepted prefix: the drafts before the first miss, the columns
// past K marked as misses, so the count stops at K (set 20's finding 1: the mask over the padding
// counts in the cumsum as written).
PK_KERNEL void accepted_prefix(Tensor<i32, 2> draft, Tensor<i32, 2> target, Tensor<i32, 1> count) {
  for (auto b : tiles(draft.rows(), {16})) {
    auto col = col_index<16, 16>(0);
    auto miss = cast<i32>(load<16, 16>(draft, b, 0) != load<16, 16>(target, b, 0)) +
                cast<i32>(col >= float(draft.cols()));
    store(count, cast<i32>(row_sum(cast<f32>(cumsum(miss) == 0))), b);
  }
}

// The maximum and minimum of rows of up to 4096 values, the padding masked (block-wide).
PK_KERNEL void max_min_wide_rows(Tensor<f32, 2> x, Tensor<f32, 2> mx, Tensor<f32, 2> mn) {
  for (auto m : tiles(x.rows(), {4})) {
    auto t = load<4, 4096>(x, m, 0);
    auto inside = col_index<4, 4096>(0) < float(x.cols());
    store(mx, row_max(where(inside, t, -1e30f)), m, 0);
    store(mn, row_min(where(inside, t, 1e30f)), m, 0);
  }
}

// The minimum of one row of up to 8192 values unmasked (a padding zero is the minimum of a
// partial row of positive values) and the row's mean (the zeros add nothing).
PK_KERNEL void min_mean_one_row(Tensor<f32, 2> x, Tensor<f32, 2> out) {
  for (auto m : tiles(x.rows(), {1})) {
    auto t = load<1, 8192>(x, m, 0);
    store(out, row_min(t), m, 0);
    store(out, row_sum(t) * (1.0f / float(x.cols())), m, 1);
  }
}
