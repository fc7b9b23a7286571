// pk-bench-gemm-general: the shipped bf16 GEMM spec (A * B^T, 128 x 256 tiles stepping K by 64)
// compiled onto the general tile path (pkc --templates=false: register tiles, pk/tile/mma.cuh's
// tensor-core mma.sync route) against cuBLAS on the same inputs in the same run, one GPU, at
// 2048^3 and 4096^3; at 2048^3 also with the accumulator added back into its register tile every
// trip (-DPK_TILE_MMA_NO_CARRY, before fragments were carried) and on the fp32 FMA route
// (-DPK_TILE_MMA_FMA). This is the speed of an mma a template does not take (a loop with a
// second product, a dequantised operand). Each pair alternates batches of 20 launches (median of 7,
// after 5 warm-ups); the output is checked against cuBLAS on every 7th element first. Writes a
// Markdown table to argv[1] (and stdout).
#include <cublas_v2.h>

#include <pk/jit/compile.h>
#include "bf16_host.h"
#include "one_gpu.h"
#include "paired_timing.h"
#include "sampled_compare.h"

#include <cstdio>
#include <string>

namespace {

// Values in [-1, 1) from the index, as bf16 bits.
__global__ void fill(unsigned short* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed * 40503u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    const float x = float(h % 2048) / 1024.f - 1.f;
    p[i] = static_cast<unsigned short>(__float_as_uint(x) >> 16);
  }
}

}  // namespace

int main(int argc, char** argv) {
  pk_bench::OneGpu gpu = pk_bench::one_gpu();
  pk::Context* ctx = gpu.ctx.get();
  cudaStream_t s = ctx->stream();
  cublasHandle_t blas;
  cublasCreate(&blas);
  cublasSetStream(blas, s);
  auto text = pk::jit::read_spec(PK_GEMM_SPEC);
  if (!text.is_ok()) return std::fprintf(stderr, "%s\n", text.status().message().c_str()), 1;
  pk::jit::Options o;
  o.kernel = "gemm";
  o.templates = false;
  auto tensor_cores = pk::jit::compile_spec(PK_GEMM_SPEC, *text, o, pk::jit::pkc_frontend(PK_PKC));
  o.nvrtc_options.push_back("-DPK_TILE_MMA_NO_CARRY");  // the product added into a tile every trip
  auto no_carry = pk::jit::compile_spec(PK_GEMM_SPEC, *text, o, pk::jit::pkc_frontend(PK_PKC));
  o.nvrtc_options.back() = "-DPK_TILE_MMA_FMA";  // the fp32 FMA route, for comparison
  auto fma = pk::jit::compile_spec(PK_GEMM_SPEC, *text, o, pk::jit::pkc_frontend(PK_PKC));
  if (!tensor_cores.is_ok() || !no_carry.is_ok() || !fma.is_ok()) return std::fprintf(stderr, "compile failed\n"), 1;
  std::string table = "| GEMM (general tile path) | route | M = N = K | pkc us | cuBLAS us | pkc / cuBLAS speed | pkc TFLOP/s | max abs diff |\n"
                      "|---|---|---|---|---|---|---|---|\n";
  int failures = 0;
  struct Run { const char* route; pk::jit::Kernel* k; long long n; };
  const Run runs[] = {{"mma.sync, fragments carried", &*tensor_cores, 2048},
                      {"mma.sync, added back each trip", &*no_carry, 2048},
                      {"fp32 FMA", &*fma, 2048},
                      {"mma.sync, fragments carried", &*tensor_cores, 4096}};
  for (const Run& run : runs) {
    const long long n = run.n;
    auto* k = run.k;
    const long long elems = n * n;
    unsigned short *a, *b, *c, *ref;
    cudaMalloc(&a, elems * 2);
    cudaMalloc(&b, elems * 2);
    cudaMalloc(&c, elems * 2);
    cudaMalloc(&ref, elems * 2);
    fill<<<1024, 256, 0, s>>>(a, elems, 1);
    fill<<<1024, 256, 0, s>>>(b, elems, 2);
    const float one = 1.f, zero = 0.f;
    const int N = int(n);
    auto cublas = [&] {
      cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, N, N, N, &one, b, CUDA_R_16BF, N, a, CUDA_R_16BF, N, &zero, ref,
                   CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    pk::Status st;
    pk::Tensor<pk::bf16> ta{reinterpret_cast<pk::bf16*>(a), {n, n, 1, 1}, elems},
        tb{reinterpret_cast<pk::bf16*>(b), {n, n, 1, 1}, elems}, tc{reinterpret_cast<pk::bf16*>(c), {n, n, 1, 1}, elems};
    auto pkc = [&] { (void)(st = k->launch(*ctx, s, ta, tb, tc)); };
    cudaMemsetAsync(c, 0xff, elems * 2, s);  // poisoned: an unwritten element shows as NaN
    pkc();
    cublas();
    cudaStreamSynchronize(s);
    const auto [worst, bad] = pk_bench::compare_sampled(c, ref, elems, pk_bench::from_bf16);
    if (!st.is_ok() || bad) {
      std::fprintf(stderr, "%lld: %s, %lld elements differ from cuBLAS\n", n, st.is_ok() ? "ok" : st.message().c_str(), bad);
      ++failures;
    }
    const auto [pk_us, blas_us] = pk_bench::paired_median_us(pkc, cublas, s);
    char row[256];
    std::snprintf(row, sizeof row, "| bf16, A * B^T | %s | %lld | %.1f | %.1f | %.3f | %.1f | %.3g |\n", run.route, n, pk_us, blas_us,
                  blas_us / pk_us, 2.0 * n * n * n / (pk_us * 1e6), worst);
    table += row;
    std::fputs(row, stdout);
    cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(ref);
  }
  if (argc > 1)
    if (FILE* f = std::fopen(argv[1], "w")) std::fputs(table.c_str(), f), std::fclose(f);
  cublasDestroy(blas);
  return failures ? 1 : 0;
}
