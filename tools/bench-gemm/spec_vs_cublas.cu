// pk-bench-gemm-specs: GEMMs written as specs (the shipped gemm spec and the variants in
// test/specs/gemm_variants.pk.cpp), JIT-compiled onto the Hopper GEMM template, against cuBLAS
// on the same inputs in the same run, one GPU: bf16 and f16, B stored [N, K] (A * B^T) and
// [K, N] (A * B), bf16 A^T * B with A stored [K, M] (the weight gradient), bf16 A * B^T into an f32 C,
// 4096^3 and 8192^3; and the GEMM with a fused bias + GELU epilogue against the
// same GEMM alone. Each pair alternates batches of 20 back-to-back launches (median of 7 each,
// after 5 warm-ups). Every pkc output is checked against cuBLAS's before it is timed. Writes a
// Markdown table to argv[1] (and stdout).
#include <cublas_v2.h>

#include <pk/jit/compile.h>
#include "bf16_host.h"
#include "one_gpu.h"
#include "paired_timing.h"
#include "roofline_bound.h"
#include "sampled_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

// Deterministic values in [-1, 1) from the index (no zeros in practice), as bf16 or f16 bits.
__global__ void fill(unsigned short* p, long long n, unsigned seed, bool f16) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761ull) ^ (seed * 40503u);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    const float x = (h & 0xffff) / 32768.f - 1.f;
    unsigned short b;
    if (f16) asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(x));
    else asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(x));
    p[i] = b;
  }
}

float to_float(unsigned short b, bool f16) {
  if (!f16) {
    unsigned u = unsigned(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  const int e = (b >> 10) & 31, m = b & 1023;
  const float v = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(m | 1024), e - 25);
  return (b & 0x8000) ? -v : v;
}

// fp8 operands for the fp8 row: each element one of +-0.5, 1, 2 (exact in e4m3 and e5m2), so
// every product and every partial sum over K = 8192 is exact in f32 and the reference is exact.
__host__ __device__ float small_value(long long i, unsigned seed) {
  unsigned h = (unsigned)(i * 2654435761ull) ^ (seed * 40503u);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  const float v[6] = {-2.f, -1.f, -0.5f, 0.5f, 1.f, 2.f};
  return v[h % 6];
}
__global__ void fill_fp8(unsigned char* p, long long n, unsigned seed, bool e5m2) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned short b;
    if (e5m2) asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(b) : "f"(0.f), "f"(small_value(i, seed)));
    else asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(b) : "f"(0.f), "f"(small_value(i, seed)));
    p[i] = static_cast<unsigned char>(b);
  }
}

struct Case {
  const char* label;
  const char* spec;
  const char* kernel;
  bool f16, b_kn;
  bool a_km = false;  // A stored [K, M], read transposed (the weight gradient's A^T B)
};

}  // namespace

// PK_BENCH_NVRTC: extra NVRTC options for every kernel (space-separated; -D switches of the
// template headers, to compare forms in one process).
std::vector<std::string> extra_nvrtc_options() {
  std::vector<std::string> out;
  const char* env = std::getenv("PK_BENCH_NVRTC");
  std::string word;
  for (const char* c = env ? env : ""; ; ++c) {
    if (*c == ' ' || *c == 0) {
      if (!word.empty()) out.push_back(word);
      word.clear();
      if (*c == 0) break;
    } else {
      word += *c;
    }
  }
  return out;
}

// The fused epilogue's value at (r, c) from the f32 sum `acc` (epilogue_specs.pk.cpp's kernels
// and gemm_t_bias_gelu), in double.
double epilogue_reference(const std::string& kernel, double acc, double bias, long long c, long long n) {
  const auto gelu = [](double x) { return 0.5 * x * (1 + std::tanh(0.7978845608 * (x + 0.044715 * x * x * x))); };
  if (kernel == "gemm_t_bias_gelu") return gelu(acc + bias);
  if (kernel == "gemm_t_bias") return acc + bias;
  if (kernel == "gemm_t_gelu") return gelu(acc);
  return c < n - 64 ? acc : -1e4;  // gemm_t_vocab_mask
}

