// pk-calibrate: measures the roofline ceilings of GPU0 (tensor-core peak per input type, HBM;
// ceilings.cuh), the intra-SM (mbarrier) and inter-SM (global flag) hand-off latencies, and with
// two GPUs the GPU0 -> GPU1 transfer bandwidth per mechanism (copy engine, TMA bulk stores,
// ld/st stores) by message size and SM count, whose best is the link's ceiling per direction;
// writes a pk machine profile and a markdown table.
//
// Usage: pk-calibrate [profile_out=machine.profile] [markdown_out=profile.md]
// Profile format: see runtime/include/pk/runtime/profile.h and tools/calibrate/README.md.
#include <pk/device/mbarrier.cuh>
#include <pk/device/store.cuh>

#include "ceilings.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

#define CK(call)                                                                       \
  do {                                                                                 \
    cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

constexpr unsigned kTmaChunk = 16384;

// ld/st: 16-byte stores into the peer, grid-stride over the message.
__global__ void k_ldst(pk::Vec16* __restrict__ dst, const pk::Vec16* __restrict__ src, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

// TMA: each block bulk-stores its contiguous share in chunks from shared memory.
__global__ void k_tma(char* dst, long long bytes) {
  extern __shared__ __align__(128) unsigned char smem[];
  for (unsigned i = threadIdx.x; i < kTmaChunk; i += blockDim.x) smem[i] = (unsigned char)i;
  pk::fence_proxy_async_smem();
  __syncthreads();
  if (threadIdx.x != 0) return;
  const long long per = ((bytes + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  const long long begin = blockIdx.x * per;
  const long long end = begin + per < bytes ? begin + per : bytes;
  for (long long off = begin; off < end; off += kTmaChunk) {
    const unsigned n = (unsigned)(end - off < kTmaChunk ? end - off : kTmaChunk);
    pk::store_async_bulk(dst + off, smem, n);
    pk::bulk_commit();
  }
  pk::bulk_wait_complete();
}

// Intra-SM hand-off: two warps ping-pong through two shared-memory mbarriers.
__global__ void k_mbarrier_pingpong(int iters, unsigned long long* ns_out) {
  __shared__ pk::Mbarrier ping, pong;
  if (threadIdx.x == 0) {
    pk::mbarrier_init(&ping, 1);
    pk::mbarrier_init(&pong, 1);
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned long long t0 = pk::globaltimer_ns();
  for (int i = 0; i < iters; ++i) {
    const unsigned parity = i & 1;
    if (warp == 0) {
      if (lane == 0) pk::mbarrier_arrive(&ping);
      pk::mbarrier_wait_parity(&pong, parity);
    } else {
      pk::mbarrier_wait_parity(&ping, parity);
      if (lane == 0) pk::mbarrier_arrive(&pong);
    }
  }
  if (threadIdx.x == 0) *ns_out = pk::globaltimer_ns() - t0;
}

// Inter-SM hand-off: two blocks (on different SMs) ping-pong through global flags.
__global__ void k_flag_pingpong(unsigned long long* flags, int iters, unsigned long long* ns_out) {
  if (threadIdx.x != 0) return;
  unsigned long long* mine = flags + blockIdx.x * 32;  // separate 256-byte lines
  unsigned long long* other = flags + (1 - blockIdx.x) * 32;
  const unsigned long long t0 = pk::globaltimer_ns();
  for (unsigned long long i = 1; i <= (unsigned long long)iters; ++i) {
    if (blockIdx.x == 0) {
      asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(mine), "l"(i) : "memory");
      while (pk::ld_acquire_sys(other) < i) {
      }
    } else {
      while (pk::ld_acquire_sys(other) < i) {
      }
      asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(mine), "l"(i) : "memory");
    }
  }
  if (blockIdx.x == 0) *ns_out = pk::globaltimer_ns() - t0;
}

struct Row {
  std::string mechanism;
  long long bytes;
  int sms;
  double gbps;
};

int reps_for(long long bytes) {
  if (bytes >= (256ll << 20)) return 3;
  if (bytes >= (16ll << 20)) return 5;
  return 20;
}

template <class Launch>
double time_gbps(cudaStream_t s, long long bytes, Launch launch) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch();  // warm-up
  CK(cudaStreamSynchronize(s));
  const int reps = reps_for(bytes);
  CK(cudaEventRecord(a, s));
  for (int i = 0; i < reps; ++i) launch();
  CK(cudaEventRecord(b, s));
  CK(cudaEventSynchronize(b));
  CK(cudaGetLastError());
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return (double)bytes * reps / (ms * 1e-3) / 1e9;
}

// Cross-GPU hand-off: a thread on each GPU ping-pongs through flags in the other's memory
// (system-scope release stores, acquire loads of its own flag).
__global__ void k_peer_pingpong(unsigned long long* mine, unsigned long long* theirs, int iters, bool first,
                                unsigned long long* ns_out) {
  const unsigned long long t0 = pk::globaltimer_ns();
  for (unsigned long long i = 1; i <= (unsigned long long)iters; ++i) {
    if (first) asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(theirs), "l"(i) : "memory");
    for (long long spin = 0; pk::ld_acquire_sys(mine) < i; ++spin)
      if (spin > (1ll << 30)) {  // the other side never answered: no figure
        *ns_out = 0;
        return;
      }
    if (!first) asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(theirs), "l"(i) : "memory");
  }
  *ns_out = pk::globaltimer_ns() - t0;
}

