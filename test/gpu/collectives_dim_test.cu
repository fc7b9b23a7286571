// Collectives along a dimension other than the first (test/specs/collectives_dim.pk.cpp,
// compiled by pkc at build time) at world size 1 and at 2, 3 and 4 ranks sharing one GPU (or 2
// GPUs): random inputs that differ per rank, odd extents (tails in every dimension), outputs
// poisoned, every element against a float64 reference; in place, the chunks a rank does not
// own must stay as they were.
#include PK_COLLECTIVES_DIM_CU
#include "sym_test_util.h"

namespace {

using pk::bf16;
using pkt::expect;
using pkt::inputs;
using pkt::launch;
using pkt::SymArg;

void columns(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long R = 37, C = 129;  // x [R, C] per rank; gathered [R, W * C]
  auto xs = inputs<bf16>(W, R * C, 5);
  auto fs = inputs<float>(W, R * W * C, 9);  // reduce-scatter inputs [R, W * C]
  SymArg<bf16> x(ctx, {R, C}, &xs[me]), y(ctx, {R, W * C}, nullptr);
  SymArg<float> f(ctx, {R, W * C}, &fs[me]), g(ctx, {R, C}, nullptr);
  auto wide = inputs<bf16>(W, R * W * C, 13);
  SymArg<bf16> in_place(ctx, {R, W * C}, &wide[me]);
  SymArg<float> in_place_max(ctx, {R, W * C}, &fs[me]);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  launch(ctx, "all_gather_cols", all_gather_cols, pk_all_gather_cols::kBlocks,
         pk_all_gather_cols::kThreads, x.view, y.view);
  launch(ctx, "reduce_scatter_cols", reduce_scatter_cols, pk_reduce_scatter_cols::kBlocks,
         pk_reduce_scatter_cols::kThreads, f.view, g.view);
  launch(ctx, "all_gather_cols_in_place", all_gather_cols_in_place,
         pk_all_gather_cols_in_place::kBlocks, pk_all_gather_cols_in_place::kThreads, in_place.view);
  launch(ctx, "reduce_scatter_cols_in_place", reduce_scatter_cols_in_place,
         pk_reduce_scatter_cols_in_place::kBlocks, pk_reduce_scatter_cols_in_place::kThreads,
         in_place_max.view);
  PKT_OK(ctx.check_errors());
  auto exact = [](long long) { return 0.0; };
  const long long WC = W * C;
  expect(ctx, "all_gather_cols", y.download(), [&](long long i) {
    const long long row = i / WC, r = (i % WC) / C, col = i % C;
    return double(pkt::to_f(xs[r][row * C + col]));
  }, exact);
  expect(ctx, "reduce_scatter_cols", g.download(), [&](long long i) {
    double s = 0;
    for (int r = 0; r < W; ++r) s += fs[r][(i / C) * WC + me * C + i % C];
    return s;
  }, [&](long long) { return 1e-5 * W; });
  expect(ctx, "all_gather_cols_in_place", in_place.download(), [&](long long i) {
    return double(pkt::to_f(wide[(i % WC) / C][i]));  // chunk r comes from rank r's own chunk r
  }, exact);
  expect(ctx, "reduce_scatter_cols_in_place", in_place_max.download(), [&](long long i) {
    if ((i % WC) / C != me) return double(fs[me][i]);  // not this rank's chunk: untouched
    double m = -INFINITY;
    for (int r = 0; r < W; ++r) m = std::max(m, double(fs[r][i]));
    return m;
  }, exact);
  PKT_OK(ctx.exchange().barrier());
}

// The middle dimension of [A, B, C]: rank r's x lands at [:, r*B:(r+1)*B, :].
void middle(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long A = 5, B = 7, C = 300;
  auto xs = inputs<float>(W, A * B * C, 21);
  SymArg<float> x(ctx, {A, B, C}, &xs[me]), y(ctx, {A, W * B, C}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  launch(ctx, "all_gather_mid", all_gather_mid, pk_all_gather_mid::kBlocks,
         pk_all_gather_mid::kThreads, x.view, y.view);
  PKT_OK(ctx.check_errors());
  expect(ctx, "all_gather_mid", y.download(), [&](long long i) {
    const long long a = i / (W * B * C), j = (i / C) % (W * B), c = i % C;
    return double(xs[j / B][(a * B + j % B) * C + c]);
  }, [](long long) { return 0.0; });
  PKT_OK(ctx.exchange().barrier());
}

// Local (not symmetric) outputs: all-gather along dimensions 0 and 1, all-to-all along 0, and
// split along 0 / concatenated along 1 ([W*A, B, C] -> [A, W*B, C]).
void local_outputs(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long N = 1000, R = 9, C = 77, A = 3, B = 5, D = 40;
  auto xs = inputs<float>(W, N, 31), cs = inputs<float>(W, R * C, 33);
  auto bs = inputs<float>(W, W * R * C, 35), hs = inputs<float>(W, W * A * B * D, 37);
  SymArg<float> x(ctx, {N}, &xs[me]), xc(ctx, {R, C}, &cs[me]), xb(ctx, {W * R, C}, &bs[me]),
      xh(ctx, {W * A, B, D}, &hs[me]);
  pkt::DevLocal<float> y({W * N}, {}), yc({R, W * C}, {}), yb({W * R, C}, {}), yh({A, W * B, D}, {});
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  launch(ctx, "all_gather_local", all_gather_local, pk_all_gather_local::kBlocks,
         pk_all_gather_local::kThreads, x.view, y.view());
  launch(ctx, "all_gather_cols_local", all_gather_cols_local, pk_all_gather_cols_local::kBlocks,
         pk_all_gather_cols_local::kThreads, xc.view, yc.view());
  launch(ctx, "all_to_all_local", all_to_all_local, pk_all_to_all_local::kBlocks,
         pk_all_to_all_local::kThreads, xb.view, yb.view());
  launch(ctx, "all_to_all_heads_local", all_to_all_heads_local, pk_all_to_all_heads_local::kBlocks,
         pk_all_to_all_heads_local::kThreads, xh.view, yh.view());
  PKT_OK(ctx.check_errors());
  auto exact = [](long long) { return 0.0; };
  expect(ctx, "all_gather_local", y.download(), [&](long long i) { return double(xs[i / N][i % N]); }, exact);
  expect(ctx, "all_gather_cols_local", yc.download(), [&](long long i) {
    const long long row = i / (W * C), r = (i % (W * C)) / C;
    return double(cs[r][row * C + i % C]);
  }, exact);
  expect(ctx, "all_to_all_local", yb.download(), [&](long long i) {
    const long long r = i / (R * C);  // block r comes from rank r's block me
    return double(bs[r][me * R * C + i % (R * C)]);
  }, exact);
  expect(ctx, "all_to_all_heads_local", yh.download(), [&](long long i) {
    const long long a = i / (W * B * D), j = (i / D) % (W * B), d = i % D, r = j / B;
    return double(hs[r][((me * A + a) * B + j % B) * D + d]);  // rank r's heads block me
  }, exact);
  PKT_OK(ctx.exchange().barrier());
}

// All-to-all within dimension d > 0: block j (of extent E/W) along d of rank r lands on rank j
// as block r. Odd block extents, so every row's blocks start unaligned.
void within(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long R = 37, C = 43, A = 3, B = 5, D = 33, P = 4, Q = 7, S = 9;
  auto cs = inputs<bf16>(W, R * W * C, 41);
  auto ls = inputs<float>(W, A * B * W * D, 43);
  auto ms = inputs<float>(W, P * W * Q * S, 45);
  auto fs = inputs<float>(W, R * W * C, 47);
  SymArg<bf16> xc(ctx, {R, W * C}, &cs[me]), yc(ctx, {R, W * C}, nullptr);
  SymArg<float> xl(ctx, {A, B, W * D}, &ls[me]), yl(ctx, {A, B, W * D}, nullptr);
  SymArg<float> mid(ctx, {P, W * Q, S}, &ms[me]), xf(ctx, {R, W * C}, &fs[me]);
  pkt::DevLocal<float> yf({R, W * C}, {});
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  launch(ctx, "all_to_all_cols", all_to_all_cols, pk_all_to_all_cols::kBlocks,
         pk_all_to_all_cols::kThreads, xc.view, yc.view);
  launch(ctx, "all_to_all_last", all_to_all_last, pk_all_to_all_last::kBlocks,
         pk_all_to_all_last::kThreads, xl.view, yl.view);
  launch(ctx, "all_to_all_mid_in_place", all_to_all_mid_in_place,
         pk_all_to_all_mid_in_place::kBlocks, pk_all_to_all_mid_in_place::kThreads, mid.view);
  launch(ctx, "all_to_all_cols_local", all_to_all_cols_local, pk_all_to_all_cols_local::kBlocks,
         pk_all_to_all_cols_local::kThreads, xf.view, yf.view());
  PKT_OK(ctx.check_errors());
  auto exact = [](long long) { return 0.0; };
  const long long WC = W * C;
  auto cols = [&](long long i, auto& src) {  // y[row, r*C + k] = x_r[row, me*C + k]
    const long long row = i / WC, r = (i % WC) / C, k = i % C;
    return double(pkt::to_f(src[r][row * WC + me * C + k]));
  };
  expect(ctx, "all_to_all_cols", yc.download(), [&](long long i) { return cols(i, cs); }, exact);
  expect(ctx, "all_to_all_cols_local", yf.download(), [&](long long i) { return cols(i, fs); }, exact);
  expect(ctx, "all_to_all_last", yl.download(), [&](long long i) {
    const long long ab = i / (W * D), r = (i % (W * D)) / D, k = i % D;
    return double(ls[r][ab * W * D + me * D + k]);
  }, exact);
  expect(ctx, "all_to_all_mid_in_place", mid.download(), [&](long long i) {
    const long long p = i / (W * Q * S), r = (i / S) % (W * Q) / Q, j = (i / S) % Q, k = i % S;
    return double(ms[r][(p * W * Q + me * Q + j) * S + k]);  // block r: rank r's old block me
  }, exact);
  PKT_OK(ctx.exchange().barrier());
}

}  // namespace

int main() {
  return pkt::run_worlds("collectives_dim_test", [](pk::Context& ctx) {
    columns(ctx);
    middle(ctx);
    local_outputs(ctx);
    within(ctx);
  }, all_gather_cols, reduce_scatter_cols, all_gather_mid, all_gather_cols_in_place,
     reduce_scatter_cols_in_place, all_gather_local, all_gather_cols_local, all_to_all_local,
     all_to_all_heads_local, all_to_all_cols, all_to_all_last, all_to_all_mid_in_place,
     all_to_all_cols_local);
}
