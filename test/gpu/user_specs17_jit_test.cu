// The seventeenth user-written spec set (test/specs/user_specs17.pk.cpp) through the JIT, each kernel
// against a float64 host reference on fresh random inputs, with every output poisoned (NaN, or
// all-ones integers) first. The single-GPU kernels run at W = 1; the kernels that use rank(),
// next_rank() / prev_rank(), peers or collectives at W = 1, 2 and 3 (ranks sharing one GPU;
// PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others), each rank checking its own outputs. No kernel
// of the set takes a Hopper template (attn_bwd_dscores carries two accumulators, attn_bwd_dv's A
// operand is a transposed register tile; pkc --explain), so every kernel is compiled once, with
// templates on, and must take none. Shapes leave partial tiles in every tiled dimension (37-, 70- and
// 100-row blocks, 50-, 100-, 300-, 1000- and 2500-column rows, odd head, batch and page counts).
// In-place tensors (optimizer states, master weights, gradient accumulators, KV caches) and the
// store_add_rows targets start from random data or are zeroed by the kernel itself (then poisoned
// here), and are checked as outputs. One PASS or FAIL line per case.
//
// Covered: all 45 kernels. Shapes the specs fix: layernorm_bwd_dx rows of at most 2048,
// softmax_bwd_f16 1024, unscale_check_overflow 512, sp_layernorm_all_gather 1024,
// sp_rs_residual_rmsnorm 2048, topk_mask_iterative 512, gumbel_sample 2048, attn_bwd_delta heads of
// at most 128, dropout_bwd_4d at most 64 in the last dimension, ema_update_4d at most 3,
// spec_decode_accept_len 8 and spec_decode_prob_accept 16 drafted tokens, segment_ids_from_lengths
// 64 sequences, expert_histogram_allreduce [8192, 4] ids; rope_bwd_halves rotates 128-column rows
// (halves of 64). Semantics taken as the specs write them (see the notes at each case):
// unscale_check_overflow multiplies by ok = 0 on overflow, so its inf / NaN gradients come out NaN
// (inf * 0), not 0; topk_mask_iterative counts tied values once and with k past the distinct values
// keeps the whole row; pp_send_next_stage leaves rank 0's recv and pp_pull_prev_stage rank 0's y
// untouched; gumbel_sample is checked by its invariant (the token's score is the row's maximum within
// fp32 rounding), since logf on the device and on the host may order near-ties differently.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pk::f16;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

// Kernels, and whether one of their launches takes a template (true) or none does: none does.
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"rmsnorm_bwd_dx", false},
    {"rmsnorm_bwd_dw_colsum", false},
    {"layernorm_bwd_dx", false},
    {"layernorm_bwd_dw_db_atomic", false},
    {"sp_layernorm_bwd_dw_allreduce", false},
    {"softmax_bwd_f16", false},
    {"log_softmax_bwd_3d", false},
    {"gelu_tanh_bwd", false},
    {"gelu_erf_bwd", false},
    {"swiglu_bwd", false},
    {"dropout_bwd_4d", false},
    {"embedding_bwd_scatter_add", false},
    {"cross_entropy_bwd", false},
    {"attn_bwd_delta", false},
    {"attn_bwd_dscores", false},
    {"attn_bwd_dv", false},
    {"adamw_master_bf16", false},
    {"lion_step_2d", false},
    {"sgd_nesterov_wd_3d", false},
    {"clip_grad_global_norm", false},
    {"unscale_check_overflow", false},
    {"loss_scale_update", false},
    {"ddp_three_buckets_avg", false},
    {"zero1_rs_sgd_ag", false},
    {"sp_layernorm_all_gather", false},
    {"sp_rs_residual_rmsnorm", false},
    {"pp_send_next_stage", false},
    {"pp_pull_prev_stage", false},
    {"paged_kv_gather", false},
    {"paged_kv_append", false},
    {"greedy_argmax_chunked", false},
    {"topk_mask_iterative", false},
    {"repetition_penalty", false},
    {"spec_decode_accept_len", false},
    {"spec_decode_prob_accept", false},
    {"beam_score_best", false},
    {"gumbel_sample", false},
    {"prefix_sum_three_phase", false},
    {"expert_histogram_allreduce", false},
    {"segment_ids_from_lengths", false},
    {"position_ids_4d_i64", false},
    {"vocab_parallel_ce_fwd_bwd", false},
    {"grad_accumulate_3d", false},
    {"ema_update_4d", false},
    {"rope_bwd_halves", false},
};
// The template kernels also run with templates = false ("name/general"): the set has none.
const std::vector<const char*> kGeneralToo = {};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS17_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs17", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// A bound of rel times a magnitude (the sum of the absolute values of the terms) plus a floor.
auto mag_tol(const std::vector<double>& mag, double rel, double floor) {
  return [&mag, rel, floor](LL i) { return rel * mag[i] + floor; };
}
// A bound of ulps of a bf16 / f16 result (kBf, kHf) plus rel times a magnitude and a floor.
auto round_tol(const std::vector<double>& want, double ulps, const std::vector<double>& mag, double rel, double floor) {
  return [&want, ulps, &mag, rel, floor](LL i) { return ulps * std::fabs(want[i]) + rel * mag[i] + floor; };
}
// Per-row mean and 1 / sqrt(var + 1e-5) of x [M, N], as a LayerNorm forward pass saves them (f32).
template <class T>
void ln_stats(const std::vector<T>& x, LL M, LL N, std::vector<float>& mean, std::vector<float>& rstd) {
  mean.assign(M, 0.f), rstd.assign(M, 0.f);
  for (LL m = 0; m < M; ++m) {
    double s = 0, v = 0;
    for (LL j = 0; j < N; ++j) s += val(x[m * N + j]);
    s /= N;
    for (LL j = 0; j < N; ++j) v += (val(x[m * N + j]) - s) * (val(x[m * N + j]) - s);
    mean[m] = float(s), rstd[m] = float(1 / std::sqrt(v / N + 1e-5));
  }
}

// ================================================================ norm backward ==

// rmsnorm_bwd_dx: dx = rstd (w dy - x rstd^2 mean(w dy x)), rows chunked by 512 (f32).
void rmsnorm_bwd_dx(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed, -2.f, 2.f), dy = rnd<float>(M * N, seed + 1);
  const auto w = rnd<float>(N, seed + 2, 0.5f, 1.5f), rs = rnd<float>(M, seed + 3, 0.5f, 2.f);
  DevLocal<float> xd({M, N}, x), dyd({M, N}, dy), wd({N}, w), rd({M}, rs), dx({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "rmsnorm_bwd_dx", 2, xd.view(), dyd.view(), wd.view(), rd.view(), dx.view())) {
    std::vector<double> want(M * N), mag(M * N);
    for (LL m = 0; m < M; ++m) {
      double s = 0, sm = 0;
      for (LL j = 0; j < N; ++j) {
        const double t = double(dy[m * N + j]) * w[j] * x[m * N + j];
        s += t, sm += std::fabs(t);
      }
      const double rr = rs[m], c = s / N * rr * rr, cm = sm / N * rr * rr;
      for (LL j = 0; j < N; ++j) {
        const LL i = m * N + j;
        want[i] = rr * (double(dy[i]) * w[j] - x[i] * c);
        mag[i] = rr * (std::fabs(double(dy[i]) * w[j]) + std::fabs(x[i]) * cm);
      }
    }
    check(r, "rmsnorm_bwd_dx.dx", dx.download(), [&](LL i) { return want[i]; }, mag_tol(mag, 1e-5, 1e-7));
  }
  end_case(r, "rmsnorm_bwd_dx " + dims({M, N}), before);
}

// rmsnorm_bwd_dw_colsum: dw[n] = sum over rows of dy x rstd (bf16 x, dy; f32 sums).
void rmsnorm_bwd_dw_colsum(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<bf16>(M * N, seed, -2.f, 2.f), dy = rnd<bf16>(M * N, seed + 1);
  const auto rs = rnd<float>(M, seed + 2, 0.5f, 2.f);
  DevLocal<bf16> xd({M, N}, x), dyd({M, N}, dy);
  DevLocal<float> rd({M}, rs), dw({N}, {});
  const int before = begin_case(r);
  if (run(r, "rmsnorm_bwd_dw_colsum", 2, xd.view(), dyd.view(), rd.view(), dw.view())) {
    std::vector<double> want(N, 0.0), mag(N, 0.0);
    for (LL i = 0; i < M * N; ++i) {
      const double t = val(dy[i]) * val(x[i]) * rs[i / N];
      want[i % N] += t, mag[i % N] += std::fabs(t);
    }
    check(r, "rmsnorm_bwd_dw_colsum.dw", dw.download(), [&](LL i) { return want[i]; }, mag_tol(mag, 1e-5, 1e-7));
  }
  end_case(r, "rmsnorm_bwd_dw_colsum " + dims({M, N}), before);
}

// layernorm_bwd_dx: xhat = (x - mean) rstd, g = dy w; dx = bf16(rstd (g - mean(g) - xhat mean(g xhat)))
// (mean and rstd those of x, as the forward pass saves them).
void layernorm_bwd_dx(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<bf16>(M * N, seed, -2.f, 3.f), dy = rnd<bf16>(M * N, seed + 1);
  const auto w = rnd<bf16>(N, seed + 2, 0.5f, 1.5f);
  std::vector<float> mean, rstd;
  ln_stats(x, M, N, mean, rstd);
  DevLocal<bf16> xd({M, N}, x), dyd({M, N}, dy), wd({N}, w), dx({M, N}, {});
  DevLocal<float> md({M}, mean), rd({M}, rstd);
  const int before = begin_case(r);
  if (run(r, "layernorm_bwd_dx", 2, xd.view(), dyd.view(), wd.view(), md.view(), rd.view(), dx.view())) {
    std::vector<double> want(M * N), mag(M * N);
    for (LL m = 0; m < M; ++m) {
      double mg = 0, mgx = 0, ag = 0, agx = 0;
      const double rr = rstd[m];
      auto g = [&](LL j) { return val(dy[m * N + j]) * val(w[j]); };
      auto xh = [&](LL j) { return (val(x[m * N + j]) - mean[m]) * rr; };
      for (LL j = 0; j < N; ++j) mg += g(j), mgx += g(j) * xh(j), ag += std::fabs(g(j)), agx += std::fabs(g(j) * xh(j));
      mg /= N, mgx /= N, ag /= N, agx /= N;
      for (LL j = 0; j < N; ++j) {
        want[m * N + j] = rr * (g(j) - mg - xh(j) * mgx);
        mag[m * N + j] = rr * (std::fabs(g(j)) + ag + std::fabs(xh(j)) * (agx + 1));
      }
    }
    check(r, "layernorm_bwd_dx.dx", dx.download(), [&](LL i) { return want[i]; }, round_tol(want, kBf, mag, 1e-5, 1e-6));
  }
  end_case(r, "layernorm_bwd_dx " + dims({M, N}), before);
}