// One flag hop GPU0 -> GPU1 (half a round trip), in microseconds; 0 if it failed.
double measure_link_hop_us() {
  const int iters = 20000;
  unsigned long long *flag[2], *ns[2];
  cudaStream_t st[2];
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    cudaError_t pe = cudaDeviceEnablePeerAccess(1 - d, 0);
    if (pe != cudaSuccess && pe != cudaErrorPeerAccessAlreadyEnabled) CK(pe);
    (void)cudaGetLastError();
    CK(cudaMalloc(&flag[d], 256));
    CK(cudaMemset(flag[d], 0, 256));
    CK(cudaMalloc(&ns[d], sizeof(unsigned long long)));
    CK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking));
    CK(cudaDeviceSynchronize());
  }
  for (int d = 1; d >= 0; --d) {  // the waiter first, so both run at once
    CK(cudaSetDevice(d));
    k_peer_pingpong<<<1, 1, 0, st[d]>>>(flag[d], flag[1 - d], iters, d == 0, ns[d]);
  }
  unsigned long long took = 0;
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaStreamSynchronize(st[d]));
  }
  CK(cudaSetDevice(0));
  CK(cudaMemcpy(&took, ns[0], sizeof(took), cudaMemcpyDeviceToHost));
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaFree(flag[d]));
    CK(cudaFree(ns[d]));
    CK(cudaStreamDestroy(st[d]));
  }
  CK(cudaSetDevice(0));
  return took / (2.0 * iters) / 1e3;
}

// GPU0 -> GPU1 bandwidth of the copy engine, TMA bulk stores and ld/st stores, appended to rows.
void measure_link(cudaStream_t s, const std::vector<long long>& sizes, const std::vector<int>& sm_counts,
                  std::vector<Row>& rows) {
  const long long max_bytes = sizes.back();
  char *src = nullptr, *dst = nullptr;
  CK(cudaSetDevice(1));
  CK(cudaMalloc(&dst, max_bytes));
  CK(cudaSetDevice(0));
  cudaError_t pe = cudaDeviceEnablePeerAccess(1, 0);
  if (pe != cudaSuccess && pe != cudaErrorPeerAccessAlreadyEnabled) CK(pe);
  (void)cudaGetLastError();
  CK(cudaMalloc(&src, max_bytes));
  CK(cudaMemset(src, 1, max_bytes));
  CK(cudaFuncSetAttribute(k_tma, cudaFuncAttributeMaxDynamicSharedMemorySize, kTmaChunk));
  for (long long b : sizes)
    rows.push_back({"copy_engine", b, 0, time_gbps(s, b, [&] {
                      CK(cudaMemcpyPeerAsync(dst, 1, src, 0, b, s));
                    })});
  for (int sms : sm_counts)
    for (long long b : sizes) {
      const long long nvec = b / 16;
      rows.push_back({"ldst", b, sms, time_gbps(s, b, [&] {
                        k_ldst<<<sms, 1024, 0, s>>>((pk::Vec16*)dst, (const pk::Vec16*)src, nvec);
                      })});
      rows.push_back({"tma", b, sms, time_gbps(s, b, [&] {
                        k_tma<<<sms, 32, kTmaChunk, s>>>(dst, b);
                      })});
    }

  CK(cudaFree(src));
  CK(cudaSetDevice(1));
  CK(cudaFree(dst));
  CK(cudaSetDevice(0));
}

}  // namespace

