// pk-bench-moe: the shipped MoE dispatch and combine specs (templates/specs/moe_*.pk.cpp),
// JIT-compiled, at world size 1 on one GPU: the local work of each (placing, copying and
// summing rows) against the device-to-device copy (cudaMemcpyAsync) measured in the same run.
// Tokens [T, H] bf16 with K distinct random experts each out of E. GB/s counts the bytes each
// kernel must move once: dispatch reads the tokens and writes T K rows; combine reads T K rows
// and writes the tokens (index and weight bytes are counted too). Each pair alternates batches
// of 20 launches (median of 7 each, after 5 warm-ups); the fraction of pkc's roofline bound is
// printed too (`pkc --roofline`; rows moved by index count no compulsory bytes, so it is
// loose). Before timing, dispatch's rows are checked at every 7th choice's slot and combine's
// output on sampled tokens against a float64 reference. Writes a Markdown table to argv[1]
// (and stdout); argv[2] and argv[3] may name variant specs and argv[4] a block size
// (--tile-threads; 0: pkc's choice), and argv[5] a variant fp8 dispatch spec. A third row times
// moe_dispatch_fp8 (rows sent as e4m3 with per-128-column scales), checked at every 7th
// choice's slot: its scales bit for bit, its values within e4m3's rounding of the token. Two
// GPUs: the same kernels, as the two-GPU round runs them, move the rows over NVLink instead.
#include <pk/jit/compile.h>
#include "bf16_host.h"
#include "one_gpu.h"
#include "paired_timing.h"
#include "roofline_bound.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using pk_bench::from_bf16;
using pk_bench::to_bf16;

template <class T> T* device(const std::vector<T>& host) {
  T* p = nullptr;
  cudaMalloc(&p, host.size() * sizeof(T));
  cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}

template <class T> pk::Tensor<T> tensor(void* p, long long rows, long long cols) {
  return pk::Tensor<T>{static_cast<T*>(p), {rows, cols, 1, 1}, rows * cols};
}

// An OCP e4m3 byte's value (no infinities; 0x7f and 0xff are NaN).
double e4m3_value(unsigned char b) {
  const int e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return NAN;
  const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7);
  return b & 0x80 ? -mag : mag;
}

