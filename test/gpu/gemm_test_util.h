// Launching a GEMM template instance that pkc emitted (a spec's `Job`) by hand, as the one-GPU
// spec tests do: its parameter block as the kernel's `// pk-param` lines describe it (bf16 or f16
// TMA maps, the tile order, the sizes; the epilogue's fields are the caller's), and the launch.
#pragma once
#include <pk/runtime/template_launch.h>

#include <algorithm>

#include "harness.h"

namespace pkt {

// A [M, K] x B ([N, K], or [K, N] when b_kn) -> C [M, N] job of 2-byte elements.
template <class Job>
void fill_gemm_params(typename Job::Params& p, const void* a, const void* b, void* c, long long M, long long N,
                      long long K, bool b_kn) {
  auto ma = pk::encode_bf16_tensor_map(a, {K, M}, {64, 128});
  auto mb = b_kn ? pk::encode_bf16_tensor_map(b, {N, K}, {64, 64}) : pk::encode_bf16_tensor_map(b, {K, N}, {64, 256});
  auto mc = pk::encode_bf16_tensor_map(c, {N * Job::kOutBytes / 2, M}, {64, 64});  // 2-byte units
  PKT_CHECK(ma.is_ok() && mb.is_ok() && mc.is_ok(), "gemm tensor maps");
  if (!ma.is_ok() || !mb.is_ok() || !mc.is_ok()) return;
  p.a = *ma, p.b = *mb, p.c = *mc;
  const int tm = static_cast<int>((M + 127) / 128), tn = static_cast<int>((N + 255) / 256);
  p.order = decltype(p.order){1, tm, tn, 16, 0, 0, 0};
  p.k = static_cast<int>(K), p.m = static_cast<int>(M), p.n = static_cast<int>(N);
  p.comm_blocks = 0;
  if constexpr (Job::kDirectStore) p.c_out = static_cast<float*>(c);  // f32: stored from registers
}

// One block per tile, at most `grid` of them (the template walks the rest persistently).
template <class Params, class K>
void launch_gemm(K kernel, const Params& p, int tiles, int grid) {
  PKT_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(pk::gemm::kSharedBytes)));
  kernel<<<std::min(tiles, grid), pk::gemm::kThreads, pk::gemm::kSharedBytes>>>(p);
}

}  // namespace pkt
