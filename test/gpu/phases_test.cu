// Kernels of dependent phases (test/specs/phases.pk.cpp, compiled by pkc at build time) at
// world size 1 and at 2, 3 and 4 ranks sharing one GPU (or 2 GPUs): an all-reduce feeding an
// all-gather in one launch, and a tensor-parallel RMSNorm (local sums, all-reduce, scale), each
// launched 50 times back to back, against float64 references on random inputs per rank; then
// tiles written into peers beside a collective (a ring shift feeding an all-reduce, and an
// all-reduce feeding adds into rank 0).
#include PK_PHASES_CU
#include "sym_test_util.h"

namespace {

using pkt::expect;
using pkt::inputs;
using pkt::launch;
using pkt::SymArg;

void ar_then_ag_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  for (long long n : {5LL, 4099LL, 70001LL}) {
    auto all = inputs<float>(W, n, 3 + unsigned(n % 101));
    SymArg<float> x(ctx, {n}, &all[me]), y(ctx, {n}, nullptr), z(ctx, {W * n}, nullptr);
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    for (int l = 0; l < 50; ++l)
      launch(ctx, "ar_then_ag", ar_then_ag, pk_ar_then_ag::kBlocks, pk_ar_then_ag::kThreads, x.view,
             y.view, z.view);
    PKT_OK(ctx.check_errors());
    expect(ctx, "ar_then_ag", z.download(), [&](long long i) {
      double s = 0;
      for (int r = 0; r < W; ++r) s += all[r][i % n];
      return s;
    }, [&](long long) { return 1e-5 * W; });
    PKT_OK(ctx.exchange().barrier());
  }
}

void tp_rms_norm_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long R = 37, C = 2048;  // a row tail of the 8-row tiles
  const float eps = 1e-5f, inv_n = 1.0f / float(C * W);
  auto shards = inputs<float>(W, R * C, 17);  // rank r holds columns [r*C, (r+1)*C)
  auto weights = inputs<float>(W, C, 29);
  pkt::SymArg<float> ss(ctx, {R, 1}, nullptr), total(ctx, {R, 1}, nullptr);
  pkt::DevLocal<float> x({R, C}, shards[me]), w({1, C}, weights[me]), y({R, C}, {});
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 50; ++l)
    launch(ctx, "tp_rms_norm", tp_rms_norm, pk_tp_rms_norm::kBlocks, pk_tp_rms_norm::kThreads,
           x.view(), w.view(), ss.view, total.view, y.view(), inv_n, eps);
  PKT_OK(ctx.check_errors());
  expect(ctx, "tp_rms_norm", y.download(), [&](long long i) {
    const long long r = i / C, c = i % C;
    double sum = 0;
    for (int q = 0; q < W; ++q)
      for (long long k = 0; k < C; ++k) sum += double(shards[q][r * C + k]) * shards[q][r * C + k];
    return shards[me][i] / std::sqrt(sum * inv_n + eps) * weights[me][c];
  }, [&](long long) { return 1e-4; });
  PKT_OK(ctx.exchange().barrier());
}

// Peer tiles and a collective in one kernel: y on the next rank takes x, z = all-reduce of y.
void shift_then_ar_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long R = 37, C = 300;  // tails of the 16 x 256 tiles in both dimensions
  auto all = inputs<float>(W, R * C, 41);
  SymArg<float> x(ctx, {R, C}, &all[me]), y(ctx, {R, C}, nullptr), z(ctx, {R, C}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 50; ++l)
    launch(ctx, "shift_then_ar", shift_then_ar, pk_shift_then_ar::kBlocks, pk_shift_then_ar::kThreads,
           x.view, y.view, z.view);
  PKT_OK(ctx.check_errors());
  const int from = (me + W - 1) % W;
  expect(ctx, "shift_then_ar y", y.download(), [&](long long i) { return double(all[from][i]); },
         [](long long) { return 0.0; });
  expect(ctx, "shift_then_ar z", z.download(), [&](long long i) {
    double s = 0;
    for (int r = 0; r < W; ++r) s += all[r][i];
    return s;
  }, [&](long long) { return 1e-5 * W; });
  PKT_OK(ctx.exchange().barrier());
}