// layernorm_bwd_dw_db_atomic: dw [1, N] = column sums of dy (x - mean) rstd, db [1, N] = column sums
// of dy; the kernel zeroes both first (poisoned here; two launches, so the second zeroes the first's
// sums).
void layernorm_bwd_dw_db_atomic(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed, -2.f, 3.f), dy = rnd<float>(M * N, seed + 1);
  std::vector<float> mean, rstd;
  ln_stats(x, M, N, mean, rstd);
  DevLocal<float> xd({M, N}, x), dyd({M, N}, dy), md({M}, mean), rd({M}, rstd), dw({1, N}, {}), db({1, N}, {});
  const int before = begin_case(r);
  if (run(r, "layernorm_bwd_dw_db_atomic", 2, xd.view(), dyd.view(), md.view(), rd.view(), dw.view(), db.view())) {
    std::vector<double> ww(N, 0.0), wb(N, 0.0), mw(N, 0.0), mb(N, 0.0);
    for (LL i = 0; i < M * N; ++i) {
      const double xh = (double(x[i]) - mean[i / N]) * rstd[i / N], t = dy[i] * xh;
      ww[i % N] += t, mw[i % N] += std::fabs(t), wb[i % N] += dy[i], mb[i % N] += std::fabs(dy[i]);
    }
    check(r, "layernorm_bwd_dw_db_atomic.dw", dw.download(), [&](LL i) { return ww[i]; }, mag_tol(mw, 1e-5, 1e-7));
    check(r, "layernorm_bwd_dw_db_atomic.db", db.download(), [&](LL i) { return wb[i]; }, mag_tol(mb, 1e-5, 1e-7));
  }
  end_case(r, "layernorm_bwd_dw_db_atomic " + dims({M, N}), before);
}

// sp_layernorm_bwd_dw_allreduce (multi-rank): part [2, N] = this rank's column sums of dy xhat (row
// 0) and dy (row 1) over its sequence shard; total = their sum over ranks.
void sp_layernorm_bwd_dw_allreduce(const Run& r, LL M, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> x(W), dy(W);
  std::vector<std::vector<float>> mean(W), rstd(W);
  for (int p = 0; p < W; ++p) {
    x[p] = rnd<bf16>(M * N, seed + p, -2.f, 3.f), dy[p] = rnd<bf16>(M * N, seed + 10 + p);
    ln_stats(x[p], M, N, mean[p], rstd[p]);
  }
  DevLocal<bf16> xd({M, N}, x[me]), dyd({M, N}, dy[me]);
  DevLocal<float> md({M}, mean[me]), rd({M}, rstd[me]);
  SymArg<float> part(r.ctx, {2, N}, nullptr), total(r.ctx, {2, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, "sp_layernorm_bwd_dw_allreduce", 2, xd.view(), dyd.view(), md.view(), rd.view(), part.view, total.view)) {
    std::vector<double> own(2 * N, 0.0), omag(2 * N, 0.0), all(2 * N, 0.0), amag(2 * N, 0.0);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < M * N; ++i) {
        const double g = val(dy[p][i]), t = g * (val(x[p][i]) - mean[p][i / N]) * rstd[p][i / N];
        all[i % N] += t, amag[i % N] += std::fabs(t), all[N + i % N] += g, amag[N + i % N] += std::fabs(g);
        if (p == me) own[i % N] += t, omag[i % N] += std::fabs(t), own[N + i % N] += g, omag[N + i % N] += std::fabs(g);
      }
    check(r, "sp_layernorm_bwd_dw_allreduce.part", part.download(), [&](LL i) { return own[i]; }, mag_tol(omag, 1e-5, 1e-7));
    check(r, "sp_layernorm_bwd_dw_allreduce.total", total.download(), [&](LL i) { return all[i]; }, mag_tol(amag, 1e-5, 1e-7));
  }
  end_case(r, "sp_layernorm_bwd_dw_allreduce " + dims({M, N}), before);
}

// ================================================================ softmax / activation backward ==

// softmax_bwd_f16: dx = f16(y (dy - sum(dy y))), y positive (a probability row's scale).
void softmax_bwd_f16(const Run& r, LL M, LL N, unsigned seed) {
  const auto y = rnd<f16>(M * N, seed, 0.f, 4.f / N), dy = rnd<f16>(M * N, seed + 1);
  DevLocal<f16> yd({M, N}, y), dyd({M, N}, dy), dx({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "softmax_bwd_f16", 2, yd.view(), dyd.view(), dx.view())) {
    std::vector<double> want(M * N), mag(M * N);
    for (LL m = 0; m < M; ++m) {
      double s = 0, sm = 0;
      for (LL j = 0; j < N; ++j) s += val(dy[m * N + j]) * val(y[m * N + j]), sm += std::fabs(val(dy[m * N + j]) * val(y[m * N + j]));
      for (LL j = 0; j < N; ++j) {
        const LL i = m * N + j;
        want[i] = val(y[i]) * (val(dy[i]) - s), mag[i] = val(y[i]) * (std::fabs(val(dy[i])) + sm);
      }
    }
    check(r, "softmax_bwd_f16.dx", dx.download(), [&](LL i) { return want[i]; }, round_tol(want, kHf, mag, 1e-5, 1e-7));
  }
  end_case(r, "softmax_bwd_f16 " + dims({M, N}), before);
}

// log_softmax_bwd_3d: dx = dy - exp(lsm) sum(dy) over the last dimension of [B, S, V] (f32).
void log_softmax_bwd_3d(const Run& r, LL B, LL S, LL V, unsigned seed) {
  const auto lsm = rnd<float>(B * S * V, seed, -8.f, -0.1f), dy = rnd<float>(B * S * V, seed + 1);
  DevLocal<float> ld({B, S, V}, lsm), dyd({B, S, V}, dy), dx({B, S, V}, {});
  const int before = begin_case(r);
  if (run(r, "log_softmax_bwd_3d", 2, ld.view(), dyd.view(), dx.view())) {
    std::vector<double> want(B * S * V), mag(B * S * V);
    for (LL row = 0; row < B * S; ++row) {
      double t = 0, tm = 0;
      for (LL j = 0; j < V; ++j) t += dy[row * V + j], tm += std::fabs(dy[row * V + j]);
      for (LL j = 0; j < V; ++j) {
        const LL i = row * V + j;
        const double e = std::exp(double(lsm[i]));
        want[i] = dy[i] - e * t, mag[i] = std::fabs(dy[i]) + e * tm * (1 + std::fabs(lsm[i]));
      }
    }
    check(r, "log_softmax_bwd_3d.dx", dx.download(), [&](LL i) { return want[i]; }, mag_tol(mag, 1e-5, 1e-7));
  }
  end_case(r, "log_softmax_bwd_3d " + dims({B, S, V}), before);
}

// gelu_tanh_bwd: dx = bf16(dy d(x)), d the derivative of 0.5 x (1 + tanh(k (x + 0.044715 x^3))).
void gelu_tanh_bwd(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<bf16>(M * N, seed, -4.f, 4.f), dy = rnd<bf16>(M * N, seed + 1);
  DevLocal<bf16> xd({M, N}, x), dyd({M, N}, dy), dx({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "gelu_tanh_bwd", 2, xd.view(), dyd.view(), dx.view())) {
    std::vector<double> want(M * N), mag(M * N);
    const double k = 0.7978845608;
    for (LL i = 0; i < M * N; ++i) {
      const double t = val(x[i]), th = std::tanh(k * (t + 0.044715 * t * t * t));
      const double d = 0.5 * (1 + th) + 0.5 * t * (1 - th * th) * k * (1 + 3 * 0.044715 * t * t);
      want[i] = val(dy[i]) * d, mag[i] = std::fabs(val(dy[i])) * (1 + std::fabs(t));
    }
    check(r, "gelu_tanh_bwd.dx", dx.download(), [&](LL i) { return want[i]; }, round_tol(want, kBf, mag, 1e-5, 1e-7));
  }
  end_case(r, "gelu_tanh_bwd " + dims({M, N}), before);
}

// gelu_erf_bwd: dx = dy (Phi(x) + x phi(x)), Phi taken as 0.5 where |x| < 1e-6 (the spec's select;
// x holds 0 and values either side of 1e-6).
void gelu_erf_bwd(const Run& r, LL M, LL N, unsigned seed) {
  auto x = rnd<float>(M * N, seed, -4.f, 4.f);
  const auto dy = rnd<float>(M * N, seed + 1);
  x[0] = 0.f, x[7] = 1e-7f, x[9] = -3e-7f, x[N + 3] = 2e-6f, x[M * N - 1] = -5e-6f;
  DevLocal<float> xd({M, N}, x), dyd({M, N}, dy), dx({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "gelu_erf_bwd", 2, xd.view(), dyd.view(), dx.view())) {
    auto want = [&](LL i) {
      const double t = x[i], cdf = std::fabs(t) < 1e-6 ? 0.5 : 0.5 * (1 + std::erf(t / std::sqrt(2.0)));
      return dy[i] * (cdf + t * std::exp(-0.5 * t * t) / 2.5066282746310002);
    };
    check(r, "gelu_erf_bwd.dx", dx.download(), want, [&](LL i) { return 1e-5 * std::fabs(dy[i]) + 1e-7; });
  }
  end_case(r, "gelu_erf_bwd " + dims({M, N}), before);
}

// swiglu_bwd: s = sigmoid(g); dup = bf16(dy g s), dgate = bf16(dy u s (1 + g (1 - s))).
void swiglu_bwd(const Run& r, LL M, LL N, unsigned seed) {
  const auto g = rnd<bf16>(M * N, seed, -6.f, 6.f), u = rnd<bf16>(M * N, seed + 1, -2.f, 2.f), dy = rnd<bf16>(M * N, seed + 2);
  DevLocal<bf16> gd({M, N}, g), ud({M, N}, u), dyd({M, N}, dy), dg({M, N}, {}), du({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "swiglu_bwd", 2, gd.view(), ud.view(), dyd.view(), dg.view(), du.view())) {
    std::vector<double> wu(M * N), wg(M * N), mag(M * N);
    for (LL i = 0; i < M * N; ++i) {
      const double gv = val(g[i]), s = pkt::sigmoid(gv), d = val(dy[i]);
      wu[i] = d * gv * s, wg[i] = d * val(u[i]) * s * (1 + gv * (1 - s));
      mag[i] = std::fabs(d) * (1 + std::fabs(gv)) * (1 + std::fabs(val(u[i])));
    }
    check(r, "swiglu_bwd.dup", du.download(), [&](LL i) { return wu[i]; }, round_tol(wu, kBf, mag, 1e-5, 1e-7));
    check(r, "swiglu_bwd.dgate", dg.download(), [&](LL i) { return wg[i]; }, round_tol(wg, kBf, mag, 1e-5, 1e-7));
  }
  end_case(r, "swiglu_bwd " + dims({M, N}), before);
}

