// The shipped vocabulary-parallel cross-entropy (templates/specs/cross_entropy_vocab_parallel.pk.cpp,
// compiled by pkc at build time) at world size 1 and at 2, 3 and 4 ranks sharing one GPU (or 2
// GPUs): rank r holds columns [r V, (r + 1) V) of random [T, W V] logits, targets are random
// over the whole vocabulary, and every rank's loss must match a float64 log-softmax of the
// whole row. V and T are not multiples of the 512-column and 16-row tiles. Launched 20 times
// back to back; the loss is poisoned first.
#include PK_CROSS_ENTROPY_CU
#include "sym_test_util.h"

namespace {

void cross_entropy_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  for (auto [T, V] : {std::pair{1LL, 700LL}, std::pair{37LL, 1300LL}}) {
    std::vector<std::vector<float>> shards;  // rank r's [T, V] columns, values up to +-8
    for (int r = 0; r < W; ++r) {
      auto s = pkt::random_data<float>(T * V, 41 + 13 * r);
      for (auto& x : s) x *= 4;
      shards.push_back(std::move(s));
    }
    std::vector<int> target(T);
    std::mt19937 g(7 + unsigned(T));
    for (auto& id : target) id = std::uniform_int_distribution<int>(0, int(W * V) - 1)(g);
    pkt::DevLocal<float> logits({T, V}, shards[me]), loss({T, 1}, {});
    pkt::DevLocal<int> tgt({T, 1}, target);
    pkt::SymArg<float> local_max(ctx, {T, 1}, nullptr), row_max(ctx, {T, 1}, nullptr);
    pkt::SymArg<float> local_stats(ctx, {T, 2}, nullptr), stats(ctx, {T, 2}, nullptr);
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    for (int l = 0; l < 20; ++l)
      pkt::launch(ctx, "cross_entropy_vocab_parallel", cross_entropy_vocab_parallel,
                  pk_cross_entropy_vocab_parallel::kBlocks, pk_cross_entropy_vocab_parallel::kThreads,
                  logits.view(), tgt.view(), local_max.view, row_max.view, local_stats.view, stats.view,
                  loss.view());
    PKT_OK(ctx.check_errors());
    pkt::expect(ctx, "cross_entropy_vocab_parallel", loss.download(), [&](long long t) {
      auto x = [&](long long c) { return double(shards[c / V][t * V + c % V]); };
      double mx = -1e300, sum = 0;
      for (long long c = 0; c < W * V; ++c) mx = std::max(mx, x(c));
      for (long long c = 0; c < W * V; ++c) sum += std::exp(x(c) - mx);
      return std::log(sum) + mx - x(target[t]);
    }, [&](long long) { return 1e-4; });
    PKT_OK(ctx.exchange().barrier());
  }
}

}  // namespace

int main() {
  return pkt::run_worlds("cross_entropy_test", [](pk::Context& ctx) { cross_entropy_test(ctx); },
                         cross_entropy_vocab_parallel);
}
