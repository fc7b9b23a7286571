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
// fp8 runs are 8 bytes, which only the L1-allocating form copies.
__device__ __forceinline__ void cp_async_8(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(s), "l"(gmem) : "memory");
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
// 16-byte aligned) when its runs fit; otherwise does nothing. Returns whether they fit (the copy
// is made, by every thread that holds elements): the trip that reads the slot passes it back.
template <class Tile, class T>
__device__ bool prefetch(T* slot, const T* data, const long long* shape, const long long* origin) {
  if constexpr (is_integer_v<T>) {
    return false;
  } else {
    const bool fit = runs_fit<Tile>(data, shape, origin);
    if (idle<Tile>() || !fit) return fit;
#pragma unroll
    for (int s = 0; s < Tile::kSlots; s += Tile::kVec) {
      const long long i = Tile::index(s);
      if (!Tile::holds(i)) continue;
      const T* src = data + run_offset<Tile>(i, shape, origin);
      if constexpr (sizeof(T) == 1) {
        cp_async_8(slot + i, src);
      } else {
#pragma unroll
        for (int b = 0; b < static_cast<int>(Tile::kVec * sizeof(T)); b += 16)
          cp_async_16(reinterpret_cast<char*>(slot + i) + b, reinterpret_cast<const char*>(src) + b);
      }
    }
    return true;
  }
}

// Records in bit `bit` of `fits` whether a stage's copy was made.
__device__ __forceinline__ void note_copy(unsigned& fits, int bit, bool made) {
  fits = (fits & ~(1u << bit)) | (static_cast<unsigned>(made) << bit);
}

// The ring stages of a load whose origin often stays put from trip to trip (a weight row at
// column n while the loop walks rows): it is copied ahead only when its origin moved, so the
// block re-reads it from shared memory instead of from L2 every trip. A copy goes to the stage
// after the last copy's: the S - 1 trips after this one read at most the S - 1 latest copies,
// so the stage overwritten is one that no pending trip reads. Each trip's stage is remembered
// by its ring slot (the loop's own stage counter), as registers, not an indexed array.
template <int R, int S>
struct RingReuse {
  long long at[R];     // the origin of the latest copy
  int latest = -1;     // its stage (none yet)
  int stage_of[S];     // the stage each pending trip reads, by its ring slot

  // Records the tile at `origin` for the trip in ring slot `slot`; true when it must be copied
  // (into stage `latest`).
  __device__ __forceinline__ bool moved(const long long (&origin)[R], int slot) {
    bool same = latest >= 0;
#pragma unroll
    for (int d = 0; d < R; ++d) same &= at[d] == origin[d];
    if (!same) {
#pragma unroll
      for (int d = 0; d < R; ++d) at[d] = origin[d];
      latest = latest + 1 == S ? 0 : latest + 1;
    }
#pragma unroll
    for (int k = 0; k < S; ++k)
      if (k == slot) stage_of[k] = latest;
    return !same;
  }
  // The stage the trip in ring slot `slot` reads.
  __device__ __forceinline__ int of(int slot) const {
    int s = stage_of[0];
#pragma unroll
    for (int k = 1; k < S; ++k)
      if (k == slot) s = stage_of[k];
    return s;
  }
};

// The tile at `origin`, from `slot` where prefetch() copied it (the caller has waited for the
// copy's group), else from global memory.
template <class Tile, class T>
__device__ void load_prefetched(Tile& t, const T* slot, bool made, const T* data, const long long* shape,
                                const long long* origin) {
  if (made) {
    t.valid0 = Tile::dim(0);  // made only for tiles wholly inside
    t.valid1 = Tile::dim(1);
    t.valid2 = Tile::dim(2);
    t.valid3 = Tile::dim(3);
    if (idle<Tile>()) return;
    load_runs(t, [&](long long i) { return slot + i; });
    return;
  }
  load(t, data, shape, origin);
}
template <class Tile, class T>
__device__ void load_prefetched(Tile& t, const T* slot, const T* data, const long long* shape,
                                const long long* origin) {
  load_prefetched(t, slot, !is_integer_v<T> && runs_fit<Tile>(data, shape, origin), data, shape, origin);
}

}  // namespace tile
}  // namespace pk
