// In-place collectives (test/specs/in_place.pk.cpp, compiled by pkc at build time) at world
// size 1 and at 2, 3 and 4 ranks sharing one GPU (or 2 GPUs): random inputs that differ per
// rank, sizes on and off the 16-byte vectors and the tiles, every element against a float64
// reference; a max all-reduce also 100 times back to back (idempotent, so every launch must
// leave the same answer), both all-reduces launched with landing buffers (their one-round LL and
// push paths at these sizes); the size-changing four in NCCL's chunked in-place form.
#include PK_IN_PLACE_CU
#include "sym_test_util.h"

namespace {

using pk::bf16;
using pkt::expect;
using pkt::inputs;
using pkt::launch;
using pkt::launch_landing;
using pkt::SymArg;

const std::vector<long long> kSizes = {1, 7, 4097, 100003};

void all_reduce_sum(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  for (long long n : kSizes) {
    auto all = inputs<bf16>(W, n, 41 + unsigned(n % 97));
    SymArg<bf16> x(ctx, {n}, &all[me]);
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    // With landing buffers: the in-place all-reduce takes LL words or one round at these sizes.
    launch_landing(ctx, true, "all_reduce_in_place", all_reduce_in_place, pk_all_reduce_in_place::kBlocks,
                   pk_all_reduce_in_place::kThreads, x.view);
    PKT_OK(ctx.check_errors());
    pkt::check_bf16_sum(x.download(), all, me);
    PKT_OK(ctx.exchange().barrier());
  }
}

void all_reduce_max(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long R = 33, C = 129;
  auto all = inputs<float>(W, R * C, 7);
  SymArg<float> x(ctx, {R, C}, &all[me]);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  // Repeated: max is idempotent, so every launch must leave the same answer.
  for (int l = 0; l < 100; ++l)
    launch_landing(ctx, true, "all_reduce_max_in_place", all_reduce_max_in_place,
                   pk_all_reduce_max_in_place::kBlocks, pk_all_reduce_max_in_place::kThreads, x.view);
  PKT_OK(ctx.check_errors());
  expect(ctx, "all_reduce_max_in_place", x.download(), [&](long long i) {
    double m = -INFINITY;
    for (int r = 0; r < W; ++r) m = std::max(m, double(all[r][i]));
    return m;
  }, [](long long) { return 0.0; });
  PKT_OK(ctx.exchange().barrier());
}

void broadcast_and_reduce(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  for (long long n : kSizes) {
    auto all = inputs<float>(W, n, 13 + unsigned(n % 89));
    SymArg<float> x(ctx, {n}, &all[me]), z(ctx, {n}, &all[me]);
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    launch(ctx, "broadcast_in_place", broadcast_in_place, pk_broadcast_in_place::kBlocks,
           pk_broadcast_in_place::kThreads, x.view);
    launch(ctx, "reduce_in_place", reduce_in_place, pk_reduce_in_place::kBlocks,
           pk_reduce_in_place::kThreads, z.view);
    PKT_OK(ctx.check_errors());
    expect(ctx, "broadcast_in_place", x.download(),
           [&](long long i) { return double(all[W - 1][i]); }, [](long long) { return 0.0; });
    expect(ctx, "reduce_in_place", z.download(), [&](long long i) {
      if (me != 0) return double(all[me][i]);  // only the root's copy changes
      double s = 0;
      for (int r = 0; r < W; ++r) s += all[r][i];
      return s;
    }, [&](long long) { return 1e-5 * W; });
    PKT_OK(ctx.exchange().barrier());
  }
}

// Rows [p*R, (p+1)*R) of rank r's x end as rows [r*R, (r+1)*R) of rank p's: pairwise swaps.
void all_to_all_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long R = 37, C = 65;  // W * R rows of C elements
  auto all = inputs<bf16>(W, W * R * C, 61);
  SymArg<bf16> x(ctx, {W * R, C}, &all[me]);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  launch(ctx, "all_to_all_in_place", all_to_all_in_place, pk_all_to_all_in_place::kBlocks,
         pk_all_to_all_in_place::kThreads, x.view);
  PKT_OK(ctx.check_errors());
  expect(ctx, "all_to_all_in_place", x.download(), [&](long long i) {
    const long long block = i / (R * C), within = i % (R * C);
    return double(pkt::to_f(all[block][me * R * C + within]));
  }, [](long long) { return 0.0; });
  PKT_OK(ctx.exchange().barrier());
}

// The size-changing collectives in place: W chunks per tensor; chunk c of rank r starts as
// all[r][c]. Chunks a collective does not write must stay as they were.
void chunked_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  for (long long n : kSizes) {  // elements per chunk
    const long long total = W * n;
    auto f = inputs<float>(W, total, 71 + unsigned(n % 83));
    auto h = inputs<bf16>(W, total, 23 + unsigned(n % 79));
    SymArg<float> ag(ctx, {total}, &f[me]), ga(ctx, {total}, &f[me]);
    SymArg<float> rs(ctx, {W, n}, &f[me]);
    SymArg<bf16> sc(ctx, {total}, &h[me]);
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    const long long root = W - 1;
    launch(ctx, "all_gather_in_place", all_gather_in_place, pk_all_gather_in_place::kBlocks,
           pk_all_gather_in_place::kThreads, ag.view);
    launch(ctx, "reduce_scatter_in_place", reduce_scatter_in_place,
           pk_reduce_scatter_in_place::kBlocks, pk_reduce_scatter_in_place::kThreads, rs.view);
    launch(ctx, "gather_in_place", gather_in_place, pk_gather_in_place::kBlocks,
           pk_gather_in_place::kThreads, ga.view, root);
    launch(ctx, "scatter_in_place", scatter_in_place, pk_scatter_in_place::kBlocks,
           pk_scatter_in_place::kThreads, sc.view);
    PKT_OK(ctx.check_errors());
    auto exact = [](long long) { return 0.0; };
    expect(ctx, "all_gather_in_place", ag.download(),
           [&](long long i) { return double(f[i / n][i]); }, exact);
    expect(ctx, "reduce_scatter_in_place", rs.download(), [&](long long i) {
      if (i / n != me) return double(f[me][i]);
      double s = 0;
      for (int r = 0; r < W; ++r) s += f[r][i];
      return s;
    }, [&](long long) { return 1e-5 * W; });
    expect(ctx, "gather_in_place", ga.download(), [&](long long i) {
      return double(me == root ? f[i / n][i] : f[me][i]);
    }, exact);
    expect(ctx, "scatter_in_place", sc.download(), [&](long long i) {
      return double(pkt::to_f(i / n == me ? h[0][i] : h[me][i]));
    }, exact);
    PKT_OK(ctx.exchange().barrier());
  }
}

}  // namespace

int main() {
  return pkt::run_worlds("in_place_test", [](pk::Context& ctx) {
    all_reduce_sum(ctx);
    all_reduce_max(ctx);
    broadcast_and_reduce(ctx);
    all_to_all_test(ctx);
    chunked_test(ctx);
  }, all_reduce_in_place, all_reduce_max_in_place, broadcast_in_place, reduce_in_place,
     all_to_all_in_place, all_gather_in_place, reduce_scatter_in_place, gather_in_place,
     scatter_in_place);
}
