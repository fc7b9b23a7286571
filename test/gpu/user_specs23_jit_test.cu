// The twenty-third user-written spec set (test/specs/user_specs23.pk.cpp: training steps: norm / softmax /
// GELU / SwiGLU / cross-entropy / dropout backward, Adam / AdamW / Lion / SGD / LAMB / Adafactor in place,
// global-norm clipping and loss scaling across ranks, gradient accumulation, DDP buckets, ZeRO / FSDP
// reduce-scatter + sharded step + all-gather, GEMM backward with sequence parallelism) through the JIT, each
// kernel against a float64 host reference written from its comment (exact for integers, masks, copies and
// gathers) on fresh random inputs, with every output poisoned first (NaN, or -1 for i32). The single-GPU
// kernels run at W = 1; the kernels that use rank(), peers or collectives at W = 1, 2, 3 and 4 (ranks sharing
// one GPU; PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others), each rank checking its own outputs, with
// every rank's inputs different. Shapes leave partial tiles in every tiled dimension (37 rows against 4- to
// 128-row tiles, 300 / 1300 / 2500 columns against 128- to 1024-column tiles, shards of 37 and 1000 against
// 1024-element tiles). In-place kernels (the optimizers, clipping, loss scaling, the FSDP / ZeRO steps,
// buckets, accumulation) launch once and are checked against a host copy of their inputs; the others launch
// twice (a zeroing phase must re-zero).
//
// Covered: all 46 kernels; the five single-GPU GEMM kernels on the Hopper template and on its general twin
// (N % 8 != 0 or M % 8 != 0), linear_bwd_dx, linear_bwd_dw_accum_f32 and linear_bwd_dx_wt_f16 also with
// templates = false ("name/general").
//
// Error bounds (each function says which it uses):
// * a bf16 (f16) output: kBf (kHf) = two units in the last place of the value (one rounding of a device value
//   that is itself within a few fp32 units of the float64 one), plus the fp32 bound of what it was computed from;
// * fp32 element-wise arithmetic (a few operations): 1e-6 of the sum of the magnitudes of the terms;
// * fp32 sums (rows, columns, GEMMs over K, atomics in any order, cross-rank sums): 1e-5 of the sum of the
//   terms' magnitudes (n eps with n the terms per partial sum stays far below it for these sizes; sets
//   19 / 20 use the same);
// * device exp (ex2.approx.ftz) and rsqrt: about 2 ulp, well inside the above; an optimizer's update
//   m / (sqrt(v) + eps) takes pow(b2, step) in fp32, whose one unit near 1 is up to 2e-5 of 1 - b2^step:
//   the update is allowed 1e-4 of its magnitude (times lr, far below the update itself);
// * collectives combine floats in fp32 (docs/language.md) and round a bf16 result once: kBf |sum| + 1e-6 mag.
//
// Order-dependent outputs: column sums and norms by store_add (f32 atomics), tp_dx_gemm_rs_adds (bf16 atomics
// into the owners) and reduce_scatter_by_adds are checked by order-independent bounds: the float64 sum within
// the rounding of any order of the adds (f32: 1e-5 of the magnitude sum; bf16 atomics: each of the W adds
// rounds by at most 2^-9 of a partial sum bounded by the magnitude sum, so 2 W 2^-9 of it, as each partial
// is itself rounded to bf16 once before its add).
//
// Partial tiles follow docs/language.md ("a store clips at the edges of the tensor it writes, not of the one
// the tile came from"): ddp_bucket_pack_allreduce_unpack's gaps between packed gradients are the zero padding
// of the previous gradient's last tile (checked as zeros, and the bucket's elements past the last tile as
// untouched); fsdp_inplace_rs_sgd_ag and zero_cols_inplace_sgd store their last partial tile's padding into
// the next chunk of their own copy, which the in-place all-gather must overwrite (the whole gathered tensor is
// checked on every rank against every rank's new weights, shared through host memory: the ranks are threads
// of this process).
//
// Ambiguity the comments leave, taken into account: loss_scale_hysteresis's comment speaks of an "ovf Sym i32
// [1, 1]", which the kernel does not have (the flag is the max over the all-reduced per-tile flags tf, in a
// register): tf, state and scale are checked. tp_dx_gemm_then_rs's dxp is a Scratch (contents unspecified
// afterwards) and is not checked; sp_column_linear_bwd's dxp is a Sym and is. amp_unscale_skip_step and
// loss_scale_hysteresis are given all ranks the same scale / state (as a real step has), each rank its own w.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pk::f16;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

// Kernels, and whether one of their launches takes a template.
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"layernorm_bwd_dx_dgamma_dbeta", false}, {"rmsnorm_bwd_wide_rows", false},  {"sp_rmsnorm_bwd_dw_allreduce", false},
    {"softmax_bwd_wide", false},              {"gelu_bwd_inplace", false},       {"bias_gelu_bwd_dbias", false},
    {"swiglu_bwd_packed", false},             {"cross_entropy_fused_fwd_bwd", false}, {"dropout_fwd", false},
    {"dropout_bwd", false},                   {"residual_dropout_bwd_3d", false}, {"multi_tensor_adamw", false},
    {"adamw_decay_mask", false},              {"lion_master_bf16", false},       {"sgd_momentum_torch", false},
    {"ema_weights_warmup", false},            {"grad_accum_microbatch", false},  {"clip_global_norm_two_tensors", false},
    {"amp_unscale_skip_step", false},         {"zero2_rs_adamw_ag", false},      {"fsdp_inplace_rs_sgd_ag", false},
    {"fsdp_rows_rs_sgd_ag", false},           {"zero_cols_rs_sgd_ag", false},    {"ddp_bucket_pack_allreduce_unpack", false},
    {"ddp_bf16_compress_accumulate", false},  {"lamb_sharded", false},           {"linear_bwd_dx", true},
    {"linear_bwd_dw_accum_f32", true},        {"linear_bwd_dw_unscale_wd", true}, {"linear_bwd_dx_wt_f16", true},
    {"linear_bwd_dx_db", true},               {"sp_column_linear_bwd", true},    {"sp_row_linear_bwd_dx", true},
    {"tp_dx_gemm_rs_adds", true},            {"sp_layernorm_bwd_full", false},  {"scaled_masked_softmax_bwd", false},
    {"attn_dropout_softmax_bwd", false},      {"ce_label_smoothing_bwd", false}, {"loss_scale_hysteresis", false},
    {"zero1_clip_adam", false},               {"reduce_scatter_by_adds", false}, {"adafactor_step", false},
    {"grad_accum_microbatch_loop", false},    {"ddp_per_layer_buckets", false},  {"zero_cols_inplace_sgd", false},
    {"tp_dx_gemm_then_rs", true},
};
const std::vector<const char*> kGeneralToo = {"linear_bwd_dx", "linear_bwd_dw_accum_f32", "linear_bwd_dx_wt_f16"};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS23_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs23", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host references and checks ----

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A vector's values in float64.
template <class T>
std::vector<double> dv(const std::vector<T>& v) {
  std::vector<double> d(v.size());
  for (size_t i = 0; i < v.size(); ++i) d[i] = val(v[i]);
  return d;
}
// Rank p's inputs: a fresh seed per rank.
unsigned rs(unsigned seed, int p) { return seed + 7919u * unsigned(p + 1); }

// Each rank's vector, read by every rank: the ranks are threads of this process (pkt::run_ranks), so host
// memory between two barriers carries what a rank needs to check the parts of a gathered tensor that
// other ranks computed (their new weights, bit for bit).
std::mutex g_board_mu;
std::vector<std::vector<long long>> g_board(PK_MAX_RANKS);
std::vector<std::vector<long long>> share(const Run& r, const std::vector<long long>& mine) {
  {
    std::lock_guard<std::mutex> l(g_board_mu);
    g_board[r.me] = mine;
  }
  if (!r.ctx.exchange().barrier().is_ok()) pkt::fail("barrier (share)");
  std::vector<std::vector<long long>> all;
  {
    std::lock_guard<std::mutex> l(g_board_mu);
    all.assign(g_board.begin(), g_board.begin() + r.W);
  }
  if (!r.ctx.exchange().barrier().is_ok()) pkt::fail("barrier (share)");
  return all;
}
std::vector<long long> bits_of(const std::vector<bf16>& v) {
  std::vector<long long> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = v[i].bits;
  return b;
}
std::vector<long long> bits_of(const std::vector<float>& v) {
  std::vector<long long> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, &v[i], 4);
    b[i] = u;
  }
  return b;
}
double bf16_bits(long long b) { return val(bf16{static_cast<unsigned short>(b)}); }
double f32_bits(long long b) {
  const uint32_t u = static_cast<uint32_t>(b);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// The float64 A·B of row-major operands given by accessors, with magnitudes (jit_spec_cases.h's matmul).
// Dropout's keep: uniform(seed, coordinates) >= p, in fp32 as the device compares.
bool keep(LL seed, std::initializer_list<LL> c, float p) { return uniform_at(seed, c) >= p; }
// GELU (tanh form) derivative with the spec's constants.
double gelu_grad(double x) {
  const double th = std::tanh(0.79788456 * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * 0.79788456 * (1 + 0.134145 * x * x);
}

// Adam / AdamW on one element in float64 (the comments' formulas); u is the update's magnitude (a bound's scale).
struct Adam {
  double m, v, w, u, mmag, vmag;
};
Adam adam(double w, double g, double m, double v, double lr, double b1, double b2, double eps, double wd, double bc1,
          double bc2) {
  Adam a;
  a.m = b1 * m + (1 - b1) * g, a.mmag = std::fabs(b1 * m) + std::fabs((1 - b1) * g);
  a.v = b2 * v + (1 - b2) * g * g, a.vmag = a.v;
  const double q = (a.m / bc1) / (std::sqrt(a.v / bc2) + eps);
  a.u = std::fabs(q) + std::fabs(wd * w);
  a.w = w - lr * (q + wd * w);
  return a;
}
double tol_m(const Adam& a) { return 1e-6 * a.mmag + 1e-12; }
double tol_v(const Adam& a) { return 1e-6 * a.vmag + 1e-15; }
double tol_w(const Adam& a, double w0, double lr) { return 1e-6 * std::fabs(w0) + 1e-4 * lr * a.u + 1e-9; }

// ================================================================ norm backward ==

// LayerNorm backward in float64 from the saved mean / rstd: dx (and its magnitude), column sums of dy * xhat
// and of dy (and theirs). x(t, j), dy(t, j), gamma(j).
struct LnBwd {
  std::vector<double> dx, dxmag, dg, dgmag, db, dbmag;
};
LnBwd ln_bwd(LL T, LL H, const std::function<double(LL, LL)>& x, const std::function<double(LL, LL)>& dy,
             const std::function<double(LL)>& gamma, const std::vector<float>& mean, const std::vector<float>& rstd) {
  LnBwd o{std::vector<double>(T * H), std::vector<double>(T * H), std::vector<double>(H, 0.0),
          std::vector<double>(H, 0.0), std::vector<double>(H, 0.0), std::vector<double>(H, 0.0)};
  std::vector<double> xh(H), g(H);
  for (LL t = 0; t < T; ++t) {
    const double r = rstd[t];
    double mg = 0, mgx = 0, ag = 0, agx = 0;
    for (LL j = 0; j < H; ++j) {
      xh[j] = (x(t, j) - mean[t]) * r, g[j] = dy(t, j) * gamma(j);
      mg += g[j], mgx += g[j] * xh[j], ag += std::fabs(g[j]), agx += std::fabs(g[j] * xh[j]);
    }
    mg /= H, mgx /= H, ag /= H, agx /= H;
    for (LL j = 0; j < H; ++j) {
      o.dx[t * H + j] = r * (g[j] - mg - xh[j] * mgx);
      o.dxmag[t * H + j] = r * (std::fabs(g[j]) + ag + std::fabs(xh[j]) * agx);
      o.dg[j] += dy(t, j) * xh[j], o.dgmag[j] += std::fabs(dy(t, j) * xh[j]);
      o.db[j] += dy(t, j), o.dbmag[j] += std::fabs(dy(t, j));
    }
  }
  return o;
}
// A forward's saved statistics of rows x(t, j): mean and 1 / sqrt(var + 1e-5), in f32.
void ln_stats(LL T, LL H, const std::function<double(LL, LL)>& x, std::vector<float>& mean, std::vector<float>& rstd) {
  mean.resize(T), rstd.resize(T);
  for (LL t = 0; t < T; ++t) {
    double s = 0, q = 0;
    for (LL j = 0; j < H; ++j) s += x(t, j);
    s /= H;
    for (LL j = 0; j < H; ++j) q += (x(t, j) - s) * (x(t, j) - s);
    mean[t] = float(s), rstd[t] = float(1 / std::sqrt(q / H + 1e-5));
  }
}

// layernorm_bwd_dx_dgamma_dbeta: dx bf16 (kBf + fp32 row sums), dgamma / dbeta f32 column sums by store_add
// across 8-row tiles (any order: 1e-5 of the magnitude sum). Launched twice: the zeroing phase re-zeroes.
void layernorm_bwd(const Run& r, LL T, LL H, unsigned seed) {
  const std::string kn = "layernorm_bwd_dx_dgamma_dbeta";
  const auto x = rnd<bf16>(T * H, seed, -2.f, 2.f), dy = rnd<bf16>(T * H, seed + 1), gm = rnd<bf16>(H, seed + 2, 0.5f, 1.5f);
  auto X = [&](LL t, LL j) { return val(x[t * H + j]); };
  auto DY = [&](LL t, LL j) { return val(dy[t * H + j]); };
  std::vector<float> mean, rstd;
  ln_stats(T, H, X, mean, rstd);
  DevLocal<bf16> xd({T, H}, x), dyd({T, H}, dy), gd({1, H}, gm), dx({T, H}, {});
  DevLocal<float> md({T, 1}, mean), rd({T, 1}, rstd), dg({1, H}, {}), db({1, H}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), dyd.view(), gd.view(), md.view(), rd.view(), dx.view(), dg.view(), db.view())) {
    const auto o = ln_bwd(T, H, X, DY, [&](LL j) { return val(gm[j]); }, mean, rstd);
    check(r, kn + ".dx", dx.download(), [&](LL i) { return o.dx[i]; },
          [&](LL i) { return kBf * std::fabs(o.dx[i]) + 1e-5 * o.dxmag[i]; });
    check(r, kn + ".dgamma", dg.download(), [&](LL j) { return o.dg[j]; }, [&](LL j) { return 1e-5 * o.dgmag[j] + 1e-7; });
    check(r, kn + ".dbeta", db.download(), [&](LL j) { return o.db[j]; }, [&](LL j) { return 1e-5 * o.dbmag[j] + 1e-7; });
  }
  end_case(r, kn + " " + dims({T, H}), before);
}