// dropout_bwd_4d: dx = f16(dy inv_keep) where keep != 0 (keep values -1, 0, 1, 2), else 0.
void dropout_bwd_4d(const Run& r, LL B, LL H, LL S, LL D, unsigned seed) {
  const float inv_keep = 1.0f / 0.9f;
  const auto dy = rnd<f16>(B * H * S * D, seed);
  const auto keep = ints<int>(B * H * S * D, -1, 2, seed + 1);
  DevLocal<f16> dyd({B, H, S, D}, dy), dx({B, H, S, D}, {});
  DevLocal<int> kd({B, H, S, D}, keep);
  const int before = begin_case(r);
  if (run(r, "dropout_bwd_4d", 2, dyd.view(), kd.view(), dx.view(), inv_keep))
    check(r, "dropout_bwd_4d.dx", dx.download(),
          [&](LL i) { return keep[i] != 0 ? f16r(float(val(dy[i])) * inv_keep) : 0.0; }, exact());
  end_case(r, "dropout_bwd_4d " + dims({B, H, S, D}), before);
}

// ================================================================ embedding, CE and attention backward ==

// embedding_bwd_scatter_add: dtable (zeroed by the kernel; poisoned here) [V, D] gets dy[t] added at
// row ids[t]; duplicate ids all arrive, ids -1 and V (outside the table) are dropped.
void embedding_bwd_scatter_add(const Run& r, LL T, LL V, LL D, unsigned seed) {
  auto ids = ints<long long>(T, -1, V, seed);
  ids[0] = 0, ids[1] = V - 1, ids[2] = -1, ids[3] = V, ids[4] = ids[5] = 7;
  const auto dy = rnd<float>(T * D, seed + 1);
  DevLocal<long long> idd({T}, ids);
  DevLocal<float> dyd({T, D}, dy), dt({V, D}, {});
  const int before = begin_case(r);
  if (run(r, "embedding_bwd_scatter_add", 2, idd.view(), dyd.view(), dt.view())) {
    std::vector<double> want(V * D, 0.0), mag(V * D, 0.0);
    for (LL t = 0; t < T; ++t)
      if (ids[t] >= 0 && ids[t] < V)
        for (LL d = 0; d < D; ++d) want[ids[t] * D + d] += dy[t * D + d], mag[ids[t] * D + d] += std::fabs(dy[t * D + d]);
    check(r, "embedding_bwd_scatter_add.dtable", dt.download(), [&](LL i) { return want[i]; }, mag_tol(mag, 1e-6, 1e-7));
  }
  end_case(r, "embedding_bwd_scatter_add " + dims({T, V, D}), before);
}

// cross_entropy_bwd: dlogits = bf16((exp(x - lse) - onehot(target)) dloss_over_n), 0 for rows whose
// target is -100; lse the rows' true log-sum-exp (f32). Targets 0, V - 1 and -100 among them.
void cross_entropy_bwd(const Run& r, LL T, LL V, unsigned seed) {
  const auto x = rnd<bf16>(T * V, seed, -4.f, 4.f);
  auto tg = ints<long long>(T, 0, V - 1, seed + 1);
  const auto ign = ints<int>(T, 0, 4, seed + 2);
  for (LL t = 0; t < T; ++t)
    if (ign[t] == 0) tg[t] = -100;
  tg[0] = 0, tg[1] = V - 1, tg[2] = -100;
  std::vector<float> lse(T);
  for (LL t = 0; t < T; ++t) {
    double m = -1e300, s = 0;
    for (LL j = 0; j < V; ++j) m = std::max(m, val(x[t * V + j]));
    for (LL j = 0; j < V; ++j) s += std::exp(val(x[t * V + j]) - m);
    lse[t] = float(m + std::log(s));
  }
  const float dl = 1.0f / float(T);
  DevLocal<bf16> xd({T, V}, x), dlg({T, V}, {});
  DevLocal<long long> td({T}, tg);
  DevLocal<float> ld({T}, lse);
  const int before = begin_case(r);
  if (run(r, "cross_entropy_bwd", 2, xd.view(), td.view(), ld.view(), dlg.view(), dl)) {
    auto want = [&](LL i) {
      const LL t = i / V, j = i % V;
      if (tg[t] == -100) return 0.0;
      return (std::exp(val(x[i]) - lse[t]) - (j == tg[t] ? 1.0 : 0.0)) * dl;
    };
    check(r, "cross_entropy_bwd.dlogits", dlg.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-6 * dl; });
  }
  end_case(r, "cross_entropy_bwd " + dims({T, V}), before);
}

// attn_bwd_delta: delta [H, S] = sum over d of dO o, [H, S, D] bf16.
void attn_bwd_delta(const Run& r, LL H, LL S, LL D, unsigned seed) {
  const auto o = rnd<bf16>(H * S * D, seed), dout = rnd<bf16>(H * S * D, seed + 1);
  DevLocal<bf16> od({H, S, D}, o), dd({H, S, D}, dout);
  DevLocal<float> delta({H, S}, {});
  const int before = begin_case(r);
  if (run(r, "attn_bwd_delta", 2, od.view(), dd.view(), delta.view())) {
    std::vector<double> want(H * S), mag(H * S, 0.0);
    for (LL i = 0; i < H * S; ++i) {
      want[i] = dot(o, i * D, dout, i * D, D);
      for (LL d = 0; d < D; ++d) mag[i] += std::fabs(val(o[i * D + d]) * val(dout[i * D + d]));
    }
    check(r, "attn_bwd_delta.delta", delta.download(), [&](LL i) { return want[i]; }, mag_tol(mag, 1e-5, 1e-7));
  }
  end_case(r, "attn_bwd_delta " + dims({H, S, D}), before);
}

