// Multi-rank user specs (test/specs/rank_specs.pk.cpp, compiled by pkc at build time) at world
// size 1 and at 2, 3 and 4 ranks sharing one GPU (or 2 GPUs): collectives along dimensions of
// 2-D and 3-D tensors, in-place collectives between tile loops, chains of dependent phases,
// ring shifts and pulls, adds into an owner, rooted collectives with a run-time root, f32, bf16
// and i32, Max / Min over negative values; sizes with tails of every tile. Random inputs per
// rank (never zero), poisoned outputs, float64 (or exact integer) references.
#include PK_RANK_SPECS_CU
#include <random>

#include "sym_test_util.h"

namespace {

using pkt::expect;
using pkt::inputs;
using pkt::launch;
using pkt::expect_i;
using pkt::SymArg;
using pk::bf16;
using LL = long long;

// Every rank's i32 values, reproducible on every rank: magnitudes 1..2^20, either sign.
std::vector<std::vector<int32_t>> int_inputs(int world, LL n, unsigned seed) {
  std::vector<std::vector<int32_t>> all(world, std::vector<int32_t>(n));
  for (int r = 0; r < world; ++r) {
    std::mt19937 g(seed * 1000003u + r);
    for (auto& x : all[r]) {
      const int32_t m = int32_t(1 + g() % (1u << 20));
      x = (g() & 1) ? m : -m;
    }
  }
  return all;
}

double f(float x) { return x; }
double f(bf16 x) { return pkt::to_f(x); }
double bfr(double x) { return pkt::to_f(pkt::from_f<bf16>(float(x))); }  // round to bf16

using pkt::done;
using pkt::next;
using pkt::ready;

#define LAUNCH(k, ...) launch(ctx, #k, k, pk_##k::kBlocks, pk_##k::kThreads, __VA_ARGS__)

void tp_rms_norm_tail_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 21, C = 300;  // tails of the 8-row and 128-column tiles
  const float eps = 1e-5f, inv_n = 1.0f / float(C * W);
  auto xs = inputs<float>(W, R * C, 101), ws = inputs<float>(W, C, 103);
  SymArg<float> ss(ctx, {R, 1}, nullptr), total(ctx, {R, 1}, nullptr);
  pkt::DevLocal<float> x({R, C}, xs[me]), w({1, C}, ws[me]), y({R, C}, {});
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(tp_rms_norm_tail, x.view(), w.view(), ss.view, total.view, y.view(), inv_n, eps);
  done(ctx);
  expect(ctx, "tp_rms_norm_tail y", y.download(), [&](LL i) {
    const LL r = i / C;
    double s = 0;
    for (int q = 0; q < W; ++q)
      for (LL k = 0; k < C; ++k) s += f(xs[q][r * C + k]) * xs[q][r * C + k];
    return xs[me][i] / std::sqrt(s * inv_n + eps) * ws[me][i % C];
  }, [](LL) { return 1e-4; });
  next(ctx);
}

void rs_tile_ag_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 19, C = 70;
  auto xs = inputs<float>(W, W * R * C, 107);
  SymArg<float> x(ctx, {W * R, C}, &xs[me]), s(ctx, {R, C}, nullptr), s2(ctx, {R, C}, nullptr),
      y(ctx, {W * R, C}, nullptr);
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(rs_tile_ag, x.view, s.view, s2.view, y.view);
  done(ctx);
  auto sum = [&](LL i) { double a = 0; for (int r = 0; r < W; ++r) a += xs[r][i]; return a; };
  expect(ctx, "rs_tile_ag s (this rank's block)", s.download(), [&](LL i) { return sum(me * R * C + i); },
         [&](LL) { return 1e-5 * W; });
  expect(ctx, "rs_tile_ag y", y.download(), [&](LL i) { return 2 * sum(i) + 1; }, [&](LL) { return 3e-5 * W; });
  next(ctx);
}

void silu_ar_in_place_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 33, C = 100;
  auto xs = inputs<bf16>(W, R * C, 109);
  SymArg<bf16> h(ctx, {R, C}, nullptr);
  pkt::DevLocal<bf16> x({R, C}, xs[me]);
  pkt::DevLocal<float> y({R, C}, {});
  ready(ctx);
  LAUNCH(silu_ar_in_place, x.view(), h.view, y.view());  // one launch: h is summed in place
  done(ctx);
  auto term = [&](int r, LL i) { const double v = f(xs[r][i]); return bfr(v / (1 + std::exp(-v))); };
  expect(ctx, "silu_ar_in_place y", y.download(), [&](LL i) {
    double a = 0; for (int r = 0; r < W; ++r) a += term(r, i); return 0.5 * a;
  }, [&](LL i) { double a = 0; for (int r = 0; r < W; ++r) a += std::fabs(term(r, i)); return 1e-2 * (a + 0.05); });
  next(ctx);
}

