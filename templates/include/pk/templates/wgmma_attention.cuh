// The wgmma shapes the attention main loop issues (sm_90a, bf16 or f16 in, fp32 accumulate):
//   S = Q K^T   m64n128k16, A and B from shared memory (both K-major), first step overwrites;
//   O += P V    m64n{64,128}k16, A (the probabilities) from registers, B = V N-major.
// Accumulators follow the wgmma layout (wgmma.cuh): thread t of the warpgroup holds, for column
// group g = j / 4, rows 16 * (t / 32) + (t % 32) / 4 (+8 for j % 4 >= 2) and columns
// 8 * g + 2 * (t % 4) + (j % 2). The register A operand of one k16 step is that layout's groups
// 2 kk and 2 kk + 1 packed as bf16 (f16) pairs, so S turns into P without leaving the registers.
#pragma once
#include <pk/templates/wgmma.cuh>

namespace pk {
namespace wg {

#define PK_WG_D8(i)                                                                              \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define PK_WG_D32 PK_WG_D8(0), PK_WG_D8(8), PK_WG_D8(16), PK_WG_D8(24)
#define PK_WG_D64 PK_WG_D32, PK_WG_D8(32), PK_WG_D8(40), PK_WG_D8(48), PK_WG_D8(56)
#define PK_WG_R32                                                                  \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "          \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define PK_WG_R64                                                                  \
  PK_WG_R32 ", "                                                                   \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

// d = (accumulate ? d : 0) + A(64x16) * B(16x128)^T, both K-major descriptors.
template <bool F16>
__device__ __forceinline__ void mma_ss_m64n128k16(float (&d)[64], unsigned long long desc_a,
                                                  unsigned long long desc_b, int accumulate) {
#define PK_WG_SS(T)                                                                                   \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                          \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." T " {" PK_WG_R64 "}, %64, %65, p, 1, 1, 0, 0;\n}\n" \
               : PK_WG_D64                                                                            \
               : "l"(desc_a), "l"(desc_b), "r"(accumulate))
  if constexpr (F16) PK_WG_SS("f16.f16");
  else PK_WG_SS("bf16.bf16");
#undef PK_WG_SS
}

// d += A(64x16, registers) * B(16xN), B N-major (stored [K, N]: V's rows are keys).
template <int N, bool F16>
__device__ __forceinline__ void mma_rs_n_major(float (&d)[N / 2], const unsigned int (&a)[4],
                                               unsigned long long desc_b) {
  static_assert(N == 64 || N == 128, "attention's P V is m64n64k16 or m64n128k16");
#define PK_WG_RS128(T)                                                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                  \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." T " {" PK_WG_R64 "}, "         \
               "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"                                \
               : PK_WG_D64                                                                    \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b))
#define PK_WG_RS64(T)                                                                       \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                  \
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." T " {" PK_WG_R32 "}, "          \
               "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"                                \
               : PK_WG_D32                                                                    \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b))
  if constexpr (N == 128 && F16) PK_WG_RS128("f16.f16");
  else if constexpr (N == 128) PK_WG_RS128("bf16.bf16");
  else if constexpr (F16) PK_WG_RS64("f16.f16");
  else PK_WG_RS64("bf16.bf16");
#undef PK_WG_RS128
#undef PK_WG_RS64
}

#undef PK_WG_D8
#undef PK_WG_D32
#undef PK_WG_D64
#undef PK_WG_R32
#undef PK_WG_R64

}  // namespace wg
}  // namespace pk