// attn_bwd_dscores: s = q k^T, dp = dO v^T; ds = p (dp - delta) scale with p = exp(s scale - lse)
// where key j <= query i, else 0. lse the causal rows' true log-sum-exp (f32), delta random.
void attn_bwd_dscores(const Run& r, LL Sq, LL Sk, LL D, unsigned seed) {
  const float scale = float(1 / std::sqrt(double(D)));
  const auto q = rnd<bf16>(Sq * D, seed), k = rnd<bf16>(Sk * D, seed + 1), v = rnd<bf16>(Sk * D, seed + 2),
             dout = rnd<bf16>(Sq * D, seed + 3);
  const auto delta = rnd<float>(Sq, seed + 4);
  std::vector<float> lse(Sq);
  for (LL i = 0; i < Sq; ++i) {
    double m = -1e300, s = 0;
    for (LL j = 0; j <= std::min(i, Sk - 1); ++j) m = std::max(m, dot(q, i * D, k, j * D, D) * scale);
    for (LL j = 0; j <= std::min(i, Sk - 1); ++j) s += std::exp(dot(q, i * D, k, j * D, D) * scale - m);
    lse[i] = float(m + std::log(s));
  }
  DevLocal<bf16> qd({Sq, D}, q), kd({Sk, D}, k), vd({Sk, D}, v), dd({Sq, D}, dout);
  DevLocal<float> ld({Sq}, lse), deld({Sq}, delta), ds({Sq, Sk}, {});
  const int before = begin_case(r);
  if (run(r, "attn_bwd_dscores", 2, qd.view(), kd.view(), vd.view(), dd.view(), ld.view(), deld.view(), ds.view(), scale)) {
    std::vector<double> want(Sq * Sk, 0.0), tol(Sq * Sk, 1e-7);
    for (LL i = 0; i < Sq; ++i)
      for (LL j = 0; j <= std::min(i, Sk - 1); ++j) {
        double smag = 0, dmag = 0;
        for (LL d = 0; d < D; ++d)
          smag += std::fabs(val(q[i * D + d]) * val(k[j * D + d])), dmag += std::fabs(val(dout[i * D + d]) * val(v[j * D + d]));
        const double p = std::exp(dot(q, i * D, k, j * D, D) * scale - lse[i]), g = dot(dout, i * D, v, j * D, D) - delta[i];
        want[i * Sk + j] = p * g * scale;
        tol[i * Sk + j] += scale * p * (1e-5 * (1 + smag * scale) * std::fabs(g) + 1e-5 * (dmag + std::fabs(delta[i])));
      }
    check(r, "attn_bwd_dscores.ds", ds.download(), [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
  }
  end_case(r, "attn_bwd_dscores " + dims({Sq, Sk, D}), before);
}

// attn_bwd_dv: dv [Sk, D] = bf16(P)^T dO, P [Sq, Sk] f32 (rounded to bf16 for the mma), dO bf16.
void attn_bwd_dv(const Run& r, LL Sq, LL Sk, LL D, unsigned seed) {
  const auto p = rnd<float>(Sq * Sk, seed, 0.f, 1.f);
  const auto dout = rnd<bf16>(Sq * D, seed + 1);
  DevLocal<float> pd({Sq, Sk}, p), dv({Sk, D}, {});
  DevLocal<bf16> dd({Sq, D}, dout);
  const int before = begin_case(r);
  if (run(r, "attn_bwd_dv", 2, pd.view(), dd.view(), dv.view())) {
    std::vector<double> want(Sk * D, 0.0), mag(Sk * D, 0.0);
    for (LL m = 0; m < Sq; ++m)
      for (LL n = 0; n < Sk; ++n) {
        const double pb = bf16r(p[m * Sk + n]);
        for (LL d = 0; d < D; ++d) {
          const double t = pb * val(dout[m * D + d]);
          want[n * D + d] += t, mag[n * D + d] += std::fabs(t);
        }
      }
    check(r, "attn_bwd_dv.dv", dv.download(), [&](LL i) { return want[i]; }, mag_tol(mag, 1e-5, 1e-7));
  }
  end_case(r, "attn_bwd_dv " + dims({Sq, Sk, D}), before);
}

// ================================================================ optimizers ==

// adamw_master_bf16: m1, m2 and the f32 master p updated in place (bias corrections from `step`,
// decoupled weight decay); p16 = bf16 of the new p.
void adamw_master_bf16(const Run& r, LL n, LL step, unsigned seed) {
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.1f;
  const auto p = rnd<float>(n, seed), m1 = rnd<float>(n, seed + 2, -0.1f, 0.1f), m2 = rnd<float>(n, seed + 3, 0.f, 0.1f);
  const auto g = rnd<bf16>(n, seed + 1);
  DevLocal<float> pd({n}, p), m1d({n}, m1), m2d({n}, m2);
  DevLocal<bf16> gd({n}, g), p16({n}, {});
  const int before = begin_case(r);
  if (run(r, "adamw_master_bf16", 1, pd.view(), gd.view(), m1d.view(), m2d.view(), p16.view(), lr, b1, b2, eps, wd, step)) {
    const double c1 = 1 / (1 - std::pow(double(b1), double(step))), c2 = 1 / (1 - std::pow(double(b2), double(step)));
    std::vector<double> a(n), b(n), upd(n), nw(n);
    for (LL i = 0; i < n; ++i) {
      const double gv = val(g[i]);
      a[i] = m1[i] * double(b1) + gv * (1 - double(b1));
      b[i] = m2[i] * double(b2) + gv * gv * (1 - double(b2));
      upd[i] = double(lr) * (a[i] * c1) / (std::sqrt(b[i] * c2) + eps);
      nw[i] = p[i] * (1 - double(lr) * wd) - upd[i];
    }
    check(r, "adamw_master_bf16.m1", m1d.download(), [&](LL i) { return a[i]; },
          [&](LL i) { return 1e-6 * (std::fabs(m1[i]) + std::fabs(val(g[i]))); });
    check(r, "adamw_master_bf16.m2", m2d.download(), [&](LL i) { return b[i]; },
          [&](LL i) { return 1e-6 * (m2[i] + val(g[i]) * val(g[i])) + 1e-12; });
    auto ptol = [&](LL i) { return 1e-6 * std::fabs(p[i]) + 2e-5 * std::fabs(upd[i]) + 1e-9; };
    check(r, "adamw_master_bf16.p", pd.download(), [&](LL i) { return nw[i]; }, ptol);
    check(r, "adamw_master_bf16.p16", p16.download(), [&](LL i) { return nw[i]; },
          [&](LL i) { return kBf * std::fabs(nw[i]) + ptol(i); });
  }
  end_case(r, "adamw_master_bf16 n=" + std::to_string(n) + " step=" + std::to_string(step), before);
}

// lion_step_2d: u = b1 m + (1 - b1) g; p = bf16(p (1 - lr wd) - lr sign(u)); m = b2 m + (1 - b2) g, in
// place. Element 0 has m = g = 0 (sign 0); a u within fp32 rounding of 0 may take either sign.
void lion_step_2d(const Run& r, LL R, LL C, unsigned seed) {
  const float lr = 0.01f, b1 = 0.9f, b2 = 0.99f, wd = 0.1f;
  auto p = rnd<bf16>(R * C, seed), g = rnd<bf16>(R * C, seed + 1);
  auto m = rnd<float>(R * C, seed + 2, -0.5f, 0.5f);
  g[0] = pkt::from_host<bf16>(0.f), m[0] = 0.f;
  DevLocal<bf16> pd({R, C}, p), gd({R, C}, g);
  DevLocal<float> md({R, C}, m);
  const int before = begin_case(r);
  if (run(r, "lion_step_2d", 1, pd.view(), gd.view(), md.view(), lr, b1, b2, wd)) {
    std::vector<double> wp(R * C), tol(R * C), wm(R * C);
    for (LL i = 0; i < R * C; ++i) {
      const double gv = val(g[i]), u = m[i] * double(b1) + gv * (1 - double(b1));
      const double sg = u > 0 ? 1.0 : u < 0 ? -1.0 : 0.0;
      wp[i] = val(p[i]) * (1 - double(lr) * wd) - double(lr) * sg;
      tol[i] = kBf * std::fabs(wp[i]) + 1e-6 + (std::fabs(u) < 1e-6 && u != 0 ? 2 * double(lr) : 0.0);
      wm[i] = m[i] * double(b2) + gv * (1 - double(b2));
    }
    check(r, "lion_step_2d.p", pd.download(), [&](LL i) { return wp[i]; }, [&](LL i) { return tol[i]; });
    check(r, "lion_step_2d.mom", md.download(), [&](LL i) { return wm[i]; },
          [&](LL i) { return 1e-6 * (std::fabs(m[i]) + std::fabs(val(g[i]))) + 1e-12; });
  }
  end_case(r, "lion_step_2d " + dims({R, C}), before);
}

// sgd_nesterov_wd_3d: g' = g + wd p; buf = mu buf + g'; p = p - lr (g' + mu buf), in place (f32).
void sgd_nesterov_wd_3d(const Run& r, LL A, LL B, LL C, unsigned seed) {
  const float lr = 0.05f, mu = 0.9f, wd = 0.01f;
  const LL n = A * B * C;
  const auto p = rnd<float>(n, seed), g = rnd<float>(n, seed + 1), buf = rnd<float>(n, seed + 2);
  DevLocal<float> pd({A, B, C}, p), gd({A, B, C}, g), bd({A, B, C}, buf);
  const int before = begin_case(r);
  if (run(r, "sgd_nesterov_wd_3d", 1, pd.view(), gd.view(), bd.view(), lr, mu, wd)) {
    std::vector<double> wb(n), wp(n), mag(n);
    for (LL i = 0; i < n; ++i) {
      const double gt = g[i] + double(p[i]) * wd;
      wb[i] = buf[i] * double(mu) + gt;
      wp[i] = p[i] - double(lr) * (gt + double(mu) * wb[i]);
      mag[i] = std::fabs(p[i]) + std::fabs(g[i]) + std::fabs(buf[i]);
    }
    check(r, "sgd_nesterov_wd_3d.buf", bd.download(), [&](LL i) { return wb[i]; }, mag_tol(mag, 1e-6, 1e-9));
    check(r, "sgd_nesterov_wd_3d.p", pd.download(), [&](LL i) { return wp[i]; }, mag_tol(mag, 1e-6, 1e-9));
  }
  end_case(r, "sgd_nesterov_wd_3d " + dims({A, B, C}), before);
}

// clip_grad_global_norm (multi-rank): part [T] = this rank's sums of squares per 4096-element tile of
// g, total their sum over ranks; g scaled in place by min(1, max_norm / (norm + 1e-6)), norm the
// global one.
void clip_grad_global_norm(const Run& r, LL n, float max_norm, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL T = (n + 4095) / 4096;
  std::vector<std::vector<float>> g(W);
  for (int p = 0; p < W; ++p) g[p] = rnd<float>(n, seed + p);
  DevLocal<float> gd({n}, g[me]);
  SymArg<float> part(r.ctx, {T}, nullptr), total(r.ctx, {T}, nullptr);
  const int before = begin_case(r);
  if (run(r, "clip_grad_global_norm", 1, gd.view(), part.view, total.view, max_norm)) {
    std::vector<double> own(T, 0.0), all(T, 0.0);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < n; ++i) {
        const double s = double(g[p][i]) * g[p][i];
        all[i / 4096] += s;
        if (p == me) own[i / 4096] += s;
      }
    const double ss = std::accumulate(all.begin(), all.end(), 0.0), coef = std::min(max_norm / (std::sqrt(ss) + 1e-6), 1.0);
    check(r, "clip_grad_global_norm.part", part.download(), [&](LL i) { return own[i]; }, [&](LL i) { return 1e-6 * own[i]; });
    check(r, "clip_grad_global_norm.total", total.download(), [&](LL i) { return all[i]; }, [&](LL i) { return 1e-6 * all[i]; });
    check(r, "clip_grad_global_norm.g", gd.download(), [&](LL i) { return g[me][i] * coef; },
          [&](LL i) { return 2e-6 * std::fabs(g[me][i] * coef) + 1e-9; });
  }
  end_case(r, "clip_grad_global_norm n=" + std::to_string(n) + " max_norm=" + std::to_string(max_norm), before);
}

// unscale_check_overflow (multi-rank): flag[m] = 1 where row m of this rank's f16 gradients holds an
// inf or NaN, gflag their max over ranks; g = f32(g16) inv_scale ok with ok = 1 - max(gflag). As the
// spec writes it, ok = 0 zeroes the finite elements but leaves inf * 0 and NaN * 0 NaN. bad_rank >= 0:
// that rank holds an inf (row 1) and a NaN (row M - 1); every rank holds +-65504 (finite).
void unscale_check_overflow(const Run& r, LL M, LL N, int bad_rank, unsigned seed) {
  const int W = r.W, me = r.me;
  const float inv_scale = 1.0f / 512.0f;
  std::vector<std::vector<f16>> g(W);
  for (int p = 0; p < W; ++p) {
    g[p] = rnd<f16>(M * N, seed + p, -2000.f, 2000.f);
    g[p][3] = pkt::from_host<f16>(65504.f), g[p][N + 5] = pkt::from_host<f16>(-65504.f);
    if (p == bad_rank)
      g[p][N + 7] = pkt::from_host<f16>(std::numeric_limits<float>::infinity()),
      g[p][(M - 1) * N + N - 1] = pkt::from_host<f16>(std::numeric_limits<float>::quiet_NaN());
  }
  const bool any = bad_rank >= 0 && bad_rank < W;
  DevLocal<f16> gd({M, N}, g[me]);
  DevLocal<float> out({M, N}, {});
  SymArg<float> flag(r.ctx, {M}, nullptr), gflag(r.ctx, {M}, nullptr);
  const int before = begin_case(r);
  if (run(r, "unscale_check_overflow", 2, gd.view(), out.view(), flag.view, gflag.view, inv_scale)) {
    auto bad_row = [&](int p, LL m) {
      for (LL j = 0; j < N; ++j)
        if (!std::isfinite(val(g[p][m * N + j]))) return true;
      return false;
    };
    check(r, "unscale_check_overflow.flag", flag.download(), [&](LL i) { return bad_row(me, i) ? 1.0 : 0.0; }, exact());
    check(r, "unscale_check_overflow.gflag", gflag.download(), [&](LL i) { return any && bad_row(bad_rank, i) ? 1.0 : 0.0; },
          exact());
    // NaN wanted (a non-finite input times ok = 0): compared as the marker 3e38.
    auto got = out.download();
    for (float& v : got)
      if (std::isnan(v)) v = 3e38f;
    check(r, "unscale_check_overflow.g", got, [&](LL i) {
      const double x = val(g[me][i]);
      if (!any) return x * inv_scale;
      return std::isfinite(x) ? 0.0 : 3e38;
    }, [&](LL i) { return std::isfinite(val(g[me][i])) || !any ? 0.0 : 1e32; });
  }
  end_case(r, "unscale_check_overflow " + dims({M, N}) + " bad_rank=" + std::to_string(bad_rank), before);
}

// loss_scale_update: on found_inf > 0 halve the scale and reset the counter; else count the good
// step, and at `interval` good steps double the scale and reset. Rows: found_inf, scale, good,
// interval (edges: interval 0 and 1, a counter at 2^31 - 2).
void loss_scale_update(const Run& r) {
  struct Row {
    float f, s;
    int good;
    LL interval;
  };
  for (const Row& row : {Row{1.f, 65536.f, 5, 10}, Row{0.f, 1024.f, 3, 10}, Row{0.f, 1024.f, 9, 10}, Row{0.f, 3.f, 0, 1},
                         Row{0.f, 6.f, 7, 0}, Row{1.f, 5.f, 9, 10}, Row{0.f, 8.f, 2147483646, 2147483647}}) {
    DevLocal<float> fd({1}, {row.f}), sd({1}, {row.s});
    DevLocal<int> gd({1}, {row.good});
    const int before = begin_case(r);
    if (run(r, "loss_scale_update", 1, fd.view(), sd.view(), gd.view(), row.interval)) {
      const LL gc = row.f > 0 ? 0 : LL(row.good) + 1;
      const bool grow = gc >= row.interval;
      const double ns = row.f > 0 ? row.s * 0.5 : grow ? row.s * 2.0 : row.s;
      check(r, "loss_scale_update.scale", sd.download(), [&](LL) { return ns; }, exact());
      check(r, "loss_scale_update.good", gd.download(), [&](LL) { return grow ? 0.0 : double(gc); }, exact());
    }
    end_case(r, "loss_scale_update f=" + std::to_string(int(row.f)) + " good=" + std::to_string(row.good) +
                    " interval=" + std::to_string(row.interval), before);
  }
}

// ================================================================ data / sequence / pipeline parallel ==

// ddp_three_buckets_avg (multi-rank): o0, o1, o2 = the all-reduce (sum) of b0, b1, b2, then scaled in
// place by 1 / W (o2 bf16: the bf16 sum times f32(1 / W), rounded to bf16 again).
void ddp_three_buckets_avg(const Run& r, LL n0, LL n1, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> b0(W), b1(W);
  std::vector<std::vector<bf16>> b2(W);
  for (int p = 0; p < W; ++p)
    b0[p] = rnd<float>(n0, seed + p), b1[p] = rnd<float>(n1, seed + 10 + p), b2[p] = rnd<bf16>(R * C, seed + 20 + p);
  SymArg<float> b0d(r.ctx, {n0}, &b0[me]), b1d(r.ctx, {n1}, &b1[me]), o0(r.ctx, {n0}, nullptr), o1(r.ctx, {n1}, nullptr);
  SymArg<bf16> b2d(r.ctx, {R, C}, &b2[me]), o2(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "ddp_three_buckets_avg", 1, b0d.view, b1d.view, b2d.view, o0.view, o1.view, o2.view)) {
    const double inv = double(1.0f / float(W));
    auto sum = [&](auto& b, LL i, bool absolute) {
      double s = 0;
      for (int p = 0; p < W; ++p) s += absolute ? std::fabs(val(b[p][i])) : val(b[p][i]);
      return s;
    };
    check(r, "ddp_three_buckets_avg.o0", o0.download(), [&](LL i) { return sum(b0, i, false) * inv; },
          [&](LL i) { return 1e-6 * sum(b0, i, true) + 1e-9; });
    check(r, "ddp_three_buckets_avg.o1", o1.download(), [&](LL i) { return sum(b1, i, false) * inv; },
          [&](LL i) { return 1e-6 * sum(b1, i, true) + 1e-9; });
    check(r, "ddp_three_buckets_avg.o2", o2.download(), [&](LL i) { return sum(b2, i, false) * inv; },
          [&](LL i) { return kBf * (std::fabs(sum(b2, i, false)) + sum(b2, i, true)) * inv + 1e-9; });
  }
  end_case(r, "ddp_three_buckets_avg " + dims({n0, n1, R, C}), before);
}

