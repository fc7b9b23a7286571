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
#define PK_WGMMA_D128_OUT \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),           \
  "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),       \
  "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),                 \
  "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),                 \
  "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),                 \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),                 \
  "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),                 \
  "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),                 \
  "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),                 \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),                 \
  "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]),                 \
  "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]),                 \
  "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),                 \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]),                 \
  "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),                 \
  "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),                 \
  "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),             \
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),           \
  "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),           \
  "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),           \
  "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
// The same for s32 accumulators (int8 wgmma): integer registers.
#define PK_WGMMA_D128_OUT_S32 \
  "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]),           \
  "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]),       \
  "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]),                 \
  "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]),                 \
  "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),                 \
  "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]),                 \
  "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]),                 \
  "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]),                 \
  "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),                 \
  "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]),                 \
  "+r"(d[62]), "+r"(d[63]), "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]),                 \
  "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]), "+r"(d[72]), "+r"(d[73]),                 \
  "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]),                 \
  "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]),                 \
  "+r"(d[86]), "+r"(d[87]), "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]),                 \
  "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]), "+r"(d[97]),                 \
  "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]),             \
  "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]),           \
  "+r"(d[110]), "+r"(d[111]), "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]),           \
  "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), "+r"(d[120]), "+r"(d[121]),           \
  "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])

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

}  // namespace wg
}  // namespace pk
