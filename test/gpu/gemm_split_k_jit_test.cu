// Split-K on the GEMM template (templates/include/pk/templates/split_k.cuh) through the JIT, against float64.
//
// test/specs/gemm_split_k.pk.cpp's kernels (both layouts, bf16 / f16 / f32 / i32 outputs, an epilogue of a row
// scale and a column bias, fp8 weights widened in the ring, i8 operands summed in i32, A stored [K, M], a
// batched product, a trailing low-rank one) at shapes whose tile count leaves the launch 16, 8, 4 or 2 pieces
// per tile (1, 16, 130 and 300 rows against K up to 4096, K tails included) and one that stays unsplit. The
// pieces depend on the SMs a rank has, so W = 2 and 3 ranks sharing the GPU run other splits at once, each
// with its own context's workspace. Each case launches twice, checks against float64, then launches once
// more and requires the same bits (the pieces are added in piece order, whichever finishes last); cases
// of different shapes follow one another on one stream, so a workspace counter left non-zero would lose a
// later case's tiles (the output is poisoned first). A last case launches one kernel on two streams of one
// context at once (two workspaces).
//
// Bounds: a bf16 output within 2^-7 of its value, f16 within 2^-9, plus 1e-5 of the sum of the terms'
// magnitudes (the fp32 sum over K); f32 outputs 1e-5 of the magnitudes; i32 exact.
#include <pk/jit/compile.h>

#include <cmath>
#include <cstring>
#include <random>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pk::f16;
using pk::f8e4m3;
using pkt::DevLocal;
using namespace pkt::cases;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"sk_bf16", true},  {"sk_f16_kn", true}, {"sk_scale_bias_f32", true}, {"sk_wo_e4m3", true},
    {"sk_i8_s32", true}, {"sk_a_km", true},  {"sk_bmm", true},            {"sk_lora", true},
};

KernelSet g_kernels;

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "gemm_split_k", what, before); }

template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}

// The pieces per tile the launch description asks for (GemmPatterns.cpp's splitK), for the case's name.
int pieces(const Run& r, LL tiles, LL ksteps) {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const LL rank_sms = sms / r.W;
  return int(std::max<LL>(1, std::min<LL>(std::min<LL>(rank_sms / tiles, ksteps / 4), 16)));
}

// Launches once more and requires the same bits as `first`.
template <class Y, class... A>
void same_bits(const Run& r, const std::string& kn, const std::vector<Y>& first, const DevLocal<Y>& y, const A&... args) {
  if (!run(r, kn, 1, args...)) return;
  const auto again = y.download();
  if (std::memcmp(again.data(), first.data(), first.size() * sizeof(Y)) != 0)
    pkt::fail(kn + ": a second launch gave other bits (W=" + std::to_string(r.W) + ")");
}

template <class Y>
double ulps() {
  return std::is_same<Y, bf16>::value ? std::ldexp(1.0, -7) : std::is_same<Y, f16>::value ? std::ldexp(1.0, -9) : 0.0;
}

// y = x w^T (sk_bf16) or x w with w [K, N] (sk_f16_kn).
template <class T>
void plain_case(const Run& r, const std::string& kn, LL M, LL N, LL Kd, unsigned seed) {
  const bool kn_layout = kn == "sk_f16_kn";
  const auto x = rnd<T>(M * Kd, seed), w = rnd<T>(N * Kd, seed + 1);
  DevLocal<T> xd({M, Kd}, x), wd(kn_layout ? std::vector<LL>{Kd, N} : std::vector<LL>{N, Kd}, w), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), y.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); },
                        [&](LL k, LL n) { return val(w[kn_layout ? k * N + n : n * Kd + k]); });
    const auto got = y.download();
    check(r, kn, got, [&](LL i) { return g.c[i]; },
          [&](LL i) { return ulps<T>() * std::fabs(g.c[i]) + 1e-5 * g.mag[i] + 1e-6; });
    same_bits(r, kn, got, y, xd.view(), wd.view(), y.view());
  }
  const LL tiles = ((M + 127) / 128) * ((N + 255) / 256);
  end_case(r, kn + " " + dims({M, N, Kd}) + " pieces=" + std::to_string(pieces(r, tiles, (Kd + 63) / 64)), before);
}