int main(int argc, char** argv) {
  if (const char* w = std::getenv("PK_SHARED_GPU_RANKS"); w && *w) {  // no links to measure
    std::fprintf(stderr, "pk-calibrate refuses the shared-GPU mode (PK_SHARED_GPU_RANKS): unset it\n");
    return 2;
  }
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
  const std::string profile_path = argc > 1 ? argv[1] : "machine.profile";
  const std::string md_path = argc > 2 ? argv[2] : "profile.md";
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("skipped: no GPU\n");
    return 77;
  }
  const auto t_start = std::chrono::steady_clock::now();
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int all_sms = prop.multiProcessorCount;
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const pk_calibrate::Ceilings ceilings = pk_calibrate::measure_ceilings(s);
  CK(cudaGetLastError());

  // The link, with two GPUs: GPU0 -> GPU1 by mechanism, size and SM count.
  int can = 0;
  if (count >= 2) CK(cudaDeviceCanAccessPeer(&can, 0, 1));
  if (count >= 2 && !can) std::fprintf(stderr, "GPU0 cannot access GPU1 directly: no link measured\n");
  const long long max_bytes = 1ll << 30;
  std::vector<long long> sizes;
  for (long long b = 128; b <= max_bytes; b *= 4) sizes.push_back(b);
  if (sizes.back() != max_bytes) sizes.push_back(max_bytes);
  std::vector<int> sm_counts;
  for (int n : {1, 2, 4, 8, 16, 32, 66}) if (n < all_sms) sm_counts.push_back(n);
  sm_counts.push_back(all_sms);
  std::vector<Row> rows;
  if (can) measure_link(s, sizes, sm_counts, rows);
  double link_gbs = 0;  // the best any mechanism reached: the ceiling per direction
  for (const Row& r : rows) link_gbs = std::max(link_gbs, r.gbps);
  const double hop_us = can ? measure_link_hop_us() : 0;

  unsigned long long* dev_ns = nullptr;
  unsigned long long* flags = nullptr;
  CK(cudaMalloc(&dev_ns, sizeof(unsigned long long)));
  CK(cudaMalloc(&flags, 64 * sizeof(unsigned long long)));
  const int iters = 100000;
  unsigned long long ns = 0;
  k_mbarrier_pingpong<<<1, 64, 0, s>>>(iters, dev_ns);
  CK(cudaStreamSynchronize(s));
  CK(cudaMemcpy(&ns, dev_ns, sizeof(ns), cudaMemcpyDeviceToHost));
  const double intra_ns = (double)ns / (2.0 * iters);
  CK(cudaMemset(flags, 0, 64 * sizeof(unsigned long long)));
  k_flag_pingpong<<<2, 32, 0, s>>>(flags, iters, dev_ns);
  CK(cudaStreamSynchronize(s));
  CK(cudaGetLastError());
  CK(cudaMemcpy(&ns, dev_ns, sizeof(ns), cudaMemcpyDeviceToHost));
  const double inter_ns = (double)ns / (2.0 * iters);

  FILE* f = std::fopen(profile_path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", profile_path.c_str());
    return 1;
  }
  std::fprintf(f, "# pk machine profile measured by pk-calibrate, GPU0 -> GPU1.\n");
  std::fprintf(f, "# '<mechanism> <size_bytes> <sms> <GB/s>' (sms 0: copy engine); hand-offs in ns.\n");
  std::fprintf(f, "version 1\ndevice %s x%d\n", prop.name, count);
  std::fprintf(f, "handoff intra_sm_ns %.1f\nhandoff inter_sm_ns %.1f\n", intra_ns, inter_ns);
  std::fprintf(f, "# Ceilings for roofline bounds, measured on GPU0: wgmma from shared memory, the best\n"
                  "# of HBM read / write / copy%s.\n",
               rows.empty() ? "; no link measured (one GPU)" : ", the best link rate below");
  if (ceilings.bf16_tflops > 0) std::fprintf(f, "peak tensor_bf16_tflops %.0f\n", ceilings.bf16_tflops);
  if (ceilings.f16_tflops > 0) std::fprintf(f, "peak tensor_f16_tflops %.0f\n", ceilings.f16_tflops);
  if (ceilings.fp8_tflops > 0) std::fprintf(f, "peak tensor_fp8_tflops %.0f\n", ceilings.fp8_tflops);
  if (ceilings.hbm_gbs > 0) std::fprintf(f, "peak hbm_gbs %.0f\n", ceilings.hbm_gbs);
  if (link_gbs > 0) std::fprintf(f, "peak link_gbs %.0f\n", link_gbs);
  if (ceilings.launch_us > 0) std::fprintf(f, "fixed launch_us %.2f\n", ceilings.launch_us);
  if (hop_us > 0) std::fprintf(f, "fixed link_hop_us %.2f\n", hop_us);
  for (const Row& r : rows)
    std::fprintf(f, "%s %lld %d %.2f\n", r.mechanism.c_str(), r.bytes, r.sms, r.gbps);
  std::fclose(f);

  // Markdown: one row per size, one column per mechanism/SM count.
  FILE* m = std::fopen(md_path.c_str(), "w");
  if (m) {
    std::fprintf(m, "# %s GPU0 -> GPU1 (GB/s)\n\nhand-off: intra-SM (mbarrier) %.0f ns, inter-SM (global flag) %.0f ns\n\n",
                 prop.name, intra_ns, inter_ns);
    std::fprintf(m, "ceilings: tensor cores bf16 %.0f TFLOP/s, f16 %.0f TFLOP/s, fp8 %.0f TFLOP/s; HBM %.0f GB/s; link %.0f GB/s per direction%s; "
                    "launch %.2f us; link hop %.2f us\n\n",
                 ceilings.bf16_tflops, ceilings.f16_tflops, ceilings.fp8_tflops, ceilings.hbm_gbs, link_gbs,
                 rows.empty() ? " (not measured: one GPU)" : "", ceilings.launch_us, hop_us);
    if (!rows.empty()) {  // the link table (two GPUs)
      std::fprintf(m, "| size | copy engine |");
      for (int sms : sm_counts) std::fprintf(m, " ldst %d SMs | tma %d SMs |", sms, sms);
      std::fprintf(m, "\n|---|---|");
      for (size_t i = 0; i < sm_counts.size(); ++i) std::fprintf(m, "---|---|");
      std::fprintf(m, "\n");
      for (long long b : sizes) {
        std::fprintf(m, "| %lld |", b);
        for (const Row& r : rows) if (r.bytes == b && r.mechanism == "copy_engine") std::fprintf(m, " %.1f |", r.gbps);
        for (int sms : sm_counts)
          for (const char* mech : {"ldst", "tma"})
            for (const Row& r : rows)
              if (r.bytes == b && r.sms == sms && r.mechanism == mech) std::fprintf(m, " %.1f |", r.gbps);
        std::fprintf(m, "\n");
      }
    }
    std::fclose(m);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::printf("pk-calibrate: %zu measurements in %.1f s -> %s, %s\n", rows.size(), secs,
              profile_path.c_str(), md_path.c_str());
  std::printf("intra-SM hand-off %.0f ns, inter-SM hand-off %.0f ns\n", intra_ns, inter_ns);
  std::printf("ceilings: bf16 %.0f TFLOP/s, f16 %.0f TFLOP/s, fp8 %.0f TFLOP/s, HBM %.0f GB/s, link %.0f GB/s; "
              "launch %.2f us, link hop %.2f us\n",
              ceilings.bf16_tflops, ceilings.f16_tflops, ceilings.fp8_tflops, ceilings.hbm_gbs, link_gbs,
              ceilings.launch_us, hop_us);
  for (const Row& r : rows)
    if (r.bytes == max_bytes && (r.sms == 0 || r.sms == all_sms || r.sms == 16))
      std::printf("%-12s 1 GiB %3d SMs: %.1f GB/s\n", r.mechanism.c_str(), r.sms, r.gbps);
  return 0;
}
