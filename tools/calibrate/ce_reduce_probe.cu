// ce-reduce-probe: can the copy engine carry all-reduce and reduce-scatter at large sizes?
// On 2 GPUs (one process, a thread per GPU), bf16 sum: each rank pulls its part of the peer's
// input with copy-engine copies in chunks into a ring of local scratch buffers, and a local
// kernel adds each chunk to its own part as soon as the chunk has landed (the copy of chunk i + 1
// overlaps the add of chunk i). All-reduce then pulls the peer's reduced half the same way.
// One-way flag rounds (a one-block kernel: signal the peer, wait for it) before the pulls and
// after them, as in pkc's copy-engine route. Prints time per call (median of 10 after 2 warm-ups,
// slower rank), bus bandwidth as nccl-tests defines it, and checks the result.
//   nvcc -O2 -arch=sm_90a -std=c++20 -o ce-reduce-probe tools/calibrate/ce_reduce_probe.cu
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "probe_check.h"

__global__ void sync_round(unsigned long long* peer_flag, const unsigned long long* my_flag,
                           unsigned long long target) {
  if (threadIdx.x != 0) return;
  asm volatile("fence.acq_rel.sys;" ::: "memory");
  asm volatile("red.release.sys.global.add.u64 [%0], 1;" ::"l"(peer_flag) : "memory");
  unsigned long long v;
  do {
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(my_flag) : "memory");
  } while (v < target);
}

// out[i] = a[i] + b[i], 16-byte vectors (n a multiple of 8).
__global__ void add_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out, long long n) {
  const long long v = n / 8;
  for (long long i = blockIdx.x * 1ll * blockDim.x + threadIdx.x; i < v; i += 1ll * gridDim.x * blockDim.x) {
    const int4 x = reinterpret_cast<const int4*>(a)[i], y = reinterpret_cast<const int4*>(b)[i];
    int4 r;
    const __nv_bfloat162* xa = reinterpret_cast<const __nv_bfloat162*>(&x);
    const __nv_bfloat162* ya = reinterpret_cast<const __nv_bfloat162*>(&y);
    __nv_bfloat162* ra = reinterpret_cast<__nv_bfloat162*>(&r);
    for (int k = 0; k < 4; ++k) ra[k] = __float22bfloat162_rn(make_float2(
        __bfloat162float(xa[k].x) + __bfloat162float(ya[k].x), __bfloat162float(xa[k].y) + __bfloat162float(ya[k].y)));
    reinterpret_cast<int4*>(out)[i] = r;
  }
}

__global__ void fill(__nv_bfloat16* p, long long n, int seed) {
  for (long long i = blockIdx.x * 1ll * blockDim.x + threadIdx.x; i < n; i += 1ll * gridDim.x * blockDim.x)
    p[i] = __float2bfloat16(float(((i * 7 + seed * 13) % 17) - 8));  // small integers: exact sums
}

__global__ void count_bad(const __nv_bfloat16* y, long long n, long long offset, unsigned long long* bad) {
  for (long long i = blockIdx.x * 1ll * blockDim.x + threadIdx.x; i < n; i += 1ll * gridDim.x * blockDim.x) {
    const long long j = i + offset;
    const float want = float(((j * 7 + 0 * 13) % 17) - 8) + float(((j * 7 + 1 * 13) % 17) - 8);
    if (__bfloat162float(y[i]) != want) atomicAdd(bad, 1ull);
  }
}

struct Rank {
  int d;
  __nv_bfloat16 *x, *y, *scratch;
  unsigned long long* flag;
  cudaStream_t main, side;
  std::vector<cudaEvent_t> copied, added;
};

