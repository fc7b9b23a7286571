// pk-sfu-probe: what the SFU gives a GEMM epilogue's tanh (docs/benchmarks/gemm-specs-1xH200.md,
// "tanh pairs on f16x2"): the throughput of tanh.approx and ex2.approx in f32 against their f16x2
// and bf16x2 forms (values per clock and SM, eight independent chains a thread), and the accuracy
// of tanh.approx.f32 and of an f32 pair through one tanh.approx.f16x2 against a double tanh.
// Not built by CMake (a probe): nvcc -arch=sm_90a -O3 -o sfu_probe tools/bench-gemm/sfu_probe.cu
#include <cmath>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
template <int Mode>
__global__ void k(float* out, int iters) {
  static_assert(Mode >= 0 && Mode <= 5, "modes");
  float a[8];
  unsigned p[8];
  for (int i = 0; i < 8; ++i) a[i] = 0.001f * (threadIdx.x + i), p[i] = 0x3c003c00u + threadIdx.x + i;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      if (Mode == 0) asm volatile("tanh.approx.f32 %0, %0;" : "+f"(a[i]));
      if (Mode == 1) asm volatile("tanh.approx.f16x2 %0, %0;" : "+r"(p[i]));
      if (Mode == 2) asm volatile("tanh.approx.bf16x2 %0, %0;" : "+r"(p[i]));
      if (Mode == 3) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(a[i]));
      if (Mode == 5) asm volatile("ex2.approx.f16x2 %0, %0;" : "+r"(p[i]));
      if (Mode == 4 && i % 2 == 0) {  // two f32 through one f16x2 tanh, back to f32
        asm volatile("{.reg .b32 h; .reg .f16 lo, hi;\n cvt.rn.f16x2.f32 h, %1, %0;\n tanh.approx.f16x2 h, h;\n"
                     " mov.b32 {lo, hi}, h;\n cvt.f32.f16 %0, lo;\n cvt.f32.f16 %1, hi;}" : "+f"(a[i]), "+f"(a[i + 1]));
      }
    }
  }
  float s = 0;
  for (int i = 0; i < 8; ++i) s += a[i] + __uint_as_float(p[i]);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
// Accuracy: tanh by tanh.approx.f32 and by the f16x2 pair (f32 in, f32 out) over [-12, 12].
__global__ void accuracy(int n, float* t32, float* t16) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * i + 1 >= n) return;
  const float x0 = -12.f + 24.f * float(2 * i) / float(n), x1 = -12.f + 24.f * float(2 * i + 1) / float(n);
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x0));
  t32[2 * i] = y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x1));
  t32[2 * i + 1] = y;
  float y0, y1;
  asm("{.reg .b32 h; .reg .f16 lo, hi;\n cvt.rn.f16x2.f32 h, %3, %2;\n tanh.approx.f16x2 h, h;\n"
      " mov.b32 {lo, hi}, h;\n cvt.f32.f16 %0, lo;\n cvt.f32.f16 %1, hi;}" : "=f"(y0), "=f"(y1) : "f"(x0), "f"(x1));
  t16[2 * i] = y0, t16[2 * i + 1] = y1;
}
int main() {
  {
    const int n = 1 << 20;
    float *a, *b;
    cudaMalloc(&a, n * 4), cudaMalloc(&b, n * 4);
    accuracy<<<n / 512, 256>>>(n, a, b);
    std::vector<float> ha(n), hb(n);
    cudaMemcpy(ha.data(), a, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(hb.data(), b, n * 4, cudaMemcpyDeviceToHost);
    double abs32 = 0, abs16 = 0, rel32 = 0, rel16 = 0;
    for (int i = 0; i < n; ++i) {
      const float x = -12.f + 24.f * float(i) / float(n);
      const double want = std::tanh(double(x));
      abs32 = std::max(abs32, std::fabs(ha[i] - want)), abs16 = std::max(abs16, std::fabs(hb[i] - want));
      if (std::fabs(want) > 1e-3) rel32 = std::max(rel32, std::fabs(ha[i] - want) / std::fabs(want)),
                                  rel16 = std::max(rel16, std::fabs(hb[i] - want) / std::fabs(want));
    }
    printf("| tanh accuracy over [-12, 12] | f32 approx: max abs %.3g (2^%.2f), max rel %.3g (2^%.2f) | f16x2 pair: max abs %.3g (2^%.2f), max rel %.3g (2^%.2f) |\n",
           abs32, std::log2(abs32), rel32, std::log2(rel32), abs16, std::log2(abs16), rel16, std::log2(rel16));
  }
  float* out;
  cudaMalloc(&out, 132 * 8 * 1024 * 4 * 4);
  const int iters = 4096;
  const char* names[6] = {"tanh.approx.f32", "tanh.approx.f16x2", "tanh.approx.bf16x2", "ex2.approx.ftz.f32",
                          "f32 pair -> f16x2 tanh -> f32 pair", "ex2.approx.f16x2"};
  for (int mode = 0; mode < 6; ++mode) {
    auto launch = [&] {
      if (mode == 0) k<0><<<132 * 8, 256>>>(out, iters);
      if (mode == 1) k<1><<<132 * 8, 256>>>(out, iters);
      if (mode == 2) k<2><<<132 * 8, 256>>>(out, iters);
      if (mode == 3) k<3><<<132 * 8, 256>>>(out, iters);
      if (mode == 4) k<4><<<132 * 8, 256>>>(out, iters);
      if (mode == 5) k<5><<<132 * 8, 256>>>(out, iters);
    };
    launch();
    cudaEvent_t a, b;
    cudaEventCreate(&a); cudaEventCreate(&b);
    cudaEventRecord(a);
    for (int r = 0; r < 5; ++r) launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    const double ops = 5.0 * 132 * 8 * 256 * iters * 8;  // instructions
    const double vals = ops * (mode == 1 || mode == 2 || mode == 5 ? 2 : 1);  // mode 4: 8 values per unrolled trip too
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
    printf("| %s | %.3f ms | %.1f Gvalues/s | %.2f values/clk/SM (at %d MHz, %d SMs) |\n", names[mode], ms / 5, vals / (ms * 1e6),
           vals / (ms * 1e-3) / (clk * 1e3) / sms, clk / 1000, sms);
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