// rmsnorm_bwd_wide_rows: rstd recomputed; dx f32; dw += column sums (dw starts with random values: it
// accumulates across micro-batches, so one launch).
void rmsnorm_bwd(const Run& r, LL T, LL H, unsigned seed) {
  const std::string kn = "rmsnorm_bwd_wide_rows";
  const float eps = 1e-5f;
  const auto x = rnd<float>(T * H, seed, -2.f, 2.f), dy = rnd<float>(T * H, seed + 1), w = rnd<float>(H, seed + 2, 0.5f, 1.5f);
  const auto dw0 = rnd<float>(H, seed + 3);
  DevLocal<float> xd({T, H}, x), dyd({T, H}, dy), wd({1, H}, w), dx({T, H}, {}), dw({1, H}, dw0);
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), dyd.view(), wd.view(), dx.view(), dw.view(), eps)) {
    std::vector<double> wdx(T * H), mdx(T * H), wdw(H), mdw(H);
    for (LL j = 0; j < H; ++j) wdw[j] = dw0[j], mdw[j] = std::fabs(dw0[j]);
    for (LL t = 0; t < T; ++t) {
      double ss = 0, c = 0, ca = 0;
      for (LL j = 0; j < H; ++j) {
        const LL i = t * H + j;
        ss += double(x[i]) * x[i], c += double(dy[i]) * w[j] * x[i], ca += std::fabs(double(dy[i]) * w[j] * x[i]);
      }
      const double rs_ = 1 / std::sqrt(ss / H + eps);
      c /= H, ca /= H;
      for (LL j = 0; j < H; ++j) {
        const LL i = t * H + j;
        wdx[i] = rs_ * (dy[i] * double(w[j]) - x[i] * rs_ * rs_ * c);
        mdx[i] = rs_ * (std::fabs(dy[i] * double(w[j])) + std::fabs(x[i]) * rs_ * rs_ * ca);
        wdw[j] += double(dy[i]) * x[i] * rs_, mdw[j] += std::fabs(double(dy[i]) * x[i] * rs_);
      }
    }
    check(r, kn + ".dx", dx.download(), [&](LL i) { return wdx[i]; }, [&](LL i) { return 1e-5 * mdx[i] + 1e-7; });
    check(r, kn + ".dw", dw.download(), [&](LL j) { return wdw[j]; }, [&](LL j) { return 1e-5 * mdw[j] + 1e-7; });
  }
  end_case(r, kn + " " + dims({T, H}), before);
}

// sp_rmsnorm_bwd_dw_allreduce: part = sum over ranks and their rows of dy x rstd (f32 atomics, then the
// all-reduce: 1e-5 of the magnitude sum); dw = bf16(part) (kBf more).
void sp_rmsnorm_dw(const Run& r, LL Tl, LL H, unsigned seed) {
  const std::string kn = "sp_rmsnorm_bwd_dw_allreduce";
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> x(W), dy(W);
  std::vector<std::vector<float>> rstd(W);
  for (int p = 0; p < W; ++p)
    x[p] = rnd<bf16>(Tl * H, rs(seed, p)), dy[p] = rnd<bf16>(Tl * H, rs(seed + 1, p)),
    rstd[p] = rnd<float>(Tl, rs(seed + 2, p), 0.5f, 2.f);
  DevLocal<bf16> xd({Tl, H}, x[me]), dyd({Tl, H}, dy[me]), dw({1, H}, {});
  DevLocal<float> rd({Tl, 1}, rstd[me]);
  SymArg<float> part(r.ctx, {1, H}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), dyd.view(), rd.view(), part.view, dw.view())) {
    std::vector<double> s(H, 0.0), mag(H, 0.0);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < Tl * H; ++i) {
        const double v = val(dy[p][i]) * val(x[p][i]) * rstd[p][i / H];
        s[i % H] += v, mag[i % H] += std::fabs(v);
      }
    check(r, kn + ".part", part.download(), [&](LL j) { return s[j]; }, [&](LL j) { return 1e-5 * mag[j] + 1e-7; });
    check(r, kn + ".dw", dw.download(), [&](LL j) { return s[j]; },
          [&](LL j) { return kBf * std::fabs(s[j]) + 1e-5 * mag[j] + 1e-7; });
  }
  end_case(r, kn + " " + dims({Tl, H}), before);
}

// sp_layernorm_bwd_full: dx f32 as layernorm_bwd; gb = [column sums of dy xhat; of dy] over every rank's rows.
void sp_layernorm_bwd(const Run& r, LL Tl, LL H, unsigned seed) {
  const std::string kn = "sp_layernorm_bwd_full";
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W), dy(W), mean(W), rstd(W);
  const auto gm = rnd<float>(H, seed, 0.5f, 1.5f);
  for (int p = 0; p < W; ++p) {
    x[p] = rnd<float>(Tl * H, rs(seed + 1, p), -2.f, 2.f), dy[p] = rnd<float>(Tl * H, rs(seed + 2, p));
    ln_stats(Tl, H, [&](LL t, LL j) { return double(x[p][t * H + j]); }, mean[p], rstd[p]);
  }
  DevLocal<float> xd({Tl, H}, x[me]), dyd({Tl, H}, dy[me]), gd({1, H}, gm), md({Tl, 1}, mean[me]), rd({Tl, 1}, rstd[me]),
      dx({Tl, H}, {});
  SymArg<float> gb(r.ctx, {2, H}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), dyd.view(), gd.view(), md.view(), rd.view(), dx.view(), gb.view)) {
    std::vector<double> s(2 * H, 0.0), mag(2 * H, 0.0);
    LnBwd own;
    for (int p = 0; p < W; ++p) {
      auto o = ln_bwd(Tl, H, [&](LL t, LL j) { return double(x[p][t * H + j]); },
                      [&](LL t, LL j) { return double(dy[p][t * H + j]); }, [&](LL j) { return double(gm[j]); }, mean[p],
                      rstd[p]);
      for (LL j = 0; j < H; ++j) s[j] += o.dg[j], mag[j] += o.dgmag[j], s[H + j] += o.db[j], mag[H + j] += o.dbmag[j];
      if (p == me) own = std::move(o);
    }
    check(r, kn + ".dx", dx.download(), [&](LL i) { return own.dx[i]; }, [&](LL i) { return 1e-5 * own.dxmag[i] + 1e-7; });
    check(r, kn + ".gb", gb.download(), [&](LL i) { return s[i]; }, [&](LL i) { return 1e-5 * mag[i] + 1e-7; });
  }
  end_case(r, kn + " " + dims({Tl, H}), before);
}

// ================================================================ activation / loss backward ==

// softmax_bwd_wide: y a real softmax of each row, dx = y (dy - sum dy y) in f32 (1e-5 of the magnitudes).
void softmax_bwd(const Run& r, LL T, LL V, unsigned seed) {
  const std::string kn = "softmax_bwd_wide";
  auto y = rnd<float>(T * V, seed, -3.f, 3.f);
  for (LL t = 0; t < T; ++t) {
    double z = 0;
    for (LL j = 0; j < V; ++j) z += std::exp(double(y[t * V + j]));
    for (LL j = 0; j < V; ++j) y[t * V + j] = float(std::exp(double(y[t * V + j])) / z);
  }
  const auto dy = rnd<float>(T * V, seed + 1);
  DevLocal<float> yd({T, V}, y), dyd({T, V}, dy), dx({T, V}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, yd.view(), dyd.view(), dx.view())) {
    std::vector<double> dot(T, 0.0), adot(T, 0.0);
    for (LL i = 0; i < T * V; ++i) dot[i / V] += double(y[i]) * dy[i], adot[i / V] += std::fabs(double(y[i]) * dy[i]);
    check(r, kn + ".dx", dx.download(), [&](LL i) { return y[i] * (dy[i] - dot[i / V]); },
          [&](LL i) { return 1e-5 * y[i] * (std::fabs(dy[i]) + adot[i / V]) + 1e-12; });
  }
  end_case(r, kn + " " + dims({T, V}), before);
}

// gelu_bwd_inplace: g := bf16(dy gelu'(x)) in place (one launch; the host keeps dy).
void gelu_bwd(const Run& r, LL T, LL F, unsigned seed) {
  const std::string kn = "gelu_bwd_inplace";
  const auto x = rnd<bf16>(T * F, seed, -4.f, 4.f), dy = rnd<bf16>(T * F, seed + 1);
  DevLocal<bf16> xd({T, F}, x), g({T, F}, dy);
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), g.view())) {
    auto want = [&](LL i) { return val(dy[i]) * gelu_grad(val(x[i])); };
    check(r, kn + ".g", g.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-6 * std::fabs(val(dy[i])); });
  }
  end_case(r, kn + " " + dims({T, F}), before);
}

// bias_gelu_bwd_dbias: x = h + bias in fp32; dx = bf16(dy gelu'(x)); dbias = column sums of the fp32 dx.
void bias_gelu_bwd(const Run& r, LL T, LL F, unsigned seed) {
  const std::string kn = "bias_gelu_bwd_dbias";
  const auto h = rnd<bf16>(T * F, seed, -3.f, 3.f), b = rnd<bf16>(F, seed + 1), dy = rnd<bf16>(T * F, seed + 2);
  DevLocal<bf16> hd({T, F}, h), bd({1, F}, b), dyd({T, F}, dy), dx({T, F}, {});
  DevLocal<float> db({1, F}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, hd.view(), bd.view(), dyd.view(), dx.view(), db.view())) {
    auto d = [&](LL i) { return val(dy[i]) * gelu_grad(val(h[i]) + val(b[i % F])); };
    std::vector<double> s(F, 0.0), mag(F, 0.0);
    for (LL i = 0; i < T * F; ++i) s[i % F] += d(i), mag[i % F] += std::fabs(d(i));
    check(r, kn + ".dx", dx.download(), d, [&](LL i) { return kBf * std::fabs(d(i)) + 1e-6 * std::fabs(val(dy[i])); });
    check(r, kn + ".dbias", db.download(), [&](LL j) { return s[j]; }, [&](LL j) { return 1e-5 * mag[j] + 1e-7; });
  }
  end_case(r, kn + " " + dims({T, F}), before);
}

// swiglu_bwd_packed: hp [T, 2, F] (gate, up), dhp [T, 2, F] = (dgate, dup), bf16.
void swiglu_bwd(const Run& r, LL T, LL F, unsigned seed) {
  const std::string kn = "swiglu_bwd_packed";
  const auto hp = rnd<bf16>(T * 2 * F, seed, -4.f, 4.f), dy = rnd<bf16>(T * F, seed + 1);
  DevLocal<bf16> hd({T, 2, F}, hp), dyd({T, F}, dy), dh({T, 2, F}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, hd.view(), dyd.view(), dh.view())) {
    auto want = [&](LL i) {
      const LL t = i / (2 * F), half = i / F % 2, j = i % F;
      const double g = val(hp[t * 2 * F + j]), u = val(hp[t * 2 * F + F + j]), d = val(dy[t * F + j]), s = pkt::sigmoid(g);
      return half == 0 ? d * u * s * (1 + g * (1 - s)) : d * g * s;
    };
    auto tol = [&](LL i) {
      const LL t = i / (2 * F), j = i % F;
      const double g = val(hp[t * 2 * F + j]), u = val(hp[t * 2 * F + F + j]), d = val(dy[t * F + j]);
      return kBf * std::fabs(want(i)) + 2e-6 * std::fabs(d) * (std::fabs(u) * (1 + std::fabs(g)) + std::fabs(g));
    };
    check(r, kn + ".dhp", dh.download(), want, tol);
  }
  end_case(r, kn + " " + dims({T, F}), before);
}