// zero1_rs_sgd_ag (multi-rank): gshard [L] = block `rank` of the sum over ranks of grad [W L]; the
// master shard [L] updated in place, m - lr (gshard + wd m); pshard = bf16 of it; pfull [W L] the
// all-gather of every rank's pshard.
void zero1_rs_sgd_ag(const Run& r, LL L, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL n = W * L;
  const float lr = 0.1f, wd = 0.01f;
  std::vector<std::vector<float>> grad(W), master(W);
  for (int p = 0; p < W; ++p) grad[p] = rnd<float>(n, seed + p), master[p] = rnd<float>(L, seed + 10 + p);
  SymArg<float> gd(r.ctx, {n}, &grad[me]), gshard(r.ctx, {L}, nullptr);
  SymArg<bf16> pshard(r.ctx, {L}, nullptr), pfull(r.ctx, {n}, nullptr);
  DevLocal<float> md({L}, master[me]);
  const int before = begin_case(r);
  if (run(r, "zero1_rs_sgd_ag", 1, gd.view, gshard.view, md.view(), pshard.view, pfull.view, lr, wd)) {
    std::vector<double> gs(n, 0.0), ga(n, 0.0), nw(n), mag(n);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < n; ++i) gs[i] += grad[p][i], ga[i] += std::fabs(grad[p][i]);
    for (LL i = 0; i < n; ++i) {
      const double m = master[i / L][i % L];
      nw[i] = m - double(lr) * (gs[i] + double(wd) * m), mag[i] = std::fabs(m) + double(lr) * ga[i];
    }
    check(r, "zero1_rs_sgd_ag.gshard", gshard.download(), [&](LL i) { return gs[me * L + i]; },
          [&](LL i) { return 1e-6 * ga[me * L + i] + 1e-9; });
    check(r, "zero1_rs_sgd_ag.master", md.download(), [&](LL i) { return nw[me * L + i]; },
          [&](LL i) { return 1e-6 * mag[me * L + i] + 1e-9; });
    check(r, "zero1_rs_sgd_ag.pshard", pshard.download(), [&](LL i) { return nw[me * L + i]; },
          [&](LL i) { return kBf * std::fabs(nw[me * L + i]) + 1e-6 * mag[me * L + i]; });
    check(r, "zero1_rs_sgd_ag.pfull", pfull.download(), [&](LL i) { return nw[i]; },
          [&](LL i) { return kBf * std::fabs(nw[i]) + 1e-6 * mag[i]; });
  }
  end_case(r, "zero1_rs_sgd_ag L=" + std::to_string(L), before);
}

// sp_layernorm_all_gather (multi-rank): ln [R, N] = bf16((x - mu) rsqrt(var + eps) w + b) of this
// rank's rows; full [W R, N] the row all-gather of every rank's ln (w, b replicated).
void sp_layernorm_all_gather(const Run& r, LL R, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const float eps = 1e-5f;
  std::vector<std::vector<bf16>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<bf16>(R * N, seed + p, -2.f, 3.f);
  const auto w = rnd<float>(N, seed + 10, 0.5f, 1.5f), b = rnd<float>(N, seed + 11);
  DevLocal<bf16> xd({R, N}, x[me]);
  DevLocal<float> wd({N}, w), bd({N}, b);
  SymArg<bf16> ln(r.ctx, {R, N}, nullptr), full(r.ctx, {W * R, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, "sp_layernorm_all_gather", 2, xd.view(), wd.view(), bd.view(), ln.view, full.view, eps)) {
    std::vector<double> want(W * R * N), mag(W * R * N);
    for (LL row = 0; row < W * R; ++row) {
      const auto& xs = x[row / R];
      const LL o = (row % R) * N;
      double mu = 0, var = 0;
      for (LL j = 0; j < N; ++j) mu += val(xs[o + j]);
      mu /= N;
      for (LL j = 0; j < N; ++j) var += (val(xs[o + j]) - mu) * (val(xs[o + j]) - mu);
      const double rs = 1 / std::sqrt(var / N + eps);
      for (LL j = 0; j < N; ++j) {
        const double t = (val(xs[o + j]) - mu) * rs * w[j];
        want[row * N + j] = t + b[j], mag[row * N + j] = std::fabs(t) + std::fabs(b[j]);
      }
    }
    check(r, "sp_layernorm_all_gather.ln", ln.download(), [&](LL i) { return want[me * R * N + i]; },
          [&](LL i) { return kBf * std::fabs(want[me * R * N + i]) + 1e-5 * mag[me * R * N + i] + 1e-6; });
    check(r, "sp_layernorm_all_gather.full", full.download(), [&](LL i) { return want[i]; }, round_tol(want, kBf, mag, 1e-5, 1e-6));
  }
  end_case(r, "sp_layernorm_all_gather " + dims({R, N}), before);
}

// sp_rs_residual_rmsnorm (multi-rank): shard [R, N] = row block `rank` of the sum over ranks of
// partial [W R, N]; newres = shard + resid; y = bf16(newres rsqrt(mean(newres^2) + eps) w), w [1, N].
void sp_rs_residual_rmsnorm(const Run& r, LL R, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const float eps = 1e-5f;
  std::vector<std::vector<float>> part(W);
  for (int p = 0; p < W; ++p) part[p] = rnd<float>(W * R * N, seed + p);
  const auto resid = rnd<float>(R * N, seed + 10 + me), w = rnd<float>(N, seed + 20, 0.5f, 1.5f);
  SymArg<float> pd(r.ctx, {W * R, N}, &part[me]), shard(r.ctx, {R, N}, nullptr);
  DevLocal<float> rd({R, N}, resid), wd({1, N}, w), newres({R, N}, {});
  DevLocal<bf16> y({R, N}, {});
  const int before = begin_case(r);
  if (run(r, "sp_rs_residual_rmsnorm", 1, pd.view, shard.view, rd.view(), wd.view(), newres.view(), y.view(), eps)) {
    std::vector<double> s(R * N, 0.0), mag(R * N, 0.0), h(R * N), wy(R * N);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < R * N; ++i) s[i] += part[p][me * R * N + i], mag[i] += std::fabs(part[p][me * R * N + i]);
    for (LL i = 0; i < R * N; ++i) h[i] = s[i] + resid[i], mag[i] += std::fabs(resid[i]);
    wy = rmsnorm_rows(R, N, eps, [&](LL i) { return h[i]; }, [&](LL j) { return double(w[j]); });
    check(r, "sp_rs_residual_rmsnorm.shard", shard.download(), [&](LL i) { return s[i]; }, mag_tol(mag, 1e-6, 1e-9));
    check(r, "sp_rs_residual_rmsnorm.newres", newres.download(), [&](LL i) { return h[i]; }, mag_tol(mag, 1e-6, 1e-9));
    check(r, "sp_rs_residual_rmsnorm.y", y.download(), [&](LL i) { return wy[i]; }, round_tol(wy, kBf, mag, 1e-5, 1e-6));
  }
  end_case(r, "sp_rs_residual_rmsnorm " + dims({R, N}), before);
}

// pp_send_next_stage (multi-rank): recv of rank r >= 1 = act of rank r - 1; rank 0's recv (nobody
// sends to it; the last rank sends nothing) keeps its poison.
void pp_send_next_stage(const Run& r, LL M, LL H, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> act(W);
  for (int p = 0; p < W; ++p) act[p] = rnd<bf16>(M * H, seed + p);
  DevLocal<bf16> ad({M, H}, act[me]);
  SymArg<bf16> recv(r.ctx, {M, H}, nullptr);
  const int before = begin_case(r);
  if (run(r, "pp_send_next_stage", 2, ad.view(), recv.view)) {
    const auto got = recv.download();
    if (me == 0) check_untouched(r, "pp_send_next_stage.recv (rank 0)", got, [](LL) { return true; });
    else check(r, "pp_send_next_stage.recv", got, [&](LL i) { return val(act[me - 1][i]); }, exact());
  }
  end_case(r, "pp_send_next_stage " + dims({M, H}), before);
}

