// pk-copy-probe: what limits the general tile path's copy (pk-bench-tiles: 0.6 of
// cudaMemcpyAsync)? The same 16384 x 8192 bf16 copy in variants that each change one thing:
// the tile library as pkc emits it; with two blocks per SM; with 256-thread blocks; with fp32
// values rounded to bf16 two at a time (cvt.rn.bf16x2.f32); and plain 16-byte copies with one
// and four blocks per SM. Each is timed against cudaMemcpyAsync (pk_bench::paired_median_us)
// and checked in full against the source.
//   pk-copy-probe [table.md]
#include <pk/tile/rt.cuh>
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

// As tile_copy<512, 1>, but rounding pairs of floats with one cvt.rn.bf16x2.f32.
__global__ void __launch_bounds__(512) tile_copy_x2(pk::Tensor<pk::bf16> x, pk::Tensor<pk::bf16> y) {
  using Tile = pk::tile::rt<pk::bf16, 2, kTileRows, kTileCols, 1, 1, 512>;
  const long long rows = x.shape[0] / kTileRows, cols = x.shape[1] / kTileCols;
  for (long long t = blockIdx.x; t < rows * cols; t += gridDim.x) {
    const long long o[4] = {(t / cols) * kTileRows, (t % cols) * kTileCols};
    Tile tile;
    pk::tile::load(tile, x.data, x.shape, o);
#pragma unroll
    for (int s = 0; s < Tile::kSlots; s += 8) {
      const long long i = Tile::index(s);
      unsigned w[4];
#pragma unroll
      for (int k = 0; k < 4; ++k)
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w[k]) : "f"(tile.v[s + 2 * k + 1]), "f"(tile.v[s + 2 * k]));
      __stwb(reinterpret_cast<uint4*>(y.data + pk::tile::run_offset<Tile>(i, y.shape, o)), make_uint4(w[0], w[1], w[2], w[3]));
    }
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
  const std::vector<Variant> variants = {
      {"tile library, 512 threads, 1 block/SM (as emitted)", [&] { tile_copy<512, 1><<<sms, 512, 0, s>>>(X, Y); }},
      {"tile library, 512 threads, 2 blocks/SM", [&] { tile_copy<512, 2><<<2 * sms, 512, 0, s>>>(X, Y); }},
      {"tile library, 256 threads, 4 blocks/SM", [&] { tile_copy<256, 4><<<4 * sms, 256, 0, s>>>(X, Y); }},
      {"tile library, bf16x2 rounding", [&] { tile_copy_x2<<<sms, 512, 0, s>>>(X, Y); }},
      {"16-byte copy, 1 block/SM", [&] { raw_copy<<<sms, 512, 0, s>>>(reinterpret_cast<uint4*>(x), reinterpret_cast<uint4*>(y), kElems / 8); }},
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