// cross_entropy_fused_fwd_bwd: targets every fifth -100 (loss and gradient 0), others planted in the first and
// the last column (the last in the partial 1024-column chunk). loss f32: the online lse within 1e-5 of |lse|
// + |x_t|; dlogits bf16: kBf, plus p's error from lse's (1e-4 of p).
void cross_entropy_fused(const Run& r, LL T, LL V, float lo, float hi, unsigned seed) {
  const std::string kn = "cross_entropy_fused_fwd_bwd";
  const auto lg = rnd<bf16>(T * V, seed, lo, hi);
  auto tg = ints<int>(T, 0, V - 1, seed + 1);
  LL counted = 0;
  for (LL t = 0; t < T; ++t) {
    if (t % 5 == 4) tg[t] = -100;
    else if (t % 7 == 1) tg[t] = 0;
    else if (t % 7 == 2) tg[t] = int(V - 1);
    counted += tg[t] != -100;
  }
  const float scale = 1.0f / float(std::max<LL>(counted, 1));
  std::vector<double> lse(T), mx(T);
  for (LL t = 0; t < T; ++t) {
    double m = -1e300, s = 0;
    for (LL j = 0; j < V; ++j) m = std::max(m, val(lg[t * V + j]));
    for (LL j = 0; j < V; ++j) s += std::exp(val(lg[t * V + j]) - m);
    lse[t] = m + std::log(s), mx[t] = m;
  }
  DevLocal<bf16> ld({T, V}, lg), dl({T, V}, {});
  DevLocal<int> td({T, 1}, tg);
  DevLocal<float> loss({T, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), td.view(), loss.view(), dl.view(), scale)) {
    check(r, kn + ".loss", loss.download(), [&](LL t) { return tg[t] == -100 ? 0.0 : (lse[t] - val(lg[t * V + tg[t]])) * scale; },
          [&](LL t) { return tg[t] == -100 ? 0.0 : 1e-5 * (std::fabs(lse[t]) + std::fabs(mx[t]) + 1) * scale; });
    auto want = [&](LL i) {
      const LL t = i / V;
      if (tg[t] == -100) return 0.0;
      return (std::exp(val(lg[i]) - lse[t]) - (i % V == tg[t] ? 1.0 : 0.0)) * scale;
    };
    check(r, kn + ".dlogits", dl.download(), want, [&](LL i) {
      if (tg[i / V] == -100) return 0.0;
      return kBf * std::fabs(want(i)) + 1e-4 * std::exp(val(lg[i]) - lse[i / V]) * scale + 1e-12;
    });
  }
  end_case(r, kn + " " + dims({T, V}) + " logits in [" + std::to_string(int(lo)) + ", " + std::to_string(int(hi)) + ")", before);
}

// dropout_fwd and dropout_bwd with one seed: the same mask on 16 x 128 and 64 x 32 tiles (uniform of the
// element's coordinates). Dropped elements exactly 0; kept ones bf16(x * (1 / (1 - p))) (fp32 scale, kBf).
void dropout_pair(const Run& r, LL T, LL H, LL seed, float p, unsigned s) {
  const auto x = rnd<bf16>(T * H, s), dy = rnd<bf16>(T * H, s + 1);
  DevLocal<bf16> xd({T, H}, x), y({T, H}, {}), dyd({T, H}, dy), dx({T, H}, {});
  const float k = 1.0f / (1.0f - p);
  auto want = [&](const std::vector<bf16>& in, LL i) {
    return keep(seed, {i / H, i % H}, p) ? double(float(val(in[i])) * k) : 0.0;
  };
  const int before = begin_case(r);
  if (run(r, "dropout_fwd", 2, xd.view(), y.view(), seed, p) && run(r, "dropout_bwd", 2, dyd.view(), dx.view(), seed, p)) {
    check(r, "dropout_fwd.y", y.download(), [&](LL i) { return want(x, i); }, [&](LL i) { return kBf * std::fabs(want(x, i)); });
    check(r, "dropout_bwd.dx", dx.download(), [&](LL i) { return want(dy, i); }, [&](LL i) { return kBf * std::fabs(want(dy, i)); });
  }
  end_case(r, "dropout_fwd+dropout_bwd " + dims({T, H}) + " seed " + std::to_string(seed) + " p " + std::to_string(p), before);
}

// residual_dropout_bwd_3d: dres = dy exactly; dx = keep(seed + layer, b, s, h) ? bf16(dy / (1 - p)) : 0.
void residual_dropout(const Run& r, LL B, LL S, LL H, LL seed, LL layer, float p, unsigned s) {
  const std::string kn = "residual_dropout_bwd_3d";
  const auto dy = rnd<bf16>(B * S * H, s);
  DevLocal<bf16> dyd({B, S, H}, dy), dres({B, S, H}, {}), dx({B, S, H}, {});
  auto want = [&](LL i) {
    const bool k = keep(seed + layer, {i / (S * H), i / H % S, i % H}, p);
    return k ? double(float(val(dy[i])) / (1.0f - p)) : 0.0;
  };
  const int before = begin_case(r);
  if (run(r, kn, 2, dyd.view(), dres.view(), dx.view(), seed, layer, p)) {
    check(r, kn + ".dres", dres.download(), [&](LL i) { return val(dy[i]); }, exact());
    check(r, kn + ".dx", dx.download(), want, [&](LL i) { return kBf * std::fabs(want(i)); });
  }
  end_case(r, kn + " " + dims({B, S, H}) + " layer " + std::to_string(layer), before);
}

// scaled_masked_softmax_bwd: y a causal softmax per head (zeros above the diagonal), f16.
void scaled_masked_softmax(const Run& r, LL Hh, LL S, float scale, unsigned seed) {
  const std::string kn = "scaled_masked_softmax_bwd";
  const auto sc = rnd<float>(Hh * S * S, seed, -3.f, 3.f);
  std::vector<f16> y(Hh * S * S);
  for (LL row = 0; row < Hh * S; ++row) {
    const LL i = row % S;
    double z = 0;
    for (LL j = 0; j <= i; ++j) z += std::exp(double(sc[row * S + j]));
    for (LL j = 0; j < S; ++j)
      y[row * S + j] = pkt::from_host<f16>(j <= i ? float(std::exp(double(sc[row * S + j])) / z) : 0.f);
  }
  const auto dy = rnd<f16>(Hh * S * S, seed + 1);
  DevLocal<f16> yd({Hh, S, S}, y), dyd({Hh, S, S}, dy), dx({Hh, S, S}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, yd.view(), dyd.view(), dx.view(), scale)) {
    std::vector<double> dot(Hh * S, 0.0), adot(Hh * S, 0.0);
    for (LL i = 0; i < Hh * S * S; ++i) dot[i / S] += val(y[i]) * val(dy[i]), adot[i / S] += std::fabs(val(y[i]) * val(dy[i]));
    auto want = [&](LL i) { return scale * val(y[i]) * (val(dy[i]) - dot[i / S]); };
    check(r, kn + ".dx", dx.download(), want, [&](LL i) {
      // 6e-8: f16's step below 2^-14 (its subnormals), where a relative bound says nothing.
      return kHf * std::fabs(want(i)) + 1e-5 * scale * val(y[i]) * (std::fabs(val(dy[i])) + adot[i / S]) + 6e-8;
    });
  }
  end_case(r, kn + " " + dims({Hh, S}), before);
}

// attn_dropout_softmax_bwd: dp = keep(seed, i, j) ? dpd / (1 - q) : 0; ds = p (dp - sum dp p) (f32).
void attn_dropout_softmax(const Run& r, LL S, LL seed, float q, unsigned s) {
  const std::string kn = "attn_dropout_softmax_bwd";
  const auto p = rnd<bf16>(S * S, s, 0.f, 2.f / float(S)), dpd = rnd<bf16>(S * S, s + 1);
  DevLocal<bf16> pd({S, S}, p), dd({S, S}, dpd);
  DevLocal<float> ds({S, S}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, pd.view(), dd.view(), ds.view(), seed, q)) {
    std::vector<double> dp(S * S), dot(S, 0.0), adot(S, 0.0);
    for (LL i = 0; i < S * S; ++i) {
      dp[i] = keep(seed, {i / S, i % S}, q) ? val(dpd[i]) / (1.0 - q) : 0.0;
      dot[i / S] += dp[i] * val(p[i]), adot[i / S] += std::fabs(dp[i] * val(p[i]));
    }
    check(r, kn + ".ds", ds.download(), [&](LL i) { return val(p[i]) * (dp[i] - dot[i / S]); },
          [&](LL i) { return 1e-5 * val(p[i]) * (std::fabs(dp[i]) + adot[i / S]) + 1e-12; });
  }
  end_case(r, kn + " " + dims({S}) + " seed " + std::to_string(seed), before);
}

// ce_label_smoothing_bwd: dlogits = (exp(x - lse) - (1 - e) [j == t] - e / V) / n, f32 (1e-5 of the terms).
void ce_smoothing_bwd(const Run& r, LL T, LL V, float e, unsigned seed) {
  const std::string kn = "ce_label_smoothing_bwd";
  const auto lg = rnd<float>(T * V, seed, -5.f, 5.f);
  const auto tg = ints<int>(T, 0, V - 1, seed + 1);
  std::vector<float> lse(T);
  for (LL t = 0; t < T; ++t) {
    double s = 0;
    for (LL j = 0; j < V; ++j) s += std::exp(double(lg[t * V + j]));
    lse[t] = float(std::log(s));
  }
  const float n = float(T);
  DevLocal<float> ld({T, V}, lg), sd({T, 1}, lse), dl({T, V}, {});
  DevLocal<int> td({T, 1}, tg);
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), sd.view(), td.view(), dl.view(), e, n)) {
    auto p = [&](LL i) { return std::exp(double(lg[i]) - lse[i / V]); };
    auto hit = [&](LL i) { return i % V == tg[i / V] ? 1.0 : 0.0; };
    const double ev = double(e) / double(V);
    check(r, kn + ".dlogits", dl.download(), [&](LL i) { return (p(i) - (1 - e) * hit(i) - ev) / n; },
          [&](LL i) { return 1e-5 * (p(i) + (1 - e) * hit(i) + ev) / n + 1e-12; });
  }
  end_case(r, kn + " " + dims({T, V}) + " e " + std::to_string(e), before);
}

// ================================================================ optimizers (single GPU, in place) ==

// multi_tensor_adamw: two parameter tensors (1-D with a partial 2048 tile, 2-D with partial 8 x 256 tiles) in
// one launch; m, v, w, h in place against the host's copies.
void multi_tensor_adamw(const Run& r, LL N0, LL R, LL C, LL step, unsigned seed) {
  const std::string kn = "multi_tensor_adamw";
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.1f;
  const LL n[2] = {N0, R * C};
  std::vector<float> w[2], m[2], v[2];
  std::vector<bf16> g[2];
  for (int k = 0; k < 2; ++k)
    w[k] = rnd<float>(n[k], seed + 10 * k), m[k] = rnd<float>(n[k], seed + 10 * k + 1, -0.1f, 0.1f),
    v[k] = rnd<float>(n[k], seed + 10 * k + 2, 1e-4f, 1e-2f), g[k] = rnd<bf16>(n[k], seed + 10 * k + 3, -0.5f, 0.5f);
  DevLocal<float> w0({N0}, w[0]), m0({N0}, m[0]), v0({N0}, v[0]), w1({R, C}, w[1]), m1({R, C}, m[1]), v1({R, C}, v[1]);
  DevLocal<bf16> g0({N0}, g[0]), h0({N0}, {}), g1({R, C}, g[1]), h1({R, C}, {});
  const int before = begin_case(r);
  if (run(r, kn, 1, w0.view(), g0.view(), m0.view(), v0.view(), h0.view(), w1.view(), g1.view(), m1.view(), v1.view(),
          h1.view(), lr, b1, b2, eps, wd, step)) {
    const double bc1 = 1 - std::pow(double(b1), double(step)), bc2 = 1 - std::pow(double(b2), double(step));
    const std::string nm[2] = {"0", "1"};
    const DevLocal<float>* wd_[2] = {&w0, &w1};
    const DevLocal<float>* md_[2] = {&m0, &m1};
    const DevLocal<float>* vd_[2] = {&v0, &v1};
    const DevLocal<bf16>* hd_[2] = {&h0, &h1};
    for (int k = 0; k < 2; ++k) {
      std::vector<Adam> a(n[k]);
      for (LL i = 0; i < n[k]; ++i) a[i] = adam(w[k][i], val(g[k][i]), m[k][i], v[k][i], lr, b1, b2, eps, wd, bc1, bc2);
      check(r, kn + ".m" + nm[k], md_[k]->download(), [&](LL i) { return a[i].m; }, [&](LL i) { return tol_m(a[i]); });
      check(r, kn + ".v" + nm[k], vd_[k]->download(), [&](LL i) { return a[i].v; }, [&](LL i) { return tol_v(a[i]); });
      check(r, kn + ".w" + nm[k], wd_[k]->download(), [&](LL i) { return a[i].w; }, [&](LL i) { return tol_w(a[i], w[k][i], lr); });
      check(r, kn + ".h" + nm[k], hd_[k]->download(), [&](LL i) { return a[i].w; }, [&](LL i) { return kBf * std::fabs(a[i].w); });
    }
  }
  end_case(r, kn + " " + dims({N0, R, C}) + " step " + std::to_string(step), before);
}

