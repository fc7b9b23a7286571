// pk-rows-probe: what limits the general tile path's row-wise kernels (pk-bench-tiles: rms_norm
// 0.46, softmax 0.30 of cudaMemcpyAsync)? rms_norm and softmax over 16384 x 8192 bf16 rows, one
// 1 x 8192 row per tile, written with the tile library as pkc emits them, in variants that change
// the block size (1024, 512 or 256 threads, so 1, 2 or 4 blocks share an SM and one block's
// barriers overlap another's loads) and whether the next row's loads are issued before the
// current row is computed (prefetch). Each is timed against cudaMemcpyAsync of the same bytes
// (pk_bench::paired_median_us) and checked on sampled rows against a float64 host reference.
//   pk-rows-probe [table.md]
#include <pk/tile/prefetch.cuh>
#include <pk/tile/rows.cuh>
#include <pk/device/load.cuh>
#include <pk/device/mbarrier.cuh>
#include <pk/device/store.cuh>
#ifdef PK_BENCH_SPECS_CU
#include PK_BENCH_SPECS_CU  // pkc's own kernels for tools/bench-tiles/specs.pk.cpp, built by nvcc
#endif
#include "paired_timing.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr long long kRows = 16384, kCols = 8192, kElems = kRows * kCols;

template <int THREADS>
using Row = pk::tile::rt<pk::bf16, 2, 1, kCols, 1, 1, THREADS>;
template <int THREADS>
using RowF = pk::tile::rt<float, 2, 1, kCols, 1, 1, THREADS>;
template <int THREADS>
using Stat = pk::tile::rt<float, 2, 1, 1, 1, 1, THREADS>;

// y = x * rsqrt(mean(x^2) + eps) * w, as pkc emits the spec of tools/bench-tiles/specs.pk.cpp.
template <int THREADS>
__device__ void rms_row(const Row<THREADS>& x, const Row<THREADS>& w, Row<THREADS>& y, float inv_n, float eps,
                        float* stage, float* rows) {
  RowF<THREADS> t, sq, scaled, wf;
  pk::tile::cast(t, x);
  pk::tile::map(sq, t, t, [](float a, float b) { return a * b; });
  Stat<THREADS> sum, r;
  pk::tile::reduce_rows(sum, sq, pk::tile::RowOp::sum, stage, rows);
  pk::tile::map(r, sum, [=](float s) { return rsqrtf(s * inv_n + eps); });
  pk::tile::map_broadcast(scaled, t, r, false, [](float a, float b) { return a * b; }, stage);
  pk::tile::cast(wf, w);
  pk::tile::map(scaled, scaled, wf, [](float a, float b) { return a * b; });
  pk::tile::cast(y, scaled);
}

// y = exp(x - max) / sum(exp(x - max)).
template <int THREADS>
__device__ void softmax_row(const Row<THREADS>& x, Row<THREADS>& y, float* stage, float* rows) {
  RowF<THREADS> t, e;
  pk::tile::cast(t, x);
  Stat<THREADS> mx, sum;
  pk::tile::reduce_rows(mx, t, pk::tile::RowOp::max, stage, rows);
  pk::tile::map_broadcast(e, t, mx, false, [](float a, float b) { return __expf(a - b); }, stage);
  pk::tile::reduce_rows(sum, e, pk::tile::RowOp::sum, stage, rows);
  pk::tile::map_broadcast(e, e, sum, false, [](float a, float b) { return a / b; }, stage);
  pk::tile::cast(y, e);
}

