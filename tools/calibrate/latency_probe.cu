// latency-probe: where the time of a small collective goes on 2 GPUs (one process, a thread per
// GPU). Times, per call (event pair, median of 50 after warm-up) and per call in a
// back-to-back loop, kernels that do nothing, one or two cross-GPU flag rounds, a pull of a
// small message between two rounds (the direct-read protocol) and a push of it into a peer
// landing buffer followed by one round (the one-round protocol), and an LL push (payload and
// launch tag in one 8-byte word, no flag round), for several grid sizes.
//   nvcc -O2 -arch=sm_90a -std=c++17 -o latency-probe tools/calibrate/latency_probe.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "probe_check.h"

struct Args {
  unsigned long long* my_flags;    // this GPU's flags, one per block
  unsigned long long* peer_flags;  // the peer's flags
  const int4* peer_src;            // the peer's input (pull)
  int4* peer_landing;              // the peer's landing buffer (push)
  const int4* my_src;
  int4* my_dst;
  const int4* my_landing;
  unsigned long long epoch;  // flag value the last wait waits for
  int vecs;   // 16-byte vectors moved per call
  int mode;   // 0 empty, 1 one round, 2 two rounds, 3 pull between two rounds, 4 push + round,
              // 5 LL push (data and launch tag in one 8-byte word; no fence, no flag)
  unsigned long long* peer_ll;     // the peer's LL landing buffer (two parities)
  const unsigned long long* my_ll;
  char pad[256];  // kernel parameters as large as a pk launch's
};

__device__ void signal(unsigned long long* f) {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
  asm volatile("red.release.sys.global.add.u64 [%0], 1;" ::"l"(f) : "memory");
}
__device__ void wait_ge(const unsigned long long* f, unsigned long long v) {
  unsigned long long x;
  do {
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(x) : "l"(f) : "memory");
  } while (x < v);
}

// LL words: 4 payload bytes and a 4-byte launch tag in one 8-byte store, which is single-copy
// atomic, so a reader that sees the tag sees the payload (no fence, no flag round).
__device__ void st_ll2(unsigned long long* p, unsigned int d0, unsigned int d1, unsigned int tag) {
  const unsigned long long w0 = (unsigned long long)tag << 32 | d0, w1 = (unsigned long long)tag << 32 | d1;
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(w0), "l"(w1) : "memory");
}
__device__ void ld_ll2(const unsigned long long* p, unsigned int tag, unsigned int& d0, unsigned int& d1) {
  unsigned long long w0, w1;
  do {
    asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(w0), "=l"(w1) : "l"(p) : "memory");
  } while ((unsigned)(w0 >> 32) != tag || (unsigned)(w1 >> 32) != tag);
  d0 = (unsigned)w0;
  d1 = (unsigned)w1;
}

__global__ void probe(Args a) {
  const int b = blockIdx.x;
  const int rounds = a.mode == 2 || a.mode == 3 ? 2 : (a.mode == 0 ? 0 : 1);
  const unsigned long long target = a.epoch;  // absolute: signals received after this launch
  const int per = (a.vecs + gridDim.x - 1) / gridDim.x;
  const int lo = b * per, hi = min(a.vecs, lo + per);
  if (a.mode == 5) {
    const unsigned tag = (unsigned)a.epoch;
    const size_t half = (size_t)a.vecs * 4 * ((a.epoch & 1));  // parity: words of one message
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      const int4 v = a.my_src[i];
      st_ll2(a.peer_ll + half + 4 * (size_t)i, v.x, v.y, tag);
      st_ll2(a.peer_ll + half + 4 * (size_t)i + 2, v.z, v.w, tag);
    }
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      unsigned p0, p1, p2, p3;
      ld_ll2(a.my_ll + half + 4 * (size_t)i, tag, p0, p1);
      ld_ll2(a.my_ll + half + 4 * (size_t)i + 2, tag, p2, p3);
      const int4 m = a.my_src[i];
      a.my_dst[i] = make_int4(p0 + m.x, p1 + m.y, p2 + m.z, p3 + m.w);
    }
    return;
  }
  if (a.mode == 4) {  // push my part into the peer's landing buffer first
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) a.peer_landing[i] = a.my_src[i];
    __syncthreads();
  }
  if (rounds >= 1) {
    if (threadIdx.x == 0) {
      signal(a.peer_flags + b);
      wait_ge(a.my_flags + b, target - (rounds - 1));
    }
    __syncthreads();
  }
  if (a.mode == 3)
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      int4 p = a.peer_src[i], m = a.my_src[i];
      a.my_dst[i] = make_int4(p.x + m.x, p.y + m.y, p.z + m.z, p.w + m.w);
    }
  if (a.mode == 4)
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      int4 p = a.my_landing[i], m = a.my_src[i];
      a.my_dst[i] = make_int4(p.x + m.x, p.y + m.y, p.z + m.z, p.w + m.w);
    }
  if (rounds == 2) {
    __syncthreads();
    if (threadIdx.x == 0) {
      signal(a.peer_flags + b);
      wait_ge(a.my_flags + b, target);
    }
  }
}

