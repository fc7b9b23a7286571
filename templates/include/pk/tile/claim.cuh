// Slots handed out by per-index counters (pk.tile.claim): element i of the result is the value
// counter[idx[i]] had, and the counter grows by one, atomically in global memory, so every slot
// goes to exactly one element across all tiles and blocks (in no fixed order). An MoE dispatch
// places each expert's rows this way. Out-of-range indices and a clipped load's padding claim
// nothing and give -1.
#pragma once
#include <pk/tile/rt.cuh>

namespace pk {
namespace tile {

template <class C>
__device__ __forceinline__ C claim_one(C* counter, long long size, long long i) {
  if (i < 0 || i >= size) return C(-1);
  if constexpr (sizeof(C) == 4)
    return static_cast<C>(atomicAdd(reinterpret_cast<unsigned*>(counter + i), 1u));
  else
    return static_cast<C>(atomicAdd(reinterpret_cast<unsigned long long*>(counter + i), 1ull));
}

template <class Out, class Idx, class C>
__device__ void claim(Out& out, const Idx& idx, C* counter, long long size) {
  static_assert(is_integer_v<typename Idx::elem> && is_integer_v<C>, "integer indices and counters");
  out.valid0 = idx.valid0;
  out.valid1 = idx.valid1;
  out.valid2 = idx.valid2;
  out.valid3 = idx.valid3;
  if constexpr (Idx::kCount == 1) {
    // Every slot of a one-element tile holds element 0: claim once, then share the slot.
    __shared__ long long slot;
    __syncthreads();
    if (threadIdx.x == 0)
      slot = !idx.padding(0) ? static_cast<long long>(claim_one(counter, size, static_cast<long long>(idx.v[0])))
                            : -1;
    __syncthreads();
    for (int s = 0; s < Out::kSlots; ++s) out.v[s] = static_cast<typename Out::value>(slot);
    return;
  }
#pragma unroll
  for (int s = 0; s < Idx::kSlots; ++s) {
    const long long i = Idx::index(s);
    const bool real = i < Idx::kCount && !idx.padding(i);  // padding in any dimension claims nothing
    out.v[s] = real ? static_cast<typename Out::value>(
                          claim_one(counter, size, static_cast<long long>(idx.v[s])))
                    : typename Out::value(-1);
  }
}

}  // namespace tile
}  // namespace pk