// adamw_decay_mask: decay only where the i32 mask is non-zero (masks -2 .. 2: negative values decay too).
void adamw_mask(const Run& r, LL N, unsigned seed) {
  const std::string kn = "adamw_decay_mask";
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.95f, eps = 1e-6f, wd = 0.5f;
  const auto w = rnd<float>(N, seed), g = rnd<float>(N, seed + 1, -0.5f, 0.5f), m = rnd<float>(N, seed + 2, -0.1f, 0.1f),
             v = rnd<float>(N, seed + 3, 1e-4f, 1e-2f);
  const auto mask = ints<int>(N, -2, 2, seed + 4);
  DevLocal<float> wd_({N}, w), gd({N}, g), md({N}, m), vd({N}, v);
  DevLocal<int> kd({N}, mask);
  const int before = begin_case(r);
  if (run(r, kn, 1, wd_.view(), gd.view(), md.view(), vd.view(), kd.view(), lr, b1, b2, eps, wd)) {
    std::vector<Adam> a(N);
    for (LL i = 0; i < N; ++i) a[i] = adam(w[i], g[i], m[i], v[i], lr, b1, b2, eps, mask[i] != 0 ? wd : 0.f, 1, 1);
    check(r, kn + ".m", md.download(), [&](LL i) { return a[i].m; }, [&](LL i) { return tol_m(a[i]); });
    check(r, kn + ".v", vd.download(), [&](LL i) { return a[i].v; }, [&](LL i) { return tol_v(a[i]); });
    check(r, kn + ".w", wd_.download(), [&](LL i) { return a[i].w; }, [&](LL i) { return tol_w(a[i], w[i], lr); });
  }
  end_case(r, kn + " " + dims({N}), before);
}

// lion_master_bf16: sign(c) with c = b1 m + (1 - b1) g; every 97th element has m = g = 0 (sign 0: w only
// decays). Where |c| is within fp32 rounding of 0 without being 0, either sign is accepted (a bound of lr).
void lion(const Run& r, LL R, LL C, unsigned seed) {
  const std::string kn = "lion_master_bf16";
  const float lr = 1e-3f, b1 = 0.9f, b2 = 0.99f, wd = 0.1f;
  auto w = rnd<float>(R * C, seed), m = rnd<float>(R * C, seed + 1, -0.1f, 0.1f);
  auto g = rnd<bf16>(R * C, seed + 2);
  for (LL i = 0; i < R * C; i += 97) m[i] = 0.f, g[i] = pkt::from_host<bf16>(0.f);
  DevLocal<float> wd_({R, C}, w), md({R, C}, m);
  DevLocal<bf16> gd({R, C}, g), h({R, C}, {});
  const int before = begin_case(r);
  if (run(r, kn, 1, wd_.view(), gd.view(), md.view(), h.view(), lr, b1, b2, wd)) {
    std::vector<double> nw(R * C), tw(R * C);
    for (LL i = 0; i < R * C; ++i) {
      const double c = b1 * double(m[i]) + (1 - double(b1)) * val(g[i]);
      const double mag = std::fabs(b1 * double(m[i])) + std::fabs((1 - double(b1)) * val(g[i]));
      const double u = c > 0 ? 1 : c < 0 ? -1 : 0;
      nw[i] = w[i] * (1 - double(lr) * wd) - lr * u;
      tw[i] = 1e-6 * std::fabs(w[i]) + (c != 0 && std::fabs(c) <= 1e-6 * mag ? 2.0 * lr : 1e-9);
    }
    check(r, kn + ".w", wd_.download(), [&](LL i) { return nw[i]; }, [&](LL i) { return tw[i]; });
    check(r, kn + ".m", md.download(), [&](LL i) { return b2 * double(m[i]) + (1 - double(b2)) * val(g[i]); },
          [&](LL i) { return 1e-6 * (std::fabs(m[i]) + std::fabs(val(g[i]))) + 1e-12; });
    check(r, kn + ".h", h.download(), [&](LL i) { return nw[i]; }, [&](LL i) { return kBf * std::fabs(nw[i]) + tw[i]; });
  }
  end_case(r, kn + " " + dims({R, C}), before);
}

// sgd_momentum_torch: the first step with buf poisoned (NaN: the select must not read it), Nesterov, dampening.
void sgd_torch(const Run& r, LL N, LL first, LL nesterov, float damp, unsigned seed) {
  const std::string kn = "sgd_momentum_torch";
  const float lr = 0.05f, mu = 0.9f, wd = 0.01f;
  const auto w = rnd<float>(N, seed), g = rnd<float>(N, seed + 1), b0 = rnd<float>(N, seed + 2);
  DevLocal<float> wd_({N}, w), gd({N}, g), buf({N}, first ? std::vector<float>{} : b0);
  const int before = begin_case(r);
  if (run(r, kn, 1, wd_.view(), gd.view(), buf.view(), lr, mu, damp, wd, first, nesterov)) {
    std::vector<double> b(N), nw(N), tb(N), tw(N);
    for (LL i = 0; i < N; ++i) {
      const double gt = g[i] + double(wd) * w[i];
      b[i] = first ? gt : mu * double(b0[i]) + (1 - double(damp)) * gt;
      tb[i] = 1e-6 * (std::fabs(gt) + (first ? 0.0 : std::fabs(mu * double(b0[i])))) + 1e-12;
      const double d = nesterov ? gt + mu * b[i] : b[i];
      nw[i] = w[i] - lr * d;
      tw[i] = 1e-6 * (std::fabs(w[i]) + lr * (std::fabs(gt) + std::fabs(b[i]))) + 1e-12;
    }
    check(r, kn + ".buf", buf.download(), [&](LL i) { return b[i]; }, [&](LL i) { return tb[i]; });
    check(r, kn + ".w", wd_.download(), [&](LL i) { return nw[i]; }, [&](LL i) { return tw[i]; });
  }
  end_case(r, kn + " " + dims({N}) + " first " + std::to_string(first) + " nesterov " + std::to_string(nesterov), before);
}

// ema_weights_warmup: decay = min(d_max, (1 + step) / (10 + step)) in fp32.
void ema(const Run& r, LL R, LL C, float d_max, LL step, unsigned seed) {
  const std::string kn = "ema_weights_warmup";
  const auto e = rnd<float>(R * C, seed);
  const auto mdl = rnd<bf16>(R * C, seed + 1);
  DevLocal<float> ed({R, C}, e);
  DevLocal<bf16> md({R, C}, mdl);
  const int before = begin_case(r);
  if (run(r, kn, 1, ed.view(), md.view(), d_max, step)) {
    const double d = std::min(d_max, (1.0f + float(step)) / (10.0f + float(step)));
    check(r, kn + ".ema", ed.download(), [&](LL i) { return d * e[i] + (1 - d) * val(mdl[i]); },
          [&](LL i) { return 1e-6 * (std::fabs(d * e[i]) + std::fabs((1 - d) * val(mdl[i]))) + 1e-12; });
  }
  end_case(r, kn + " " + dims({R, C}) + " step " + std::to_string(step), before);
}

// grad_accum_microbatch: main += grad; on the last micro-batch grad = bf16(main * inv_steps) and main = 0;
// otherwise grad is left as it was (rewritten with its own value: exact).
void grad_accum(const Run& r, LL R, LL C, LL last, unsigned seed) {
  const std::string kn = "grad_accum_microbatch";
  const float inv = 0.25f;
  const auto m0 = rnd<float>(R * C, seed, -4.f, 4.f);
  const auto g = rnd<bf16>(R * C, seed + 1);
  DevLocal<float> md({R, C}, m0);
  DevLocal<bf16> gd({R, C}, g);
  const int before = begin_case(r);
  if (run(r, kn, 1, md.view(), gd.view(), inv, last)) {
    auto acc = [&](LL i) { return double(float(m0[i] + float(val(g[i])))); };
    check(r, kn + ".main", md.download(), [&](LL i) { return last ? 0.0 : acc(i); }, [&](LL i) { return last ? 0.0 : 1e-7 * std::fabs(acc(i)); });
    check(r, kn + ".grad", gd.download(), [&](LL i) { return last ? acc(i) * inv : val(g[i]); },
          [&](LL i) { return last ? kBf * std::fabs(acc(i) * inv) : 0.0; });
  }
  end_case(r, kn + " " + dims({R, C}) + " last " + std::to_string(last), before);
}

// grad_accum_microbatch_loop: acc += the micro batches' row blocks in order (a partial 16-row tile reads the
// next block's rows; its store clips at acc's end).
void grad_accum_loop(const Run& r, LL R, LL C, LL micro, unsigned seed) {
  const std::string kn = "grad_accum_microbatch_loop";
  const auto g = rnd<float>(micro * R * C, seed), a0 = rnd<float>(R * C, seed + 1);
  DevLocal<float> gd({micro * R, C}, g), ad({R, C}, a0);
  const int before = begin_case(r);
  if (run(r, kn, 1, gd.view(), ad.view(), micro)) {
    std::vector<double> s(R * C), mag(R * C);
    for (LL i = 0; i < R * C; ++i) {
      s[i] = a0[i], mag[i] = std::fabs(a0[i]);
      for (LL k = 0; k < micro; ++k) s[i] += g[k * R * C + i], mag[i] += std::fabs(g[k * R * C + i]);
    }
    check(r, kn + ".acc", ad.download(), [&](LL i) { return s[i]; }, [&](LL i) { return 1e-6 * mag[i]; });
  }
  end_case(r, kn + " " + dims({R, C, micro}), before);
}

// adafactor_step: rv, cv, the scratch sums cs (column sums of G = g^2 + eps1) and rs (sum of the new rv), and w.
void adafactor(const Run& r, LL R, LL C, unsigned seed) {
  const std::string kn = "adafactor_step";
  const float lr = 1e-2f, b2 = 0.9f, eps1 = 1e-30f;
  const auto w = rnd<float>(R * C, seed), g = rnd<float>(R * C, seed + 1);
  const auto rv = rnd<float>(R, seed + 2, 0.1f, 0.5f), cv = rnd<float>(C, seed + 3, 0.1f, 0.5f);
  DevLocal<float> wd_({R, C}, w), gd({R, C}, g), rvd({R, 1}, rv), cvd({1, C}, cv), cs({1, C}, {}), rsd({1, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 1, wd_.view(), gd.view(), rvd.view(), cvd.view(), cs.view(), rsd.view(), lr, b2, eps1)) {
    std::vector<double> nr(R, 0.0), col(C, 0.0), ncv(C);
    double rsum = 0;
    for (LL i = 0; i < R * C; ++i) {
      const double G = double(g[i]) * g[i] + eps1;
      nr[i / C] += G, col[i % C] += G;
    }
    for (LL t = 0; t < R; ++t) nr[t] = b2 * double(rv[t]) + (1 - double(b2)) * nr[t] / C, rsum += nr[t];
    for (LL j = 0; j < C; ++j) ncv[j] = b2 * double(cv[j]) + (1 - double(b2)) * col[j] / R;
    // All sums are of positive terms: 1e-5 relative.
    check(r, kn + ".rv", rvd.download(), [&](LL t) { return nr[t]; }, [&](LL t) { return 1e-5 * nr[t]; });
    check(r, kn + ".cs", cs.download(), [&](LL j) { return col[j]; }, [&](LL j) { return 1e-5 * col[j]; });
    check(r, kn + ".rs", rsd.download(), [&](LL) { return rsum; }, [&](LL) { return 1e-5 * rsum; });
    check(r, kn + ".cv", cvd.download(), [&](LL j) { return ncv[j]; }, [&](LL j) { return 1e-5 * ncv[j]; });
    auto step = [&](LL i) { return lr * g[i] / std::sqrt(nr[i / C] * ncv[i % C] / (rsum / R)); };
    check(r, kn + ".w", wd_.download(), [&](LL i) { return w[i] - step(i); },
          [&](LL i) { return 1e-6 * std::fabs(w[i]) + 3e-5 * std::fabs(step(i)) + 1e-9; });
  }
  end_case(r, kn + " " + dims({R, C}), before);
}

// ================================================================ GEMM backward (single GPU) ==
// f32 accumulation over K: 1e-5 of the products' magnitude (sets 19 / 20); a bf16 / f16 output adds kBf / kHf.

// linear_bwd_dx (kn: the template, or "/general"): dx = bf16(dy w), w [O, I].
void linear_dx(const Run& r, const std::string& kn, LL T, LL O, LL I, unsigned seed) {
  const auto dy = rnd<bf16>(T * O, seed), w = rnd<bf16>(O * I, seed + 1);
  DevLocal<bf16> dyd({T, O}, dy), wd({O, I}, w), dx({T, I}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, dyd.view(), wd.view(), dx.view())) {
    const auto p = gemm(T, I, O, [&](LL m, LL q) { return val(dy[m * O + q]); }, [&](LL q, LL n) { return val(w[q * I + n]); });
    check(r, kn + ".dx", dx.download(), [&](LL i) { return p.c[i]; }, [&](LL i) { return kBf * std::fabs(p.c[i]) + 1e-5 * p.mag[i]; });
  }
  end_case(r, kn + " " + dims({T, O, I}) + (I % 8 || O % 8 ? " (general twin)" : ""), before);
}

// linear_bwd_dw_accum_f32: main_grad += dyᵀ x in place (one launch; starts with random values).
void linear_dw_accum(const Run& r, const std::string& kn, LL T, LL O, LL I, unsigned seed) {
  const auto dy = rnd<bf16>(T * O, seed), x = rnd<bf16>(T * I, seed + 1);
  const auto g0 = rnd<float>(O * I, seed + 2, -4.f, 4.f);
  DevLocal<bf16> dyd({T, O}, dy), xd({T, I}, x);
  DevLocal<float> mg({O, I}, g0);
  const int before = begin_case(r);
  if (run(r, kn, 1, dyd.view(), xd.view(), mg.view())) {
    const auto p = gemm(O, I, T, [&](LL m, LL t) { return val(dy[t * O + m]); }, [&](LL t, LL n) { return val(x[t * I + n]); });
    check(r, kn + ".main_grad", mg.download(), [&](LL i) { return g0[i] + p.c[i]; },
          [&](LL i) { return 1e-5 * (p.mag[i] + std::fabs(g0[i])) + 1e-6; });
  }
  end_case(r, kn + " " + dims({T, O, I}) + (I % 8 || O % 8 ? " (general twin)" : ""), before);
}