struct Side {
  unsigned long long* flags;
  int4 *src, *dst, *landing;
  unsigned long long* ll;
};

int main() {
  if (const char* w = std::getenv("PK_SHARED_GPU_RANKS"); w && *w) {  // no links to measure
    std::fprintf(stderr, "latency-probe refuses the shared-GPU mode (PK_SHARED_GPU_RANKS): unset it\n");
    return 2;
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
    std::printf("skipped: needs 2 GPUs\n");
    return 77;
  }
  constexpr int kMaxBlocks = 132, kMaxVecs = (1 << 20) / 16;
  Side side[2];
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaDeviceEnablePeerAccess(1 - d, 0));
    CK(cudaMalloc(&side[d].flags, kMaxBlocks * 8));
    CK(cudaMemset(side[d].flags, 0, kMaxBlocks * 8));
    CK(cudaMalloc(&side[d].src, kMaxVecs * 16));
    CK(cudaMalloc(&side[d].dst, kMaxVecs * 16));
    CK(cudaMalloc(&side[d].landing, kMaxVecs * 16));
    CK(cudaMemset(side[d].src, 1, kMaxVecs * 16));
    CK(cudaMalloc(&side[d].ll, 4 * kMaxVecs * 16));  // two parities of LL words (2x the payload)
    CK(cudaMemset(side[d].ll, 0, 4 * kMaxVecs * 16));
    CK(cudaDeviceSynchronize());
  }
  const char* names[] = {"empty", "1 round", "2 rounds", "pull+2 rounds", "push+1 round", "LL push"};
  const int block_counts[] = {1, 8, 32, 66, 132};
  const int sizes[] = {4 << 10, 64 << 10, 256 << 10, 1 << 20};
  std::printf("%-15s %7s %8s %12s %12s\n", "kernel", "blocks", "bytes", "per-call us", "loop us");
  unsigned long long epoch[2][kMaxBlocks + 1] = {};  // per (device, grid size): launches so far
  for (int mode = 0; mode < 6; ++mode)
    for (int blocks : block_counts)
      for (int bytes : sizes) {
        if (mode < 3 && bytes != sizes[0]) continue;
        if (mode == 3 && bytes == sizes[1]) continue;
        double per_call[2] = {}, loop[2] = {};
        std::vector<std::thread> th;
        for (int d = 0; d < 2; ++d)
          th.emplace_back([&, d] {
            CK(cudaSetDevice(d));
            cudaStream_t s;
            CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
            Args a{};
            a.my_flags = side[d].flags;
            a.peer_flags = side[1 - d].flags;
            a.peer_src = side[1 - d].src;
            a.peer_landing = side[1 - d].landing;
            a.my_src = side[d].src;
            a.my_dst = side[d].dst;
            a.my_landing = side[d].landing;
            a.peer_ll = side[1 - d].ll;
            a.my_ll = side[d].ll;
            a.vecs = bytes / 16;
            a.mode = mode;
            // Flags of a grid size keep counting across modes (no reset, no race).
            auto run = [&] {
              const int rounds = mode == 2 || mode == 3 ? 2 : (mode == 0 ? 0 : 1);
              epoch[d][blocks] += rounds;
              a.epoch = epoch[d][blocks];  // absolute target of the last wait
              probe<<<blocks, 512, 0, s>>>(a);
            };
            for (int i = 0; i < 20; ++i) run();
            std::vector<cudaEvent_t> ev(102);
            for (auto& e : ev) CK(cudaEventCreate(&e));
            for (int i = 0; i < 50; ++i) {
              CK(cudaEventRecord(ev[2 * i], s));
              run();
              CK(cudaEventRecord(ev[2 * i + 1], s));
            }
            CK(cudaEventRecord(ev[100], s));
            for (int i = 0; i < 50; ++i) run();
            CK(cudaEventRecord(ev[101], s));
            CK(cudaStreamSynchronize(s));
            std::vector<float> t(50);
            for (int i = 0; i < 50; ++i) CK(cudaEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]));
            std::sort(t.begin(), t.end());
            float tl = 0;
            CK(cudaEventElapsedTime(&tl, ev[100], ev[101]));
            per_call[d] = 1000.0 * (t[24] + t[25]) / 2;
            loop[d] = 1000.0 * tl / 50;
            for (auto& e : ev) cudaEventDestroy(e);
            cudaStreamDestroy(s);
          });
        for (auto& t : th) t.join();
        std::printf("%-15s %7d %8d %12.2f %12.2f\n", names[mode], blocks, bytes,
                    std::max(per_call[0], per_call[1]), std::max(loop[0], loop[1]));
      }
  return 0;
}
