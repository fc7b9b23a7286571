// Hopper warpgroup matrix multiply (wgmma, sm_90a): shared-memory descriptors and the
// m64n256k16 bf16 / f16 (m64n256k32 fp8) -> f32 and m64n256k32 s8 -> s32 instructions the GEMM
// main loop issues, with B K-major or N-major.
#pragma once
#include <pk/device/bf16.cuh>
#include <pk/device/ptx.cuh>

namespace pk {
namespace wg {

// Descriptor of a K-major operand tile in shared memory written by TMA with 128-byte swizzle:
// rows of 64 bf16 (128 B), 8-row groups 1024 B apart (stride byte offset). The tile must be
// 1024-byte aligned (base offset 0); advancing along K by 16 elements adds 32 B to the start.
__device__ __forceinline__ unsigned long long desc_k_major_sw128(const void* smem) {
  const unsigned long long a = smem_addr(smem);
  return ((a & 0x3FFFFull) >> 4)            // start address, 16-byte units
         | (1ull << 16)                       // leading byte offset: unused with this swizzle
         | ((1024ull >> 4) << 32)             // stride byte offset: next 8-row group
         | (1ull << 62);                      // 128-byte swizzle
}

// Descriptor of an N-major operand B (stored [K, N]) that TMA wrote with 128-byte swizzle as
// boxes of K-rows x 64 N-elements (the next 64 columns in the next box, `box_bytes` further on):
// within a swizzle atom, 64 N-elements are contiguous and 8 K-rows 128 B apart; atoms follow
// along K every 1024 B (stride byte offset) and along N every box (leading byte offset).
// Advancing along K by 16 rows adds 2048 B to the start. The GEMM's boxes are 64 x 64 (8 KiB).
__device__ __forceinline__ unsigned long long desc_n_major_sw128(const void* smem,
                                                                 unsigned int box_bytes = 8192) {
  const unsigned long long a = smem_addr(smem);
  return ((a & 0x3FFFFull) >> 4)                             // start address, 16-byte units
         | ((static_cast<unsigned long long>(box_bytes) >> 4) << 16)  // leading: next 64 N-elements
         | ((1024ull >> 4) << 32)                              // stride byte offset: next 8 K-rows
         | (1ull << 62);                                       // 128-byte swizzle
}

// Orders this warpgroup's register/shared accesses before the next wgmma reads them.
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
// Waits until at most N committed groups of this warpgroup are still in flight.
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accumulator reads/writes across wgmma issue/wait points.
__device__ __forceinline__ void fence_operand(float& x) { asm volatile("" : "+f"(x)::"memory"); }
__device__ __forceinline__ void fence_operand(int& x) { asm volatile("" : "+r"(x)::"memory"); }

// The 128 fp32 accumulators of an m64n256 wgmma: their operand list in the PTX and the asm
// outputs that bind them to d[0] .. d[127] (read and written). d follows the wgmma
// accumulator layout: thread t of the warpgroup holds, for column group g = j / 4, rows
// 16 * (t / 32) + (t % 32) / 4 (+8 for j % 4 >= 2) and columns 8 * g + 2 * (t % 4) + (j % 2).
#define PK_WGMMA_D128 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "       \
  "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "       \
  "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "       \
  "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "       \
  "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, "       \
  "%87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, "         \
  "%103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, "        \
  "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define PK_WGMMA_D128_OUT_AS(C) \
  C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]),               \
  C(d[7]), C(d[8]), C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]),           \
  C(d[14]), C(d[15]), C(d[16]), C(d[17]), C(d[18]), C(d[19]),                  \
  C(d[20]), C(d[21]), C(d[22]), C(d[23]), C(d[24]), C(d[25]),                  \
  C(d[26]), C(d[27]), C(d[28]), C(d[29]), C(d[30]), C(d[31]),                  \
  C(d[32]), C(d[33]), C(d[34]), C(d[35]), C(d[36]), C(d[37]),                  \
  C(d[38]), C(d[39]), C(d[40]), C(d[41]), C(d[42]), C(d[43]),                  \
  C(d[44]), C(d[45]), C(d[46]), C(d[47]), C(d[48]), C(d[49]),                  \
  C(d[50]), C(d[51]), C(d[52]), C(d[53]), C(d[54]), C(d[55]),                  \
  C(d[56]), C(d[57]), C(d[58]), C(d[59]), C(d[60]), C(d[61]),                  \
  C(d[62]), C(d[63]), C(d[64]), C(d[65]), C(d[66]), C(d[67]),                  \
  C(d[68]), C(d[69]), C(d[70]), C(d[71]), C(d[72]), C(d[73]),                  \
  C(d[74]), C(d[75]), C(d[76]), C(d[77]), C(d[78]), C(d[79]),                  \
  C(d[80]), C(d[81]), C(d[82]), C(d[83]), C(d[84]), C(d[85]),                  \
  C(d[86]), C(d[87]), C(d[88]), C(d[89]), C(d[90]), C(d[91]),                  \
  C(d[92]), C(d[93]), C(d[94]), C(d[95]), C(d[96]), C(d[97]),                  \
  C(d[98]), C(d[99]), C(d[100]), C(d[101]), C(d[102]), C(d[103]),              \
  C(d[104]), C(d[105]), C(d[106]), C(d[107]), C(d[108]), C(d[109]),            \
  C(d[110]), C(d[111]), C(d[112]), C(d[113]), C(d[114]), C(d[115]),            \
  C(d[116]), C(d[117]), C(d[118]), C(d[119]), C(d[120]), C(d[121]),            \
  C(d[122]), C(d[123]), C(d[124]), C(d[125]), C(d[126]), C(d[127])
#define PK_WGMMA_D128_OUT PK_WGMMA_D128_OUT_AS("+f")
// s32 accumulators (int8 wgmma) live in integer registers.
#define PK_WGMMA_D128_OUT_S32 PK_WGMMA_D128_OUT_AS("+r")

// d[128] += A(64 x 32 bytes of K) * B(32 bytes of K x 256) from descriptors: for bf16 / f16
// (m64n256k16) A K-major (stored [64][16], AMMajor false) or M-major (stored [16][64], AMMajor
// true), B K-major (stored [256][16], BNMajor false) or N-major (stored [16][256], BNMajor
// true); for fp8 (m64n256k32, e4m3 / e5m2 for A and for B) B K-major only,
// as fp8 wgmma has no transpose.
#define PK_WGMMA_M64N256K16(TYPE)                                                                \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" /* scale-d = 1: accumulate into d */  \
               "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {" PK_WGMMA_D128   \
               "}, %128, %129, p, 1, 1, %130, %131;\n}\n"                                        \
               : PK_WGMMA_D128_OUT                                                               \
               : "l"(desc_a), "l"(desc_b), "n"(AMMajor ? 1 : 0), "n"(BNMajor ? 1 : 0))
#define PK_WGMMA_M64N256K32_F8(TA, TB)                                                           \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                        \
               "wgmma.mma_async.sync.aligned.m64n256k32.f32." TA "." TB " {" PK_WGMMA_D128       \
               "}, %128, %129, p, 1, 1;\n}\n"                                                    \
               : PK_WGMMA_D128_OUT                                                               \
               : "l"(desc_a), "l"(desc_b))