void ag_last_dim_3d_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL A = 3, B = 5, D = 7;
  auto xs = inputs<bf16>(W, A * B * D, 113);
  SymArg<bf16> x(ctx, {A, B, D}, &xs[me]), y(ctx, {A, B, W * D}, nullptr);
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(ag_last_dim_3d, x.view, y.view);
  done(ctx);
  expect(ctx, "ag_last_dim_3d y", y.download(), [&](LL i) {
    const LL c = i % (W * D), ab = i / (W * D);
    return f(xs[c / D][ab * D + c % D]);
  }, [](LL) { return 0.0; });
  next(ctx);
}

void rs_max_mid_3d_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL A = 3, B = 5, D = 7;
  auto xs = inputs<float>(W, A * W * B * D, 127);
  SymArg<float> x(ctx, {A, W * B, D}, &xs[me]), y(ctx, {A, B, D}, nullptr);
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(rs_max_mid_3d, x.view, y.view);
  done(ctx);
  expect(ctx, "rs_max_mid_3d y", y.download(), [&](LL i) {
    const LL d = i % D, b = (i / D) % B, a = i / (B * D);
    double m = -1e300;
    for (int r = 0; r < W; ++r) m = std::max(m, f(xs[r][(a * W * B + me * B + b) * D + d]));
    return m;
  }, [](LL) { return 0.0; });
  next(ctx);
}

void ar_min_3d_i32_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL A = 3, B = 4, D = 37;
  auto xs = int_inputs(W, A * B * D, 131);
  SymArg<int32_t> x(ctx, {A, B, D}, &xs[me]), y(ctx, {A, B, D}, nullptr);
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(ar_min_3d_i32, x.view, y.view);
  done(ctx);
  expect_i(ctx, "ar_min_3d_i32 y", y.download(), [&](LL i) {
    LL m = xs[0][i]; for (int r = 1; r < W; ++r) m = std::min<LL>(m, xs[r][i]); return m;
  });
  next(ctx);
}

void rs_min_cols_i32_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 9, C = 13;
  auto xs = int_inputs(W, R * W * C, 137);
  SymArg<int32_t> x(ctx, {R, W * C}, &xs[me]);
  pkt::DevLocal<int32_t> y({R, C}, {});
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(rs_min_cols_i32, x.view, y.view());
  done(ctx);
  expect_i(ctx, "rs_min_cols_i32 y", y.download(), [&](LL i) {
    const LL r = i / C, c = i % C;
    LL m = xs[0][r * W * C + me * C + c];
    for (int q = 1; q < W; ++q) m = std::min<LL>(m, xs[q][r * W * C + me * C + c]);
    return m;
  });
  next(ctx);
}

void pull_prev_3d_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL A = 5, B = 37, D = 70;
  auto xs = inputs<float>(W, A * B * D, 139);
  SymArg<float> x(ctx, {A, B, D}, &xs[me]);
  pkt::DevLocal<float> y({A, B, D}, {});
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(pull_prev_3d, x.view, y.view());
  done(ctx);
  const int from = (me + W - 1) % W;
  expect(ctx, "pull_prev_3d y", y.download(), [&](LL i) { return 1.0 - xs[from][i]; }, [](LL) { return 1e-6; });
  next(ctx);
}

void ring_shift_i32_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 37, C = 100;
  auto xs = int_inputs(W, R * C, 149);
  SymArg<int32_t> x(ctx, {R, C}, &xs[me]), y(ctx, {R, C}, nullptr);
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(ring_shift_i32, x.view, y.view);
  done(ctx);
  const int from = (me + W - 1) % W;
  expect_i(ctx, "ring_shift_i32 y", y.download(), [&](LL i) { return 3LL * xs[from][i] + from; });
  next(ctx);
}

void shift_by_two_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL n = 1300;
  auto xs = inputs<float>(W, n, 151);
  SymArg<float> x(ctx, {n}, &xs[me]), y(ctx, {n}, nullptr);
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(shift_by_two, x.view, y.view);
  done(ctx);
  const int from = ((me - 2) % W + W) % W;
  expect(ctx, "shift_by_two y", y.download(), [&](LL i) { return f(xs[from][i]); }, [](LL) { return 0.0; });
  next(ctx);
}

