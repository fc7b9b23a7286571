// The shipped vocabulary-parallel embedding (templates/specs/embedding_vocab_parallel.pk.cpp,
// compiled by pkc at build time) at world size 1 and at 2, 3 and 4 ranks sharing one GPU (or
// 2 GPUs): each rank holds V rows of a [W V, H] bf16 table, tokens take random ids over the
// whole vocabulary (and a few outside it, which must give rows of zeros), and every rank's
// output must equal the table rows of its tokens exactly (one rank contributes each row, the
// others add zeros). Launched 20 times back to back; outputs poisoned first.
#include PK_EMBEDDING_CU
#include "sym_test_util.h"

namespace {

void embedding_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long V = 53, H = 300;  // shard rows; hidden size with a column tail of 256
  for (long long T : {1LL, 37LL, 1000LL}) {
    std::vector<int> ids(T);
    std::mt19937 g(11 + unsigned(T));
    std::uniform_int_distribution<int> u(-3, int(W * V) + 2);  // a few ids outside the vocabulary
    for (auto& id : ids) id = u(g);
    ids[0] = int(W * V) - 1;  // the last row of the last shard
    std::vector<std::vector<pk::bf16>> tables;
    for (int r = 0; r < W; ++r) tables.push_back(pkt::random_data<pk::bf16>(V * H, 5 + 31 * r));
    pkt::DevLocal<int> id({T}, ids);
    pkt::DevLocal<pk::bf16> table({V, H}, tables[me]);
    pkt::SymArg<pk::bf16> partial(ctx, {T, H}, nullptr), out(ctx, {T, H}, nullptr);
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    for (int l = 0; l < 20; ++l)
      pkt::launch(ctx, "embedding_vocab_parallel", embedding_vocab_parallel,
                  pk_embedding_vocab_parallel::kBlocks, pk_embedding_vocab_parallel::kThreads,
                  id.view(), table.view(), partial.view, out.view);
    PKT_OK(ctx.check_errors());
    pkt::expect(ctx, "embedding_vocab_parallel", out.download(), [&](long long i) {
      const long long t = i / H, h = i % H, row = ids[t];
      if (row < 0 || row >= W * V) return 0.0;
      return double(pkt::to_f(tables[row / V][(row % V) * H + h]));
    }, [&](long long) { return 0.0; });
    PKT_OK(ctx.exchange().barrier());
  }
}

}  // namespace

int main() {
  return pkt::run_worlds("embedding_test", [](pk::Context& ctx) { embedding_test(ctx); },
                         embedding_vocab_parallel);
}
