// Batched GEMMs (test/specs/gemm_batched.pk.cpp) through the JIT against float64: the GEMM
// template's batched form (3-D tensor maps, the batches as the tile order's segments) with tails
// in M, N and K, an f32 output with a bias, an epilogue reading the row inside the batch, a scale
// and a residual per batch; the
// general-path twins where the sizes break the template's rules (K not whole 16-byte rows, fewer
// batches in B than in A: those products read zeros, as the spec's clipped loads do); one 2-D
// weight shared by every batch (W stored [N, K] and, f16 with a bias and a SiLU, [K, N]).
// Outputs poisoned first; W = 1.
#include <pk/jit/compile.h>

#include <cmath>
#include <string>
#include <vector>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

using pkt::DevLocal;
using namespace pkt::cases;

namespace {

using pk::bf16;
using pk::f16;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"bmm_t", true},          {"bmm_kn_f32_bias", true}, {"bmm_t_gelu_rows", true},
    {"bmm_batch_scale", true}, {"bmm_t_residual", true},  {"bmm_shared_weight", true},
    {"bmm_shared_weight_kn", true},
};
const std::vector<const char*> kGeneralToo = {"bmm_t",          "bmm_kn_f32_bias",   "bmm_t_gelu_rows",
                                              "bmm_batch_scale", "bmm_t_residual",    "bmm_shared_weight",
                                              "bmm_shared_weight_kn"};
KernelSet g_kernels;



void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "gemm_batched", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, 2, args...);
}

// sum over q of a[z, m, q] * b(z, n, q), and sum |a| for the tolerance; zero past b's batches.
template <class T, class BAt>
void products(const std::vector<T>& a, LL Z, LL M, LL K, LL N, LL zb, const BAt& b_at, std::vector<double>& s,
              std::vector<double>& mag) {
  s.assign(Z * M * N, 0.0);
  mag.assign(Z * M * N, 0.0);
  for (LL z = 0; z < Z; ++z)
    for (LL m = 0; m < M; ++m)
      for (LL n = 0; n < N; ++n) {
        double acc = 0, g = 0;
        for (LL q = 0; q < K; ++q) {
          const double x = val(a[(z * M + m) * K + q]);
          acc += z < zb ? x * b_at(z, n, q) : 0.0;
          g += std::fabs(x);
        }
        s[(z * M + m) * N + n] = acc, mag[(z * M + m) * N + n] = g;
      }
}

// C[z] = A[z] B[z]^T in bf16 (bmm_t, or bmm_batch_scale with a scale per batch).
void bmm_t(const Run& r, const std::string& k, LL Z, LL M, LL K, LL N, LL zb, unsigned seed, bool scaled = false) {
  const auto a = rnd<bf16>(Z * M * K, seed), b = rnd<bf16>(zb * N * K, seed + 1);
  const auto sc = rnd<float>(Z, seed + 2, 0.5f, 2.f);
  DevLocal<bf16> ad({Z, M, K}, a), bd({zb, N, K}, b), c({Z, M, N}, {});
  DevLocal<float> sd({Z}, sc);
  const int before = begin_case(r);
  const bool ok = scaled ? run(r, k, ad.view(), bd.view(), sd.view(), c.view()) : run(r, k, ad.view(), bd.view(), c.view());
  if (ok) {
    std::vector<double> s, mag;
    products(a, Z, M, K, N, zb, [&](LL z, LL n, LL q) { return val(b[(z * N + n) * K + q]); }, s, mag);
    auto scale = [&](LL i) { return scaled ? double(sc[i / (M * N)]) : 1.0; };
    check(r, k + ".c", c.download(), [&](LL i) { return s[i] * scale(i); },
          [&](LL i) { return kBf * std::fabs(s[i] * scale(i)) + 1e-5 * mag[i] * scale(i) + 1e-4; });
  }
  end_case(r, k + " " + dims({Z, M, K, N, zb}), before);
}