// pp_pull_prev_stage (multi-rank): out = gelu_tanh(x) on every rank; y of rank r >= 1 = out of rank
// r - 1 + bias (this rank's); rank 0's y keeps its poison.
void pp_pull_prev_stage(const Run& r, LL M, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(M * N, seed + p, -3.f, 3.f);
  const auto bias = rnd<float>(N, seed + 10 + me);
  DevLocal<float> xd({M, N}, x[me]), bd({N}, bias), y({M, N}, {});
  SymArg<float> out(r.ctx, {M, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, "pp_pull_prev_stage", 2, xd.view(), out.view, bd.view(), y.view())) {
    auto gl = [&](int p, LL i) { return pkt::gelu_tanh(x[p][i]); };
    check(r, "pp_pull_prev_stage.out", out.download(), [&](LL i) { return gl(me, i); },
          [&](LL i) { return 1e-6 * std::fabs(x[me][i]) + 1e-7; });
    const auto got = y.download();
    if (me == 0) check_untouched(r, "pp_pull_prev_stage.y (rank 0)", got, [](LL) { return true; });
    else check(r, "pp_pull_prev_stage.y", got, [&](LL i) { return gl(me - 1, i) + bias[i % N]; },
               [&](LL i) { return 1e-6 * (std::fabs(x[me - 1][i]) + std::fabs(bias[i % N])) + 1e-7; });
  }
  end_case(r, "pp_pull_prev_stage " + dims({M, N}), before);
}

// ================================================================ inference ==

// A random order of 0 .. n - 1.
std::vector<int> permutation(int n, unsigned seed) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return v;
}

// paged_kv_gather: out[b, j] = cache row table[b MB + j / bs] bs + j % bs ([B MB, 1] table of page
// ids, distinct, 0 and the last page among them; one page id past the cache, whose rows read zeros).
void paged_kv_gather(const Run& r, LL B, LL L, LL D, LL bs, unsigned seed) {
  const LL MB = (L + bs - 1) / bs + 1, pages = B * MB + 3;
  auto perm = permutation(int(pages), seed);
  std::vector<int> table(perm.begin(), perm.begin() + B * MB);
  table[0] = 0, table[1] = int(pages - 1), table[(B - 1) * MB + 1] = int(pages);  // the last: past the cache
  const auto cache = rnd<bf16>(pages * bs * D, seed + 1);
  DevLocal<bf16> cd({pages * bs, D}, cache), out({B, L, D}, {});
  DevLocal<int> td({B * MB, 1}, table);
  const int before = begin_case(r);
  if (run(r, "paged_kv_gather", 2, cd.view(), td.view(), out.view(), bs, MB))
    check(r, "paged_kv_gather.out", out.download(), [&](LL i) {
      const LL d = i % D, j = (i / D) % L, b = i / (D * L), slot = LL(table[b * MB + j / bs]) * bs + j % bs;
      return slot < pages * bs ? val(cache[slot * D + d]) : 0.0;
    }, exact());
  end_case(r, "paged_kv_gather " + dims({B, L, D, bs}), before);
}

// paged_kv_append: cache row table[b MB + pos[b] / bs] bs + pos[b] % bs = knew[b] (positions 0 and
// MB bs - 1 among them; one sequence's page past the cache, dropped); other rows keep their values.
void paged_kv_append(const Run& r, LL B, LL D, LL bs, LL MB, unsigned seed) {
  const LL pages = B * MB + 2;
  auto perm = permutation(int(pages), seed);
  std::vector<int> table(perm.begin(), perm.begin() + B * MB);
  auto pos = ints<long long>(B, 0, MB * bs - 1, seed + 1);
  pos[0] = 0, pos[1] = MB * bs - 1;
  table[3 * MB + pos[3] / bs] = int(pages);  // past the cache: dropped
  const auto kn = rnd<f16>(B * D, seed + 2), c0 = rnd<f16>(pages * bs * D, seed + 3);
  DevLocal<f16> kd({B, D}, kn), cache({pages * bs, D}, c0);
  DevLocal<long long> pd({B}, pos);
  DevLocal<int> td({B * MB, 1}, table);
  const int before = begin_case(r);
  if (run(r, "paged_kv_append", 1, kd.view(), pd.view(), td.view(), cache.view(), bs, MB)) {
    std::vector<double> want(pages * bs * D);
    for (LL i = 0; i < pages * bs * D; ++i) want[i] = val(c0[i]);
    for (LL b = 0; b < B; ++b) {
      const LL row = LL(table[b * MB + pos[b] / bs]) * bs + pos[b] % bs;
      if (row < pages * bs)
        for (LL d = 0; d < D; ++d) want[row * D + d] = val(kn[b * D + d]);
    }
    check(r, "paged_kv_append.cache", cache.download(), [&](LL i) { return want[i]; }, exact());
  }
  end_case(r, "paged_kv_append " + dims({B, D, bs, MB}), before);
}

// The lowest index of the largest of n values at f(0 .. n - 1).
template <class F>
LL first_argmax(LL n, const F& f) {
  LL best = 0;
  for (LL j = 1; j < n; ++j)
    if (f(j) > f(best)) best = j;
  return best;
}

// greedy_argmax_chunked: token[b] = the lowest column of row b's maximum. Logits from a few values (ties
// within and across 1024-column chunks); row 0 all equal, row 1's maximum at V - 1 only, rows 2 and 3
// tied at 1500 / 2400 and 1023 / 1024.
void greedy_argmax_chunked(const Run& r, LL B, LL V, unsigned seed) {
  const auto li = ints<int>(B * V, -8, 8, seed);
  std::vector<float> x(B * V);
  for (LL i = 0; i < B * V; ++i) x[i] = 0.5f * float(li[i]);
  for (LL j = 0; j < V; ++j) x[j] = 1.f;
  x[V + V - 1] = 100.f, x[2 * V + 1500] = x[2 * V + 2400] = 50.f, x[3 * V + 1023] = x[3 * V + 1024] = 50.f;
  DevLocal<float> xd({B, V}, x);
  DevLocal<long long> tok({B}, {});
  const int before = begin_case(r);
  if (run(r, "greedy_argmax_chunked", 2, xd.view(), tok.view()))
    check(r, "greedy_argmax_chunked.token", tok.download(),
          [&](LL b) { return double(first_argmax(V, [&](LL j) { return x[b * V + j]; })); }, exact());
  end_case(r, "greedy_argmax_chunked " + dims({B, V}), before);
}

// topk_mask_iterative: thr = the k-th largest distinct value of the row (ties count once; past the
// distinct values, -3e38: the whole row kept; k = 0: 3e38, nothing kept); out = x where x >= thr,
// else bf16(-1e30).
void topk_mask_iterative(const Run& r, LL B, LL V, LL k, unsigned seed) {
  const auto li = ints<int>(B * V, -20, 20, seed);
  std::vector<bf16> x(B * V);
  for (LL i = 0; i < B * V; ++i) x[i] = pkt::from_host<bf16>(0.25f * float(li[i]));
  DevLocal<bf16> xd({B, V}, x), out({B, V}, {});
  const int before = begin_case(r);
  if (run(r, "topk_mask_iterative", 2, xd.view(), out.view(), k)) {
    std::vector<double> thr(B);
    for (LL b = 0; b < B; ++b) {
      std::set<double, std::greater<double>> d;
      for (LL j = 0; j < V; ++j) d.insert(val(x[b * V + j]));
      thr[b] = k == 0 ? 3e38 : LL(d.size()) < k ? -3e38 : *std::next(d.begin(), k - 1);
    }
    const double masked = bf16r(-1e30f);
    check(r, "topk_mask_iterative.out", out.download(), [&](LL i) { return val(x[i]) >= thr[i / V] ? val(x[i]) : masked; },
          exact());
  }
  end_case(r, "topk_mask_iterative " + dims({B, V}) + " k=" + std::to_string(k), before);
}

// repetition_penalty: out = logits, except that every token id in prev[b] (0 and V - 1 among them,
// duplicates too) of row b becomes logit / penalty if positive, logit * penalty otherwise.
void repetition_penalty(const Run& r, LL B, LL V, LL L, unsigned seed) {
  const float penalty = 1.3f;
  const auto x = rnd<float>(B * V, seed, -3.f, 3.f);
  auto prev = ints<long long>(B * L, 0, V - 1, seed + 1);
  prev[0] = 0, prev[1] = V - 1, prev[2] = prev[3], prev[L * (B - 1) + L - 1] = V - 1;
  DevLocal<float> xd({B * V, 1}, x), out({B * V, 1}, {});
  DevLocal<long long> pd({B, L}, prev);
  const int before = begin_case(r);
  if (run(r, "repetition_penalty", 2, xd.view(), pd.view(), out.view(), V, penalty)) {
    std::vector<double> want(x.begin(), x.end());
    for (LL i = 0; i < B * L; ++i) {
      const LL f = (i / L) * V + prev[i];
      want[f] = x[f] > 0 ? double(x[f] / penalty) : double(x[f] * penalty);
    }
    check(r, "repetition_penalty.out", out.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 2e-7 * std::fabs(want[i]); });
  }
  end_case(r, "repetition_penalty " + dims({B, V, L}), before);
}

// spec_decode_accept_len: accepted[b] = the first position where draft and target differ (K if none);
// row 0 differs at 0, row 1 nowhere.
void spec_decode_accept_len(const Run& r, LL B, LL Kd, unsigned seed) {
  const auto target = ints<int>(B * Kd, 0, 3, seed);
  const auto first = ints<int>(B, 0, int(Kd), seed + 1);
  const auto noise = ints<int>(B * Kd, 0, 3, seed + 2);
  std::vector<int> draft(target), want(B);
  for (LL b = 0; b < B; ++b) {
    want[b] = b == 0 ? 0 : b == 1 ? int(Kd) : first[b];
    for (LL j = want[b]; j < Kd; ++j)
      draft[b * Kd + j] = j == want[b] ? (target[b * Kd + j] + 1) % 4 : noise[b * Kd + j];
  }
  DevLocal<int> dd({B, Kd}, draft), td({B, Kd}, target), acc({B}, {});
  const int before = begin_case(r);
  if (run(r, "spec_decode_accept_len", 2, dd.view(), td.view(), acc.view()))
    check(r, "spec_decode_accept_len.accepted", acc.download(), [&](LL b) { return double(want[b]); }, exact());
  end_case(r, "spec_decode_accept_len " + dims({B, Kd}), before);
}