// A collective, then tiles added into rank 0: three launches add 3 x 2 x W x (sum of x) there.
void ar_then_add_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long R = 20, C = 513;
  auto all = inputs<float>(W, R * C, 43), init = inputs<float>(W, R * C, 47);
  SymArg<float> x(ctx, {R, C}, &all[me]), y(ctx, {R, C}, nullptr), z(ctx, {R, C}, &init[me]);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  constexpr int kLaunches = 3;
  for (int l = 0; l < kLaunches; ++l)
    launch(ctx, "ar_then_add", ar_then_add, pk_ar_then_add::kBlocks, pk_ar_then_add::kThreads, x.view,
           y.view, z.view);
  PKT_OK(ctx.check_errors());
  auto sum = [&](long long i) {
    double s = 0;
    for (int r = 0; r < W; ++r) s += all[r][i];
    return s;
  };
  expect(ctx, "ar_then_add y", y.download(), sum, [&](long long) { return 1e-5 * W; });
  auto want_z = [&](long long i) { return init[me][i] + (me == 0 ? kLaunches * 2.0 * W * sum(i) : 0.0); };
  expect(ctx, "ar_then_add z", z.download(), want_z,
         [&](long long i) { return 1e-5 * W * (1.0 + std::fabs(want_z(i))); });
  PKT_OK(ctx.exchange().barrier());
}

// Local phases without a collective: y[i] = 2 x[n - 1 - i] through a scratch tensor.
void reverse_twice_test(pk::Context& ctx) {
  const int me = ctx.rank();
  for (long long n : {3LL, 1025LL, 300001LL}) {
    auto all = inputs<float>(ctx.world(), n, 53 + unsigned(n % 7));
    SymArg<float> s(ctx, {n}, nullptr);
    pkt::DevLocal<float> x({n}, all[me]), y({n}, {});
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    for (int l = 0; l < 20; ++l)
      launch(ctx, "reverse_twice", reverse_twice, pk_reverse_twice::kBlocks, pk_reverse_twice::kThreads,
             x.view(), s.view, y.view());
    PKT_OK(ctx.check_errors());
    expect(ctx, "reverse_twice", y.download(), [&](long long i) { return 2.0 * all[me][n - 1 - i]; },
           [](long long) { return 0.0; });
    PKT_OK(ctx.exchange().barrier());
  }
}

// Two ring shifts in one kernel: z on rank r + 2 takes x of rank r.
void shift_twice_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long R = 37, C = 300;
  auto all = inputs<float>(W, R * C, 59);
  SymArg<float> x(ctx, {R, C}, &all[me]), y(ctx, {R, C}, nullptr), z(ctx, {R, C}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 20; ++l)
    launch(ctx, "shift_twice", shift_twice, pk_shift_twice::kBlocks, pk_shift_twice::kThreads, x.view,
           y.view, z.view);
  PKT_OK(ctx.check_errors());
  const int from = (me + 2 * W - 2) % W;
  expect(ctx, "shift_twice z", z.download(), [&](long long i) { return double(all[from][i]); },
         [](long long) { return 0.0; });
  PKT_OK(ctx.exchange().barrier());
}

}  // namespace

int main() {
  return pkt::run_worlds("phases_test", [](pk::Context& ctx) {
    ar_then_ag_test(ctx);
    tp_rms_norm_test(ctx);
    shift_then_ar_test(ctx);
    ar_then_add_test(ctx);
    reverse_twice_test(ctx);
    shift_twice_test(ctx);
  }, ar_then_ag, tp_rms_norm, shift_then_ar, ar_then_add, reverse_twice, shift_twice);
}
