// LL ("low latency") words: the flag-free transport of pk::push_small for the smallest
// messages. Every 8-byte word a sender stores into a peer's LL landing region carries 4 payload
// bytes and a 4-byte launch tag. An aligned 8-byte store is single-copy atomic, so a reader that
// sees this launch's tag in a word also sees that word's payload: no fence, no flag, no round
// trip. On 2 x H200 (tools/calibrate/latency_probe.cu, "LL push") a 4 KiB exchange took 6.5 us
// per call against 8.1 us for a push followed by one flag round; the price is twice the bytes
// on the link, so it serves only small messages.
#pragma once
#include <pk/device/elem.cuh>
#include <pk/device/launch_context.cuh>
#include <pk/device/ptx.cuh>
#include <pk/device/wait.cuh>

namespace pk {
namespace ll {

// Payload groups (16 bytes, stored as 4 LL words = 32 bytes) each block handles at least:
// spreading a message thinner costs more blocks than it saves (latency probe, 64 KiB:
// 7.0 us over 132 blocks, 7.3 us over 8).
constexpr long long kMinGroupsPerBlock = 128;

// The tag of launch `epoch`: never 0, so a zeroed region matches no launch. A word holds a stale
// tag that matches only if its position went 2^32 - 1 launches of its parity without a write.
__device__ __forceinline__ unsigned int tag(unsigned long long epoch) {
  return 1u + static_cast<unsigned int>(epoch % 0xffffffffull);
}

// Bytes of one (parity, source) LL slot: the region after the raw landing slots, split over two
// launch parities x W sources, in whole 32-byte groups.
__device__ __forceinline__ unsigned long long slot_bytes(const LaunchContext& c) {
  return (c.ll_bytes / (2ull * c.world)) & ~31ull;
}

__device__ __forceinline__ unsigned long long* slot(const LaunchContext& c, int owner, int parity,
                                                    int src) {
  return reinterpret_cast<unsigned long long*>(c.landing[owner] + c.landing_bytes +
                                               (parity * c.world + src) * slot_bytes(c));
}

// Stores payload group g (16 bytes) into an LL slot as four tagged words.
__device__ __forceinline__ void put(unsigned long long* s, long long g, const Vec16& v,
                                    unsigned int t) {
  const unsigned long long hi = static_cast<unsigned long long>(t) << 32;
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(s + 4 * g),
               "l"(hi | v.w[0]), "l"(hi | v.w[1])
               : "memory");
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(s + 4 * g + 2),
               "l"(hi | v.w[2]), "l"(hi | v.w[3])
               : "memory");
}

// Spins until all four words of group g carry tag t, then returns the payload; bounded like
// wait_ge (false after c.timeout_ns, with the error recorded).
__device__ __forceinline__ bool get(const LaunchContext& c, const unsigned long long* s,
                                    long long g, unsigned int t, int src, Vec16& v) {
  unsigned long long start = 0;
  for (unsigned int spins = 0;; ++spins) {
    unsigned long long w0, w1, w2, w3;
    asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(w0), "=l"(w1)
                 : "l"(s + 4 * g)
                 : "memory");
    asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(w2), "=l"(w3)
                 : "l"(s + 4 * g + 2)
                 : "memory");
    const unsigned int seen = static_cast<unsigned int>(w0 >> 32);
    if (seen == t && (w1 >> 32) == t && (w2 >> 32) == t && (w3 >> 32) == t) {
      v.w[0] = static_cast<unsigned int>(w0);
      v.w[1] = static_cast<unsigned int>(w1);
      v.w[2] = static_cast<unsigned int>(w2);
      v.w[3] = static_cast<unsigned int>(w3);
      return true;
    }
    if (spins == 0) start = globaltimer_ns();
    if (spins > 256) nanosleep_ns(64);
    if ((spins & 63) == 63 && globaltimer_ns() - start > c.timeout_ns) {
      record_wait_timeout(c, src, t, seen, 3);
      return false;
    }
  }
}

// Group g of a T array of n elements as 16 raw bytes (zero past the end); any alignment.
template <class T>
__device__ __forceinline__ Vec16 load_group(const T* p, long long n, long long g) {
  constexpr int V = VecTraits<T>::per16;
  const T* q = p + g * V;
  Vec16 v;
  if (n - g * V >= V && is_aligned16(q)) {
    const int4 r = *reinterpret_cast<const int4*>(q);
    v.w[0] = r.x, v.w[1] = r.y, v.w[2] = r.z, v.w[3] = r.w;
    return v;
  }
  v.w[0] = v.w[1] = v.w[2] = v.w[3] = 0;
  for (int j = 0; j < V && g * V + j < n; ++j) vec_put_bits<T>(v, j, to_bits(q[j]));
  return v;
}

// Writes the elements of group g that lie below n; any alignment.
template <class T>
__device__ __forceinline__ void store_group(T* p, long long n, long long g, const Vec16& v) {
  constexpr int V = VecTraits<T>::per16;
  T* q = p + g * V;
  if (n - g * V >= V && is_aligned16(q)) {
    *reinterpret_cast<int4*>(q) = make_int4(v.w[0], v.w[1], v.w[2], v.w[3]);
    return;
  }
  for (int j = 0; j < V && g * V + j < n; ++j) q[j] = from_bits<T>(vec_bits<T>(v, j));
}

// This block's share [lo, hi) of `groups` payload groups.
__device__ __forceinline__ void block_groups(long long groups, long long& lo, long long& hi) {
  const long long grid = gridDim.x;
  long long per = (groups + grid - 1) / grid;
  if (per < kMinGroupsPerBlock) per = kMinGroupsPerBlock;
  lo = min(groups, static_cast<long long>(blockIdx.x) * per);
  hi = min(groups, lo + per);
}

}  // namespace ll
}  // namespace pk
