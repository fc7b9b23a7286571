// The roofline ceilings pk-calibrate measures on one GPU: the tensor cores' dense peak per input
// type (back-to-back wgmma from shared memory, no loads, every SM: bf16, f16, fp8 e4m3) and the HBM's
// (the best of a read-only, a write-only and a copy kernel over 2 GiB); and the launch time of
// an empty kernel launched back to back from a CUDA graph. Each is the best of several runs: a ceiling must never
// be beaten by a real kernel, so it leans high (and the launch time low).
#pragma once
#include <pk/templates/wgmma.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>

namespace pk_calibrate {

struct Ceilings {
  double bf16_tflops = 0, f16_tflops = 0, fp8_tflops = 0, hbm_gbs = 0;
  double launch_us = 0;  // per launch of an empty kernel, 1000 back to back in a CUDA graph
};

constexpr int kWgmmaThreads = 384;  // three warpgroups per SM, as the GEMM template's consumers
constexpr int kWgmmaSmem = 1024 + 8192 + 32768;  // alignment slack, A 64 x 64, B 256 x 64

// Each warpgroup accumulates 64 x 256 x 128 bytes of K per trip (four 32-byte wgmma steps:
// m64n256k16 for bf16 / f16, m64n256k32 for fp8 e4m3) into its own registers, keeping one group
// of them in flight while it issues the next.
template <pk::wg::Operand Op>
__global__ void __launch_bounds__(kWgmmaThreads, 1) k_wgmma_peak(int trips, float* sink) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = raw + ((1024 - pk::smem_addr(raw) % 1024) % 1024);  // 1024-byte swizzle atoms
  const unsigned ones = Op == pk::wg::Operand::f16 ? 0x3c003c00u : Op == pk::wg::Operand::bf16 ? 0x3f803f80u : 0x38383838u;
  for (int i = threadIdx.x; i < (8192 + 32768) / 4; i += blockDim.x) reinterpret_cast<unsigned*>(smem)[i] = ones;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // visible to wgmma's reads
  __syncthreads();
  const unsigned long long da = pk::wg::desc_k_major_sw128(smem);
  const unsigned long long db = pk::wg::desc_k_major_sw128(smem + 8192);
  float d[128];
#pragma unroll
  for (int j = 0; j < 128; ++j) d[j] = 0.f;
  for (int trip = 0; trip < trips; ++trip) {
#pragma unroll
    for (int j = 0; j < 128; ++j) pk::wg::fence_operand(d[j]);
    pk::wg::fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) pk::wg::mma_m64n256_32bytes<Op, Op, false>(d, da + 2ull * kk, db + 2ull * kk);
    pk::wg::commit();
#pragma unroll
    for (int j = 0; j < 128; ++j) pk::wg::fence_operand(d[j]);
    pk::wg::wait<1>();
  }
  pk::wg::wait<0>();
  float s = 0;
#pragma unroll
  for (int j = 0; j < 128; ++j) s += d[j];
  if (s == -1.f) sink[threadIdx.x] = s;  // never: keeps the products live
}

__global__ void k_empty() {}

__global__ void k_read(const uint4* __restrict__ x, long long n, unsigned* sink) {
  unsigned acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const uint4 v = x[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;  // almost never: keeps the loads
}
__global__ void k_write(uint4* __restrict__ y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = make_uint4(unsigned(i), 1u, 2u, 3u);
}
__global__ void k_copy(const uint4* __restrict__ x, uint4* __restrict__ y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i];
}

// The shortest of `runs` timed calls of `launch`, in milliseconds (after one warm-up).
inline double best_ms(cudaStream_t s, const std::function<void()>& launch, int runs = 5) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  launch();
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    cudaEventRecord(a, s);
    launch();
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    best = std::min(best, double(ms));
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}

// Measures the ceilings on the current device; 0 for what failed to run.
inline Ceilings measure_ceilings(cudaStream_t s) {
  Ceilings c;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* sink = nullptr;
  cudaMalloc(&sink, 4096);
  const int trips = 4096;
  const double flops = 2.0 * 64 * 256 * 64 * trips * (kWgmmaThreads / 128) * double(sms);  // fp8: twice the K
  using pk::wg::Operand;
  cudaFuncSetAttribute(k_wgmma_peak<Operand::bf16>, cudaFuncAttributeMaxDynamicSharedMemorySize, kWgmmaSmem);
  cudaFuncSetAttribute(k_wgmma_peak<Operand::f16>, cudaFuncAttributeMaxDynamicSharedMemorySize, kWgmmaSmem);
  cudaFuncSetAttribute(k_wgmma_peak<Operand::e4m3>, cudaFuncAttributeMaxDynamicSharedMemorySize, kWgmmaSmem);
  const double bf16 = best_ms(s, [&] { k_wgmma_peak<Operand::bf16><<<sms, kWgmmaThreads, kWgmmaSmem, s>>>(trips, sink); });
  const double f16 = best_ms(s, [&] { k_wgmma_peak<Operand::f16><<<sms, kWgmmaThreads, kWgmmaSmem, s>>>(trips, sink); });
  const double fp8 = best_ms(s, [&] { k_wgmma_peak<Operand::e4m3><<<sms, kWgmmaThreads, kWgmmaSmem, s>>>(trips, sink); });
  if (cudaGetLastError() == cudaSuccess)
    c.bf16_tflops = flops / (bf16 * 1e9), c.f16_tflops = flops / (f16 * 1e9), c.fp8_tflops = 2 * flops / (fp8 * 1e9);

  const long long bytes = 1ll << 31, n = bytes / 16;
  uint4 *x = nullptr, *y = nullptr;
  if (cudaMalloc(&x, bytes) == cudaSuccess && cudaMalloc(&y, bytes) == cudaSuccess) {
    cudaMemset(x, 1, bytes);
    const int grid = 4 * sms;
    const double read = best_ms(s, [&] { k_read<<<grid, 512, 0, s>>>(x, n, reinterpret_cast<unsigned*>(sink)); });
    const double write = best_ms(s, [&] { k_write<<<grid, 512, 0, s>>>(y, n); });
    const double copy = best_ms(s, [&] { k_copy<<<grid, 512, 0, s>>>(x, y, n); });
    const double engine = best_ms(s, [&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s); });
    if (cudaGetLastError() == cudaSuccess)
      c.hbm_gbs = std::max({bytes / (read * 1e6), bytes / (write * 1e6), 2 * bytes / (copy * 1e6),
                            2 * bytes / (engine * 1e6)});
  }
  cudaFree(x);
  cudaFree(y);
  cudaFree(sink);
  // Launched from a CUDA graph, so the host's issue rate does not count: the GPU's own floor
  // per kernel, below what any launch path reaches.
  const int launches = 1000;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < launches; ++i) k_empty<<<1, 32, 0, s>>>();
  if (cudaStreamEndCapture(s, &graph) == cudaSuccess &&
      cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
    const double empty = best_ms(s, [&] { cudaGraphLaunch(exec, s); });
    if (cudaGetLastError() == cudaSuccess) c.launch_us = empty * 1e3 / launches;
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  return c;
}

}  // namespace pk_calibrate