void add_owner_then_bcast_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 20, C = 300, root = W - 1;
  auto xs = inputs<float>(W, R * C, 157), init = inputs<float>(W, R * C, 163);
  SymArg<float> x(ctx, {R, C}, &xs[me]), acc(ctx, {R, C}, &init[me]), y(ctx, {R, C}, nullptr);
  ready(ctx);
  LAUNCH(add_owner_then_bcast, x.view, acc.view, y.view, root);  // one launch: acc accumulates
  done(ctx);
  auto want = [&](LL i) { double a = init[root][i]; for (int r = 0; r < W; ++r) a += f(xs[r][i]) * xs[r][i]; return a; };
  auto tol = [&](LL i) { return 1e-5 * W * (1 + std::fabs(want(i))); };
  expect(ctx, "add_owner_then_bcast y", y.download(), want, tol);
  if (me == root) expect(ctx, "add_owner_then_bcast acc on root", acc.download(), want, tol);
  else expect(ctx, "add_owner_then_bcast acc off root", acc.download(), [&](LL i) { return f(init[me][i]); }, [](LL) { return 0.0; });
  next(ctx);
}

void reduce_max_root_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 30, C = 70, root = W / 2;
  auto xs = inputs<float>(W, R * C, 167);
  SymArg<float> x(ctx, {R, C}, &xs[me]), y(ctx, {R, C}, nullptr);
  ready(ctx);
  // A root outside the world, launched past the host checks: the kernel's own check stops it
  // on every rank before any signal (a negative root once passed it and indexed peer[-1]).
  for (LL bad : {LL(-1), LL(W)}) {
    LAUNCH(reduce_max_root, x.view, y.view, bad);
    pk::Status st = ctx.check_errors();
    PKT_CHECK(!st.is_ok() && st.message().find("argument check") != std::string::npos,
              "reduce_max_root with root " + std::to_string(bad) + ": " +
                  (st.is_ok() ? std::string("no error") : st.message()));
    ctx.retract_launch("reduce_max_root");
    next(ctx);
  }
  for (int l = 0; l < 10; ++l) LAUNCH(reduce_max_root, x.view, y.view, root);
  done(ctx);
  if (me == root)
    expect(ctx, "reduce_max_root y on root", y.download(), [&](LL i) {
      double m = -1e300; for (int r = 0; r < W; ++r) m = std::max(m, f(xs[r][i])); return m;
    }, [](LL) { return 0.0; });
  next(ctx);
}

void gather_root_2d_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 7, C = 33, root = W > 1 ? 1 : 0;
  auto xs = inputs<bf16>(W, R * C, 173);
  SymArg<bf16> x(ctx, {R, C}, &xs[me]), y(ctx, {W * R, C}, nullptr);
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(gather_root_2d, x.view, y.view, root);
  done(ctx);
  if (me == root)
    expect(ctx, "gather_root_2d y on root", y.download(), [&](LL i) { return f(xs[i / (R * C)][i % (R * C)]); },
           [](LL) { return 0.0; });
  next(ctx);
}

void scatter_tile_gather_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL n = 300, root = W - 1;
  auto xs = inputs<float>(W, W * n, 179);
  SymArg<float> x(ctx, {W * n}, &xs[me]), s(ctx, {n}, nullptr), s2(ctx, {n}, nullptr), y(ctx, {W * n}, nullptr);
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(scatter_tile_gather, x.view, s.view, s2.view, y.view, root);
  done(ctx);
  auto want = [&](LL i) { const double v = xs[root][i]; return v * v - 1; };
  expect(ctx, "scatter_tile_gather s2 (this rank's chunk)", s2.download(), [&](LL i) { return want(me * n + i); },
         [&](LL i) { return 1e-6 * (1 + std::fabs(want(me * n + i))); });
  if (me == root)
    expect(ctx, "scatter_tile_gather y on root", y.download(), want, [&](LL i) { return 1e-6 * (1 + std::fabs(want(i))); });
  next(ctx);
}

void bcast_then_pull_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 37, C = 100, root = 0;
  auto xs = inputs<float>(W, R * C, 181);
  SymArg<float> x(ctx, {R, C}, &xs[me]), b(ctx, {R, C}, nullptr);
  pkt::DevLocal<float> y({R, C}, {});
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(bcast_then_pull, x.view, b.view, y.view(), root);
  done(ctx);
  expect(ctx, "bcast_then_pull y", y.download(), [&](LL i) { return (me + 1) * f(xs[root][i]); },
         [&](LL i) { return 1e-6 * (me + 1) * std::fabs(xs[root][i]); });
  next(ctx);
}

