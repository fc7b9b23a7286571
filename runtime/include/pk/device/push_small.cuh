// push_small: the one-round path of a whole-tensor collective for small messages. Each rank
// pushes what every peer needs into the peer's landing buffer, signals once, waits once, and
// assembles its output locally, instead of the two-round direct protocol (arrive, read the
// peers' inputs, depart). Used by pkc's collective lowering when the message fits.
#pragma once
#include <pk/device/copy.cuh>
#include <pk/device/elem.cuh>
#include <pk/device/launch_context.cuh>
#include <pk/device/push_ll.cuh>
#include <pk/device/signal.cuh>
#include <pk/device/wait.cuh>

namespace pk {

enum class SmallCollective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather, scatter };

namespace small {

// Blocks that may carry data (and own a per-source slot), and message bytes per block.
constexpr int kLanes = 32;
constexpr long long kBytesPerLane = 8 << 10;
// Flag slots the path owns after `base`: one per (source rank, lane).
constexpr int kSlots = PK_MAX_RANKS * kLanes;

// Bytes of one (parity, source) landing slot: two launch parities x W sources, 16-byte aligned.
__device__ __forceinline__ unsigned long long slot_bytes(const LaunchContext& c) {
  return (c.landing_bytes / (2ull * c.world)) & ~15ull;
}

template <class T>
__device__ __forceinline__ T* landing(const LaunchContext& c, int owner, int parity, int src) {
  return reinterpret_cast<T*>(c.landing[owner] + (parity * c.world + src) * slot_bytes(c));
}

// One relaxed flag add on peer `r` at slot `slot`: it only counts (data is published by
// signal_all's fence and release adds).
__device__ __forceinline__ void count(const LaunchContext& c, int r, int slot) {
  red_add_relaxed_sys(c.flags[r] + slot, 1);
}

// The lane's chunk [lo, hi) of a message of m elements split over `lanes` lanes, in whole
// 16-element pieces (16-byte vectors for 1-, 2- and 4-byte types).
__device__ __forceinline__ void chunk(long long m, int lanes, int lane, long long& lo,
                                      long long& hi) {
  const long long pieces = (m + 15) / 16, per = (pieces + lanes - 1) / lanes;
  lo = min(m, lane * per * 16);
  hi = min(m, lo + per * 16);
}

// Sends on the LL path: does rank `from` send message data to rank `to`, or else a one-group
// token? Every ordered pair of ranks exchanges one or the other in every launch (see the
// landing-reuse argument at push_small).
template <SmallCollective K>
__device__ __forceinline__ bool ll_data(int from, int to, long long root) {
  if (K == SmallCollective::broadcast || K == SmallCollective::scatter) return from == root;
  if (K == SmallCollective::reduce || K == SmallCollective::gather) return to == root;
  return true;
}

// The LL path of push_small (see there): every pair of ranks exchanges the message, or a token,
// as tagged LL words in this launch's parity, and each block assembles its share of groups
// straight from the words it polls. Returns 1, or -1 when a wait gave up.
template <SmallCollective K, ReduceOp R, class T>
__device__ __forceinline__ int run_ll(const LaunchContext& c, const T* x, T* y, long long root,
                                     long long msg, long long groups) {
  const int me = c.rank, W = c.world;
  const int parity = static_cast<int>(c.epoch & 1);
  const unsigned int t = ll::tag(c.epoch);
  const int tid = block_thread(), nthr = block_threads();
  const bool split_input = K == SmallCollective::reduce_scatter ||
                           K == SmallCollective::scatter || K == SmallCollective::all_to_all;
  long long lo, hi;
  ll::block_groups(groups, lo, hi);
  const bool token_block = blockIdx.x == 0;  // tokens are group 0 of a one-group message

  // 1. Send: the message (or a token) to every peer.
  for (int r = 0; r < W; ++r) {
    if (r == me) continue;
    unsigned long long* s = ll::slot(c, r, parity, me);
    if (ll_data<K>(me, r, root)) {
      const T* from = split_input ? x + r * msg : x;
      for (long long g = lo + tid; g < hi; g += nthr) ll::put(s, g, ll::load_group(from, msg, g), t);
    } else if (token_block && tid == 0) {
      ll::put(s, 0, Vec16{}, t);
    }
  }

  // 2. Receive and assemble this block's groups (tokens: block 0's thread 0).
  __shared__ int pk_ll_abort;
  if (tid == 0) pk_ll_abort = 0;
  __syncthreads();
  bool ok = true;
  Vec16 v;
  for (int s = 0; s < W && ok; ++s)
    if (s != me && (!ll_data<K>(s, me, root) || msg == 0) && token_block && tid == 0)
      ok = ll::get(c, ll::slot(c, me, parity, s), 0, t, s, v);
  const bool reduces = K == SmallCollective::all_reduce ||
                       K == SmallCollective::reduce_scatter || K == SmallCollective::reduce;
  const bool gathers = K == SmallCollective::all_gather || K == SmallCollective::all_to_all ||
                       K == SmallCollective::gather;
  const bool rooted_out = K == SmallCollective::reduce || K == SmallCollective::gather;
  const T* own = split_input ? x + me * msg : x;  // this rank's own contribution
  if (msg > 0 && (!rooted_out || me == root)) {
    for (long long g = lo + tid; g < hi && ok; g += nthr) {
      if (reduces) {
        constexpr int V = VecTraits<T>::per16;
        acc_t<T> acc[V];
#pragma unroll
        for (int k = 0; k < V; ++k) acc[k] = reduce_identity<R, acc_t<T>>();
        for (int r = 0; r < W && ok; ++r) {  // rank order: every rank's sum is bit-identical
          if (r == me) v = ll::load_group(own, msg, g);
          else ok = ll::get(c, ll::slot(c, me, parity, r), g, t, r, v);
#pragma unroll
          for (int k = 0; k < V; ++k) acc[k] = reduce_combine<R>(acc[k], vec_get<T>(v, k));
        }
        Vec16 out;
#pragma unroll
        for (int k = 0; k < V; ++k) vec_set<T>(out, k, acc[k]);
        if (ok) ll::store_group(y, msg, g, out);
      } else if (gathers) {
        for (int r = 0; r < W && ok; ++r) {
          if (r == me) v = ll::load_group(own, msg, g);
          else ok = ll::get(c, ll::slot(c, me, parity, r), g, t, r, v);
          if (ok) ll::store_group(y + r * msg, msg, g, v);
        }
      } else {  // broadcast, scatter: the root's message
        const int rt = static_cast<int>(root);
        if (me == rt) v = ll::load_group(K == SmallCollective::scatter ? x + rt * msg : x, msg, g);
        else ok = ll::get(c, ll::slot(c, me, parity, rt), g, t, rt, v);
        if (ok) ll::store_group(y, msg, g, v);
      }
    }
  }
  if (!ok) pk_ll_abort = 1;
  __syncthreads();
  return pk_ll_abort ? -1 : 1;
}

}  // namespace small