int main(int argc, char** argv) {
  pk_bench::OneGpu gpu = pk_bench::one_gpu();
  pk::Context* ctx = gpu.ctx.get();  // launches take *ctx
  cudaStream_t s = ctx->stream();
  cublasHandle_t blas;
  cublasCreate(&blas);
  cublasSetStream(blas, s);
  auto compile = [&](const char* spec, const char* kernel) -> pk::Result<pk::jit::Kernel> {
    PK_ASSIGN_OR_RETURN(std::string text, pk::jit::read_spec(spec));
    pk::jit::Options o;
    o.kernel = kernel;
    o.nvrtc_options = extra_nvrtc_options();
    return pk::jit::compile_spec(spec, text, o, pk::jit::pkc_frontend(PK_PKC));
  };
  const Case cases[] = {
      {"bf16, A * B^T", PK_GEMM_SPEC, "gemm", false, false},
      {"bf16, A * B", PK_VARIANTS_SPEC, "gemm_ab", false, true},
      {"f16, A * B^T", PK_VARIANTS_SPEC, "gemm_f16", true, false},
      {"f16, A * B", PK_VARIANTS_SPEC, "gemm_f16_ab", true, true},
      {"bf16, A^T * B (A stored [K, M])", PK_VARIANTS_SPEC, "gemm_at_b", false, true, true},
  };
  std::string table =
      "| GEMM | M = N = K | pkc us | cuBLAS us | cuBLAS / pkc | pkc TFLOP/s | pkc of roofline bound | max abs diff vs cuBLAS |\n"
      "|---|---|---|---|---|---|---|---|\n";
  int failures = 0, beaten = 0;
  char row[384];
  // PK_BENCH_EPILOGUE_ONLY=1: only the fused epilogues against the GEMM alone.
  const bool epilogue_only = std::getenv("PK_BENCH_EPILOGUE_ONLY") != nullptr;
  for (long long n : {4096LL, 8192LL}) {
    const long long elems = n * n;
    unsigned short *a, *b, *c, *ref, *bias;
    cudaMalloc(&a, elems * 2);
    cudaMalloc(&b, elems * 2);
    cudaMalloc(&c, elems * 4);    // room for an f32 output
    cudaMalloc(&ref, elems * 4);
    cudaMalloc(&bias, n * 2);
    for (const Case& cs : cases) {
      if (epilogue_only) break;
      auto k = compile(cs.spec, cs.kernel);
      if (!k.is_ok()) {
        std::fprintf(stderr, "compile %s: %s\n", cs.kernel, k.status().message().c_str());
        ++failures;
        continue;
      }
      fill<<<1024, 256, 0, s>>>(a, elems, 1, cs.f16);
      fill<<<1024, 256, 0, s>>>(b, elems, 2, cs.f16);
      const cudaDataType t = cs.f16 ? CUDA_R_16F : CUDA_R_16BF;
      const float one = 1.f, zero = 0.f;
      const int N = int(n);
      auto cublas = [&] {
        // Row-major C = op(A) * op(B) as column-major C^T = op(B)^T * op(A)^T (square: one ld).
        cublasGemmEx(blas, cs.b_kn ? CUBLAS_OP_N : CUBLAS_OP_T, cs.a_km ? CUBLAS_OP_T : CUBLAS_OP_N, N, N, N, &one,
                     b, t, N, a, t, N, &zero, ref, t, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      };
      pk::Status st;
      auto pkc = [&] {
        if (cs.f16) {
          pk::Tensor<pk::f16> ta{reinterpret_cast<pk::f16*>(a), {n, n, 1, 1}, elems},
              tb{reinterpret_cast<pk::f16*>(b), {n, n, 1, 1}, elems}, tc{reinterpret_cast<pk::f16*>(c), {n, n, 1, 1}, elems};
          (void)(st = k->launch(*ctx, s, ta, tb, tc));
        } else {
          pk::Tensor<pk::bf16> ta{reinterpret_cast<pk::bf16*>(a), {n, n, 1, 1}, elems},
              tb{reinterpret_cast<pk::bf16*>(b), {n, n, 1, 1}, elems}, tc{reinterpret_cast<pk::bf16*>(c), {n, n, 1, 1}, elems};
          (void)(st = k->launch(*ctx, s, ta, tb, tc));
        }
      };
      cudaMemsetAsync(c, 0xff, elems * 2, s);  // poisoned: an unwritten element shows as NaN
      pkc();
      cublas();
      cudaStreamSynchronize(s);
      // Correctness against cuBLAS on every 7th element.
      const auto [worst, bad] =
          pk_bench::compare_sampled(c, ref, elems, [&](unsigned short b) { return to_float(b, cs.f16); });
      if (!st.is_ok() || bad) {
        std::fprintf(stderr, "%s %lld: %s, %lld elements differ from cuBLAS\n", cs.label, n,
                     st.is_ok() ? "ok" : st.message().c_str(), bad);
        ++failures;
      }
      const auto [pk_us, blas_us] = pk_bench::paired_median_us(pkc, cublas, s);
      const std::string sq = std::to_string(n) + "x" + std::to_string(n);
      const std::string bound = pk_bench::fraction_of_bound(
          pk_bench::roofline_us(PK_PKC, cs.spec, cs.kernel, "0:" + sq + ",1:" + sq + ",2:" + sq), pk_us, &beaten);
      std::snprintf(row, sizeof row, "| %s | %lld | %.1f | %.1f | %.3f | %.0f | %s | %.3g |\n", cs.label, n,
                    pk_us, blas_us, blas_us / pk_us, 2.0 * n * n * n / (pk_us * 1e6), bound.c_str(), worst);
      table += row;
      std::fputs(row, stdout);
    }
    // f32 output (bf16 A * B^T) against cuBLAS writing an f32 C from the same operands.
    if (epilogue_only) {
    } else if (auto f32 = compile(PK_VARIANTS_SPEC, "gemm_f32_out"); f32.is_ok()) {
      fill<<<1024, 256, 0, s>>>(a, elems, 10, false);
      fill<<<1024, 256, 0, s>>>(b, elems, 11, false);
      const int N = int(n);
      const float one = 1.f, zero = 0.f;
      auto cublas = [&] {
        cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, N, N, N, &one, b, CUDA_R_16BF, N, a, CUDA_R_16BF, N,
                     &zero, ref, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      };
      pk::Tensor<pk::bf16> ta{reinterpret_cast<pk::bf16*>(a), {n, n, 1, 1}, elems},
          tb{reinterpret_cast<pk::bf16*>(b), {n, n, 1, 1}, elems};
      pk::Tensor<float> tc{reinterpret_cast<float*>(c), {n, n, 1, 1}, elems};
      pk::Status st;
      auto pkc = [&] { (void)(st = f32->launch(*ctx, s, ta, tb, tc)); };
      cudaMemsetAsync(c, 0xff, elems * 4, s);  // poisoned: NaN
      pkc();
      cublas();
      cudaStreamSynchronize(s);
      std::vector<float> got(elems), want(elems);
      cudaMemcpy(got.data(), c, elems * 4, cudaMemcpyDeviceToHost);
      cudaMemcpy(want.data(), ref, elems * 4, cudaMemcpyDeviceToHost);
      double worst = 0;
      long long bad = 0;
      for (long long i = 0; i < elems; i += 7) {
        const double d = std::fabs(double(got[i]) - want[i]);
        worst = std::max(worst, std::isnan(d) ? 1e30 : d);
        bad += !(d <= 1e-3 + std::fabs(want[i]) / 4096);  // only the order of the f32 sums differs
      }
      if (!st.is_ok() || bad) {
        std::fprintf(stderr, "f32 output %lld: %s, %lld elements differ from cuBLAS\n", n,
                     st.is_ok() ? "ok" : st.message().c_str(), bad);
        ++failures;
      }
      const auto [pk_us, blas_us] = pk_bench::paired_median_us(pkc, cublas, s);
      const std::string sq = std::to_string(n) + "x" + std::to_string(n);
      const std::string bound = pk_bench::fraction_of_bound(
          pk_bench::roofline_us(PK_PKC, PK_VARIANTS_SPEC, "gemm_f32_out", "0:" + sq + ",1:" + sq + ",2:" + sq),
          pk_us, &beaten);
      std::snprintf(row, sizeof row, "| bf16, A * B^T, f32 output | %lld | %.1f | %.1f | %.3f | %.0f | %s | %.3g |\n", n,
                    pk_us, blas_us, blas_us / pk_us, 2.0 * n * n * n / (pk_us * 1e6), bound.c_str(), worst);
      table += row;
      std::fputs(row, stdout);
    } else {
      std::fprintf(stderr, "compile gemm_f32_out: %s\n", f32.status().message().c_str());
      ++failures;
    }
    // fp8 (e4m3 A times e5m2 B, A * B^T, bf16 out) against the bf16 GEMM of the same size (both
    // pkc); 64 sampled outputs checked against the exact sum.
    auto f8 = compile(PK_VARIANTS_SPEC, "gemm_fp8_scaled");
    auto b16 = compile(PK_GEMM_SPEC, "gemm");
    if (epilogue_only) {
    } else if (f8.is_ok() && b16.is_ok()) {
      unsigned char* a8 = reinterpret_cast<unsigned char*>(ref);  // the reference's room, as bytes
      unsigned char* b8 = reinterpret_cast<unsigned char*>(ref) + elems;
      fill_fp8<<<1024, 256, 0, s>>>(a8, elems, 6, false);
      fill_fp8<<<1024, 256, 0, s>>>(b8, elems, 7, true);
      fill<<<1024, 256, 0, s>>>(a, elems, 8, false);
      fill<<<1024, 256, 0, s>>>(b, elems, 9, false);
      pk::Tensor<pk::f8e4m3> ta8{reinterpret_cast<pk::f8e4m3*>(a8), {n, n, 1, 1}, elems};
      pk::Tensor<pk::f8e5m2> tb8{reinterpret_cast<pk::f8e5m2*>(b8), {n, n, 1, 1}, elems};
      pk::Tensor<pk::bf16> ta{reinterpret_cast<pk::bf16*>(a), {n, n, 1, 1}, elems},
          tb{reinterpret_cast<pk::bf16*>(b), {n, n, 1, 1}, elems},
          tc{reinterpret_cast<pk::bf16*>(c), {n, n, 1, 1}, elems};
      pk::Status s1, s2;
      cudaMemsetAsync(c, 0xff, elems * 2, s);
      (void)(s1 = f8->launch(*ctx, s, ta8, tb8, tc, 1.0f));
      cudaStreamSynchronize(s);
      std::vector<unsigned short> got(elems);
      cudaMemcpy(got.data(), c, elems * 2, cudaMemcpyDeviceToHost);
      long long bad = 0;
      for (long long j = 0; j < 64; ++j) {
        const long long r = (j * 7919) % n, col = (j * 104729) % n;
        float sum = 0.f;
        for (long long k = 0; k < n; ++k) sum += small_value(r * n + k, 6) * small_value(col * n + k, 7);
        bad += to_float(got[r * n + col], false) != to_float(pk_bench::to_bf16(sum), false);
      }
      const auto [f8_us, b16_us] = pk_bench::paired_median_us(
          [&] { (void)(s1 = f8->launch(*ctx, s, ta8, tb8, tc, 1.0f)); },
          [&] { (void)(s2 = b16->launch(*ctx, s, ta, tb, tc)); }, s);
      failures += !s1.is_ok() + !s2.is_ok() + (bad > 0);
      if (bad) std::fprintf(stderr, "fp8 %lld: %lld of 64 sampled outputs wrong\n", n, bad);
      std::snprintf(row, sizeof row,
                    "| fp8 (e4m3 * e5m2), A * B^T vs the bf16 GEMM (pkc) | %lld | %.1f | %.1f (bf16 pkc) | %.3f (bf16 / fp8) | %.0f | | %lld of 64 sampled wrong |\n",
                    n, f8_us, b16_us, b16_us / f8_us, 2.0 * n * n * n / (f8_us * 1e6), bad);
      table += row;
      std::fputs(row, stdout);
    } else {
      ++failures;
    }
    // The fused epilogues against the same GEMM alone (both pkc, bf16, A * B^T): bias + GELU,
    // then its parts apart and a column mask (tools/bench-gemm/epilogue_specs.pk.cpp).
    struct Epilogue {
      const char* label;
      const char* spec;
      const char* kernel;
    };
    const Epilogue epilogues[] = {
        {"bias, GELU", PK_VARIANTS_SPEC, "gemm_t_bias_gelu"},
        {"bias only", PK_EPILOGUE_SPEC, "gemm_t_bias"},
        {"GELU only", PK_EPILOGUE_SPEC, "gemm_t_gelu"},
        {"column mask (where)", PK_EPILOGUE_SPEC, "gemm_t_vocab_mask"},
    };
    auto plain = compile(PK_GEMM_SPEC, "gemm");
    for (const Epilogue& ep : epilogues) {
      auto fused = compile(ep.spec, ep.kernel);
      if (plain.is_ok() && fused.is_ok()) {
        fill<<<1024, 256, 0, s>>>(a, elems, 3, false);
        fill<<<1024, 256, 0, s>>>(b, elems, 4, false);
        fill<<<16, 256, 0, s>>>(bias, n, 5, false);
        pk::Tensor<pk::bf16> ta{reinterpret_cast<pk::bf16*>(a), {n, n, 1, 1}, elems},
            tb{reinterpret_cast<pk::bf16*>(b), {n, n, 1, 1}, elems},
            tc{reinterpret_cast<pk::bf16*>(c), {n, n, 1, 1}, elems},
            tbias{reinterpret_cast<pk::bf16*>(bias), {1, n, 1, 1}, n};
        pk::Status s1, s2;
        // 64 sampled outputs against a double reference of the sum and the epilogue (the
        // kernel's bf16 operands, an f32 sum and bf16 rounding of the output: 2^-7 relative).
        cudaMemsetAsync(c, 0xff, elems * 2, s);
        (void)(s1 = fused->launch(*ctx, s, ta, tb, tbias, tc));
        cudaStreamSynchronize(s);
        {
          std::vector<unsigned short> ha(elems), hb(elems), hc(elems), hbias(n);
          cudaMemcpy(ha.data(), a, elems * 2, cudaMemcpyDeviceToHost);
          cudaMemcpy(hb.data(), b, elems * 2, cudaMemcpyDeviceToHost);
          cudaMemcpy(hc.data(), c, elems * 2, cudaMemcpyDeviceToHost);
          cudaMemcpy(hbias.data(), bias, n * 2, cudaMemcpyDeviceToHost);
          long long bad = 0;
          for (long long j = 0; j < 64; ++j) {
            const long long r = (j * 7919 + 13) % n, col = (j * 104729 + 5) % n;
            double sum = 0;
            for (long long k = 0; k < n; ++k)
              sum += double(to_float(ha[r * n + k], false)) * to_float(hb[col * n + k], false);
            const double want = epilogue_reference(ep.kernel, sum, to_float(hbias[col], false), col, n);
            const double got = to_float(hc[r * n + col], false);
            bad += !(std::fabs(got - want) <= 0.02 + std::fabs(want) / 64);
          }
          if (bad) std::fprintf(stderr, "%s %lld: %lld of 64 sampled outputs wrong\n", ep.kernel, n, bad);
          failures += bad > 0;
        }
        const auto [fused_us, plain_us] = pk_bench::paired_median_us(
            [&] { (void)(s1 = fused->launch(*ctx, s, ta, tb, tbias, tc)); },
            [&] { (void)(s2 = plain->launch(*ctx, s, ta, tb, tc)); }, s);
        failures += !s1.is_ok() + !s2.is_ok();
        const std::string sq = std::to_string(n) + "x" + std::to_string(n);
        const std::string bound = pk_bench::fraction_of_bound(
            pk_bench::roofline_us(PK_PKC, ep.spec, ep.kernel,
                                  "0:" + sq + ",1:" + sq + ",2:1x" + std::to_string(n) + ",3:" + sq),
            fused_us, &beaten);
        std::snprintf(row, sizeof row,
                      "| bf16, A * B^T + %s (fused) vs the GEMM alone | %lld | %.1f | %.1f (GEMM alone) | %.3f (fused / alone) | %.0f | %s | |\n",
                      ep.label, n, fused_us, plain_us, fused_us / plain_us, 2.0 * n * n * n / (fused_us * 1e6), bound.c_str());
        table += row;
        std::fputs(row, stdout);
      } else {
        std::fprintf(stderr, "compile %s: %s\n", ep.kernel, fused.is_ok() ? "gemm failed" : fused.status().message().c_str());
        ++failures;
      }
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(ref);
    cudaFree(bias);
  }
  if (argc > 1)
    if (FILE* f = std::fopen(argv[1], "w")) std::fputs(table.c_str(), f), std::fclose(f);
  cublasDestroy(blas);
  return failures || beaten ? 1 : 0;
}