// y = (x w^T) * s[m] + bias[n] in f32.
void scale_bias_case(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const std::string kn = "sk_scale_bias_f32";
  const auto x = rnd<bf16>(M * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1);
  const auto s = rnd<float>(M, seed + 2, 0.5f, 2.f), bias = rnd<float>(N, seed + 3);
  DevLocal<bf16> xd({M, Kd}, x), wd({N, Kd}, w);
  DevLocal<float> sd({M, 1}, s), bd({N}, bias), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), sd.view(), bd.view(), y.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); },
                        [&](LL k, LL n) { return val(w[n * Kd + k]); });
    const auto got = y.download();
    check(r, kn, got, [&](LL i) { return g.c[i] * s[i / N] + bias[i % N]; },
          [&](LL i) { return 1e-5 * (g.mag[i] * s[i / N] + std::fabs(bias[i % N])) + 1e-6; });
    same_bits(r, kn, got, y, xd.view(), wd.view(), sd.view(), bd.view(), y.view());
  }
  const LL tiles = ((M + 127) / 128) * ((N + 255) / 256);
  end_case(r, kn + " " + dims({M, N, Kd}) + " pieces=" + std::to_string(pieces(r, tiles, (Kd + 63) / 64)), before);
}

// bf16 x times e4m3 weights [N, K] (every finite pattern but the NaNs).
void wo_case(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const std::string kn = "sk_wo_e4m3";
  const auto x = rnd<bf16>(M * Kd, seed);
  std::mt19937 gen(seed + 1);
  std::vector<f8e4m3> w(N * Kd);
  for (auto& v : w) {
    v.bits = static_cast<unsigned char>(gen() & 0xFF);
    if ((v.bits & 0x7F) == 0x7F) v.bits ^= 1;
  }
  DevLocal<bf16> xd({M, Kd}, x), y({M, N}, {});
  DevLocal<f8e4m3> wd({N, Kd}, w);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), y.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); },
                        [&](LL k, LL n) { return val(w[n * Kd + k]); });
    const auto got = y.download();
    check(r, kn, got, [&](LL i) { return g.c[i]; },
          [&](LL i) { return std::ldexp(1.0, -7) * std::fabs(g.c[i]) + 1e-5 * g.mag[i] + 1e-6; });
    same_bits(r, kn, got, y, xd.view(), wd.view(), y.view());
  }
  const LL tiles = ((M + 127) / 128) * ((N + 255) / 256);
  end_case(r, kn + " " + dims({M, N, Kd}) + " pieces=" + std::to_string(pieces(r, tiles, (Kd + 63) / 64)), before);
}

// d = s - (s >> 3) of the exact i32 sums s = x w^T (i8 operands).
void i8_case(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const std::string kn = "sk_i8_s32";
  const auto x = ints<signed char>(M * Kd, -128, 127, seed), w = ints<signed char>(N * Kd, -128, 127, seed + 1);
  DevLocal<signed char> xd({M, Kd}, x), wd({N, Kd}, w);
  DevLocal<int> d({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), d.view())) {
    std::vector<double> want(M * N);
    for (LL m = 0; m < M; ++m)
      for (LL n = 0; n < N; ++n) {
        long long s = 0;
        for (LL k = 0; k < Kd; ++k) s += static_cast<long long>(x[m * Kd + k]) * w[n * Kd + k];
        const int s32 = static_cast<int>(s);  // |s| < 2^31 at these K
        want[m * N + n] = double(s32 - (s32 >> 3));
      }
    const auto got = d.download();
    check(r, kn, got, [&](LL i) { return want[i]; }, exact());
    same_bits(r, kn, got, d, xd.view(), wd.view(), d.view());
  }
  const LL tiles = ((M + 127) / 128) * ((N + 255) / 256);
  end_case(r, kn + " " + dims({M, N, Kd}) + " pieces=" + std::to_string(pieces(r, tiles, (Kd / 2 + 63) / 64)), before);
}

