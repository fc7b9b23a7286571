// pk-copy-probe: what limits the general tile path's copy (pk-bench-tiles: 0.6 of
// cudaMemcpyAsync)? The same 16384 x 8192 bf16 copy in variants that each change one thing:
// the tile library as pkc emits it, with two or four blocks per SM; with the loads issued ahead
// through a shared-memory ring (pk/tile/prefetch.cuh); and a plain 16-byte copy. (Run 7 of
// docs/benchmarks/tiles-1xH200.md also measured one block per SM and bf16x2 rounding.) Each is timed against cudaMemcpyAsync (pk_bench::paired_median_us)
// and checked in full against the source.
//   pk-copy-probe [table.md]
#include <pk/tile/prefetch.cuh>
#include "paired_timing.h"

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr long long kRows = 16384, kCols = 8192, kElems = kRows * kCols;
constexpr int kTileRows = 8, kTileCols = 1024;

// The loop pkc emits for `store(y, load<8, 1024>(x, m, n), m, n)` (batching off), with the
// tile's thread count and the blocks per SM as parameters.
template <int THREADS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) tile_copy(pk::Tensor<pk::bf16> x, pk::Tensor<pk::bf16> y) {
  using Tile = pk::tile::rt<pk::bf16, 2, kTileRows, kTileCols, 1, 1, THREADS>;
  const long long rows = (x.shape[0] + kTileRows - 1) / kTileRows, cols = (x.shape[1] + kTileCols - 1) / kTileCols;
  for (long long t = blockIdx.x; t < rows * cols; t += gridDim.x) {
    const long long o[4] = {(t / cols) * kTileRows, (t % cols) * kTileCols};
    Tile tile;
    pk::tile::load(tile, x.data, x.shape, o);
    pk::tile::store(tile, y.data, y.shape, o);
  }
}

// tile_copy with the loads STAGES - 1 trips ahead through a shared-memory ring (pk/tile/prefetch.cuh).
template <int THREADS, int MIN_BLOCKS, int STAGES>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) ring_copy(pk::Tensor<pk::bf16> x, pk::Tensor<pk::bf16> y) {
  using Tile = pk::tile::rt<pk::bf16, 2, kTileRows, kTileCols, 1, 1, THREADS>;
  extern __shared__ __align__(16) unsigned char smem[];
  pk::bf16* ring = reinterpret_cast<pk::bf16*>(smem);
  const long long rows = (x.shape[0] + kTileRows - 1) / kTileRows, cols = (x.shape[1] + kTileCols - 1) / kTileCols;
  const long long n = rows * cols;
  for (int k = 0; k < STAGES - 1; ++k) {
    const long long t = blockIdx.x + 1ll * k * gridDim.x;
    const long long o[4] = {(t / cols) * kTileRows, (t % cols) * kTileCols};
    if (t < n) pk::tile::prefetch<Tile>(ring + k * Tile::kCount, x.data, x.shape, o);
    pk::tile::prefetch_commit();
  }
  int slot = 0;
  for (long long t = blockIdx.x; t < n; t += gridDim.x) {
    const long long a = t + 1ll * (STAGES - 1) * gridDim.x;
    const long long oa[4] = {(a / cols) * kTileRows, (a % cols) * kTileCols};
    if (a < n) pk::tile::prefetch<Tile>(ring + ((slot + STAGES - 1) % STAGES) * Tile::kCount, x.data, x.shape, oa);
    pk::tile::prefetch_commit();
    pk::tile::prefetch_wait<STAGES - 1>();
    const long long o[4] = {(t / cols) * kTileRows, (t % cols) * kTileCols};
    Tile tile;
    pk::tile::load_prefetched(tile, ring + slot * Tile::kCount, x.data, x.shape, o);
    pk::tile::store(tile, y.data, y.shape, o);
    slot = (slot + 1) % STAGES;
  }
}