// C[z] = A[z] B[z] + bias[n] in f32 from f16 operands.
void bmm_kn_f32_bias(const Run& r, const std::string& k, LL Z, LL M, LL K, LL N, LL zb, unsigned seed) {
  const auto a = rnd<f16>(Z * M * K, seed), b = rnd<f16>(zb * K * N, seed + 1);
  const auto bias = rnd<float>(N, seed + 2);
  DevLocal<f16> ad({Z, M, K}, a), bd({zb, K, N}, b);
  DevLocal<float> biasd({N}, bias), c({Z, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, ad.view(), bd.view(), biasd.view(), c.view())) {
    std::vector<double> s, mag;
    products(a, Z, M, K, N, zb, [&](LL z, LL n, LL q) { return val(b[(z * K + q) * N + n]); }, s, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return s[i] + bias[i % N]; },
          [&](LL i) { return 1e-5 * mag[i] + 1e-5; });
  }
  end_case(r, k + " " + dims({Z, M, K, N, zb}), before);
}

// C[z] = f16(gelu(A[z] B[z]^T) + 0.001 * row), the row counted inside the batch.
void bmm_t_gelu_rows(const Run& r, const std::string& k, LL Z, LL M, LL K, LL N, unsigned seed) {
  const auto a = rnd<bf16>(Z * M * K, seed), b = rnd<bf16>(Z * N * K, seed + 1);
  DevLocal<bf16> ad({Z, M, K}, a), bd({Z, N, K}, b);
  DevLocal<f16> c({Z, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, ad.view(), bd.view(), c.view())) {
    std::vector<double> s, mag;
    products(a, Z, M, K, N, Z, [&](LL z, LL n, LL q) { return val(b[(z * N + n) * K + q]); }, s, mag);
    auto gelu = [](double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); };
    auto want = [&](LL i) { return gelu(s[i]) + 0.001 * double((i / N) % M); };
    check(r, k + ".c", c.download(), want, [&](LL i) { return kHf * std::fabs(want(i)) + 2e-3 * (1 + 1e-2 * mag[i]); });
  }
  end_case(r, k + " " + dims({Z, M, K, N}), before);
}

