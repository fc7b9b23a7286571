// The shipped all_to_all_v (templates/specs/all_to_all_v.pk.cpp, compiled by pkc at build time)
// at world size 1 and at 2, 3 and 4 ranks sharing one GPU (or several GPUs). Split sizes are
// random per (sender, receiver), zero included, and their sum leaves some of x's rows unsent;
// H = 1000 leaves a column tail of the 512-column tiles. Each rank checks the counts it received
// and every row of its y against the senders' rows rebuilt on the host (bit for bit: rows are
// moved, not computed), in source-rank order, and that the rows of y past what arrived keep
// their poison. The kernel runs 3 times back to back.
#include PK_ALL_TO_ALL_V_CU
#include "sym_test_util.h"

#include <random>

namespace {

using pk::bf16;

// Rows rank s sends rank p: random in [0, 70], some zero.
std::vector<int> splits(int s, int world, long long rows) {
  std::mt19937 g(500u + 17u * unsigned(s));
  std::vector<int> send(world);
  long long total = 0;
  for (int p = 0; p < world; ++p) {
    send[p] = (g() % 4 == 0) ? 0 : int(g() % 71);
    if (total + send[p] > rows) send[p] = int(rows - total);
    total += send[p];
  }
  return send;
}

void all_to_all_v_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long N = 300, H = 1000, M = 80LL * W;  // x rows per rank; y holds up to 70 per sender
  std::vector<std::vector<int>> send;
  std::vector<std::vector<bf16>> xs;
  for (int s = 0; s < W; ++s) {
    send.push_back(splits(s, W, N));
    xs.push_back(pkt::random_data<bf16>(N * H, 40u + 7u * unsigned(s)));
  }
  pkt::DevLocal<bf16> x({N, H}, xs[me]);
  pkt::DevLocal<int> counts({W}, send[me]);
  pkt::SymArg<bf16> y(ctx, {M, H}, nullptr);
  pkt::SymArg<int> recv(ctx, {W}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 3; ++l)
    pkt::launch(ctx, "all_to_all_v", all_to_all_v, pk_all_to_all_v::kBlocks, pk_all_to_all_v::kThreads,
                x.view(), counts.view(), y.view, recv.view);
  PKT_OK(ctx.check_errors());

  const auto got_recv = recv.download();
  const auto got = y.download();
  long long at = 0;  // the next row of y, in source-rank order
  for (int s = 0; s < W; ++s) {
    if (got_recv[s] != send[s][me])
      pkt::fail("all_to_all_v recv rank " + std::to_string(me) + " from " + std::to_string(s) + ": got " +
                std::to_string(got_recv[s]) + ", want " + std::to_string(send[s][me]));
    long long first = 0;  // where rank s's rows for me start in its x
    for (int p = 0; p < me; ++p) first += send[s][p];
    for (long long r = 0; r < send[s][me]; ++r, ++at)
      for (long long h = 0; h < H; ++h)
        if (got[at * H + h].bits != xs[s][(first + r) * H + h].bits) {
          pkt::fail("all_to_all_v rank " + std::to_string(me) + ": row " + std::to_string(at) +
                    " is not row " + std::to_string(first + r) + " of rank " + std::to_string(s));
          h = H;
        }
  }
  for (long long i = at * H; i < M * H; ++i)
    if (got[i].bits != 0xffff) {
      pkt::fail("all_to_all_v rank " + std::to_string(me) + ": y past the rows that arrived was written");
      break;
    }
  PKT_OK(ctx.exchange().barrier());
}

}  // namespace

int main() { return pkt::run_worlds("all_to_all_v_test", all_to_all_v_test, all_to_all_v); }