// rms_row and softmax_row with one-barrier reductions alternating between two halves of
// `partials` (pk::tile::reduce_rows with a parity).
template <int THREADS>
__device__ void rms_row_alt(const Row<THREADS>& x, const Row<THREADS>& w, Row<THREADS>& y, float inv_n, float eps,
                            float* partials, int& parity) {
  RowF<THREADS> t, sq, scaled, wf;
  pk::tile::cast(t, x);
  pk::tile::map(sq, t, t, [](float a, float b) { return a * b; });
  Stat<THREADS> sum, r;
  pk::tile::reduce_rows(sum, sq, pk::tile::RowOp::sum, partials, 32, parity);
  pk::tile::map(r, sum, [=](float s) { return rsqrtf(s * inv_n + eps); });
  pk::tile::map_broadcast(scaled, t, r, false, [](float a, float b) { return a * b; }, nullptr);
  pk::tile::cast(wf, w);
  pk::tile::map(scaled, scaled, wf, [](float a, float b) { return a * b; });
  pk::tile::cast(y, scaled);
}
template <int THREADS>
__device__ void softmax_row_alt(const Row<THREADS>& x, Row<THREADS>& y, float* partials, int& parity) {
  RowF<THREADS> t, e;
  pk::tile::cast(t, x);
  Stat<THREADS> mx, sum;
  pk::tile::reduce_rows(mx, t, pk::tile::RowOp::max, partials, 32, parity);
  pk::tile::map_broadcast(e, t, mx, false, [](float a, float b) { return __expf(a - b); }, nullptr);
  pk::tile::reduce_rows(sum, e, pk::tile::RowOp::sum, partials, 32, parity);
  pk::tile::map_broadcast(e, e, sum, false, [](float a, float b) { return a / b; }, nullptr);
  pk::tile::cast(y, e);
}

template <int THREADS, int MIN_BLOCKS, bool PREFETCH>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    probe_rms_norm(pk::Tensor<pk::bf16> x, pk::Tensor<pk::bf16> w, pk::Tensor<pk::bf16> y, float inv_n, float eps) {
  __shared__ float stage[pk::tile::kStageFloats];
  __shared__ float rows[pk::tile::kMaxRows];
  const long long n = x.shape[0];
  Row<THREADS> cx, cw, out;
  long long t = blockIdx.x;
  if (PREFETCH && t < n) {
    const long long o[4] = {t, 0}, z[4] = {0, 0};
    pk::tile::load(cx, x.data, x.shape, o);
    pk::tile::load(cw, w.data, w.shape, z);
  }
  for (; t < n; t += gridDim.x) {
    const long long o[4] = {t, 0}, z[4] = {0, 0};
    if (PREFETCH) {
      Row<THREADS> nx, nw;
      const long long on[4] = {t + gridDim.x < n ? t + gridDim.x : t, 0};
      pk::tile::load(nx, x.data, x.shape, on);
      pk::tile::load(nw, w.data, w.shape, z);
      rms_row(cx, cw, out, inv_n, eps, stage, rows);
      pk::tile::store(out, y.data, y.shape, o);
      cx = nx, cw = nw;
    } else {
      pk::tile::load(cx, x.data, x.shape, o);
      pk::tile::load(cw, w.data, w.shape, z);
      rms_row(cx, cw, out, inv_n, eps, stage, rows);
      pk::tile::store(out, y.data, y.shape, o);
    }
  }
}

template <int THREADS, int MIN_BLOCKS, bool PREFETCH>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) probe_softmax(pk::Tensor<pk::bf16> x, pk::Tensor<pk::bf16> y) {
  __shared__ float stage[pk::tile::kStageFloats];
  __shared__ float rows[pk::tile::kMaxRows];
  const long long n = x.shape[0];
  Row<THREADS> cx, out;
  long long t = blockIdx.x;
  if (PREFETCH && t < n) {
    const long long o[4] = {t, 0};
    pk::tile::load(cx, x.data, x.shape, o);
  }
  for (; t < n; t += gridDim.x) {
    const long long o[4] = {t, 0};
    if (PREFETCH) {
      Row<THREADS> nx;
      const long long on[4] = {t + gridDim.x < n ? t + gridDim.x : t, 0};
      pk::tile::load(nx, x.data, x.shape, on);
      softmax_row(cx, out, stage, rows);
      pk::tile::store(out, y.data, y.shape, o);
      cx = nx;
    } else {
      pk::tile::load(cx, x.data, x.shape, o);
      softmax_row(cx, out, stage, rows);
      pk::tile::store(out, y.data, y.shape, o);
    }
  }
}