// spec_decode_prob_accept: n_acc[b] = the first j with u >= min(1, pt / max(pd, 1e-20)) (K if none),
// in f32 as the kernel computes it; pd = 0 in places (ratio 1).
void spec_decode_prob_accept(const Run& r, LL B, LL Kd, unsigned seed) {
  const auto pt = rnd<float>(B * Kd, seed, 0.f, 1.f), u = rnd<float>(B * Kd, seed + 2, 0.f, 0.7f);
  auto pd = rnd<float>(B * Kd, seed + 1, 0.f, 1.f);
  pd[0] = 0.f, pd[Kd + 2] = 0.f;
  DevLocal<float> ptd({B, Kd}, pt), pdd({B, Kd}, pd), ud({B, Kd}, u);
  DevLocal<long long> n({B}, {});
  const int before = begin_case(r);
  if (run(r, "spec_decode_prob_accept", 2, ptd.view(), pdd.view(), ud.view(), n.view()))
    check(r, "spec_decode_prob_accept.n_acc", n.download(), [&](LL b) {
      for (LL j = 0; j < Kd; ++j)
        if (u[b * Kd + j] >= std::min(pt[b * Kd + j] / std::max(pd[b * Kd + j], 1e-20f), 1.0f)) return double(j);
      return double(Kd);
    }, exact());
  end_case(r, "spec_decode_prob_accept " + dims({B, Kd}), before);
}

// beam_score_best: best[r] = the row's maximum of (logp + beam_score[r]) lp, lp = ((5 + len) / 6)^-alpha,
// best_tok its lowest column (f32 scores; row 0 tied at 100 and 1200, row 1's maximum at V - 1).
void beam_score_best(const Run& r, LL R, LL V, unsigned seed) {
  const float len = 7.f, alpha = 0.6f;
  auto lp = rnd<float>(R * V, seed, -12.f, 0.f);
  const auto bs = rnd<float>(R, seed + 1, -5.f, 0.f);
  lp[100] = lp[1200] = 0.5f, lp[V + V - 1] = 0.5f;
  DevLocal<float> lpd({R, V}, lp), bsd({R}, bs), best({R}, {});
  DevLocal<int> tok({R}, {});
  const int before = begin_case(r);
  if (run(r, "beam_score_best", 2, lpd.view(), bsd.view(), best.view(), tok.view(), len, alpha)) {
    const float norm = 1.0f / std::pow((5.0f + len) / 6.0f, alpha);
    std::vector<double> bv(R), bt(R);
    for (LL row = 0; row < R; ++row) {
      auto sc = [&](LL j) { return (lp[row * V + j] + bs[row]) * norm; };
      bt[row] = double(first_argmax(V, sc)), bv[row] = sc(LL(bt[row]));
    }
    check(r, "beam_score_best.best", best.download(), [&](LL i) { return bv[i]; }, [&](LL i) { return 1e-6 * std::fabs(bv[i]); });
    check(r, "beam_score_best.best_tok", tok.download(), [&](LL i) { return bt[i]; }, exact());
  }
  end_case(r, "beam_score_best " + dims({R, V}), before);
}

// gumbel_sample: tok[b] = argmax over the row of logit inv_temp - log(-log(max(u, 1e-20))) (u = 0 in
// places). Checked by its invariant: a column of the row whose score is the maximum within 1e-5.
void gumbel_sample(const Run& r, LL B, LL N, unsigned seed) {
  const float inv_temp = 1.0f / 0.7f;
  const auto x = rnd<f16>(B * N, seed, -3.f, 3.f);
  auto u = rnd<float>(B * N, seed + 1, 0.f, 1.f);
  u[5] = 0.f, u[N + 9] = 0.f;
  DevLocal<f16> xd({B, N}, x);
  DevLocal<float> ud({B, N}, u);
  DevLocal<int> tok({B}, {});
  const int before = begin_case(r);
  if (run(r, "gumbel_sample", 2, xd.view(), ud.view(), tok.view(), inv_temp)) {
    const auto got = tok.download();
    LL bad = 0;
    for (LL b = 0; b < B; ++b) {
      auto s = [&](LL j) { return val(x[b * N + j]) * inv_temp - std::log(-std::log(std::max(double(u[b * N + j]), 1e-20))); };
      const double mx = s(first_argmax(N, s));
      if (!(got[b] >= 0 && got[b] < N && s(got[b]) >= mx - 1e-5 * (1 + std::fabs(mx)))) {
        if (bad++ < 3)
          pkt::fail("gumbel_sample.tok W=" + std::to_string(r.W) + " row " + std::to_string(b) + ": got " +
                    std::to_string(got[b]) + ", not a maximum (" + std::to_string(mx) + ")");
      }
    }
  }
  end_case(r, "gumbel_sample " + dims({B, N}), before);
}

// ================================================================ scans, histograms, index math ==

// prefix_sum_three_phase: y = the inclusive prefix sums of x (i32); tile_tot [T] = the sums of the
// 1024-element tiles, tile_off [T] their exclusive prefix sums.
void prefix_sum_three_phase(const Run& r, LL n, unsigned seed) {
  const LL T = (n + 1023) / 1024;
  const auto x = ints<int>(n, -1000, 1000, seed);
  DevLocal<int> xd({n}, x), y({n}, {}), tot({T}, {}), off({T}, {});
  const int before = begin_case(r);
  if (run(r, "prefix_sum_three_phase", 2, xd.view(), y.view(), tot.view(), off.view())) {
    std::vector<double> c(n), t(T, 0.0), o(T, 0.0);
    for (LL i = 0; i < n; ++i) c[i] = (i ? c[i - 1] : 0.0) + x[i], t[i / 1024] += x[i];
    for (LL j = 1; j < T; ++j) o[j] = o[j - 1] + t[j - 1];
    check(r, "prefix_sum_three_phase.y", y.download(), [&](LL i) { return c[i]; }, exact());
    check(r, "prefix_sum_three_phase.tile_tot", tot.download(), [&](LL i) { return t[i]; }, exact());
    check(r, "prefix_sum_three_phase.tile_off", off.download(), [&](LL i) { return o[i]; }, exact());
  }
  end_case(r, "prefix_sum_three_phase n=" + std::to_string(n), before);
}

// expert_histogram_allreduce (multi-rank): cnt [256] = this rank's counts of the ids 0 .. 255 in its
// [T, K] i64 ids (-1 and 256 not counted; 0 and 255 among them), gcnt their sum over ranks.
void expert_histogram_allreduce(const Run& r, LL T, LL Kc, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<long long>> ids(W);
  for (int p = 0; p < W; ++p) {
    ids[p] = ints<long long>(T * Kc, -1, 256, seed + p);
    ids[p][0] = 0, ids[p][1] = 255, ids[p][2] = -1, ids[p][T * Kc - 1] = 256;
  }
  DevLocal<long long> idd({T, Kc}, ids[me]);
  SymArg<int> cnt(r.ctx, {256}, nullptr), gcnt(r.ctx, {256}, nullptr);
  const int before = begin_case(r);
  if (run(r, "expert_histogram_allreduce", 2, idd.view(), cnt.view, gcnt.view)) {
    std::vector<double> own(256, 0.0), all(256, 0.0);
    for (int p = 0; p < W; ++p)
      for (long long e : ids[p])
        if (e >= 0 && e < 256) all[e] += 1, own[e] += p == me;
    check(r, "expert_histogram_allreduce.cnt", cnt.download(), [&](LL i) { return own[i]; }, exact());
    check(r, "expert_histogram_allreduce.gcnt", gcnt.download(), [&](LL i) { return all[i]; }, exact());
  }
  end_case(r, "expert_histogram_allreduce " + dims({T, Kc}), before);
}

// segment_ids_from_lengths: ends = the inclusive prefix sums of lens; seg[t] = the count of ends <= t,
// pos_in_seg[t] = t - the largest start (end - len) <= t. Zero lengths (also adjacent ones) and the
// maximum 20 among lens; `extra` tokens past the total (segment = the sequence count).
void segment_ids_from_lengths(const Run& r, LL S, LL extra, unsigned seed) {
  auto lens = ints<int>(S, 0, 20, seed);
  lens[0] = 0, lens[3] = lens[4] = 0, lens[S - 1] = 20;
  std::vector<LL> ends(S), st(S);
  for (LL j = 0; j < S; ++j) ends[j] = (j ? ends[j - 1] : 0) + lens[j], st[j] = ends[j] - lens[j];
  const LL T = ends[S - 1] + extra;
  DevLocal<int> ld({S}, lens), ed({S}, {}), seg({T}, {}), pos({T}, {});
  const int before = begin_case(r);
  if (run(r, "segment_ids_from_lengths", 2, ld.view(), ed.view(), seg.view(), pos.view())) {
    auto sid = [&](LL t) { return double(std::count_if(ends.begin(), ends.end(), [&](LL e) { return t >= e; })); };
    auto start = [&](LL t) {
      LL s = 0;
      for (LL j = 0; j < S; ++j)
        if (st[j] <= t) s = std::max(s, st[j]);
      return s;
    };
    check(r, "segment_ids_from_lengths.ends", ed.download(), [&](LL j) { return double(ends[j]); }, exact());
    check(r, "segment_ids_from_lengths.seg", seg.download(), sid, exact());
    check(r, "segment_ids_from_lengths.pos_in_seg", pos.download(), [&](LL t) { return double(t - start(t)); }, exact());
  }
  end_case(r, "segment_ids_from_lengths S=" + std::to_string(S) + " T=" + std::to_string(T), before);
}

// position_ids_4d_i64: pos[b, h, s, d] = (b S + s) % period (0 for period 0).
void position_ids_4d_i64(const Run& r, LL B, LL H, LL S, LL D, LL period) {
  DevLocal<long long> pos({B, H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "position_ids_4d_i64", 2, pos.view(), period))
    check(r, "position_ids_4d_i64.pos", pos.download(), [&](LL i) {
      const LL s = (i / D) % S, b = i / (D * S * H);
      return period ? double((b * S + s) % period) : 0.0;
    }, exact());
  end_case(r, "position_ids_4d_i64 " + dims({B, H, S, D}) + " period=" + std::to_string(period), before);
}

// ================================================================ more training pieces ==