// C[z] = bf16(A[z] B[z]^T + R[z]).
void bmm_t_residual(const Run& r, const std::string& k, LL Z, LL M, LL K, LL N, unsigned seed) {
  const auto a = rnd<bf16>(Z * M * K, seed), b = rnd<bf16>(Z * N * K, seed + 1), res = rnd<bf16>(Z * M * N, seed + 2);
  DevLocal<bf16> ad({Z, M, K}, a), bd({Z, N, K}, b), rd({Z, M, N}, res), c({Z, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, ad.view(), bd.view(), rd.view(), c.view())) {
    std::vector<double> s, mag;
    products(a, Z, M, K, N, Z, [&](LL z, LL n, LL q) { return val(b[(z * N + n) * K + q]); }, s, mag);
    auto want = [&](LL i) { return s[i] + val(res[i]); };
    check(r, k + ".c", c.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({Z, M, K, N}), before);
}

// C[z] = A[z] W^T with one W [N, K] for every batch.
void bmm_shared_weight(const Run& r, const std::string& k, LL Z, LL M, LL K, LL N, unsigned seed) {
  const auto a = rnd<bf16>(Z * M * K, seed), w = rnd<bf16>(N * K, seed + 1);
  DevLocal<bf16> ad({Z, M, K}, a), wd({N, K}, w), c({Z, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, ad.view(), wd.view(), c.view())) {
    std::vector<double> s, mag;
    products(a, Z, M, K, N, Z, [&](LL, LL n, LL q) { return val(w[n * K + q]); }, s, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return s[i]; },
          [&](LL i) { return kBf * std::fabs(s[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({Z, M, K, N}), before);
}

// Y[z] = f16(silu(X[z] W + bias[n])) with one W [K, N] for every batch.
void bmm_shared_weight_kn(const Run& r, const std::string& k, LL Z, LL M, LL K, LL N, unsigned seed) {
  const auto x = rnd<f16>(Z * M * K, seed), w = rnd<f16>(K * N, seed + 1);
  const auto bias = rnd<float>(N, seed + 2);
  DevLocal<f16> xd({Z, M, K}, x), wd({K, N}, w), y({Z, M, N}, {});
  DevLocal<float> biasd({N}, bias);
  const int before = begin_case(r);
  if (run(r, k, xd.view(), wd.view(), biasd.view(), y.view())) {
    std::vector<double> s, mag;
    products(x, Z, M, K, N, Z, [&](LL, LL n, LL q) { return val(w[q * N + n]); }, s, mag);
    auto want = [&](LL i) {
      const double v = s[i] + bias[i % N];
      return v / (1 + std::exp(-v));
    };
    check(r, k + ".y", y.download(), want, [&](LL i) { return kHf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({Z, M, K, N}), before);
}

void cases(const Run& r) {
  unsigned s = 100;
  for (const std::string tag : {"", "/general"}) {
    // Tails in M, N and K; one batch; more tiles than blocks; the twins' sizes (K % 8 != 0,
    // fewer batches in B than in A).
    bmm_t(r, "bmm_t" + tag, 3, 200, 136, 264, 3, s += 10);
    bmm_t(r, "bmm_t" + tag, 1, 128, 64, 256, 1, s += 10);
    bmm_t(r, "bmm_t" + tag, 40, 300, 72, 520, 40, s += 10);
    bmm_t(r, "bmm_t" + tag, 3, 150, 100, 200, 3, s += 10);
    bmm_t(r, "bmm_t" + tag, 3, 130, 64, 256, 2, s += 10);
    bmm_kn_f32_bias(r, "bmm_kn_f32_bias" + tag, 5, 77, 136, 264, 5, s += 10);
    bmm_kn_f32_bias(r, "bmm_kn_f32_bias" + tag, 2, 256, 520, 128, 2, s += 10);
    bmm_kn_f32_bias(r, "bmm_kn_f32_bias" + tag, 3, 70, 64, 100, 3, s += 10);
    bmm_t_gelu_rows(r, "bmm_t_gelu_rows" + tag, 4, 333, 128, 136, s += 10);
    bmm_t(r, "bmm_batch_scale" + tag, 3, 200, 136, 264, 3, s += 10, true);
    bmm_t(r, "bmm_batch_scale" + tag, 5, 70, 64, 300, 5, s += 10, true);
    bmm_t_residual(r, "bmm_t_residual" + tag, 3, 200, 136, 264, s += 10);
    // One weight for every batch: tails, many batches, and a K that takes the twin (K % 8 != 0).
    bmm_shared_weight(r, "bmm_shared_weight" + tag, 3, 200, 136, 264, s += 10);
    bmm_shared_weight(r, "bmm_shared_weight" + tag, 24, 130, 64, 512, s += 10);
    bmm_shared_weight(r, "bmm_shared_weight" + tag, 2, 70, 100, 72, s += 10);
    bmm_shared_weight_kn(r, "bmm_shared_weight_kn" + tag, 3, 200, 136, 264, s += 10);
    bmm_shared_weight_kn(r, "bmm_shared_weight_kn" + tag, 9, 257, 520, 136, s += 10);
  }
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_GEMM_BATCHED_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels))
    return pkt::finish("gemm_batched_test");
  pkt::run_ranks(1, [](pk::Context& ctx) {
    cudaStream_t s;
    PKT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (auto& [name, k] : g_kernels) PKT_OK(k.load(ctx));
    cases(Run{ctx, s, ctx.world(), ctx.rank()});
    PKT_CUDA(cudaStreamDestroy(s));
  });
  return pkt::finish("gemm_batched_test");
}