// c = a^T b with a stored [K, M], b [K, N].
void a_km_case(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const std::string kn = "sk_a_km";
  const auto a = rnd<bf16>(Kd * M, seed), b = rnd<bf16>(Kd * N, seed + 1);
  DevLocal<bf16> ad({Kd, M}, a), bd({Kd, N}, b), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), c.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(a[k * M + m]); },
                        [&](LL k, LL n) { return val(b[k * N + n]); });
    const auto got = c.download();
    check(r, kn, got, [&](LL i) { return g.c[i]; },
          [&](LL i) { return std::ldexp(1.0, -7) * std::fabs(g.c[i]) + 1e-5 * g.mag[i] + 1e-6; });
    same_bits(r, kn, got, c, ad.view(), bd.view(), c.view());
  }
  const LL tiles = ((M + 127) / 128) * ((N + 255) / 256);
  end_case(r, kn + " " + dims({M, N, Kd}) + " pieces=" + std::to_string(pieces(r, tiles, (Kd + 63) / 64)), before);
}

// c[z] = a[z] b[z]^T for B batches.
void bmm_case(const Run& r, LL B, LL M, LL N, LL Kd, unsigned seed) {
  const std::string kn = "sk_bmm";
  const auto a = rnd<bf16>(B * M * Kd, seed), b = rnd<bf16>(B * N * Kd, seed + 1);
  DevLocal<bf16> ad({B, M, Kd}, a), bd({B, N, Kd}, b), c({B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), c.view())) {
    std::vector<double> want(B * M * N), mag(B * M * N);
    for (LL z = 0; z < B; ++z) {
      const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(a[(z * M + m) * Kd + k]); },
                          [&](LL k, LL n) { return val(b[(z * N + n) * Kd + k]); });
      std::copy(g.c.begin(), g.c.end(), want.begin() + z * M * N);
      std::copy(g.mag.begin(), g.mag.end(), mag.begin() + z * M * N);
    }
    const auto got = c.download();
    check(r, kn, got, [&](LL i) { return want[i]; },
          [&](LL i) { return std::ldexp(1.0, -7) * std::fabs(want[i]) + 1e-5 * mag[i] + 1e-6; });
    same_bits(r, kn, got, c, ad.view(), bd.view(), c.view());
  }
  const LL tiles = B * ((M + 127) / 128) * ((N + 255) / 256);
  end_case(r, kn + " " + dims({B, M, N, Kd}) + " pieces=" + std::to_string(pieces(r, tiles, (Kd + 63) / 64)), before);
}

// y = x w^T + u l^T, rank 64 (the trailing product streams as one more K step).
void lora_case(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const std::string kn = "sk_lora";
  const LL R = 64;
  const auto x = rnd<bf16>(M * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1), u = rnd<bf16>(M * R, seed + 2),
             l = rnd<bf16>(N * R, seed + 3);
  DevLocal<bf16> xd({M, Kd}, x), wd({N, Kd}, w), ud({M, R}, u), ld({N, R}, l), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), ud.view(), ld.view(), y.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); },
                        [&](LL k, LL n) { return val(w[n * Kd + k]); });
    const auto lo = gemm(M, N, R, [&](LL m, LL k) { return val(u[m * R + k]); },
                         [&](LL k, LL n) { return val(l[n * R + k]); });
    const auto got = y.download();
    check(r, kn, got, [&](LL i) { return g.c[i] + lo.c[i]; },
          [&](LL i) { return std::ldexp(1.0, -7) * std::fabs(g.c[i] + lo.c[i]) + 1e-5 * (g.mag[i] + lo.mag[i]) + 1e-6; });
    same_bits(r, kn, got, y, xd.view(), wd.view(), ud.view(), ld.view(), y.view());
  }
  const LL tiles = ((M + 127) / 128) * ((N + 255) / 256);
  end_case(r, kn + " " + dims({M, N, Kd}) + " pieces=" + std::to_string(pieces(r, tiles, (Kd + 63) / 64 + 1)), before);
}