// linear_bwd_dw_unscale_wd: dw = bf16(dyᵀ x inv_scale + wd w).
void linear_dw_unscale(const Run& r, LL T, LL O, LL I, unsigned seed) {
  const std::string kn = "linear_bwd_dw_unscale_wd";
  const float inv_scale = 1.0f / 1024.0f, wdc = 0.01f;
  const auto dy = rnd<bf16>(T * O, seed, -64.f, 64.f), x = rnd<bf16>(T * I, seed + 1), w = rnd<bf16>(O * I, seed + 2);
  DevLocal<bf16> dyd({T, O}, dy), xd({T, I}, x), wd({O, I}, w), dw({O, I}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, dyd.view(), xd.view(), wd.view(), dw.view(), inv_scale, wdc)) {
    const auto p = gemm(O, I, T, [&](LL m, LL t) { return val(dy[t * O + m]); }, [&](LL t, LL n) { return val(x[t * I + n]); });
    auto want = [&](LL i) { return p.c[i] * inv_scale + wdc * val(w[i]); };
    check(r, kn + ".dw", dw.download(), want,
          [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * (p.mag[i] * inv_scale + wdc * std::fabs(val(w[i]))); });
  }
  end_case(r, kn + " " + dims({T, O, I}) + (I % 8 || O % 8 ? " (general twin)" : ""), before);
}

// linear_bwd_dx_wt_f16: dx = f16(dy wtᵀ), wt [I, O], all f16.
void linear_dx_wt_f16(const Run& r, const std::string& kn, LL T, LL O, LL I, unsigned seed) {
  const auto dy = rnd<f16>(T * O, seed), wt = rnd<f16>(I * O, seed + 1);
  DevLocal<f16> dyd({T, O}, dy), wd({I, O}, wt), dx({T, I}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, dyd.view(), wd.view(), dx.view())) {
    const auto p = gemm(T, I, O, [&](LL m, LL q) { return val(dy[m * O + q]); }, [&](LL q, LL n) { return val(wt[n * O + q]); });
    check(r, kn + ".dx", dx.download(), [&](LL i) { return p.c[i]; }, [&](LL i) { return kHf * std::fabs(p.c[i]) + 1e-5 * p.mag[i]; });
  }
  end_case(r, kn + " " + dims({T, O, I}) + (I % 8 || O % 8 ? " (general twin)" : ""), before);
}

// linear_bwd_dx_db: two launches (the column sum, then the GEMM template); db = column sums of dy.
void linear_dx_db(const Run& r, LL T, LL O, LL I, unsigned seed) {
  const std::string kn = "linear_bwd_dx_db";
  const auto dy = rnd<bf16>(T * O, seed), w = rnd<bf16>(O * I, seed + 1);
  DevLocal<bf16> dyd({T, O}, dy), wd({O, I}, w), dx({T, I}, {});
  DevLocal<float> db({1, O}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, dyd.view(), wd.view(), dx.view(), db.view())) {
    const auto p = gemm(T, I, O, [&](LL m, LL q) { return val(dy[m * O + q]); }, [&](LL q, LL n) { return val(w[q * I + n]); });
    std::vector<double> s(O, 0.0), mag(O, 0.0);
    for (LL i = 0; i < T * O; ++i) s[i % O] += val(dy[i]), mag[i % O] += std::fabs(val(dy[i]));
    check(r, kn + ".dx", dx.download(), [&](LL i) { return p.c[i]; }, [&](LL i) { return kBf * std::fabs(p.c[i]) + 1e-5 * p.mag[i]; });
    check(r, kn + ".db", db.download(), [&](LL j) { return s[j]; }, [&](LL j) { return 1e-5 * mag[j] + 1e-7; });
  }
  end_case(r, kn + " " + dims({T, O, I}) + (I % 8 || O % 8 ? " (general twin)" : ""), before);
}

// ================================================================ clipping and loss scaling (multi-rank) ==

// clip_global_norm_two_tensors: ss = the sum over ranks of both tensors' squares (f32 atomics and an all-reduce:
// all terms positive, so 1e-5 of ss); norm_out = sqrt(ss); g0, g1 scaled by coef in place (coef's relative
// error follows ss's: 1e-5). `factor`: max_norm as a multiple of the true norm (< 1 clips; 1e6 leaves g exact).
void clip_two(const Run& r, LL N, LL R, LL C, double factor, unsigned seed) {
  const std::string kn = "clip_global_norm_two_tensors";
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> g0(W);
  std::vector<std::vector<bf16>> g1(W);
  double ss = 0;
  for (int p = 0; p < W; ++p) {
    g0[p] = rnd<float>(N, rs(seed, p)), g1[p] = rnd<bf16>(R * C, rs(seed + 1, p));
    for (float v : g0[p]) ss += double(v) * v;
    for (bf16 v : g1[p]) ss += val(v) * val(v);
  }
  const float max_norm = float(factor * std::sqrt(ss));
  const double coef = std::min(1.0, max_norm / (std::sqrt(ss) + 1e-6));
  DevLocal<float> g0d({N}, g0[me]), nrm({1, 1}, {});
  DevLocal<bf16> g1d({R, C}, g1[me]);
  SymArg<float> ssd(r.ctx, {1, 1}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 1, g0d.view(), g1d.view(), ssd.view, nrm.view(), max_norm)) {
    const double rel = coef < 1 ? 1e-5 : 0.0;  // no clipping: coef = 1 exactly, g unchanged
    check(r, kn + ".ss", ssd.download(), [&](LL) { return ss; }, [&](LL) { return 1e-5 * ss; });
    check(r, kn + ".norm_out", nrm.download(), [&](LL) { return std::sqrt(ss); }, [&](LL) { return 1e-5 * std::sqrt(ss); });
    check(r, kn + ".g0", g0d.download(), [&](LL i) { return g0[me][i] * coef; }, [&](LL i) { return rel * std::fabs(g0[me][i] * coef); });
    check(r, kn + ".g1", g1d.download(), [&](LL i) { return val(g1[me][i]) * coef; },
          [&](LL i) { return coef < 1 ? (kBf + rel) * std::fabs(val(g1[me][i]) * coef) : 0.0; });
  }
  end_case(r, kn + " " + dims({N, R, C}) + (factor < 1 ? " clipped" : " not clipped"), before);
}

// amp_unscale_skip_step: `bad` plants an inf (1: in rank W - 1's last element, the partial tile) or a NaN (2: in
// rank 0's first element); 0 plants nothing. flags[j] = max over ranks of tile j's flag (exact); the step is
// skipped on every rank (w bit for bit unchanged) and the scale halved when any rank overflowed.
void amp_skip(const Run& r, LL N, int bad, unsigned seed) {
  const std::string kn = "amp_unscale_skip_step";
  const int W = r.W, me = r.me;
  const LL nt = (N + 2047) / 2048;
  const float lr = 0.1f, scale = 1000.f;
  std::vector<std::vector<f16>> g(W);
  for (int p = 0; p < W; ++p) g[p] = rnd<f16>(N, rs(seed, p), -1000.f, 1000.f);
  f16 inf, nan;
  inf.bits = 0x7c00, nan.bits = 0x7e00;
  LL bad_tile = -1;
  if (bad == 1) g[W - 1][N - 1] = inf, bad_tile = nt - 1;
  if (bad == 2) g[0][0] = nan, bad_tile = 0;
  const auto w = rnd<float>(N, rs(seed + 1, me));
  DevLocal<f16> gd({N}, g[me]);
  DevLocal<float> wd({N}, w), sc({1, 1}, {scale});
  SymArg<float> flags(r.ctx, {1, nt}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 1, gd.view(), wd.view(), flags.view, sc.view(), lr)) {
    const bool found = bad != 0;
    check(r, kn + ".flags", flags.download(), [&](LL j) { return j == bad_tile ? 1.0 : 0.0; }, exact());
    check(r, kn + ".w", wd.download(), [&](LL i) { return found ? double(w[i]) : w[i] - lr * val(g[me][i]) / scale; },
          [&](LL i) { return found ? 0.0 : 1e-6 * (std::fabs(w[i]) + lr * std::fabs(val(g[me][i])) / scale); });
    check(r, kn + ".scale", sc.download(), [&](LL) { return found ? scale / 2.0 : double(scale); }, exact());
  }
  end_case(r, kn + " " + dims({N}) + (bad == 0 ? " finite" : bad == 1 ? " inf on the last rank" : " NaN on rank 0"), before);
}

// loss_scale_hysteresis: i32 state [good, hyst] and the scale after one step, emulated from the comment;
// tf[j] = max over ranks of tile j's overflow flag (exact). `ovf_rank`: the rank whose g16 holds an inf in
// its last element (-1: none).
void loss_scale_hyst(const Run& r, LL N, int good, int hyst, float scale, int ovf_rank, LL window, LL hyst0,
                     unsigned seed) {
  const std::string kn = "loss_scale_hysteresis";
  const int me = r.me;
  const LL nt = (N + 4095) / 4096;
  auto g = rnd<f16>(N, rs(seed, me), -100.f, 100.f);
  const bool ovf = ovf_rank >= 0 && ovf_rank < r.W;
  if (ovf && me == ovf_rank) g[N - 1].bits = 0xfc00;  // -inf
  DevLocal<f16> gd({N}, g);
  DevLocal<int> st({1, 2}, {good, hyst});
  DevLocal<float> sc({1, 1}, {scale});
  SymArg<int> tf(r.ctx, {1, nt}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 1, gd.view(), tf.view, st.view(), sc.view(), window, hyst0)) {
    // The comment's update.
    double s = scale;
    int ng = good, nh = hyst;
    if (ovf) {
      nh = std::max(hyst - 1, 0), ng = 0;
      if (nh <= 0) s = std::max(double(scale) / 2, 1.0);
    } else {
      ng = good + 1;
      if (ng == window) s = 2.0 * scale, ng = 0, nh = int(hyst0);
    }
    check(r, kn + ".tf", tf.download(), [&](LL j) { return ovf && j == nt - 1 ? 1.0 : 0.0; }, exact());
    const std::vector<double> ws = {double(ng), double(nh)};
    check(r, kn + ".state", st.download(), [&](LL i) { return ws[i]; }, exact());
    check(r, kn + ".scale", sc.download(), [&](LL) { return s; }, exact());
  }
  end_case(r, kn + " " + dims({N}) + " good " + std::to_string(good) + " hyst " + std::to_string(hyst) + " scale " +
                  std::to_string(scale) + (ovf ? " overflow on rank " + std::to_string(ovf_rank) : " finite"),
           before);
}

// ================================================================ ZeRO / FSDP / DDP (multi-rank) ==

// zero2_rs_adamw_ag: gsh = this rank's shard of the bf16 sum (fp32 combine, one rounding: kBf |sum| + 1e-6 mag);
// AdamW on the shard from the device's gsh (so its rounding does not count twice); psh = bf16(master) bit for
// bit; params = every rank's psh, shared through host memory.
void zero2(const Run& r, LL sh, unsigned seed) {
  const std::string kn = "zero2_rs_adamw_ag";
  const int W = r.W, me = r.me;
  const LL N = W * sh;
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.1f;
  const float bc1 = 1.0f - std::pow(0.9f, 5.0f), bc2 = 1.0f - std::pow(0.999f, 5.0f);
  std::vector<std::vector<bf16>> grad(W);
  for (int p = 0; p < W; ++p) grad[p] = rnd<bf16>(N, rs(seed, p));
  const auto ms = rnd<float>(sh, rs(seed + 1, me)), m = rnd<float>(sh, rs(seed + 2, me), -0.1f, 0.1f),
             v = rnd<float>(sh, rs(seed + 3, me), 1e-4f, 1e-2f);
  SymArg<bf16> gd(r.ctx, {N}, &grad[me]), gsh(r.ctx, {sh}, nullptr), psh(r.ctx, {sh}, nullptr), params(r.ctx, {N}, nullptr);
  DevLocal<float> msd({sh}, ms), md({sh}, m), vd({sh}, v);
  const int before = begin_case(r);
  const bool ok = run(r, kn, 1, gd.view, gsh.view, msd.view(), md.view(), vd.view(), psh.view, params.view, lr, b1, b2, eps,
                      wd, bc1, bc2);
  const auto gp = psh.download();
  const auto all = share(r, bits_of(gp));
  if (ok) {
    const auto gs = gsh.download();
    check(r, kn + ".gsh", gs, [&](LL i) {
      double s = 0;
      for (int p = 0; p < W; ++p) s += val(grad[p][me * sh + i]);
      return s;
    }, [&](LL i) {
      double s = 0, a = 0;
      for (int p = 0; p < W; ++p) s += val(grad[p][me * sh + i]), a += std::fabs(val(grad[p][me * sh + i]));
      return kBf * std::fabs(s) + 1e-6 * a;
    });
    std::vector<Adam> a(sh);
    for (LL i = 0; i < sh; ++i)
      a[i] = adam(ms[i], val(gs[i]) * double(1.0f / float(W)), m[i], v[i], lr, b1, b2, eps, wd, bc1, bc2);
    check(r, kn + ".m", md.download(), [&](LL i) { return a[i].m; }, [&](LL i) { return tol_m(a[i]); });
    check(r, kn + ".v", vd.download(), [&](LL i) { return a[i].v; }, [&](LL i) { return tol_v(a[i]); });
    const auto nm = msd.download();
    check(r, kn + ".master", nm, [&](LL i) { return a[i].w; }, [&](LL i) { return tol_w(a[i], ms[i], lr); });
    check(r, kn + ".psh", gp, [&](LL i) { return bf16r(nm[i]); }, exact());
    check(r, kn + ".params", params.download(), [&](LL i) { return bf16_bits(all[i / sh][i % sh]); }, exact());
  }
  end_case(r, kn + " shard " + std::to_string(sh), before);
}