// Runs collective K on this launch in one round when every per-peer message (msg elements of T)
// fits: by LL words when it fits ll_max_bytes and an LL slot, else by a push and one flag round
// when it fits max_bytes and a landing slot. Returns 1 when it did, 0 when it did not (the
// caller runs the direct path), -1 when a wait gave up (recorded in c.error; the caller returns).
//
// x: this rank's input (nx elements); y: this rank's output; root: for rooted collectives.
// count / ll_count: this block's slots, in this rank's own flags, counting the launches that
// took the flag path / the LL path; base: first slot of the kSlots lane slots (source s,
// lane j: base + s * kLanes + j); lane_words: the flag words reserved from base on (the
// compiled reservation times this launch's grid: a launch on fewer blocks than compiled, as
// ranks sharing a GPU make, has fewer, and the path is not taken where W ranks' lanes would
// run past them into the kernel's other flags). direct_epoch: set to the launches so far (this one included)
// that took the direct path, which the caller's direct-path waits use instead of c.epoch.
//
// Protocol. Every rank takes the same branch (the condition depends on sizes, W and the
// context's landing sizes, equal on every rank), so every rank's per-block counters agree.
// Launch e uses landing parity e & 1 (of the raw slots or of the LL slots).
//  - LL path: each rank stores the message for every peer as LL words tagged with e into
//    ll[peer][e & 1][me] (a one-group token where a direction carries no data, as from a
//    rooted collective's non-roots to each other), and polls the words it needs until they
//    carry tag e. No flags: the tag and the payload arrive in one atomic 8-byte store.
//  - flag path: let k be this path's launch count with this one. Lane j < P (P from the
//    message size): push chunk j of every peer's message into landing[peer][e & 1][me], then
//    (after __syncthreads and a system fence) add 1 to slot (me, j) on every peer; wait until
//    slot (s, j) >= k for every peer s; assemble chunk j. Lane j also adds to (me, l) for the
//    idle lanes l = j (mod P) below kLanes (relaxed: those adds only count), so every lane slot
//    gets exactly one add per launch of this path.
//  - lane slots get adds from one source each, in launch order, so ">= k" means exactly "peer
//    s's lane j reached its k-th launch of this path" (a slot shared by all peers would count
//    a fast peer's add of a later launch too; that is harmless only because every rank pushes
//    to all peers before it signals any, so per-source slots keep the argument local).
//  - the direct path's flags get nothing from the other paths: its waits count direct
//    launches only (epoch - count - ll_count), and a peer cannot run a direct launch ahead of
//    this rank's (its arrival needs this rank's), so the counts stay exact whichever path each
//    launch takes.
//  - landing reuse: a peer writes parity e & 1 again no earlier than launch e + 2, which
//    starts after its launch e + 1 ended; on every path that launch waited for something this
//    rank's launch e + 1 sent it (an LL word or token, lane 0's add, or the direct path's
//    arrival), and this rank's launch e + 1 started after its launch e (and its reads of parity
//    e & 1) ended. Two buffers suffice, with no release handshake. This needs every pair
//    linked in every launch, hence the LL tokens: without them a broadcast's root would never
//    wait and could run ahead, and two non-roots could pass each other through a rooted launch
//    (test/unit/runtime/push_protocol_model_test.cpp found that case).
// test/unit/runtime/push_protocol_model_test.cpp checks this logic for 2-5 ranks over random
// interleavings of all three paths (and catches seeded bugs: one parity, adds before data,
// direct waits that count every launch, rooted LL launches without tokens).
template <SmallCollective K, ReduceOp R, class T>
__device__ __forceinline__ int push_small(const LaunchContext& c, const T* x, long long nx, T* y,
                                          long long ny, long long root, int count, int ll_count,
                                          int base, long long lane_words,
                                          long long max_bytes, long long ll_max_bytes,
                                          unsigned long long& direct_epoch) {
  const int me = c.rank, W = c.world, b = blockIdx.x;
  const int lanes = min(static_cast<int>(gridDim.x), small::kLanes);
  // Launches of the flag and LL paths so far (this block's own counters; only this block
  // touches them). Loaded first and used late, so their latency hides behind the push.
  unsigned long long* counter = c.flags[me] + count;
  unsigned long long* ll_counter = c.flags[me] + ll_count;
  const unsigned long long done = ld_relaxed_sys(counter);
  const unsigned long long ll_done = ld_relaxed_sys(ll_counter);
  // Elements each peer receives.
  long long msg = nx;
  if (K == SmallCollective::reduce_scatter || K == SmallCollective::scatter) msg = ny;
  if (K == SmallCollective::all_to_all) msg = nx / W;
  const long long bytes = msg * static_cast<long long>(sizeof(T));
  // The LL path first: 16-byte payload groups travel as 32 bytes of tagged words.
  const long long groups = msg > 0 ? (bytes + 15) / 16 : 1;
  if (c.ll_bytes != 0 && bytes <= ll_max_bytes &&
      groups * 32 <= static_cast<long long>(ll::slot_bytes(c))) {
    const int r = small::run_ll<K, R>(c, x, y, root, msg, groups);
    if (r > 0 && threadIdx.x == 0) st_relaxed_sys(ll_counter, ll_done + 1);
    return r;
  }
  const bool take = c.landing_bytes != 0 && bytes <= static_cast<long long>(small::slot_bytes(c)) &&
                    bytes <= max_bytes &&
                    static_cast<long long>(W - 1) * small::kLanes + lanes <= lane_words;
  if (!take) {
    direct_epoch = c.epoch - done - ll_done;
    return 0;
  }
  const unsigned long long k = done + 1;
  const long long want = (bytes + small::kBytesPerLane - 1) / small::kBytesPerLane;
  const int P = want < 1 ? 1 : (want > lanes ? lanes : static_cast<int>(want));
  if (b >= P) {
    __syncthreads();  // every thread has read the counter before thread 0 moves it
    if (threadIdx.x == 0) st_relaxed_sys(counter, k);
    return 1;
  }
  const int parity = static_cast<int>(c.epoch & 1);
  long long lo, hi;
  small::chunk(msg, P, b, lo, hi);
  const bool rooted_send = K == SmallCollective::broadcast || K == SmallCollective::scatter;
  const bool to_root = K == SmallCollective::reduce || K == SmallCollective::gather;
  __shared__ int pk_small_abort;
  if (threadIdx.x == 0) pk_small_abort = 0;

  // 1. Push chunk [lo, hi) of every peer's message.
  for (int r = 0; r < W; ++r) {
    if (r == me) continue;
    if (rooted_send && me != root) break;
    if (to_root && r != root) continue;
    const T* from = x;
    if (K == SmallCollective::reduce_scatter || K == SmallCollective::scatter ||
        K == SmallCollective::all_to_all)
      from = x + r * msg;
    copy_elems(from + lo, small::landing<T>(c, r, parity, me) + lo, hi - lo);
  }
  __syncthreads();

  // 2. Publish: one fence, then this lane's slot; counting adds for the idle lanes it covers.
  if (threadIdx.x == 0) signal_all(c, base + me * small::kLanes + b);
  const int idle = (lanes - b + P - 1) / P - 1;  // lanes b + P, b + 2P, ... below kLanes
  for (int t = threadIdx.x; t < idle * W; t += blockDim.x) {
    const int r = t % W, lane = b + (t / W + 1) * P;
    if (r != me) small::count(c, r, base + me * small::kLanes + lane);
  }

  // 3. Wait for every peer's lane b of this launch (one thread per peer).
  if (threadIdx.x < W && threadIdx.x != me &&
      !wait_ge(c, base + threadIdx.x * small::kLanes + b, k))
    pk_small_abort = 1;
  __syncthreads();  // also: every thread has read the counter before thread 0 moves it
  if (pk_small_abort) return -1;
  if (threadIdx.x == 0) st_relaxed_sys(counter, k);

  // 4. Assemble chunk [lo, hi) of the output from x and the landing slots.
  auto from_rank = [&](int r) -> const T* {
    return r == me ? x : small::landing<T>(c, me, parity, r);
  };
  const long long cnt = hi - lo;
  if (K == SmallCollective::all_reduce || K == SmallCollective::reduce_scatter ||
      K == SmallCollective::reduce) {
    if (K != SmallCollective::reduce || me == root) {
      const T* src[PK_MAX_RANKS];
      for (int r = 0; r < W; ++r) {
        const T* s = from_rank(r);
        if (K == SmallCollective::reduce_scatter && r == me) s = x + me * msg;
        src[r] = s + lo;
      }
      T* dst[1] = {y + lo};
      reduce_sources<R>(src, W, cnt, dst, 1);
    }
  } else if (K == SmallCollective::all_gather || K == SmallCollective::all_to_all ||
             K == SmallCollective::gather) {
    if (K != SmallCollective::gather || me == root)
      for (int r = 0; r < W; ++r) {
        const T* s = from_rank(r);
        if (K == SmallCollective::all_to_all && r == me) s = x + me * msg;
        copy_elems(s + lo, y + r * msg + lo, cnt);
      }
  } else {  // broadcast, scatter: the root's message
    const T* s = me == root ? (K == SmallCollective::scatter ? x + root * msg : x)
                            : small::landing<T>(c, me, parity, static_cast<int>(root));
    copy_elems(s + lo, y + lo, cnt);
  }
  return 1;
}

}  // namespace pk