int main() {
  if (const char* w = std::getenv("PK_SHARED_GPU_RANKS"); w && *w) {  // no links to measure
    std::fprintf(stderr, "ce-reduce-probe refuses the shared-GPU mode (PK_SHARED_GPU_RANKS): unset it\n");
    return 2;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2) {
    std::printf("skipped: needs 2 GPUs\n");
    return 77;
  }
  constexpr long long kMax = 1ll << 30;  // input bytes per rank
  constexpr int kRing = 4;               // scratch chunks in flight
  const long long chunk_sizes[] = {8ll << 20, 16ll << 20, 32ll << 20};
  Rank R[2];
  for (int d = 0; d < 2; ++d) {
    Rank& r = R[d];
    r.d = d;
    CK(cudaSetDevice(d));
    CK(cudaDeviceEnablePeerAccess(1 - d, 0));
    CK(cudaMalloc(&r.x, kMax));
    CK(cudaMalloc(&r.y, kMax));
    CK(cudaMalloc(&r.scratch, kRing * (32ll << 20)));
    CK(cudaMalloc(&r.flag, 8));
    CK(cudaMemset(r.flag, 0, 8));
    CK(cudaStreamCreateWithFlags(&r.main, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&r.side, cudaStreamNonBlocking));
    r.copied.resize(256);
    r.added.resize(256);
    for (auto& e : r.copied) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (auto& e : r.added) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    fill<<<1024, 512>>>(r.x, kMax / 2, d);
    CK(cudaDeviceSynchronize());
  }
  unsigned long long rounds[2] = {0, 0};
  std::printf("%-15s %10s %8s %12s %12s %8s\n", "collective", "bytes", "chunk", "us per call", "busbw GB/s", "check");
  for (int ar = 0; ar < 2; ++ar)
    for (long long bytes : {64ll << 20, 256ll << 20, 1ll << 30})
      for (long long chunk : chunk_sizes) {
        double us[2] = {0, 0};
        unsigned long long bad[2] = {0, 0};
        std::barrier bar(2);
        auto body = [&](int d) {
          Rank& r = R[d];
          Rank& p = R[1 - d];
          CK(cudaSetDevice(d));
          const long long n = bytes / 2;         // input elements
          const long long part = n / 2;          // this rank's part (elements)
          const long long off = d * part;        // its offset in the input
          auto round = [&] {
            ++rounds[d];
            sync_round<<<1, 32, 0, r.main>>>(p.flag, r.flag, rounds[d]);
          };
          auto call = [&] {
            round();  // my input is ready / the peer's is
            // Reduce-scatter part: pull the peer's copy of my part chunk by chunk.
            const long long chunk_el = chunk / 2;
            const int chunks = int((part + chunk_el - 1) / chunk_el);
            CK(cudaEventRecord(r.added[255], r.main));
            CK(cudaStreamWaitEvent(r.side, r.added[255], 0));
            for (int i = 0; i < chunks; ++i) {
              const long long lo = i * chunk_el, cnt = std::min(chunk_el, part - lo);
              __nv_bfloat16* s = r.scratch + (i % kRing) * (32ll << 19);
              if (i >= kRing) CK(cudaStreamWaitEvent(r.side, r.added[i - kRing], 0));
              CK(cudaMemcpyAsync(s, p.x + off + lo, cnt * 2, cudaMemcpyDefault, r.side));
              CK(cudaEventRecord(r.copied[i], r.side));
              CK(cudaStreamWaitEvent(r.main, r.copied[i], 0));
              __nv_bfloat16* out = ar ? r.y + off + lo : r.y + lo;
              add_bf16<<<264, 512, 0, r.main>>>(r.x + off + lo, s, out, cnt);
              CK(cudaEventRecord(r.added[i], r.main));
            }
            if (ar) {
              round();  // my reduced half is in y / the peer's is
              const long long poff = (1 - d) * part;
              CK(cudaMemcpyAsync(r.y + poff, p.y + poff, part * 2, cudaMemcpyDefault, r.main));
            }
            round();  // I have read your buffers
          };
          for (int i = 0; i < 2; ++i) call();
          CK(cudaStreamSynchronize(r.main));
          bar.arrive_and_wait();
          std::vector<float> t;
          cudaEvent_t a, b;
          CK(cudaEventCreate(&a));
          CK(cudaEventCreate(&b));
          for (int i = 0; i < 10; ++i) {
            CK(cudaStreamSynchronize(r.main));
            bar.arrive_and_wait();
            CK(cudaEventRecord(a, r.main));
            call();
            CK(cudaEventRecord(b, r.main));
            CK(cudaEventSynchronize(b));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, a, b));
            t.push_back(ms * 1000);
          }
          std::sort(t.begin(), t.end());
          us[d] = t[5];
          unsigned long long* dbad;
          CK(cudaMalloc(&dbad, 8));
          CK(cudaMemset(dbad, 0, 8));
          if (ar) count_bad<<<1024, 512>>>(r.y, n, 0, dbad);
          else count_bad<<<1024, 512>>>(r.y, part, off, dbad);
          CK(cudaMemcpy(&bad[d], dbad, 8, cudaMemcpyDeviceToHost));
          cudaFree(dbad);
          bar.arrive_and_wait();
        };
        std::thread t0(body, 0), t1(body, 1);
        t0.join();
        t1.join();
        const double u = std::max(us[0], us[1]);
        // busbw: all-reduce bytes x 2(n-1)/n / t; reduce-scatter input bytes x (n-1)/n / t.
        const double bus = (ar ? bytes * 1.0 : bytes * 0.5) / (u * 1e3);
        std::printf("%-15s %10lld %8lld %12.1f %12.1f %8s\n", ar ? "all_reduce" : "reduce_scatter",
                    bytes, chunk >> 20, u, bus, bad[0] + bad[1] ? "BAD" : "ok");
      }
  return 0;
}
