// One element of a bf16, f16 or f32 tensor as a float (of an i32 or i8 one as an int), or 0 where it lies outside the tensor, read
// by a predicated load instead of a branch. GEMM epilogues and attention score maps read up to 128
// such elements per thread (a bias row, a residual tile); a branch around each load made every read
// a basic block of its own, so ptxas issued them one after another, each waiting for the last.
//
// The asm is a pure function of its operands (no volatile, no memory clobber), so the compiler may
// merge equal reads (the two row halves of one column) and move them: this is only for tensors the
// kernel does not write while it runs, which is what epilogue and score-map reads are.
#pragma once
#include <pk/device/bf16.cuh>

namespace pk {
namespace tile {

__device__ __forceinline__ unsigned short load_b16_or_zero(const void* p, bool ok) {
  unsigned short bits;
  asm("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\tmov.u16 %0, 0;\n\t@q ld.global.u16 %0, [%1];\n\t}"
      : "=h"(bits) : "l"(p), "r"(static_cast<unsigned int>(ok)));
  return bits;
}

__device__ __forceinline__ float load_or_zero(const bf16* p, bool ok) {
  return to_float(bf16{load_b16_or_zero(p, ok)});
}
__device__ __forceinline__ float load_or_zero(const f16* p, bool ok) {
  return to_float(f16{load_b16_or_zero(p, ok)});
}
__device__ __forceinline__ int load_or_zero(const int* p, bool ok) {
  int v;
  asm("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\tmov.u32 %0, 0;\n\t@q ld.global.u32 %0, [%1];\n\t}"
      : "=r"(v) : "l"(p), "r"(static_cast<unsigned int>(ok)));
  return v;
}
// An i8 element sign-extended to an int.
__device__ __forceinline__ int load_or_zero(const signed char* p, bool ok) {
  int v;
  asm("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\tmov.u32 %0, 0;\n\t@q ld.global.s8 %0, [%1];\n\t}"
      : "=r"(v) : "l"(p), "r"(static_cast<unsigned int>(ok)));
  return v;
}
__device__ __forceinline__ float load_or_zero(const float* p, bool ok) {
  return __int_as_float(load_or_zero(reinterpret_cast<const int*>(p), ok));
}


}  // namespace tile
}  // namespace pk