// The same rows through a shared-memory ring of STAGES rows (pk/tile/prefetch.cuh): each thread
// copies its own runs of the rows STAGES - 1 trips ahead with cp.async, so loads stay in flight
// through the reductions without costing registers. The row stage is only as large as the
// block-wide reduction needs.
template <int THREADS, int MIN_BLOCKS, int STAGES, bool RMS, bool W_IN_RING = false, bool ONE_BARRIER = false>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    ring_rows(pk::Tensor<pk::bf16> x, pk::Tensor<pk::bf16> w, pk::Tensor<pk::bf16> y, float inv_n, float eps) {
  extern __shared__ __align__(16) unsigned char smem[];
  pk::bf16* ring = reinterpret_cast<pk::bf16*>(smem);
  pk::bf16* wring = ring + STAGES * kCols;  // W_IN_RING: the weights' stages
  __shared__ float stage[64];
  __shared__ float rows[1];
  __shared__ float partials[2 * 32];
  int parity = 0;
  const long long n = x.shape[0];
  const long long z[4] = {0, 0};
#pragma unroll
  for (int k = 0; k < STAGES - 1; ++k) {
    const long long t = blockIdx.x + 1ll * k * gridDim.x;
    const long long o[4] = {t, 0};
    if (t < n) pk::tile::prefetch<Row<THREADS>>(ring + k * kCols, x.data, x.shape, o);
    if (t < n && W_IN_RING) pk::tile::prefetch<Row<THREADS>>(wring + k * kCols, w.data, w.shape, z);
    pk::tile::prefetch_commit();
  }
  int slot = 0;
  for (long long t = blockIdx.x; t < n; t += gridDim.x) {
    {
      const long long ahead = t + 1ll * (STAGES - 1) * gridDim.x;
      const long long o[4] = {ahead, 0};
      const int s = (slot + STAGES - 1) % STAGES;
      if (ahead < n) pk::tile::prefetch<Row<THREADS>>(ring + s * kCols, x.data, x.shape, o);
      if (ahead < n && W_IN_RING) pk::tile::prefetch<Row<THREADS>>(wring + s * kCols, w.data, w.shape, z);
      pk::tile::prefetch_commit();
    }
    pk::tile::prefetch_wait<STAGES - 1>();
    const long long o[4] = {t, 0};
    Row<THREADS> cx, cw, out;
    pk::tile::load_prefetched(cx, ring + slot * kCols, x.data, x.shape, o);
    if (RMS) {
      if (W_IN_RING) pk::tile::load_prefetched(cw, wring + slot * kCols, w.data, w.shape, z);
      else pk::tile::load(cw, w.data, w.shape, z);
      if (ONE_BARRIER) rms_row_alt(cx, cw, out, inv_n, eps, partials, parity);
      else rms_row(cx, cw, out, inv_n, eps, stage, rows);
    } else {
      if (ONE_BARRIER) softmax_row_alt(cx, out, partials, parity);
      else softmax_row(cx, out, stage, rows);
    }
    pk::tile::store(out, y.data, y.shape, o);
    slot = (slot + 1) % STAGES;
  }
}