// fsdp_inplace_rs_sgd_ag: g reduce-scattered in place (chunk me checked: the sum, 1e-6 of its magnitude);
// buf and master from it; p, all-gathered in place, holds bf16 of every rank's new master on every rank
// (including the element after chunk me, which this rank's partial last tile wrote as padding first).
void fsdp_inplace(const Run& r, LL sh, unsigned seed) {
  const std::string kn = "fsdp_inplace_rs_sgd_ag";
  const int W = r.W, me = r.me;
  const LL N = W * sh;
  const float lr = 0.05f, mu = 0.9f;
  std::vector<std::vector<float>> g(W);
  for (int p = 0; p < W; ++p) g[p] = rnd<float>(N, rs(seed, p));
  const auto b0 = rnd<float>(sh, rs(seed + 1, me)), m0 = rnd<float>(sh, rs(seed + 2, me));
  SymArg<float> gd(r.ctx, {N}, &g[me]);
  SymArg<bf16> pd(r.ctx, {N}, nullptr);
  DevLocal<float> bd({sh}, b0), md({sh}, m0);
  const int before = begin_case(r);
  const bool ok = run(r, kn, 1, gd.view, bd.view(), md.view(), pd.view, lr, mu);
  const auto nm = md.download();
  const auto all = share(r, bits_of(nm));
  if (ok) {
    std::vector<double> s(sh, 0.0), mag(sh, 0.0);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < sh; ++i) s[i] += g[p][me * sh + i], mag[i] += std::fabs(g[p][me * sh + i]);
    const auto gg = gd.download();
    check(r, kn + ".g (own chunk)", std::vector<float>(gg.begin() + me * sh, gg.begin() + (me + 1) * sh),
          [&](LL i) { return s[i]; }, [&](LL i) { return 1e-6 * mag[i]; });
    auto b = [&](LL i) { return mu * double(b0[i]) + s[i] / W; };
    check(r, kn + ".buf", bd.download(), b, [&](LL i) { return 1e-6 * (std::fabs(mu * b0[i]) + mag[i] / W) + 1e-12; });
    check(r, kn + ".master", nm, [&](LL i) { return m0[i] - lr * b(i); },
          [&](LL i) { return 1e-6 * (std::fabs(m0[i]) + lr * (std::fabs(mu * b0[i]) + mag[i] / W)) + 1e-12; });
    check(r, kn + ".p", pd.download(), [&](LL i) { return bf16r(f32_bits(all[i / sh][i % sh])); }, exact());
  }
  end_case(r, kn + " shard " + std::to_string(sh), before);
}

// fsdp_rows_rs_sgd_ag: gsh16 = row block me of the bf16 sum (one rounding); w from the device's gsh16; wsh =
// bf16(w); wfull (a local tensor) = every rank's wsh.
void fsdp_rows(const Run& r, LL Rl, LL C, unsigned seed) {
  const std::string kn = "fsdp_rows_rs_sgd_ag";
  const int W = r.W, me = r.me;
  const LL R = W * Rl, n = Rl * C;
  const float lr = 0.05f;
  std::vector<std::vector<bf16>> grad(W);
  for (int p = 0; p < W; ++p) grad[p] = rnd<bf16>(R * C, rs(seed, p));
  const auto w0 = rnd<float>(n, rs(seed + 1, me));
  SymArg<bf16> gd(r.ctx, {R, C}, &grad[me]), gsh(r.ctx, {Rl, C}, nullptr), wsh(r.ctx, {Rl, C}, nullptr);
  DevLocal<float> wd({Rl, C}, w0);
  DevLocal<bf16> wfull({R, C}, {});
  const int before = begin_case(r);
  const bool ok = run(r, kn, 1, gd.view, gsh.view, wd.view(), wsh.view, wfull.view(), lr);
  const auto ws = wsh.download();
  const auto all = share(r, bits_of(ws));
  if (ok) {
    const auto gs = gsh.download();
    check(r, kn + ".gsh16", gs, [&](LL i) {
      double s = 0;
      for (int p = 0; p < W; ++p) s += val(grad[p][me * n + i]);
      return s;
    }, [&](LL i) {
      double s = 0, a = 0;
      for (int p = 0; p < W; ++p) s += val(grad[p][me * n + i]), a += std::fabs(val(grad[p][me * n + i]));
      return kBf * std::fabs(s) + 1e-6 * a;
    });
    const auto nw = wd.download();
    const double inv_w = double(1.0f / float(W));
    check(r, kn + ".w", nw, [&](LL i) { return w0[i] - lr * inv_w * val(gs[i]); },
          [&](LL i) { return 1e-6 * (std::fabs(w0[i]) + lr * std::fabs(val(gs[i]))); });
    check(r, kn + ".wsh", ws, [&](LL i) { return bf16r(nw[i]); }, exact());
    check(r, kn + ".wfull", wfull.download(), [&](LL i) { return bf16_bits(all[i / n][i % n]); }, exact());
  }
  end_case(r, kn + " " + dims({Rl, C}), before);
}

// zero_cols_rs_sgd_ag: column block me of the f32 sum; w -= lr gsh; wsh = w; wfull[:, j cw + c] = rank j's w.
void zero_cols(const Run& r, LL R, LL cw, unsigned seed) {
  const std::string kn = "zero_cols_rs_sgd_ag";
  const int W = r.W, me = r.me;
  const LL C = W * cw;
  const float lr = 0.05f;
  std::vector<std::vector<float>> grad(W);
  for (int p = 0; p < W; ++p) grad[p] = rnd<float>(R * C, rs(seed, p));
  const auto w0 = rnd<float>(R * cw, rs(seed + 1, me));
  SymArg<float> gd(r.ctx, {R, C}, &grad[me]), gsh(r.ctx, {R, cw}, nullptr), wsh(r.ctx, {R, cw}, nullptr),
      wfull(r.ctx, {R, C}, nullptr);
  DevLocal<float> wd({R, cw}, w0);
  const int before = begin_case(r);
  const bool ok = run(r, kn, 1, gd.view, gsh.view, wd.view(), wsh.view, wfull.view, lr);
  const auto nw = wd.download();
  const auto all = share(r, bits_of(nw));
  if (ok) {
    std::vector<double> s(R * cw, 0.0), mag(R * cw, 0.0);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < R * cw; ++i) {
        const float v = grad[p][(i / cw) * C + me * cw + i % cw];
        s[i] += v, mag[i] += std::fabs(v);
      }
    check(r, kn + ".gsh", gsh.download(), [&](LL i) { return s[i]; }, [&](LL i) { return 1e-6 * mag[i]; });
    check(r, kn + ".w", nw, [&](LL i) { return w0[i] - lr * s[i]; },
          [&](LL i) { return 1e-6 * (std::fabs(w0[i]) + lr * mag[i]); });
    check(r, kn + ".wsh", wsh.download(), [&](LL i) { return double(nw[i]); }, exact());
    check(r, kn + ".wfull", wfull.download(), [&](LL i) {
      const LL row = i / C, j = i % C / cw, c = i % cw;
      return f32_bits(all[j][row * cw + c]);
    }, exact());
  }
  end_case(r, kn + " " + dims({R, cw}), before);
}

// zero_cols_inplace_sgd: x reduce-scattered in place along dimension 1, w from block me, x all-gathered in
// place: every block of x on every rank is its rank's new w (this rank's partial column tile stored padding
// into block me + 1 of its own copy first).
void zero_cols_inplace(const Run& r, LL R, LL cw, unsigned seed) {
  const std::string kn = "zero_cols_inplace_sgd";
  const int W = r.W, me = r.me;
  const LL C = W * cw;
  const float lr = 0.05f;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(R * C, rs(seed, p));
  const auto w0 = rnd<float>(R * cw, rs(seed + 1, me));
  SymArg<float> xd(r.ctx, {R, C}, &x[me]);
  DevLocal<float> wd({R, cw}, w0);
  const int before = begin_case(r);
  const bool ok = run(r, kn, 1, xd.view, wd.view(), lr);
  const auto nw = wd.download();
  const auto all = share(r, bits_of(nw));
  if (ok) {
    std::vector<double> s(R * cw, 0.0), mag(R * cw, 0.0);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < R * cw; ++i) {
        const float v = x[p][(i / cw) * C + me * cw + i % cw];
        s[i] += v, mag[i] += std::fabs(v);
      }
    check(r, kn + ".w", nw, [&](LL i) { return w0[i] - lr * s[i]; }, [&](LL i) { return 1e-6 * (std::fabs(w0[i]) + lr * mag[i]); });
    check(r, kn + ".x", xd.download(), [&](LL i) { return f32_bits(all[i % C / cw][(i / C) * cw + i % cw]); }, exact());
  }
  end_case(r, kn + " " + dims({R, cw}), before);
}

// ddp_bucket_pack_allreduce_unpack: g_k = sum over ranks of f32(g_k / W) (1e-6 of the magnitude). The bucket:
// the sums at the whole-tile offsets, zeros in the gaps (each gradient's last tile stores its padding zeros up
// to the next offset, and past N2 up to the last tile's end), and its 5 elements past that untouched (NaN
// summed stays NaN).
void ddp_bucket(const Run& r, LL N0, LL N1, LL N2, unsigned seed) {
  const std::string kn = "ddp_bucket_pack_allreduce_unpack";
  const int W = r.W, me = r.me;
  auto up = [](LL n) { return (n + 1023) / 1024 * 1024; };
  const LL n[3] = {N0, N1, N2}, o[3] = {0, up(N0), up(N0) + up(N1)}, B = o[2] + up(N2) + 5;
  std::vector<std::vector<float>> g[3];
  for (int k = 0; k < 3; ++k)
    for (int p = 0; p < W; ++p) g[k].push_back(rnd<float>(n[k], rs(seed + k, p)));
  DevLocal<float> g0({N0}, g[0][me]), g1({N1}, g[1][me]), g2({N2}, g[2][me]);
  SymArg<float> bucket(r.ctx, {B}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 1, g0.view(), g1.view(), g2.view(), bucket.view)) {
    const float inv_w = 1.0f / float(W);
    std::vector<double> want(B, 0.0), mag(B, 0.0);
    for (LL i = o[2] + up(N2); i < B; ++i) want[i] = kNaN;
    std::vector<double> sums[3];
    for (int k = 0; k < 3; ++k) {
      sums[k].assign(n[k], 0.0);
      for (LL i = 0; i < n[k]; ++i) {
        for (int p = 0; p < W; ++p) sums[k][i] += double(g[k][p][i] * inv_w), mag[o[k] + i] += std::fabs(g[k][p][i] * inv_w);
        want[o[k] + i] = sums[k][i];
      }
    }
    const DevLocal<float>* gd[3] = {&g0, &g1, &g2};
    for (int k = 0; k < 3; ++k)
      check(r, kn + ".g" + std::to_string(k), gd[k]->download(), [&](LL i) { return sums[k][i]; },
            [&](LL i) { return 1e-6 * mag[o[k] + i]; });
    check_or_poison(r, kn + ".bucket", bucket.download(), want, [&](LL i) { return 1e-6 * mag[i]; });
  }
  end_case(r, kn + " " + dims({N0, N1, N2}), before);
}

// ddp_bf16_compress_accumulate: c = the sum over ranks of bf16(g / W) (fp32 combine, one rounding); main +=
// f32(c) (from the device's c: one f32 add).
void ddp_bf16(const Run& r, LL R, LL C, unsigned seed) {
  const std::string kn = "ddp_bf16_compress_accumulate";
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> g(W);
  for (int p = 0; p < W; ++p) g[p] = rnd<float>(R * C, rs(seed, p), -4.f, 4.f);
  const auto m0 = rnd<float>(R * C, rs(seed + 1, me));
  DevLocal<float> gd({R, C}, g[me]), md({R, C}, m0);
  SymArg<bf16> c(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 1, gd.view(), c.view, md.view())) {
    const float inv_w = 1.0f / float(W);
    const auto gc = c.download();
    check(r, kn + ".c", gc, [&](LL i) {
      double s = 0;
      for (int p = 0; p < W; ++p) s += bf16r(g[p][i] * inv_w);
      return s;
    }, [&](LL i) {
      double s = 0, a = 0;
      for (int p = 0; p < W; ++p) s += bf16r(g[p][i] * inv_w), a += std::fabs(g[p][i] * inv_w);
      return kBf * std::fabs(s) + 1e-6 * a;
    });
    check(r, kn + ".main", md.download(), [&](LL i) { return m0[i] + val(gc[i]); },
          [&](LL i) { return 1e-7 * (std::fabs(m0[i]) + std::fabs(val(gc[i]))); });
  }
  end_case(r, kn + " " + dims({R, C}), before);
}