// One kernel on two streams of one context at once, each with its own inputs: two workspaces.
void two_streams_case(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const std::string kn = "sk_bf16";
  const auto x1 = rnd<bf16>(M * Kd, seed), x2 = rnd<bf16>(M * Kd, seed + 1), w = rnd<bf16>(N * Kd, seed + 2);
  DevLocal<bf16> x1d({M, Kd}, x1), x2d({M, Kd}, x2), wd({N, Kd}, w), y1({M, N}, {}), y2({M, N}, {});
  cudaStream_t other;
  PKT_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  const int before = begin_case(r);
  pkt::ready(r.ctx);
  for (int t = 0; t < 3; ++t) {
    const pk::Status a = g_kernels.at(kn).launch(r.ctx, r.s, x1d.view(), wd.view(), y1.view());
    const pk::Status b = g_kernels.at(kn).launch(r.ctx, other, x2d.view(), wd.view(), y2.view());
    if (!a.is_ok() || !b.is_ok()) pkt::fail(kn + " launch: " + (a.is_ok() ? b : a).message());
  }
  // (No PKT_OK here: returning early would leave the other ranks at end_case's barrier.)
  for (cudaStream_t st : {r.s, other})
    if (const cudaError_t e = cudaStreamSynchronize(st); e != cudaSuccess) pkt::fail(kn + ": " + cudaGetErrorString(e));
  if (const pk::Status c = r.ctx.check_errors(); !c.is_ok()) pkt::fail(kn + ": " + c.message());
  for (int i = 0; i < 2; ++i) {
    const auto& x = i ? x2 : x1;
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); },
                        [&](LL k, LL n) { return val(w[n * Kd + k]); });
    check(r, kn + (i ? " (second stream)" : " (first stream)"), (i ? y2 : y1).download(), [&](LL j) { return g.c[j]; },
          [&](LL j) { return std::ldexp(1.0, -7) * std::fabs(g.c[j]) + 1e-5 * g.mag[j] + 1e-6; });
  }
  cudaStreamDestroy(other);
  end_case(r, kn + " on two streams at once " + dims({M, N, Kd}), before);
}

void cases(const Run& r) {
  plain_case<bf16>(r, "sk_bf16", 1, 520, 4096, 11);
  plain_case<bf16>(r, "sk_bf16", 16, 4096, 4096, 21);
  plain_case<bf16>(r, "sk_bf16", 130, 264, 2000, 31);   // a K tail in the last piece
  plain_case<bf16>(r, "sk_bf16", 300, 1000, 512, 41);
  plain_case<bf16>(r, "sk_bf16", 1024, 1024, 256, 51);  // unsplit (one K step a piece would be too few)
  plain_case<f16>(r, "sk_f16_kn", 1, 520, 4096, 61);
  plain_case<f16>(r, "sk_f16_kn", 130, 264, 2000, 71);
  scale_bias_case(r, 16, 1000, 4096, 81);
  scale_bias_case(r, 130, 264, 2000, 91);
  wo_case(r, 16, 2048, 4096, 101);
  wo_case(r, 130, 264, 2000, 111);
  i8_case(r, 16, 1000, 4096, 121);
  i8_case(r, 130, 264, 8192, 131);
  a_km_case(r, 8, 520, 4096, 141);
  a_km_case(r, 136, 264, 2000, 151);
  bmm_case(r, 2, 16, 520, 4096, 161);
  bmm_case(r, 3, 130, 264, 1000, 171);
  lora_case(r, 16, 1000, 4096, 181);
  lora_case(r, 130, 264, 2000, 191);
  plain_case<bf16>(r, "sk_bf16", 16, 264, 4096, 201);  // after every other shape: counters all back at zero
  two_streams_case(r, 16, 1000, 4096, 211);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_GEMM_SPLIT_K_SPEC, kKernels, {}, PK_PKC, g_kernels)) return pkt::finish("gemm_split_k_jit_test");
  return run_worlds("gemm_split_k_jit_test", g_kernels, cases);
}