void tile_armax_pull_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 37, C = 100;
  auto xs = inputs<float>(W, R * C, 191);
  SymArg<float> x(ctx, {R, C}, &xs[me]), h(ctx, {R, C}, nullptr), g(ctx, {R, C}, nullptr);
  pkt::DevLocal<float> y({R, C}, {});
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(tile_armax_pull, x.view, h.view, g.view, y.view());
  done(ctx);
  expect(ctx, "tile_armax_pull y", y.download(), [&](LL i) {
    double m = -1e300; for (int r = 0; r < W; ++r) m = std::max(m, -2.0 * xs[r][i]); return m + xs[me][i];
  }, [](LL) { return 1e-5; });
  next(ctx);
}

void ag_then_row_norm_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 10, C = 96;
  const float eps = 1e-5f;
  auto xs = inputs<float>(W, R * C, 193);
  SymArg<float> x(ctx, {R, C}, &xs[me]), g(ctx, {W * R, C}, nullptr);
  pkt::DevLocal<float> y({W * R, C}, {});
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(ag_then_row_norm, x.view, g.view, y.view(), eps);
  done(ctx);
  auto gv = [&](LL i) { return f(xs[i / (R * C)][i % (R * C)]); };
  expect(ctx, "ag_then_row_norm y", y.download(), [&](LL i) {
    const LL row = i / C;
    double s = 0; for (LL k = 0; k < C; ++k) s += gv(row * C + k) * gv(row * C + k);
    return gv(i) / std::sqrt(s / C + eps);
  }, [](LL) { return 1e-5; });
  next(ctx);
}

void rs_in_place_then_chunk_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 19, C = 70;
  auto xs = inputs<float>(W, W * R * C, 197);
  SymArg<float> x(ctx, {W * R, C}, &xs[me]);
  pkt::DevLocal<float> y({R, C}, {});
  ready(ctx);
  LAUNCH(rs_in_place_then_chunk, x.view, y.view());  // one launch: x is overwritten in place
  done(ctx);
  expect(ctx, "rs_in_place_then_chunk y", y.download(), [&](LL i) {
    double a = 3; for (int r = 0; r < W; ++r) a += xs[r][me * R * C + i]; return a;
  }, [&](LL) { return 1e-5 * W; });
  next(ctx);
}

void fill_ag_cols_rowsum_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 21, C = 50;
  auto as = inputs<float>(W, R * C, 199);
  SymArg<float> x(ctx, {R, W * C}, nullptr);
  pkt::DevLocal<float> a({R, C}, as[me]), y({R, 1}, {});
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(fill_ag_cols_rowsum, a.view(), x.view, y.view());
  done(ctx);
  expect(ctx, "fill_ag_cols_rowsum x", x.download(), [&](LL i) {
    const LL r = i / (W * C), c = i % (W * C); return 2.0 * as[c / C][r * C + c % C];
  }, [](LL) { return 0.0; });
  expect(ctx, "fill_ag_cols_rowsum y", y.download(), [&](LL r) {
    double s = 0; for (int q = 0; q < W; ++q) for (LL c = 0; c < C; ++c) s += 2.0 * as[q][r * C + c]; return s;
  }, [&](LL) { return 1e-4 * W; });
  next(ctx);
}

void vocab_softmax_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 13, V = 300;  // each rank's shard: 300 columns (a 44-column tail of 128)
  auto xs = inputs<float>(W, R * V, 211);
  for (auto& v : xs) for (auto& e : v) e -= 3.0f;  // mostly negative logits: the mask matters
  SymArg<float> lm(ctx, {R, 1}, nullptr), gm(ctx, {R, 1}, nullptr), ls(ctx, {R, 1}, nullptr), gs(ctx, {R, 1}, nullptr);
  pkt::DevLocal<float> x({R, V}, xs[me]), p({R, V}, {});
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(vocab_softmax, x.view(), lm.view, gm.view, ls.view, gs.view, p.view());
  done(ctx);
  expect(ctx, "vocab_softmax p", p.download(), [&](LL i) {
    const LL r = i / V;
    double m = -1e300, s = 0;
    for (int q = 0; q < W; ++q) for (LL k = 0; k < V; ++k) m = std::max(m, f(xs[q][r * V + k]));
    for (int q = 0; q < W; ++q) for (LL k = 0; k < V; ++k) s += std::exp(xs[q][r * V + k] - m);
    return std::exp(xs[me][i] - m) / s;
  }, [](LL) { return 1e-6; });
  next(ctx);
}