// ddp_per_layer_buckets: one launch call, a host loop of L launches: grads[l] = sum over ranks of f32(grads[l] / W);
// bucket ends with the last layer's sum.
void ddp_layers(const Run& r, LL L, LL N, unsigned seed) {
  const std::string kn = "ddp_per_layer_buckets";
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> g(W);
  for (int p = 0; p < W; ++p) g[p] = rnd<float>(L * N, rs(seed, p));
  DevLocal<float> gd({L, N}, g[me]);
  SymArg<float> bucket(r.ctx, {1, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 1, gd.view(), bucket.view)) {
    const float inv_w = 1.0f / float(W);
    std::vector<double> s(L * N, 0.0), mag(L * N, 0.0);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < L * N; ++i) s[i] += double(g[p][i] * inv_w), mag[i] += std::fabs(g[p][i] * inv_w);
    check(r, kn + ".grads", gd.download(), [&](LL i) { return s[i]; }, [&](LL i) { return 1e-6 * mag[i]; });
    check(r, kn + ".bucket", bucket.download(), [&](LL i) { return s[(L - 1) * N + i]; },
          [&](LL i) { return 1e-6 * mag[(L - 1) * N + i]; });
  }
  end_case(r, kn + " " + dims({L, N}), before);
}

// lamb_sharded: m, v, u on the shard; nn = [sum w^2, sum u^2] over every rank's shard (positive terms: 1e-5 of
// each); w -= lr ratio u. `zero_w`: w = 0 on every rank, so |w| = 0 and ratio = 1 (the comment's guard).
void lamb(const Run& r, LL S, bool zero_w, unsigned seed) {
  const std::string kn = "lamb_sharded";
  const int W = r.W, me = r.me;
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-6f, wd = 0.01f;
  std::vector<std::vector<float>> w(W), g(W), m(W), v(W);
  for (int p = 0; p < W; ++p) {
    w[p] = zero_w ? std::vector<float>(S, 0.f) : rnd<float>(S, rs(seed, p));
    g[p] = rnd<float>(S, rs(seed + 1, p), -0.5f, 0.5f), m[p] = rnd<float>(S, rs(seed + 2, p), -0.1f, 0.1f);
    v[p] = rnd<float>(S, rs(seed + 3, p), 1e-4f, 1e-2f);
  }
  DevLocal<float> wd_({S}, w[me]), gd({S}, g[me]), md({S}, m[me]), vd({S}, v[me]), ud({S}, {});
  SymArg<float> nn(r.ctx, {1, 2}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 1, wd_.view(), gd.view(), md.view(), vd.view(), ud.view(), nn.view, lr, b1, b2, eps, wd)) {
    double ww = 0, uu = 0;
    std::vector<Adam> own;
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < S; ++i) {
        const Adam a = adam(w[p][i], g[p][i], m[p][i], v[p][i], 0, b1, b2, eps, wd, 1, 1);
        const double u = a.m / (std::sqrt(a.v) + eps) + wd * double(w[p][i]);
        ww += double(w[p][i]) * w[p][i], uu += u * u;
        if (p == me) own.push_back(a);
      }
    const double ratio = ww > 0 && uu > 0 ? std::sqrt(ww) / std::sqrt(uu) : 1.0;
    auto u = [&](LL i) { return own[i].m / (std::sqrt(own[i].v) + eps) + wd * double(w[me][i]); };
    check(r, kn + ".m", md.download(), [&](LL i) { return own[i].m; }, [&](LL i) { return tol_m(own[i]); });
    check(r, kn + ".v", vd.download(), [&](LL i) { return own[i].v; }, [&](LL i) { return tol_v(own[i]); });
    check(r, kn + ".u", ud.download(), u, [&](LL i) { return 1e-5 * own[i].u + 1e-9; });
    check(r, kn + ".nn", nn.download(), [&](LL i) { return i ? uu : ww; }, [&](LL i) { return 1e-5 * (i ? uu : ww); });
    check(r, kn + ".w", wd_.download(), [&](LL i) { return w[me][i] - lr * ratio * u(i); },
          [&](LL i) { return 1e-6 * std::fabs(w[me][i]) + 3e-5 * lr * ratio * own[i].u + 1e-9; });
  }
  end_case(r, kn + " shard " + std::to_string(S) + (zero_w ? " w = 0" : ""), before);
}

// zero1_clip_adam: gsh the f32 shard sum (1e-6 mag); ss = sum over ranks of (gsh / W)^2 (1e-5 of it); Adam on
// g = gsh / W coef from the device's gsh; wsh = bf16(w) bit for bit; wfull = every rank's wsh. `factor`:
// max_norm as a multiple of the true norm.
void zero1_clip(const Run& r, LL sh, double factor, unsigned seed) {
  const std::string kn = "zero1_clip_adam";
  const int W = r.W, me = r.me;
  const LL N = W * sh;
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
  std::vector<std::vector<float>> grad(W);
  for (int p = 0; p < W; ++p) grad[p] = rnd<float>(N, rs(seed, p));
  double ss = 0;
  for (LL i = 0; i < N; ++i) {
    double s = 0;
    for (int p = 0; p < W; ++p) s += grad[p][i];
    ss += (s / W) * (s / W);
  }
  const float max_norm = float(factor * std::sqrt(ss));
  const auto w0 = rnd<float>(sh, rs(seed + 1, me)), m0 = rnd<float>(sh, rs(seed + 2, me), -0.1f, 0.1f),
             v0 = rnd<float>(sh, rs(seed + 3, me), 1e-4f, 1e-2f);
  SymArg<float> gd(r.ctx, {N}, &grad[me]), gsh(r.ctx, {sh}, nullptr), ssd(r.ctx, {1, 1}, nullptr);
  SymArg<bf16> wsh(r.ctx, {sh}, nullptr), wfull(r.ctx, {N}, nullptr);
  DevLocal<float> wd({sh}, w0), md({sh}, m0), vd({sh}, v0);
  const int before = begin_case(r);
  const bool ok = run(r, kn, 1, gd.view, gsh.view, ssd.view, wd.view(), md.view(), vd.view(), wsh.view, wfull.view, lr, b1,
                      b2, eps, max_norm);
  const auto ws = wsh.download();
  const auto all = share(r, bits_of(ws));
  if (ok) {
    const auto gs = gsh.download();
    check(r, kn + ".gsh", gs, [&](LL i) {
      double s = 0;
      for (int p = 0; p < W; ++p) s += grad[p][me * sh + i];
      return s;
    }, [&](LL i) {
      double a = 0;
      for (int p = 0; p < W; ++p) a += std::fabs(grad[p][me * sh + i]);
      return 1e-6 * a;
    });
    check(r, kn + ".ss", ssd.download(), [&](LL) { return ss; }, [&](LL) { return 1e-5 * ss; });
    const double coef = std::min(1.0, max_norm / (std::sqrt(ss) + 1e-6));
    std::vector<Adam> a(sh);
    for (LL i = 0; i < sh; ++i) a[i] = adam(w0[i], gs[i] / double(W) * coef, m0[i], v0[i], lr, b1, b2, eps, 0, 1, 1);
    // coef carries ss's 1e-5: m and v 1e-5 of their magnitude more.
    check(r, kn + ".m", md.download(), [&](LL i) { return a[i].m; }, [&](LL i) { return tol_m(a[i]) + 1e-5 * a[i].mmag; });
    check(r, kn + ".v", vd.download(), [&](LL i) { return a[i].v; }, [&](LL i) { return tol_v(a[i]) + 2e-5 * a[i].vmag; });
    const auto nw = wd.download();
    check(r, kn + ".w", nw, [&](LL i) { return a[i].w; }, [&](LL i) { return tol_w(a[i], w0[i], lr); });
    check(r, kn + ".wsh", ws, [&](LL i) { return bf16r(nw[i]); }, exact());
    check(r, kn + ".wfull", wfull.download(), [&](LL i) { return bf16_bits(all[i / sh][i % sh]); }, exact());
  }
  end_case(r, kn + " shard " + std::to_string(sh) + (factor < 1 ? " clipped" : " not clipped"), before);
}

// reduce_scatter_by_adds: gsh on rank me = sum over ranks of their rows [me sh, (me + 1) sh) (f32 atomics in any
// order: 1e-6 of the magnitude for W <= 4 terms). Launched twice: the zeroing phase re-zeroes.
void rs_by_adds(const Run& r, LL sh, LL C, unsigned seed) {
  const std::string kn = "reduce_scatter_by_adds";
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> g(W);
  for (int p = 0; p < W; ++p) g[p] = rnd<float>(W * sh * C, rs(seed, p));
  DevLocal<float> gd({W * sh, C}, g[me]);
  SymArg<float> gsh(r.ctx, {sh, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, gd.view(), gsh.view)) {
    std::vector<double> s(sh * C, 0.0), mag(sh * C, 0.0);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < sh * C; ++i) s[i] += g[p][me * sh * C + i], mag[i] += std::fabs(g[p][me * sh * C + i]);
    check(r, kn + ".gsh", gsh.download(), [&](LL i) { return s[i]; }, [&](LL i) { return 1e-6 * mag[i]; });
  }
  end_case(r, kn + " " + dims({sh, C}), before);
}

// ================================================================ GEMM backward across ranks ==

// Every rank's bf16 [rows, cols] operand p (a fresh seed per rank).
std::vector<std::vector<bf16>> per_rank(int W, LL n, unsigned seed) {
  std::vector<std::vector<bf16>> v(W);
  for (int p = 0; p < W; ++p) v[p] = rnd<bf16>(n, rs(seed, p));
  return v;
}
// Row block me (rows [me Sl, (me + 1) Sl) of [W Sl, I]) of the sum over ranks of bf16-rounded partials P_p,
// with the sum of |P_p| (each partial's rounding and the adds are bounded by it) and of the products' magnitudes.
struct Reduced {
  std::vector<double> s, abs, mag;
};
Reduced reduce_block(int W, int me, LL Sl, LL I, const std::vector<Gemm>& P) {
  Reduced o{std::vector<double>(Sl * I, 0.0), std::vector<double>(Sl * I, 0.0), std::vector<double>(Sl * I, 0.0)};
  for (int p = 0; p < W; ++p)
    for (LL i = 0; i < Sl * I; ++i) {
      const double c = bf16r(P[p].c[me * Sl * I + i]);
      o.s[i] += c, o.abs[i] += std::fabs(c), o.mag[i] += P[p].mag[me * Sl * I + i];
    }
  return o;
}

// sp_column_linear_bwd: x_full = every rank's x_sh (exact); dw = dyᵀ x_full (f32); dxp = bf16(dy w); dx_sh =
// row block me of the sum of every rank's dxp (fp32 combine of bf16 partials: kBf of the partials' sum).
void sp_column_linear(const Run& r, LL Sl, LL Ol, LL I, unsigned seed) {
  const std::string kn = "sp_column_linear_bwd";
  const int W = r.W, me = r.me;
  const LL S = W * Sl;
  const auto x = per_rank(W, Sl * I, seed), dy = per_rank(W, S * Ol, seed + 1), w = per_rank(W, Ol * I, seed + 2);
  SymArg<bf16> xs(r.ctx, {Sl, I}, &x[me]), xf(r.ctx, {S, I}, nullptr), dxp(r.ctx, {S, I}, nullptr), dxs(r.ctx, {Sl, I}, nullptr);
  DevLocal<bf16> dyd({S, Ol}, dy[me]), wd({Ol, I}, w[me]);
  DevLocal<float> dw({Ol, I}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xs.view, xf.view, dyd.view(), wd.view(), dw.view(), dxp.view, dxs.view)) {
    auto xfull = [&](LL t, LL n) { return val(x[t / Sl][(t % Sl) * I + n]); };
    check(r, kn + ".x_full", xf.download(), [&](LL i) { return xfull(i / I, i % I); }, exact());
    const auto g = gemm(Ol, I, S, [&](LL m, LL t) { return val(dy[me][t * Ol + m]); }, xfull);
    check(r, kn + ".dw", dw.download(), [&](LL i) { return g.c[i]; }, [&](LL i) { return 1e-5 * g.mag[i] + 1e-6; });
    std::vector<Gemm> P;
    for (int p = 0; p < W; ++p)
      P.push_back(gemm(S, I, Ol, [&](LL m, LL q) { return val(dy[p][m * Ol + q]); }, [&](LL q, LL n) { return val(w[p][q * I + n]); }));
    check(r, kn + ".dxp", dxp.download(), [&](LL i) { return P[me].c[i]; },
          [&](LL i) { return kBf * std::fabs(P[me].c[i]) + 1e-5 * P[me].mag[i]; });
    const auto red = reduce_block(W, me, Sl, I, P);
    check(r, kn + ".dx_sh", dxs.download(), [&](LL i) { return red.s[i]; },
          [&](LL i) { return W * (1.0 / 256) * red.abs[i] + kBf * std::fabs(red.s[i]) + 1e-5 * red.mag[i]; });
  }
  end_case(r, kn + " " + dims({Sl, Ol, I}) + (I % 8 ? " (general twin)" : ""), before);
}