// The same rows with each row's bytes moved by one TMA bulk copy (cp.async.bulk, issued by one
// thread, completing on a per-stage mbarrier) instead of 16-byte cp.async per thread, so the
// load costs the block two instructions instead of two per thread. KIND: 0 copy through
// registers, 1 rms_norm, 2 softmax, 3 copy by TMA alone (ring to global by a bulk store, no
// registers). A ring stage is refilled at the start of the trip after it was read: every thread
// reads its runs before the trip's first block barrier (the copy has one of its own), so thread 0
// passing that barrier means the stage is free.
template <int THREADS, int MIN_BLOCKS, int STAGES, int KIND>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    bulk_rows(pk::Tensor<pk::bf16> x, pk::Tensor<pk::bf16> w, pk::Tensor<pk::bf16> y, float inv_n, float eps) {
  extern __shared__ __align__(128) unsigned char smem[];
  pk::bf16* ring = reinterpret_cast<pk::bf16*>(smem);
  pk::bf16* wrow = ring + STAGES * kCols;
  __shared__ pk::Mbarrier full[STAGES], wbar;
  __shared__ float partials[2 * 32];
  int parity = 0;
  constexpr unsigned kBytes = kCols * 2;
  const long long n = x.shape[0];
  const bool leader = threadIdx.x == 0;
  if (leader) {
    for (int k = 0; k < STAGES; ++k) pk::mbarrier_init(&full[k], 1);
    pk::mbarrier_init(&wbar, 1);
  }
  __syncthreads();
  if (leader) {
    if (KIND == 1) pk::mbarrier_arrive_expect_tx(&wbar, kBytes), pk::load_async_bulk(wrow, w.data, kBytes, &wbar);
    for (int k = 0; k < STAGES - 1; ++k) {
      const long long t = blockIdx.x + 1ll * k * gridDim.x;
      if (t < n) pk::mbarrier_arrive_expect_tx(&full[k], kBytes), pk::load_async_bulk(ring + k * kCols, x.data + t * kCols, kBytes, &full[k]);
    }
  }
  if (KIND == 1) pk::mbarrier_wait_parity(&wbar, 0);
  unsigned phases = 0;  // bit k: parity of stage k's next completion
  int slot = 0;
  for (long long t = blockIdx.x; t < n; t += gridDim.x) {
    if (KIND == 0) __syncthreads();  // the copy has no reduction barrier to free the stage
    if (leader) {
      const long long ahead = t + 1ll * (STAGES - 1) * gridDim.x;
      const int s = (slot + STAGES - 1) % STAGES;
      if (KIND == 3) pk::bulk_wait_read();  // the bulk store out of that stage has read it
      if (ahead < n) pk::mbarrier_arrive_expect_tx(&full[s], kBytes), pk::load_async_bulk(ring + s * kCols, x.data + ahead * kCols, kBytes, &full[s]);
    }
    pk::mbarrier_wait_parity(&full[slot], (phases >> slot) & 1u);
    phases ^= 1u << slot;
    const pk::bf16* in = ring + slot * kCols;
    if (KIND == 3) {
      if (leader) pk::store_async_bulk(y.data + t * kCols, in, kBytes), pk::bulk_commit();
    } else {
      Row<THREADS> cx, cw, out;
      pk::tile::load_runs(cx, [&](long long i) { return in + i; });
      if (KIND == 1) {
        pk::tile::load_runs(cw, [&](long long i) { return wrow + i; });
        rms_row_alt(cx, cw, out, inv_n, eps, partials, parity);
      } else if (KIND == 2) {
        softmax_row_alt(cx, out, partials, parity);
      } else {
        out = cx;
      }
      const long long o[4] = {t, 0};
      pk::tile::store(out, y.data, y.shape, o);
    }
    slot = (slot + 1) % STAGES;
  }
  if (leader) pk::bulk_wait_complete();
}