// int8 (m64n256k32 s8 x s8 into s32, exact; no scale or transpose operands).
#define PK_WGMMA_M64N256K32_S8                                                                   \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                        \
               "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {" PK_WGMMA_D128               \
               "}, %128, %129, p;\n}\n"                                                          \
               : PK_WGMMA_D128_OUT_S32                                                           \
               : "l"(desc_a), "l"(desc_b))

// The element types the tensor cores multiply, as the GEMM's operands.
enum class Operand { bf16, f16, e4m3, e5m2, s8 };
template <class T> __host__ __device__ constexpr Operand operand_of() {
  return is_same<T, f16>::value ? Operand::f16
         : is_same<T, f8e4m3>::value ? Operand::e4m3
         : is_same<T, f8e5m2>::value ? Operand::e5m2
         : is_same<T, signed char>::value ? Operand::s8 : Operand::bf16;
}
__host__ __device__ constexpr bool is_fp8(Operand o) { return o == Operand::e4m3 || o == Operand::e5m2; }
// The accumulator element of an operand type: s32 for int8, f32 otherwise.
template <Operand A> struct accumulator_of { using type = float; };
template <> struct accumulator_of<Operand::s8> { using type = int; };

// One K step of 32 bytes of A and of B (16 bf16 / f16 elements, 32 fp8 or i8 ones).
template <Operand A, Operand B, bool BNMajor, bool AMMajor = false>
__device__ __forceinline__ void mma_m64n256_32bytes(typename accumulator_of<A>::type (&d)[128],
                                                    unsigned long long desc_a, unsigned long long desc_b) {
  static_assert(is_fp8(A) ? is_fp8(B) : A == B, "bf16 with bf16, f16 with f16, fp8 with fp8, i8 with i8");
  static_assert(!(is_fp8(A) || A == Operand::s8) || (!BNMajor && !AMMajor),
                "8-bit wgmma reads A and B K-major only");
  if constexpr (A == Operand::s8) PK_WGMMA_M64N256K32_S8;
  else if constexpr (A == Operand::f16) PK_WGMMA_M64N256K16("f16");
  else if constexpr (A == Operand::bf16) PK_WGMMA_M64N256K16("bf16");
  else if constexpr (A == Operand::e4m3 && B == Operand::e4m3) PK_WGMMA_M64N256K32_F8("e4m3", "e4m3");
  else if constexpr (A == Operand::e4m3) PK_WGMMA_M64N256K32_F8("e4m3", "e5m2");
  else if constexpr (B == Operand::e4m3) PK_WGMMA_M64N256K32_F8("e5m2", "e4m3");
  else PK_WGMMA_M64N256K32_F8("e5m2", "e5m2");
}
#undef PK_WGMMA_M64N256K16
#undef PK_WGMMA_M64N256K32_F8
#undef PK_WGMMA_M64N256K32_S8
#undef PK_WGMMA_D128
#undef PK_WGMMA_D128_OUT
#undef PK_WGMMA_D128_OUT_S32
#undef PK_WGMMA_D128_OUT_AS

}  // namespace wg
}  // namespace pk
