// pk-bench-gemm-jit: the GEMM template launched two ways on one GPU, in the same run: through the
// JIT from its launch description (templates/specs/gemm.pk.cpp compiled by a pkc executable, the
// path pk_torch and the typed launchers take) and through its nvcc host plan
// (pk::gemm::GemmPlan). Each: 5 warm-ups, then the median of 7 batches of 20 back-to-back
// launches timed with one event pair, the two ways alternating batch by batch; the ratio
// JIT / plan is the per-call cost of building the parameter block. Writes a Markdown table to argv[1] (and stdout).
#include <pk/jit/compile.h>
#include "paired_timing.h"
#include "roofline_bound.h"
#include <pk/templates/host/fused_gemm.cuh>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) return std::puts("skipped: no GPU"), 77;
  auto text = pk::jit::read_spec(PK_GEMM_SPEC);
  auto kernel = text.is_ok() ? pk::jit::compile_spec(PK_GEMM_SPEC, *text, {}, pk::jit::pkc_frontend(PK_PKC))
                             : pk::Result<pk::jit::Kernel>(text.status());
  if (!kernel.is_ok()) return std::fprintf(stderr, "compile: %s\n", kernel.status().message().c_str()), 1;
  auto ex = pk::create_single_process_exchanges(1);
  if (!ex.is_ok()) return std::fprintf(stderr, "%s\n", ex.status().message().c_str()), 1;
  auto ctx = pk::Context::create(*(*ex)[0]);
  if (!ctx.is_ok()) return std::fprintf(stderr, "%s\n", ctx.status().message().c_str()), 1;
  cudaStream_t stream = (*ctx)->stream();
  std::string table =
      "| M x N x K | plan (nvcc) us | JIT us | JIT / plan | JIT TFLOP/s | JIT of roofline bound |\n|---|---|---|---|---|---|\n";
  int failures = 0, beaten = 0;
  for (long long s : {4096LL, 8192LL}) {
    const long long M = s, N = s, K = s;
    pk::bf16 *a, *b, *c;
    cudaMalloc(&a, M * K * 2);
    cudaMalloc(&b, N * K * 2);
    cudaMalloc(&c, M * N * 2);
    cudaMemset(a, 0x3c, M * K * 2);  // about 0.01: finite sums
    cudaMemset(b, 0x3c, N * K * 2);
    auto plan = pk::gemm::GemmPlan::create(a, b, c, M, N, K);
    if (!plan.is_ok()) return std::fprintf(stderr, "%s\n", plan.status().message().c_str()), 1;
    pk::Tensor<pk::bf16> ta{a, {M, K, 1, 1}, M * K}, tb{b, {N, K, 1, 1}, N * K}, tc{c, {M, N, 1, 1}, M * N};
    pk::Status plan_status, jit_status;
    const auto [plan_us, jit_us] = pk_bench::paired_median_us(
        [&] { plan_status = plan->launch(stream); },
        [&] { jit_status = kernel->launch(**ctx, stream, ta, tb, tc); }, stream);
    failures += !plan_status.is_ok() + !jit_status.is_ok();
    if (!jit_status.is_ok()) std::fprintf(stderr, "JIT launch: %s\n", jit_status.message().c_str());
    const std::string dims = std::to_string(s) + "x" + std::to_string(s);
    const std::string bound = pk_bench::fraction_of_bound(
        pk_bench::roofline_us(PK_PKC, PK_GEMM_SPEC, "gemm", "0:" + dims + ",1:" + dims + ",2:" + dims), jit_us,
        &beaten);
    char row[256];
    std::snprintf(row, sizeof row, "| %lld^3 | %.1f | %.1f | %.3f | %.0f | %s |\n", s, plan_us, jit_us,
                  jit_us / plan_us, 2.0 * M * N * K / (jit_us * 1e6), bound.c_str());
    table += row;
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  std::fputs(table.c_str(), stdout);
  if (argc > 1)
    if (FILE* f = std::fopen(argv[1], "w")) std::fputs(table.c_str(), f), std::fclose(f);
  return failures || beaten ? 1 : 0;
}