float bf16_to_float(unsigned short b) {
  const unsigned u = static_cast<unsigned>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Worst relative error over sampled rows against float64 (rms_norm when w is given, else softmax).
double sampled_error(const std::vector<unsigned short>& x, const std::vector<unsigned short>* w,
                     const std::vector<unsigned short>& y, float inv_n, float eps) {
  double worst = 0;
  for (long long r : {0ll, 1ll, 131ll, 4097ll, kRows / 2 + 3, kRows - 1}) {
    const unsigned short* xr = x.data() + r * kCols;
    const unsigned short* yr = y.data() + r * kCols;
    std::vector<double> ref(kCols);
    if (w) {
      double ss = 0;
      for (long long c = 0; c < kCols; ++c) ss += double(bf16_to_float(xr[c])) * bf16_to_float(xr[c]);
      const double scale = 1.0 / std::sqrt(ss * inv_n + eps);
      for (long long c = 0; c < kCols; ++c) ref[c] = bf16_to_float(xr[c]) * scale * bf16_to_float((*w)[c]);
    } else {
      double mx = -1e300, sum = 0;
      for (long long c = 0; c < kCols; ++c) mx = std::fmax(mx, bf16_to_float(xr[c]));
      for (long long c = 0; c < kCols; ++c) sum += ref[c] = std::exp(bf16_to_float(xr[c]) - mx);
      for (long long c = 0; c < kCols; ++c) ref[c] /= sum;
    }
    for (long long c = 0; c < kCols; ++c) {
      const double got = bf16_to_float(yr[c]);
      const double err = std::fabs(got - ref[c]) / (std::fabs(ref[c]) + 1e-6);
      worst = std::fmax(worst, std::isfinite(got) ? err : 1e30);
    }
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // rows so far survive a crash
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) return std::puts("skipped: no GPU"), 77;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  unsigned short *x, *w, *y;
  cudaMalloc(&x, kElems * 2);
  cudaMalloc(&w, kCols * 2);
  cudaMalloc(&y, kElems * 2);
  std::vector<unsigned short> hx(kElems), hw(kCols), got(kElems);
  unsigned state = 12345;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (auto& v : hx) v = static_cast<unsigned short>(0x3e00 + (next() >> 16) % 0x300 + ((next() >> 8) & 0x8000));
  for (auto& v : hw) v = static_cast<unsigned short>(0x3f00 + (next() >> 16) % 0x100);
  cudaMemcpy(x, hx.data(), kElems * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(w, hw.data(), kCols * 2, cudaMemcpyHostToDevice);
  auto tensor = [](unsigned short* p, long long r, long long c) {
    return pk::Tensor<pk::bf16>{reinterpret_cast<pk::bf16*>(p), {r, c, 1, 1}, r * c};
  };
  const auto X = tensor(x, kRows, kCols), W = tensor(w, 1, kCols), Y = tensor(y, kRows, kCols);
  const float inv_n = 1.0f / kCols, eps = 1e-6f;
  cudaStream_t s;
  cudaStreamCreate(&s);
  struct Variant {
    std::string name;
    bool rms;
    std::function<void()> run;
    int kind = -1;  // bulk_rows KIND (0, 3: a copy, checked bit for bit); -1 otherwise
  };
#define PK_RMS(T, B, P) {"rms_norm, " #T " threads x " #B " blocks/SM" + std::string(P ? ", prefetch" : ""), true, \
                         [&] { probe_rms_norm<T, B, P><<<B * sms, T, 0, s>>>(X, W, Y, inv_n, eps); }}
#define PK_SOFTMAX(T, B, P) {"softmax, " #T " threads x " #B " blocks/SM" + std::string(P ? ", prefetch" : ""), false, \
                             [&] { probe_softmax<T, B, P><<<B * sms, T, 0, s>>>(X, Y); }}
#define PK_RING(T, B, S, RMS, WR, ONE) {std::string(RMS ? "rms_norm" : "softmax") + ", " #T " threads x " #B " blocks/SM, ring of " #S + \
                         (WR ? ", weights in the ring" : "") + (ONE ? ", one-barrier reductions" : ""), RMS, \
                         [&] { ring_rows<T, B, S, RMS, WR, ONE><<<B * sms, T, (WR ? 2 : 1) * S * kCols * 2, s>>>(X, W, Y, inv_n, eps); }}
#define PK_BULK(T, B, S, KIND) {std::string(KIND == 1 ? "rms_norm" : KIND == 2 ? "softmax" : KIND == 0 ? "copy" : "copy by TMA alone") + ", " #T " threads x " #B " blocks/SM, bulk ring of " #S, \
                         KIND == 1, [&] { bulk_rows<T, B, S, KIND><<<B * sms, T, (S + (KIND == 1)) * kCols * 2, s>>>(X, W, Y, inv_n, eps); }, KIND}
  auto ring_smem = [](auto kernel, int bytes) {
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  };
  ring_smem(ring_rows<512, 2, 2, true, false, false>, 2 * kCols * 2);
  ring_smem(ring_rows<512, 2, 2, true, true, false>, 4 * kCols * 2);
  ring_smem(ring_rows<512, 2, 2, true, false, true>, 2 * kCols * 2);
  ring_smem(ring_rows<512, 2, 2, true, true, true>, 4 * kCols * 2);
  ring_smem(ring_rows<256, 4, 2, false, false, false>, 2 * kCols * 2);
  ring_smem(ring_rows<256, 4, 2, false, false, true>, 2 * kCols * 2);
  ring_smem(bulk_rows<512, 2, 2, 1>, 3 * kCols * 2);
  ring_smem(bulk_rows<512, 2, 3, 1>, 4 * kCols * 2);
  ring_smem(bulk_rows<256, 4, 2, 2>, 2 * kCols * 2);
  ring_smem(bulk_rows<256, 4, 2, 0>, 2 * kCols * 2);
  ring_smem(bulk_rows<32, 2, 4, 3>, 4 * kCols * 2);