void add_all_then_scale_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 37, C = 100;
  auto xs = inputs<float>(W, R * C, 223), init = inputs<float>(W, R * C, 227);
  SymArg<float> x(ctx, {R, C}, &xs[me]), acc(ctx, {R, C}, &init[me]);
  pkt::DevLocal<float> y({R, C}, {});
  ready(ctx);
  LAUNCH(add_all_then_scale, x.view, acc.view, y.view());  // one launch: acc accumulates
  done(ctx);
  expect(ctx, "add_all_then_scale y", y.download(), [&](LL i) {
    double a = init[me][i]; for (int r = 0; r < W; ++r) a += xs[r][i]; return 0.5 * a;
  }, [&](LL) { return 1e-5 * W; });
  next(ctx);
}

void ar_min_then_max_in_place_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 37, C = 100;
  auto xs = inputs<bf16>(W, R * C, 229);
  SymArg<bf16> x(ctx, {R, C}, &xs[me]), y(ctx, {R, C}, nullptr);
  ready(ctx);
  LAUNCH(ar_min_then_max_in_place, x.view, y.view);  // one launch: x is overwritten in place
  done(ctx);
  expect(ctx, "ar_min_then_max_in_place y", y.download(), [&](LL i) {
    double m = 1e300; for (int r = 0; r < W; ++r) m = std::min(m, f(xs[r][i])); return m;
  }, [](LL) { return 0.0; });
  expect(ctx, "ar_min_then_max_in_place x", x.download(), [&](LL i) {
    double m = -1e300; for (int r = 0; r < W; ++r) m = std::max(m, f(xs[r][i])); return m;
  }, [](LL) { return 0.0; });
  next(ctx);
}


void a2a_tile_a2a_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const LL A = 3, B = 21, D = 70;  // tails of the 16-row and 64-column tiles
  auto xs = inputs<bf16>(W, W * A * B * D, 233);
  SymArg<bf16> x(ctx, {W * A, B, D}, &xs[me]), h(ctx, {A, W * B, D}, nullptr),
      h2(ctx, {A, W * B, D}, nullptr), y(ctx, {W * A, B, D}, nullptr);
  ready(ctx);
  for (int l = 0; l < 10; ++l) LAUNCH(a2a_tile_a2a, x.view, h.view, h2.view, y.view);
  done(ctx);
  // h[a, r*B + b, d] on rank me is rank r's x[me*A + a, b, d]; y comes back home as 2x - 1.
  expect(ctx, "a2a_tile_a2a h", h.download(), [&](LL i) {
    const LL d = i % D, col = (i / D) % (W * B), a = i / (D * W * B), r = col / B, b = col % B;
    return f(xs[r][((me * A + a) * B + b) * D + d]);
  }, [](LL) { return 0.0; });
  expect(ctx, "a2a_tile_a2a y", y.download(), [&](LL i) { return bfr(2 * f(xs[me][i]) - 1); },
         [](LL) { return 0.0; });
  next(ctx);
}

}  // namespace

int main() {
  return pkt::run_worlds("rank_specs_test", [](pk::Context& ctx) {
    tp_rms_norm_tail_test(ctx);
    rs_tile_ag_test(ctx);
    silu_ar_in_place_test(ctx);
    ag_last_dim_3d_test(ctx);
    rs_max_mid_3d_test(ctx);
    ar_min_3d_i32_test(ctx);
    rs_min_cols_i32_test(ctx);
    pull_prev_3d_test(ctx);
    ring_shift_i32_test(ctx);
    shift_by_two_test(ctx);
    add_owner_then_bcast_test(ctx);
    reduce_max_root_test(ctx);
    gather_root_2d_test(ctx);
    scatter_tile_gather_test(ctx);
    bcast_then_pull_test(ctx);
    tile_armax_pull_test(ctx);
    ag_then_row_norm_test(ctx);
    rs_in_place_then_chunk_test(ctx);
    fill_ag_cols_rowsum_test(ctx);
    vocab_softmax_test(ctx);
    add_all_then_scale_test(ctx);
    ar_min_then_max_in_place_test(ctx);
    a2a_tile_a2a_test(ctx);
  }, tp_rms_norm_tail, rs_tile_ag, silu_ar_in_place, ag_last_dim_3d, rs_max_mid_3d, ar_min_3d_i32, rs_min_cols_i32,
     pull_prev_3d, ring_shift_i32, shift_by_two, add_owner_then_bcast, reduce_max_root, gather_root_2d,
     scatter_tile_gather, bcast_then_pull, tile_armax_pull, ag_then_row_norm, rs_in_place_then_chunk,
     fill_ag_cols_rowsum, vocab_softmax, add_all_then_scale, ar_min_then_max_in_place, a2a_tile_a2a);
}
