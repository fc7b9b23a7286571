// Vocabulary-parallel cross-entropy (the Megatron-LM form): the logits [T, W V] are split by
// columns over W ranks, rank r holding columns [r V, (r + 1) V) as its [T, V] `logits`;
// `target` [T, 1] holds each token's class (global ids). Three phases and two all-reduces, in
// one kernel: each rank's row maxima, all-reduced (max); each rank's sums of exp(x - max) and
// its shard's target logit (zero when the target lies in another shard), all-reduced (sum);
// then loss[t] = log(sum) + max - target logit, on every rank. The Sym tensors are [T, 1] and
// [T, 2] workspaces.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void cross_entropy_vocab_parallel(Tensor<f32, 2> logits, Tensor<i32, 2> target,
                                            Sym<f32, 2> local_max, Sym<f32, 2> row_max_all,
                                            Sym<f32, 2> local_stats, Sym<f32, 2> stats,
                                            Tensor<f32, 2> loss) {
  const index first = rank() * logits.cols();
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = zeros<f32, 16, 1>() - 1e30f;
    for (auto n : range(0, logits.cols(), 512))
      m = max(m, row_max(where(col_index<16, 512>(n) < logits.cols(), load<16, 512>(logits, t, n), -1e30f)));
    store(local_max, m, t, 0);
  }
  all_reduce(Max, local_max, row_max_all);
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = load<16, 1>(row_max_all, t, 0);
    auto want = cast<f32>(load<16, 1>(target, t, 0) - first);  // the target's column in this shard
    auto sum = zeros<f32, 16, 1>();
    auto picked = zeros<f32, 16, 1>();
    for (auto n : range(0, logits.cols(), 512)) {
      auto x = load<16, 512>(logits, t, n);
      auto cols = col_index<16, 512>(n);
      sum = sum + row_sum(where(cols < logits.cols(), exp(x - m), 0.0f));
      picked = picked + row_sum(where(cols == want, x, 0.0f));
    }
    store(local_stats, sum, t, 0);
    store(local_stats, picked, t, 1);
  }
  all_reduce(Sum, local_stats, stats);
  for (auto t : tiles(logits.rows(), {16}))
    store(loss, log(load<16, 1>(stats, t, 0)) + load<16, 1>(row_max_all, t, 0) - load<16, 1>(stats, t, 1), t, 0);
}