// sp_row_linear_bwd_dx: dy_full = every rank's dy_sh (exact); dx = bf16(dy_full w).
void sp_row_linear(const Run& r, LL Sl, LL O, LL Il, unsigned seed) {
  const std::string kn = "sp_row_linear_bwd_dx";
  const int W = r.W, me = r.me;
  const LL S = W * Sl;
  const auto dy = per_rank(W, Sl * O, seed);
  const auto w = rnd<bf16>(O * Il, rs(seed + 1, me));
  SymArg<bf16> dys(r.ctx, {Sl, O}, &dy[me]), dyf(r.ctx, {S, O}, nullptr);
  DevLocal<bf16> wd({O, Il}, w), dx({S, Il}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, dys.view, dyf.view, wd.view(), dx.view())) {
    auto full = [&](LL t, LL q) { return val(dy[t / Sl][(t % Sl) * O + q]); };
    check(r, kn + ".dy_full", dyf.download(), [&](LL i) { return full(i / O, i % O); }, exact());
    const auto g = gemm(S, Il, O, full, [&](LL q, LL n) { return val(w[q * Il + n]); });
    check(r, kn + ".dx", dx.download(), [&](LL i) { return g.c[i]; }, [&](LL i) { return kBf * std::fabs(g.c[i]) + 1e-5 * g.mag[i]; });
  }
  end_case(r, kn + " " + dims({Sl, O, Il}) + (Il % 8 ? " (general twin)" : ""), before);
}

// tp_dx_gemm_rs_adds: dx on rank me = sum over ranks of rows [me Sl, (me + 1) Sl) of bf16(dy w), added by bf16
// atomics in any order into a zeroed dx: W 2^-8 of the partials' magnitude sum (see the header), and launched
// twice (the zeroing phase re-zeroes).
void tp_dx_adds(const Run& r, LL Sl, LL Ol, LL I, unsigned seed) {
  const std::string kn = "tp_dx_gemm_rs_adds";
  const int W = r.W, me = r.me;
  const LL S = W * Sl;
  const auto dy = per_rank(W, S * Ol, seed), w = per_rank(W, Ol * I, seed + 1);
  DevLocal<bf16> dyd({S, Ol}, dy[me]), wd({Ol, I}, w[me]);
  SymArg<bf16> dx(r.ctx, {Sl, I}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, dyd.view(), wd.view(), dx.view)) {
    std::vector<Gemm> P;
    for (int p = 0; p < W; ++p)
      P.push_back(gemm(S, I, Ol, [&](LL m, LL q) { return val(dy[p][m * Ol + q]); }, [&](LL q, LL n) { return val(w[p][q * I + n]); }));
    const auto red = reduce_block(W, me, Sl, I, P);
    check(r, kn + ".dx", dx.download(), [&](LL i) { return red.s[i]; },
          [&](LL i) { return W * (1.0 / 256) * red.abs[i] + 1e-5 * red.mag[i]; });
  }
  end_case(r, kn + " " + dims({Sl, Ol, I}), before);
}

// tp_dx_gemm_then_rs: dx_sh = row block me of the sum over ranks of bf16(dy wtᵀ). On the gemm_rs template (the
// Scratch product is never written) each rank's bf16 tile is reduce-added into the zeroed owner (a rounding per
// add, as tp_dx_adds); on the general twin (N % 8 != 0) the reduce-scatter combines in fp32 and rounds once.
void tp_dx_then_rs(const Run& r, LL Sl, LL Ol, LL I, unsigned seed) {
  const std::string kn = "tp_dx_gemm_then_rs";
  const int W = r.W, me = r.me;
  const LL S = W * Sl;
  const auto dy = per_rank(W, S * Ol, seed), wt = per_rank(W, I * Ol, seed + 1);
  DevLocal<bf16> dyd({S, Ol}, dy[me]), wd({I, Ol}, wt[me]);
  SymArg<bf16> dxp(r.ctx, {S, I}, nullptr), dxs(r.ctx, {Sl, I}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, dyd.view(), wd.view(), dxp.view, dxs.view)) {
    std::vector<Gemm> P;
    for (int p = 0; p < W; ++p)
      P.push_back(gemm(S, I, Ol, [&](LL m, LL q) { return val(dy[p][m * Ol + q]); }, [&](LL q, LL n) { return val(wt[p][n * Ol + q]); }));
    const auto red = reduce_block(W, me, Sl, I, P);
    check(r, kn + ".dx_sh", dxs.download(), [&](LL i) { return red.s[i]; },
          [&](LL i) { return W * (1.0 / 256) * red.abs[i] + kBf * std::fabs(red.s[i]) + 1e-5 * red.mag[i]; });
  }
  end_case(r, kn + " " + dims({Sl, Ol, I}) + (I % 8 ? " (general twin)" : ""), before);
}

// ================================================================ the cases ==

void single_gpu_cases(const Run& r) {
  unsigned s = 100;
  // Norm, activation and loss backward: rows short of the 4- to 32-row tiles, columns of the 128- to 1024-wide.
  layernorm_bwd(r, 37, 300, s += 100);
  layernorm_bwd(r, 20, 1000, s += 100);
  layernorm_bwd(r, 1, 1024, s += 100);
  rmsnorm_bwd(r, 37, 700, s += 100);
  rmsnorm_bwd(r, 9, 3000, s += 100);
  rmsnorm_bwd(r, 1, 256, s += 100);
  softmax_bwd(r, 7, 1300, s += 100);
  softmax_bwd(r, 37, 100, s += 100);
  softmax_bwd(r, 1, 512, s += 100);
  gelu_bwd(r, 37, 300, s += 100);
  gelu_bwd(r, 1, 256, s += 100);
  bias_gelu_bwd(r, 37, 300, s += 100);
  bias_gelu_bwd(r, 1, 128, s += 100);
  swiglu_bwd(r, 37, 300, s += 100);
  swiglu_bwd(r, 1, 128, s += 100);
  cross_entropy_fused(r, 37, 2500, -8.f, 8.f, s += 100);
  cross_entropy_fused(r, 3, 1024, -4.f, 4.f, s += 100);
  cross_entropy_fused(r, 5, 100, -30.f, 30.f, s += 100);
  dropout_pair(r, 37, 300, 12345, 0.1f, s += 100);
  dropout_pair(r, 70, 33, (LL(1) << 33) + 7, 0.5f, s += 100);
  dropout_pair(r, 1, 128, -5, 0.25f, s += 100);
  residual_dropout(r, 3, 37, 300, 777, 5, 0.1f, s += 100);
  residual_dropout(r, 1, 1, 128, (LL(1) << 40) - 3, 2, 0.3f, s += 100);
  scaled_masked_softmax(r, 3, 37, 0.125f, s += 100);
  scaled_masked_softmax(r, 2, 300, 0.0883883f, s += 100);
  scaled_masked_softmax(r, 1, 1024, 1.f, s += 100);
  attn_dropout_softmax(r, 37, 99, 0.1f, s += 100);
  attn_dropout_softmax(r, 1500, 2024, 0.2f, s += 100);
  ce_smoothing_bwd(r, 37, 1300, 0.1f, s += 100);
  ce_smoothing_bwd(r, 8, 4096, 0.f, s += 100);
  // Optimizers in place.
  multi_tensor_adamw(r, 5000, 37, 300, 3, s += 100);
  multi_tensor_adamw(r, 2048, 8, 256, 100, s += 100);
  multi_tensor_adamw(r, 1, 1, 1, 1, s += 100);
  adamw_mask(r, 3000, s += 100);
  adamw_mask(r, 1, s += 100);
  lion(r, 37, 300, s += 100);
  lion(r, 1, 1, s += 100);
  sgd_torch(r, 10000, 1, 0, 0.f, s += 100);  // first step, buf NaN
  sgd_torch(r, 10000, 1, 1, 0.f, s += 100);
  sgd_torch(r, 10000, 0, 1, 0.f, s += 100);
  sgd_torch(r, 10000, 0, 0, 0.1f, s += 100);
  sgd_torch(r, 1, 0, 1, 0.5f, s += 100);
  ema(r, 37, 300, 0.999f, 0, s += 100);       // decay 0.1 (warmup)
  ema(r, 37, 300, 0.999f, 100000, s += 100);  // decay d_max
  ema(r, 1, 1, 0.5f, 3, s += 100);
  grad_accum(r, 37, 300, 0, s += 100);
  grad_accum(r, 37, 300, 1, s += 100);
  grad_accum_loop(r, 37, 300, 3, s += 100);
  grad_accum_loop(r, 16, 256, 1, s += 100);
  adafactor(r, 37, 300, s += 100);
  adafactor(r, 100, 1024, s += 100);
  adafactor(r, 1, 1, s += 100);
  // GEMM backward: the template (tails in M, N and K), its general twin (a row pitch not 16 bytes), and
  // templates = false.
  linear_dx(r, "linear_bwd_dx", 200, 160, 264, s += 100);
  linear_dx(r, "linear_bwd_dx", 70, 100, 100, s += 100);
  linear_dx(r, "linear_bwd_dx/general", 200, 160, 264, s += 100);
  linear_dw_accum(r, "linear_bwd_dw_accum_f32", 200, 136, 264, s += 100);
  linear_dw_accum(r, "linear_bwd_dw_accum_f32", 100, 100, 72, s += 100);
  linear_dw_accum(r, "linear_bwd_dw_accum_f32/general", 200, 136, 264, s += 100);
  linear_dw_unscale(r, 200, 136, 264, s += 100);
  linear_dw_unscale(r, 37, 100, 50, s += 100);
  linear_dx_wt_f16(r, "linear_bwd_dx_wt_f16", 200, 160, 264, s += 100);
  linear_dx_wt_f16(r, "linear_bwd_dx_wt_f16", 70, 100, 100, s += 100);
  linear_dx_wt_f16(r, "linear_bwd_dx_wt_f16/general", 200, 160, 264, s += 100);
  linear_dx_db(r, 200, 160, 264, s += 100);
  linear_dx_db(r, 37, 100, 50, s += 100);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  const int W = r.W;
  // Norm backward with all-reduced weight gradients.
  sp_rmsnorm_dw(r, 37, 300, s += 100);
  sp_rmsnorm_dw(r, 1, 1000, s += 100);
  sp_layernorm_bwd(r, 37, 300, s += 100);
  sp_layernorm_bwd(r, 5, 512, s += 100);
  // Clipping and loss scaling (findings: skip-step and hysteresis with one rank overflowing).
  clip_two(r, 5000, 37, 300, 0.3, s += 100);
  clip_two(r, 5000, 37, 300, 1e6, s += 100);
  clip_two(r, 1, 1, 1, 0.5, s += 100);
  amp_skip(r, 5000, 0, s += 100);
  amp_skip(r, 5000, 1, s += 100);
  amp_skip(r, 5000, 2, s += 100);
  amp_skip(r, 1, 1, s += 100);
  loss_scale_hyst(r, 10000, 5, 2, 1024.f, -1, 10, 2, s += 100);     // good + 1
  loss_scale_hyst(r, 10000, 9, 1, 1024.f, -1, 10, 2, s += 100);     // grows: scale 2048, hysteresis reset
  loss_scale_hyst(r, 10000, 5, 2, 1024.f, W - 1, 10, 2, s += 100);  // hysteresis absorbs it
  loss_scale_hyst(r, 10000, 5, 1, 1024.f, 0, 10, 2, s += 100);      // halves
  loss_scale_hyst(r, 10000, 3, 0, 1.5f, W - 1, 10, 2, s += 100);    // halves, floored at 1
  loss_scale_hyst(r, 4096 * 600 + 7, 4, 1, 64.f, W - 1, 10, 2, s += 100);  // 601 flags: two 512-column chunks
  // ZeRO / FSDP / DDP (findings: in-place FSDP, the column-sharded in-place step).
  fsdp_inplace(r, 1500, s += 100);
  fsdp_inplace(r, 1000, s += 100);  // the padding of the last tile (24 elements) lands in the next chunk
  fsdp_inplace(r, 37, s += 100);
  zero_cols_inplace(r, 37, 130, s += 100);
  zero_cols_inplace(r, 9, 1, s += 100);
  zero2(r, 1500, s += 100);
  zero2(r, 37, s += 100);
  fsdp_rows(r, 37, 300, s += 100);
  fsdp_rows(r, 16, 256, s += 100);
  zero_cols(r, 37, 130, s += 100);
  zero_cols(r, 8, 128, s += 100);
  zero1_clip(r, 3000, 0.3, s += 100);
  zero1_clip(r, 37, 1e6, s += 100);
  lamb(r, 5000, false, s += 100);
  lamb(r, 37, true, s += 100);
  ddp_bucket(r, 1000, 37, 2500, s += 100);
  ddp_bucket(r, 1024, 1, 5, s += 100);
  ddp_bf16(r, 37, 300, s += 100);
  ddp_layers(r, 3, 5000, s += 100);
  ddp_layers(r, 1, 1, s += 100);
  rs_by_adds(r, 37, 300, s += 100);
  rs_by_adds(r, 1, 256, s += 100);
  // GEMM backward with sequence / tensor parallelism: the templates (K, N, M multiples of 8) and their twins.
  sp_column_linear(r, 37, 160, 264, s += 100);
  sp_column_linear(r, 37, 48, 100, s += 100);
  sp_row_linear(r, 37, 160, 264, s += 100);
  sp_row_linear(r, 20, 64, 100, s += 100);
  tp_dx_adds(r, 37, 160, 264, s += 100);
  tp_dx_adds(r, 5, 64, 100, s += 100);
  tp_dx_then_rs(r, 37, 160, 264, s += 100);
  tp_dx_then_rs(r, 20, 48, 100, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs23_jit_test");
  // The multi-rank kernels at W = 1, 2, 3 and 4 (run_worlds stops at 3 unless a list is given; one given
  // in the environment wins).
  setenv("PK_TEST_WORLDS", "2 3 4", 0);
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs23_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}