// vocab_parallel_ce_fwd_bwd (multi-rank): logits [T, Vl] the rank-th vocabulary slice, targets global
// ids (0 and W Vl - 1 among them). lmax / gmax the local / global row max; lstat [T, 2] = (sum of
// exp(x - gmax), the target's logit where this rank holds it, else 0), gstat their sum over ranks;
// dlogits = bf16((softmax - onehot) dloss / T); loss = log(gstat0) + gmax - gstat1.
void vocab_parallel_ce_fwd_bwd(const Run& r, LL T, LL Vl, unsigned seed) {
  const int W = r.W, me = r.me;
  const float dloss = 1.0f;
  std::vector<std::vector<bf16>> lg(W);
  for (int p = 0; p < W; ++p) lg[p] = rnd<bf16>(T * Vl, seed + p, -4.f, 4.f);
  auto tg = ints<int>(T, 0, int(W * Vl - 1), seed + 20);
  tg[0] = 0, tg[1] = int(W * Vl - 1);
  DevLocal<bf16> ld({T, Vl}, lg[me]), dl({T, Vl}, {});
  DevLocal<int> td({T}, tg);
  DevLocal<float> loss({T}, {});
  SymArg<float> lmax(r.ctx, {T}, nullptr), gmax(r.ctx, {T}, nullptr), lst(r.ctx, {T, 2}, nullptr), gst(r.ctx, {T, 2}, nullptr);
  const int before = begin_case(r);
  if (run(r, "vocab_parallel_ce_fwd_bwd", 2, ld.view(), td.view(), lmax.view, gmax.view, lst.view, gst.view, dl.view(),
          loss.view(), dloss)) {
    std::vector<double> own(T, -1e300), gm(T, -1e300), ls(2 * T, 0.0), gs(2 * T, 0.0), lse(T);
    for (LL t = 0; t < T; ++t) {
      for (int p = 0; p < W; ++p)
        for (LL j = 0; j < Vl; ++j) gm[t] = std::max(gm[t], val(lg[p][t * Vl + j]));
      for (LL j = 0; j < Vl; ++j) own[t] = std::max(own[t], val(lg[me][t * Vl + j]));
      for (int p = 0; p < W; ++p) {
        double se = 0;
        for (LL j = 0; j < Vl; ++j) se += std::exp(val(lg[p][t * Vl + j]) - float(gm[t]));
        const double picked = tg[t] / Vl == p ? val(lg[p][t * Vl + tg[t] % Vl]) : 0.0;
        gs[2 * t] += se, gs[2 * t + 1] += picked;
        if (p == me) ls[2 * t] = se, ls[2 * t + 1] = picked;
      }
      lse[t] = std::log(gs[2 * t]) + gm[t];
    }
    const double g = double(dloss) / double(T);
    check(r, "vocab_parallel_ce_fwd_bwd.lmax", lmax.download(), [&](LL i) { return own[i]; }, exact());
    check(r, "vocab_parallel_ce_fwd_bwd.gmax", gmax.download(), [&](LL i) { return gm[i]; }, exact());
    check(r, "vocab_parallel_ce_fwd_bwd.lstat", lst.download(), [&](LL i) { return ls[i]; },
          [&](LL i) { return i % 2 ? 0.0 : 2e-6 * ls[i]; });
    check(r, "vocab_parallel_ce_fwd_bwd.gstat", gst.download(), [&](LL i) { return gs[i]; },
          [&](LL i) { return i % 2 ? 0.0 : 2e-6 * gs[i]; });
    auto want = [&](LL i) {
      const LL t = i / Vl, j = i % Vl;
      return (std::exp(val(lg[me][i]) - lse[t]) - (tg[t] == me * Vl + j ? 1.0 : 0.0)) * g;
    };
    check(r, "vocab_parallel_ce_fwd_bwd.dlogits", dl.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-6 * g; });
    check(r, "vocab_parallel_ce_fwd_bwd.loss", loss.download(), [&](LL t) { return lse[t] - gs[2 * t + 1]; },
          [&](LL t) { return 2e-6 * (std::fabs(lse[t]) + std::fabs(gs[2 * t + 1]) + 1); });
  }
  end_case(r, "vocab_parallel_ce_fwd_bwd " + dims({T, Vl}), before);
}

// grad_accumulate_3d: acc += f32(g) inv_steps in place, [L, R, C].
void grad_accumulate_3d(const Run& r, LL L, LL R, LL C, unsigned seed) {
  const float inv_steps = 1.0f / 3.0f;
  const LL n = L * R * C;
  const auto acc = rnd<float>(n, seed);
  const auto g = rnd<bf16>(n, seed + 1);
  DevLocal<float> ad({L, R, C}, acc);
  DevLocal<bf16> gd({L, R, C}, g);
  const int before = begin_case(r);
  if (run(r, "grad_accumulate_3d", 1, ad.view(), gd.view(), inv_steps))
    check(r, "grad_accumulate_3d.acc", ad.download(), [&](LL i) { return acc[i] + val(g[i]) * inv_steps; },
          [&](LL i) { return 1e-6 * (std::fabs(acc[i]) + std::fabs(val(g[i]))); });
  end_case(r, "grad_accumulate_3d " + dims({L, R, C}), before);
}

// ema_update_4d: ema = decay ema + (1 - decay) f32(p) in place, [O, I, KH, KW] (KW at most 3).
void ema_update_4d(const Run& r, LL O, LL I, LL KH, LL KW, unsigned seed) {
  const float decay = 0.99f;
  const LL n = O * I * KH * KW;
  const auto p = rnd<f16>(n, seed);
  const auto ema = rnd<float>(n, seed + 1);
  DevLocal<f16> pd({O, I, KH, KW}, p);
  DevLocal<float> ed({O, I, KH, KW}, ema);
  const int before = begin_case(r);
  if (run(r, "ema_update_4d", 1, pd.view(), ed.view(), decay))
    check(r, "ema_update_4d.ema", ed.download(), [&](LL i) { return ema[i] * double(decay) + val(p[i]) * (1 - double(decay)); },
          [&](LL i) { return 1e-6 * (std::fabs(ema[i]) + std::fabs(val(p[i]))); });
  end_case(r, "ema_update_4d " + dims({O, I, KH, KW}), before);
}

// rope_bwd_halves: dx[:, :64] = dy1 cos + dy2 sin, dx[:, 64:] = dy2 cos - dy1 sin, [S, 128] rows
// with [S, 64] tables (random angles).
void rope_bwd_halves(const Run& r, LL S, unsigned seed) {
  const auto dy = rnd<float>(S * 128, seed), a = rnd<float>(S * 64, seed + 1, -3.2f, 3.2f);
  std::vector<float> c(S * 64), s(S * 64);
  for (LL i = 0; i < S * 64; ++i) c[i] = std::cos(a[i]), s[i] = std::sin(a[i]);
  DevLocal<float> dyd({S, 128}, dy), cd({S, 64}, c), sd({S, 64}, s), dx({S, 128}, {});
  const int before = begin_case(r);
  if (run(r, "rope_bwd_halves", 2, dyd.view(), cd.view(), sd.view(), dx.view())) {
    auto want = [&](LL i) {
      const LL m = i / 128, col = i % 128, j = col % 64;
      const double d1 = dy[m * 128 + j], d2 = dy[m * 128 + 64 + j], cs = c[m * 64 + j], sn = s[m * 64 + j];
      return col < 64 ? d1 * cs + d2 * sn : d2 * cs - d1 * sn;
    };
    check(r, "rope_bwd_halves.dx", dx.download(), want,
          [&](LL i) { return 1e-6 * (std::fabs(dy[(i / 128) * 128 + i % 64]) + std::fabs(dy[(i / 128) * 128 + 64 + i % 64])); });
  }
  end_case(r, "rope_bwd_halves S=" + std::to_string(S), before);
}

// ================================================================ the cases ==

void single_gpu_cases(const Run& r) {
  unsigned s = 5000;
  rmsnorm_bwd_dx(r, 37, 1000, s += 100);
  rmsnorm_bwd_dw_colsum(r, 100, 300, s += 100);
  layernorm_bwd_dx(r, 37, 1000, s += 100);
  layernorm_bwd_dx(r, 6, 2048, s += 100);
  layernorm_bwd_dw_db_atomic(r, 100, 300, s += 100);
  softmax_bwd_f16(r, 37, 300, s += 100);
  softmax_bwd_f16(r, 20, 1024, s += 100);
  log_softmax_bwd_3d(r, 3, 37, 300, s += 100);
  gelu_tanh_bwd(r, 70, 300, s += 100);
  gelu_erf_bwd(r, 37, 300, s += 100);
  swiglu_bwd(r, 70, 100, s += 100);
  dropout_bwd_4d(r, 2, 3, 37, 50, s += 100);
  embedding_bwd_scatter_add(r, 100, 50, 300, s += 100);
  cross_entropy_bwd(r, 37, 1000, s += 100);
  attn_bwd_delta(r, 3, 150, 100, s += 100);
  attn_bwd_dscores(r, 150, 150, 64, s += 100);
  attn_bwd_dscores(r, 100, 77, 50, s += 100);
  attn_bwd_dv(r, 100, 150, 100, s += 100);
  adamw_master_bf16(r, 5000, 1, s += 100);
  adamw_master_bf16(r, 3001, 7, s += 100);
  lion_step_2d(r, 37, 300, s += 100);
  sgd_nesterov_wd_3d(r, 3, 37, 100, s += 100);
  loss_scale_update(r);
  paged_kv_gather(r, 3, 37, 300, 7, s += 100);
  paged_kv_append(r, 13, 100, 7, 5, s += 100);
  greedy_argmax_chunked(r, 37, 2500, s += 100);
  topk_mask_iterative(r, 37, 300, 5, s += 100);
  topk_mask_iterative(r, 37, 300, 0, s += 100);
  topk_mask_iterative(r, 37, 300, 400, s += 100);
  repetition_penalty(r, 5, 1000, 70, s += 100);
  spec_decode_accept_len(r, 37, 5, s += 100);
  spec_decode_accept_len(r, 70, 8, s += 100);
  spec_decode_prob_accept(r, 37, 11, s += 100);
  beam_score_best(r, 37, 1500, s += 100);
  gumbel_sample(r, 37, 1000, s += 100);
  prefix_sum_three_phase(r, 5000, s += 100);
  prefix_sum_three_phase(r, 700, s += 100);
  segment_ids_from_lengths(r, 37, 30, s += 100);
  segment_ids_from_lengths(r, 64, 0, s += 100);
  position_ids_4d_i64(r, 2, 3, 37, 13, 7);
  position_ids_4d_i64(r, 2, 3, 37, 13, 0);
  position_ids_4d_i64(r, 3, 2, 20, 5, 1000);
  grad_accumulate_3d(r, 3, 50, 100, s += 100);
  ema_update_4d(r, 5, 7, 4, 3, s += 100);
  ema_update_4d(r, 5, 7, 4, 2, s += 100);
  rope_bwd_halves(r, 37, s += 100);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  sp_layernorm_bwd_dw_allreduce(r, 37, 100, s += 100);
  clip_grad_global_norm(r, 10000, 5.f, s += 100);
  clip_grad_global_norm(r, 10000, 1e6f, s += 100);
  unscale_check_overflow(r, 37, 300, -1, s += 100);
  unscale_check_overflow(r, 37, 300, r.W - 1, s += 100);
  ddp_three_buckets_avg(r, 5000, 3001, 37, 300, s += 100);
  zero1_rs_sgd_ag(r, 1500, s += 100);
  sp_layernorm_all_gather(r, 37, 300, s += 100);
  sp_rs_residual_rmsnorm(r, 37, 300, s += 100);
  pp_send_next_stage(r, 37, 300, s += 100);
  pp_pull_prev_stage(r, 37, 300, s += 100);
  expert_histogram_allreduce(r, 3000, 3, s += 100);
  expert_histogram_allreduce(r, 8192, 4, s += 100);
  vocab_parallel_ce_fwd_bwd(r, 37, 300, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs17_jit_test");
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs17_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}
