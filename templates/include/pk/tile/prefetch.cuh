// Loads of a later trip of a tile loop issued ahead into a shared-memory ring (cp.async), so a
// block keeps its next tiles' bytes in flight while it reduces and stores the current one,
// without holding them in registers. Each thread copies exactly the runs of the tile it will
// later read itself (rt.cuh's layout), so neither the copy nor the reuse of a ring slot needs a
// block barrier: a thread's own cp.async.wait_group orders its own copies.
// A tile whose runs do not fit (runs_fit: clipped, unaligned, integer) is not copied; reading it
// back then loads from global memory as load() does, so edges stay correct.
#pragma once
#include <pk/tile/rt.cuh>

namespace pk {
namespace tile {

__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
// Closes this thread's copies issued since the last commit into one group (empty groups too, so
// every thread counts the same groups).
__device__ __forceinline__ void prefetch_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's groups are still in flight.
template <int N>
__device__ __forceinline__ void prefetch_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// Starts copying the tile at `origin` into `slot` (Tile::kCount elements of T in shared memory,
// 16-byte aligned) when its runs fit; otherwise does nothing.
template <class Tile, class T>
__device__ void prefetch(T* slot, const T* data, const long long* shape, const long long* origin) {
  if constexpr (!is_integer_v<T>) {
    if (idle<Tile>() || !runs_fit<Tile>(data, shape, origin)) return;
#pragma unroll
    for (int s = 0; s < Tile::kSlots; s += Tile::kVec) {
      const long long i = Tile::index(s);
      if (i >= Tile::kCount) continue;
      const T* src = data + run_offset<Tile>(i, shape, origin);
#pragma unroll
      for (int b = 0; b < static_cast<int>(Tile::kVec * sizeof(T)); b += 16)
        cp_async_16(reinterpret_cast<char*>(slot + i) + b, reinterpret_cast<const char*>(src) + b);
    }
  }
}

// The tile at `origin`, from `slot` where prefetch() copied it (the caller has waited for the
// copy's group), else from global memory.
template <class Tile, class T>
__device__ void load_prefetched(Tile& t, const T* slot, const T* data, const long long* shape,
                                const long long* origin) {
  if constexpr (!is_integer_v<T>) {
    if (runs_fit<Tile>(data, shape, origin)) {
      t.valid0 = Tile::dim(0);
      if (idle<Tile>()) return;
      load_runs(t, [&](long long i) { return slot + i; });
      return;
    }
  }
  load(t, data, shape, origin);
}

}  // namespace tile
}  // namespace pk