// The dispatch's row movement written by hand, the reference for what pkc's kernel could reach:
// given the places pkc's dispatch chose (slot), one warp per token copies its row once from x
// to each of its K places in 16-byte words, U words in flight per lane (4 for the reference). It does none of the
// counting, claiming or barriers, so it bounds the row movement alone.
template <int U>
__global__ void hand_scatter_rows(const uint4* x, const int* slot, uint4* recv, long long T, int K, long long words) {
  const int lane = threadIdx.x % 32;
  const long long warps = 1LL * gridDim.x * blockDim.x / 32;
  for (long long t = (1LL * blockIdx.x * blockDim.x + threadIdx.x) / 32; t < T; t += warps) {
    const int mine = lane < K ? slot[t * K + lane] : -1;
    const uint4* row = x + t * words;
    for (long long c = lane; c < words; c += U * 32) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (c + u * 32 < words) v[u] = row[c + u * 32];
      for (int k = 0; k < K; ++k) {
        const int place = __shfl_sync(0xffffffffu, mine, k);
        if (place < 0) continue;
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (c + u * 32 < words) recv[place * words + c + u * 32] = v[u];
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  pk_bench::OneGpu gpu = pk_bench::one_gpu();
  pk::Context* ctx = gpu.ctx.get();
  cudaStream_t s = ctx->stream();
  const long long T = 8192, H = 7168, K = 8, E = 64;  // DeepSeek-V3's hidden size and top-k
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  std::vector<unsigned short> x(T * H);
  for (auto& v : x) v = to_bf16(u(gen));
  std::vector<int> ids(T * K);
  std::vector<float> weights(T * K);
  for (long long t = 0; t < T; ++t) {
    std::vector<int> experts(E);
    for (int e = 0; e < E; ++e) experts[e] = e;
    std::shuffle(experts.begin(), experts.end(), gen);
    for (long long k = 0; k < K; ++k) ids[t * K + k] = experts[k], weights[t * K + k] = 0.5f + 0.1f * float(k);
  }
  auto* x_d = device(x);
  auto* ids_d = device(ids);
  auto* w_d = device(weights);
  int* slot_d = nullptr;
  unsigned short *out_d = nullptr, *copy_d = nullptr;
  cudaMalloc(&slot_d, T * K * sizeof(int));
  cudaMalloc(&out_d, T * H * 2);
  cudaMalloc(&copy_d, T * K * H * 2);
  auto fill = ctx->allocate(E * sizeof(int)), counts = ctx->allocate(E * sizeof(int)),
       recv = ctx->allocate(E * T * H * 2);
  if (!fill.is_ok() || !counts.is_ok() || !recv.is_ok()) return std::fprintf(stderr, "allocation failed\n"), 1;
  const long long B = (H + 127) / 128;  // fp8 scales per row
  auto recv8 = ctx->allocate(E * T * H), scale8 = ctx->allocate(E * T * B * sizeof(float));
  if (!recv8.is_ok() || !scale8.is_ok()) return std::fprintf(stderr, "allocation failed\n"), 1;
  auto recv8_v = recv8->sym_tensor<pk::f8e4m3>({E * T, H});
  auto scale8_v = scale8->sym_tensor<float>({E * T, B});
  auto fill_v = fill->sym_tensor<int>({E});
  auto counts_v = counts->sym_tensor<int>({E});
  auto recv_v = recv->sym_tensor<pk::bf16>({E * T, H});
  const auto X = tensor<pk::bf16>(x_d, T, H), OUT = tensor<pk::bf16>(out_d, T, H);
  const auto IDS = tensor<int>(ids_d, T, K), SLOT = tensor<int>(slot_d, T, K);
  const auto WTS = tensor<float>(w_d, T, K);

  pk::jit::Options od, oc;
  od.kernel = "moe_dispatch";
  oc.kernel = "moe_combine";
  if (argc > 4) od.tile_threads = oc.tile_threads = std::atoi(argv[4]);  // --tile-threads for both
  // argv[2] and argv[3] may name other dispatch and combine specs (variants of the shipped ones).
  const std::string dpath = argc > 2 ? argv[2] : PK_MOE_DISPATCH_SPEC, cpath = argc > 3 ? argv[3] : PK_MOE_COMBINE_SPEC;
  auto dtext = pk::jit::read_spec(dpath), ctext = pk::jit::read_spec(cpath);
  if (!dtext.is_ok() || !ctext.is_ok()) return std::fprintf(stderr, "cannot read the specs\n"), 1;
  auto dispatch = pk::jit::compile_spec(dpath, *dtext, od, pk::jit::pkc_frontend(PK_PKC));
  auto combine = pk::jit::compile_spec(cpath, *ctext, oc, pk::jit::pkc_frontend(PK_PKC));
  if (!dispatch.is_ok() || !combine.is_ok())
    return std::fprintf(stderr, "compile: %s%s\n", dispatch.is_ok() ? "" : dispatch.status().message().c_str(),
                        combine.is_ok() ? "" : combine.status().message().c_str()),
           1;
  pk::jit::Options of = od;
  of.kernel = "moe_dispatch_fp8";
  const std::string fpath = argc > 5 ? argv[5] : PK_MOE_DISPATCH_FP8_SPEC;  // a variant of the fp8 dispatch
  auto ftext = pk::jit::read_spec(fpath);
  if (!ftext.is_ok()) return std::fprintf(stderr, "cannot read the fp8 dispatch spec\n"), 1;
  auto dispatch8 = pk::jit::compile_spec(fpath, *ftext, of, pk::jit::pkc_frontend(PK_PKC));
  if (!dispatch8.is_ok()) return std::fprintf(stderr, "compile: %s\n", dispatch8.status().message().c_str()), 1;
  pk::Status st;
  std::function<void()> run_dispatch8 = [&] {
    (void)(st = dispatch8->launch(*ctx, s, X, IDS, *fill_v, SLOT, *recv8_v, *scale8_v, *counts_v));
  };
  std::function<void()> run_dispatch = [&] { (void)(st = dispatch->launch(*ctx, s, X, IDS, *fill_v, SLOT, *recv_v, *counts_v)); };
  std::function<void()> run_combine = [&] { (void)(st = combine->launch(*ctx, s, *recv_v, IDS, WTS, SLOT, OUT, E)); };

  // Correctness first: every (token, choice) row at its slot, then sampled combined tokens.
  cudaMemsetAsync(recv->local(), 0xff, E * T * H * 2, s);
  cudaMemsetAsync(out_d, 0xff, T * H * 2, s);
  run_dispatch();
  run_combine();
  cudaStreamSynchronize(s);
  int failures = !st.is_ok();
  std::vector<int> slot(T * K);
  std::vector<unsigned short> row(H), out(T * H);
  cudaMemcpy(slot.data(), slot_d, slot.size() * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(out.data(), out_d, out.size() * 2, cudaMemcpyDeviceToHost);
  // The (token, choice) rows of recv at their slots that differ from the token's row: every 7th
  // choice, bit for bit (the dispatch's and the hand-written reference's check).
  auto wrong_rows = [&] {
    long long bad = 0;
    for (long long i = 0; i < T * K; i += 7) {
      cudaMemcpy(row.data(), static_cast<unsigned short*>(recv->local()) + slot[i] * H, H * 2, cudaMemcpyDeviceToHost);
      bad += slot[i] < 0 || std::memcmp(row.data(), x.data() + (i / K) * H, H * 2) != 0;
    }
    return bad;
  };
  long long bad_rows = wrong_rows(), bad_tokens = 0;
  for (long long t : {0LL, 1LL, 777LL, T / 2, T - 1}) {
    double wsum = 0;
    for (long long k = 0; k < K; ++k) wsum += weights[t * K + k];
    for (long long h = 0; h < H; ++h) {
      const double want = from_bf16(x[t * H + h]) * wsum, got = from_bf16(out[t * H + h]);
      if (!(std::fabs(got - want) <= 1e-2 + std::fabs(want) / 128)) {
        ++bad_tokens;
        break;
      }
    }
  }
  // The fp8 dispatch: scales bit for bit (the block's largest magnitude times 1/448 in f32), values
  // within half an e4m3 step (2^-4 of the value, or 2^-10 of the scale below the normals).
  cudaMemsetAsync(recv8->local(), 0xff, E * T * H, s);
  run_dispatch8();
  cudaStreamSynchronize(s);
  failures += !st.is_ok();
  cudaMemcpy(slot.data(), slot_d, slot.size() * sizeof(int), cudaMemcpyDeviceToHost);
  long long bad8 = 0;
  std::vector<unsigned char> q(H);
  std::vector<float> sc(B);
  for (long long i = 0; i < T * K; i += 7) {
    if (slot[i] < 0) { ++bad8; continue; }
    cudaMemcpy(q.data(), static_cast<unsigned char*>(recv8->local()) + slot[i] * H, H, cudaMemcpyDeviceToHost);
    cudaMemcpy(sc.data(), static_cast<float*>(scale8->local()) + slot[i] * B, B * 4, cudaMemcpyDeviceToHost);
    bool ok = true;
    for (long long b = 0; b < B; ++b) {
      float amax = 0;
      for (long long h = b * 128; h < std::min(H, b * 128 + 128); ++h)
        amax = std::max(amax, std::fabs(float(from_bf16(x[(i / K) * H + h]))));
      ok &= sc[b] == std::max(amax, 1e-30f) * 0.002232142857f;
      for (long long h = b * 128; h < std::min(H, b * 128 + 128); ++h) {
        const double v = from_bf16(x[(i / K) * H + h]), got = e4m3_value(q[h]) * sc[b];
        ok &= std::fabs(got - v) <= std::fabs(v) * (1.0 / 16 + 1e-6) + sc[b] / 1024;
      }
    }
    bad8 += !ok;
  }
  failures += bad_rows > 0 || bad_tokens > 0 || bad8 > 0;

  const double row_bytes = 2.0 * H, index_bytes = 4.0 * T * K;
  const double dispatch_bytes = T * row_bytes + T * K * row_bytes + 2 * index_bytes;  // + ids, slot
  const double combine_bytes = T * K * row_bytes + T * row_bytes + 3 * index_bytes;    // + ids, slot, weights
  const double dispatch8_bytes = T * row_bytes + T * K * (H + 4.0 * B) + 2 * index_bytes;
  auto copy = [&] { cudaMemcpyAsync(copy_d, recv->local(), T * K * H * 2, cudaMemcpyDeviceToDevice, s); };
  std::string table =
      "| kernel | T x H, K of E | pkc us | GB/s | copy (cudaMemcpyAsync) GB/s | pkc / copy | pkc of roofline bound | checked wrong |\n"
      "|---|---|---|---|---|---|---|---|\n";
  // The sizes of each kernel's tensor arguments, in the specs' order, for pkc --roofline.
  auto dims = [](long long a, long long b) { return std::to_string(a) + "x" + std::to_string(b); };
  const std::string rows = dims(E * T, H), tokens = dims(T, H), choices = dims(T, K);
  const std::string shapes[2] = {
      "0:" + tokens + ",1:" + choices + ",2:" + std::to_string(E) + ",3:" + choices + ",4:" + rows + ",5:" +
          std::to_string(E),
      "0:" + rows + ",1:" + choices + ",2:" + choices + ",3:" + choices + ",4:" + tokens};
  // Two references measured beside the copy: the dispatch's row movement by hand (the slots of
  // the dispatch checked above), and writing the T K rows alone (cudaMemsetAsync), the write
  // bandwidth a dispatch that writes 8 bytes for each one it reads runs against.
  std::function<void()> run_hand = [&] {
    hand_scatter_rows<4><<<132 * 4, 512, 0, s>>>(reinterpret_cast<const uint4*>(x_d), slot_d,
                                              static_cast<uint4*>(recv->local()), T, int(K), H * 2 / 16);
  };
  std::function<void()> run_write = [&] { cudaMemsetAsync(recv->local(), 0, T * K * H * 2, s); };
  int beaten = 0;
  const std::string shape = std::to_string(T) + " x " + std::to_string(H) + ", " + std::to_string(K) + " of " +
                            std::to_string(E);
  const char* names[3] = {"moe_dispatch", "moe_combine", "moe_dispatch_fp8"};
  for (int which = 0; which < 3; ++which) {
    const auto [pk_us, copy_us] = pk_bench::paired_median_us(
        which == 0 ? run_dispatch : which == 1 ? run_combine : run_dispatch8, copy, s);
    const double gbs = (which == 0 ? dispatch_bytes : which == 1 ? combine_bytes : dispatch8_bytes) / (pk_us * 1e3);
    const double copy_gbs = 2.0 * T * K * H * 2 / (copy_us * 1e3);
    const std::string bound = which == 2 ? "" : pk_bench::fraction_of_bound(
        pk_bench::roofline_us(PK_PKC, which == 0 ? dpath : cpath, names[which], shapes[which]), pk_us, &beaten);
    char line[360];
    std::snprintf(line, sizeof line, "| %s | %s | %.1f | %.0f | %.0f | %.3f | %s | %lld |\n",
                  names[which], shape.c_str(), pk_us, gbs, copy_gbs, gbs / copy_gbs, bound.c_str(),
                  which == 0 ? bad_rows : which == 1 ? bad_tokens : bad8);
    table += line;
    std::fputs(line, stdout);
  }
  {
    // The hand-written reference is checked like the dispatch: poisoned rows, every 7th choice.
    cudaMemsetAsync(recv->local(), 0xff, E * T * H * 2, s);
    run_hand();
    cudaStreamSynchronize(s);
    cudaMemcpy(slot.data(), slot_d, slot.size() * sizeof(int), cudaMemcpyDeviceToHost);  // the timed runs' places
    const long long bad_hand = wrong_rows();
    failures += bad_hand > 0;
    const auto [hand_us, copy_us] = pk_bench::paired_median_us(run_hand, copy, s);
    const auto [write_us, copy2_us] = pk_bench::paired_median_us(run_write, copy, s);
    const double copy_gbs = 2.0 * T * K * H * 2 / (copy_us * 1e3), copy2_gbs = 2.0 * T * K * H * 2 / (copy2_us * 1e3);
    const double hand_gbs = (T * row_bytes + T * K * row_bytes + index_bytes) / (hand_us * 1e3);
    const double write_gbs = T * K * row_bytes / (write_us * 1e3);
    char line[360];
    std::snprintf(line, sizeof line,
                  "| reference: dispatch rows by hand (CUDA, pkc's slots) | %s | %.1f | %.0f | %.0f | %.3f | | %lld |\n"
                  "| reference: writes only (cudaMemsetAsync of the T K rows) | %s | %.1f | %.0f | %.0f | %.3f | | |\n",
                  shape.c_str(), hand_us, hand_gbs, copy_gbs, hand_gbs / copy_gbs, bad_hand, shape.c_str(), write_us, write_gbs,
                  copy2_gbs, write_gbs / copy2_gbs);
    table += line;
    std::fputs(line, stdout);
  }
  if (const char* env = std::getenv("PK_BENCH_MOE_HAND_SWEEP"); env && *env == '1') {
    // How the hand-written movement's speed depends on the bytes in flight per SM: words each lane
    // loads before its stores (U) and warps per SM (threads per block x blocks per SM); pkc's
    // dispatch runs 1024 threads x 1 block with two 16-byte runs a thread. Unchecked variants
    // of the checked reference (the same code but for U and the launch shape).
    struct Shape { int u, threads, blocks_per_sm; };
    const Shape shapes_swept[] = {{4, 512, 4}, {2, 1024, 1}, {4, 1024, 1}, {8, 1024, 1}, {2, 512, 4}, {1, 512, 4}};
    for (const Shape& h : shapes_swept) {
      std::function<void()> run = [&] {
        auto* xs = reinterpret_cast<const uint4*>(x_d);
        auto* out = static_cast<uint4*>(recv->local());
        const dim3 grid(132 * h.blocks_per_sm), block(h.threads);
        if (h.u == 1) hand_scatter_rows<1><<<grid, block, 0, s>>>(xs, slot_d, out, T, int(K), H * 2 / 16);
        if (h.u == 2) hand_scatter_rows<2><<<grid, block, 0, s>>>(xs, slot_d, out, T, int(K), H * 2 / 16);
        if (h.u == 4) hand_scatter_rows<4><<<grid, block, 0, s>>>(xs, slot_d, out, T, int(K), H * 2 / 16);
        if (h.u == 8) hand_scatter_rows<8><<<grid, block, 0, s>>>(xs, slot_d, out, T, int(K), H * 2 / 16);
      };
      const auto [us, copy_us] = pk_bench::paired_median_us(run, copy, s);
      const double gbs = (T * row_bytes + T * K * row_bytes + index_bytes) / (us * 1e3);
      const double copy_gbs = 2.0 * T * K * H * 2 / (copy_us * 1e3);
      char line[200];
      std::snprintf(line, sizeof line, "| hand sweep: U %d, %d threads x %d blocks/SM | %.1f | %.0f | %.3f |\n", h.u,
                    h.threads, h.blocks_per_sm, us, gbs, gbs / copy_gbs);
      std::fputs(line, stdout);
    }
  }
  if (cudaGetLastError() != cudaSuccess) failures += 1;
  failures += !st.is_ok() || beaten > 0;
  if (argc > 1)
    if (FILE* f = std::fopen(argv[1], "w")) std::fputs(table.c_str(), f), std::fclose(f);
  return failures ? 1 : 0;
}
