// A clipped load's padding is not data: row reductions skip it (as cumsum, row_topk and histogram
// do), on each of their three routes: in warps (rows of up to 256), block-wide (rows of whole
// runs of every thread) and through the stage. GPU test: test/gpu/row_padding_jit_test.cu.
#include <pk/spec.h>
using namespace pk;

// Softmax of rows of N <= 64 values in one 64-wide tile, no mask (the in-warp route).
PK_KERNEL void softmax_short_rows(Tensor<f32, 2> x, Tensor<f32, 2> p) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 64>(x, m, 0);
    auto e = exp(t - row_max(t));
    store(p, e / row_sum(e), m, 0);
  }
}

// The sum of exp(x - 1) over each row's N values (set 19's probe: padding would add exp(-1)).
PK_KERNEL void sum_exp_short_rows(Tensor<f32, 2> x, Tensor<f32, 2> s) {
  for (auto m : tiles(x.rows(), {16})) store(s, row_sum(exp(load<16, 64>(x, m, 0) - 1.0f)), m, 0);
}

// Greedy speculative decoding's accepted prefix: the drafts before the first miss, the columns
// past K marked as misses (set 20's finding 1: counts only the tensor's K columns).
PK_KERNEL void accepted_prefix(Tensor<i32, 2> draft, Tensor<i32, 2> target, Tensor<i32, 1> count) {
  for (auto b : tiles(draft.rows(), {16})) {
    auto col = col_index<16, 16>(0);
    auto miss = cast<i32>(load<16, 16>(draft, b, 0) != load<16, 16>(target, b, 0)) +
                cast<i32>(col >= float(draft.cols()));
    store(count, cast<i32>(row_sum(cast<f32>(cumsum(miss) == 0))), b);
  }
}

// The maximum and minimum of rows of up to 4096 values (through the stage).
PK_KERNEL void max_min_wide_rows(Tensor<f32, 2> x, Tensor<f32, 2> mx, Tensor<f32, 2> mn) {
  for (auto m : tiles(x.rows(), {4})) {
    auto t = load<4, 4096>(x, m, 0);
    store(mx, row_max(t), m, 0);
    store(mn, row_min(t), m, 0);
  }
}

// The minimum of one row of up to 8192 values (a block-wide reduction) and the row's mean.
PK_KERNEL void min_mean_one_row(Tensor<f32, 2> x, Tensor<f32, 2> out) {
  for (auto m : tiles(x.rows(), {1})) {
    auto t = load<1, 8192>(x, m, 0);
    store(out, row_min(t), m, 0);
    store(out, row_sum(t) * (1.0f / float(x.cols())), m, 1);
  }
}