#ifdef PK_BENCH_SPECS_CU
  cudaFuncSetAttribute(::rms_norm, cudaFuncAttributeMaxDynamicSharedMemorySize, pk_rms_norm::kSharedBytes);
  cudaFuncSetAttribute(::softmax, cudaFuncAttributeMaxDynamicSharedMemorySize, pk_softmax::kSharedBytes);
#endif
  const std::vector<Variant> variants = {
#ifdef PK_BENCH_SPECS_CU
      {"rms_norm as pkc emits it, built by nvcc", true, [&] {
         ::rms_norm<<<pk_rms_norm::kBlocks, pk_rms_norm::kThreads, pk_rms_norm::kSharedBytes, s>>>(
             pk::LaunchContext{}, X, W, Y, inv_n, eps);
       }},
      {"softmax as pkc emits it, built by nvcc", false, [&] {
         ::softmax<<<pk_softmax::kBlocks, pk_softmax::kThreads, pk_softmax::kSharedBytes, s>>>(pk::LaunchContext{}, X, Y);
       }},
#endif
      PK_BULK(32, 2, 4, 3), PK_BULK(256, 4, 2, 0), PK_BULK(512, 2, 2, 1), PK_BULK(512, 2, 3, 1),
      PK_BULK(256, 4, 2, 2),
      PK_RING(512, 2, 2, true, false, false), PK_RING(512, 2, 2, true, true, false),
      PK_RING(512, 2, 2, true, false, true),  PK_RING(512, 2, 2, true, true, true),
      PK_RING(256, 4, 2, false, false, false), PK_RING(256, 4, 2, false, false, true),
      PK_RMS(512, 2, false), PK_SOFTMAX(256, 4, false),
  };
  std::string table = "| variant | us | GB/s | copy GB/s | / copy | worst rel. error (6 rows) |\n|---|---|---|---|---|---|\n";
  int failures = 0;
  for (const Variant& v : variants) {
    cudaMemsetAsync(y, 0xff, kElems * 2, s);
    v.run();
    cudaStreamSynchronize(s);
    cudaMemcpy(got.data(), y, kElems * 2, cudaMemcpyDeviceToHost);
    const bool ran = cudaGetLastError() == cudaSuccess;
    const double err = !ran ? 1e30
                       : v.kind == 0 || v.kind == 3 ? (std::memcmp(got.data(), hx.data(), kElems * 2) == 0 ? 0.0 : 1e30)
                                                    : sampled_error(hx, v.rms ? &hw : nullptr, got, inv_n, eps);
    const bool correct = err < 2e-2;
    failures += !correct;
    const auto [us, copy_us] =
        pk_bench::paired_median_us(v.run, [&] { cudaMemcpyAsync(y, x, kElems * 2, cudaMemcpyDeviceToDevice, s); }, s);
    const double gbs = 4.0 * kElems / (us * 1e3), copy_gbs = 4.0 * kElems / (copy_us * 1e3);
    char row[256];
    std::snprintf(row, sizeof row, "| %s | %.1f | %.0f | %.0f | %.3f | %.1e%s |\n", v.name.c_str(), us, gbs, copy_gbs,
                  gbs / copy_gbs, err, correct ? "" : " WRONG");
    table += row;
    std::fputs(row, stdout);
  }
  if (argc > 1)
    if (FILE* f = std::fopen(argv[1], "w")) std::fputs(table.c_str(), f), std::fclose(f);
  return failures ? 1 : 0;
}