// A plain grid-stride copy of 16-byte words.
__global__ void __launch_bounds__(512) raw_copy(const uint4* x, uint4* y, long long n) {
  for (long long i = blockIdx.x * 512ll + threadIdx.x; i < n; i += gridDim.x * 512ll) y[i] = x[i];
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) return std::puts("skipped: no GPU"), 77;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  unsigned short *x, *y;
  cudaMalloc(&x, kElems * 2);
  cudaMalloc(&y, kElems * 2);
  std::vector<unsigned short> host(kElems), got(kElems);
  for (long long i = 0; i < kElems; ++i) host[i] = static_cast<unsigned short>(0x3f80 + (i * 7919) % 256);  // finite bf16
  cudaMemcpy(x, host.data(), kElems * 2, cudaMemcpyHostToDevice);
  const pk::Tensor<pk::bf16> X{reinterpret_cast<pk::bf16*>(x), {kRows, kCols, 1, 1}, kElems};
  const pk::Tensor<pk::bf16> Y{reinterpret_cast<pk::bf16*>(y), {kRows, kCols, 1, 1}, kElems};
  cudaStream_t s;
  cudaStreamCreate(&s);
  struct Variant {
    std::string name;
    std::function<void()> run;
  };
  constexpr int kTileBytes = kTileRows * kTileCols * 2;
  cudaFuncSetAttribute(ring_copy<512, 2, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * kTileBytes);
  cudaFuncSetAttribute(ring_copy<256, 4, 3>, cudaFuncAttributeMaxDynamicSharedMemorySize, 3 * kTileBytes);
  const std::vector<Variant> variants = {
      {"ring of 2, 512 threads, 2 blocks/SM", [&] { ring_copy<512, 2, 2><<<2 * sms, 512, 2 * kTileBytes, s>>>(X, Y); }},
      {"ring of 4, 512 threads, 2 blocks/SM", [&] { ring_copy<512, 2, 4><<<2 * sms, 512, 4 * kTileBytes, s>>>(X, Y); }},
      {"ring of 2, 256 threads, 4 blocks/SM", [&] { ring_copy<256, 4, 2><<<4 * sms, 256, 2 * kTileBytes, s>>>(X, Y); }},
      {"ring of 3, 256 threads, 4 blocks/SM", [&] { ring_copy<256, 4, 3><<<4 * sms, 256, 3 * kTileBytes, s>>>(X, Y); }},
      {"tile library, 512 threads, 2 blocks/SM", [&] { tile_copy<512, 2><<<2 * sms, 512, 0, s>>>(X, Y); }},
      {"tile library, 256 threads, 4 blocks/SM", [&] { tile_copy<256, 4><<<4 * sms, 256, 0, s>>>(X, Y); }},
      {"16-byte copy, 4 blocks/SM", [&] { raw_copy<<<4 * sms, 512, 0, s>>>(reinterpret_cast<uint4*>(x), reinterpret_cast<uint4*>(y), kElems / 8); }},
  };
  std::string table = "| variant | us | GB/s | copy GB/s | / copy | correct |\n|---|---|---|---|---|---|\n";
  int failures = 0;
  for (const Variant& v : variants) {
    cudaMemsetAsync(y, 0xff, kElems * 2, s);
    v.run();
    cudaStreamSynchronize(s);
    cudaMemcpy(got.data(), y, kElems * 2, cudaMemcpyDeviceToHost);
    const bool correct = std::memcmp(got.data(), host.data(), kElems * 2) == 0 && cudaGetLastError() == cudaSuccess;
    failures += !correct;
    const auto [us, copy_us] =
        pk_bench::paired_median_us(v.run, [&] { cudaMemcpyAsync(y, x, kElems * 2, cudaMemcpyDeviceToDevice, s); }, s);
    const double gbs = 4.0 * kElems / (us * 1e3), copy_gbs = 4.0 * kElems / (copy_us * 1e3);
    char row[256];
    std::snprintf(row, sizeof row, "| %s | %.1f | %.0f | %.0f | %.3f | %s |\n", v.name.c_str(), us, gbs, copy_gbs,
                  gbs / copy_gbs, correct ? "yes" : "NO");
    table += row;
    std::fputs(row, stdout);
  }
  if (argc > 1)
    if (FILE* f = std::fopen(argv[1], "w")) std::fputs(table.c_str(), f), std::fclose(f);
  return failures ? 1 : 0;
}
