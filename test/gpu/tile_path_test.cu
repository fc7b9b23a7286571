// The general tile path on one GPU: the kernels of test/specs/tile_path.pk.cpp, compiled by pkc
// at build time (register tiles, pk/tile/*.cuh), run on sizes with edge tiles in every
// dimension and checked against float64 references of what each spec says (elements outside a
// tensor load as zero and are not stored). Outputs are poisoned first; inputs are random.
#include PK_TILE_PATH_CU
#include "tile_test_util.h"

namespace {

using pkt::DevTensor;
using pkt::expect;
using pk::bf16;
using pk::f16;

// The grid: 132 (one block per SM), then 2, so that each block takes several batches of tiles
// (pk-batch-tile-loads) and the last batch of some blocks is partial.
int grid_blocks = 132;

void softmax() {
  const long long M = 37, N = 1500;  // tails in both dimensions (tiles of 16 x 1024)
  DevTensor<bf16> x({M, N}, 1), y({M, N}, 0, true);
  PKT_LAUNCH(tile_softmax, grid_blocks)(pk::LaunchContext{}, x.view(), y.view());
  PKT_CUDA(cudaDeviceSynchronize());
  std::vector<double> want(M * N);
  for (long long r = 0; r < M; ++r)
    for (long long n0 = 0; n0 < N; n0 += 1024) {
      double mx = -INFINITY, sum = 0;
      auto v = [&](long long j) { return n0 + j < N ? x.at(r * N + n0 + j) : 0.0; };
      for (long long j = 0; j < 1024; ++j) mx = std::max(mx, v(j));
      for (long long j = 0; j < 1024; ++j) sum += std::exp(v(j) - mx);
      for (long long j = 0; j < 1024 && n0 + j < N; ++j) want[r * N + n0 + j] = std::exp(v(j) - mx) / sum;
    }
  expect("tile_softmax", y, [&](long long i) { return want[i]; }, 1e-4, 2e-2);
}

void add() {
  const long long n = 10000;
  DevTensor<float> x({n}, 2), y({n}, 3), z({n}, 0, true);
  PKT_LAUNCH(tile_add, grid_blocks)(pk::LaunchContext{}, x.view(), y.view(), z.view());
  PKT_CUDA(cudaDeviceSynchronize());
  expect("tile_add", z, [&](long long i) { return x.at(i) + y.at(i); }, 1e-6, 1e-6);
}

void row_sums() {
  const long long M = 50, N = 300, T = (N + 127) / 128;
  DevTensor<float> x({M, N}, 4), s({M, T}, 0, true);
  PKT_LAUNCH(tile_row_sums, grid_blocks)(pk::LaunchContext{}, x.view(), s.view());
  PKT_CUDA(cudaDeviceSynchronize());
  expect("tile_row_sums", s, [&](long long i) {
    const long long r = i / T, t = i % T;
    double sum = 0;
    for (long long c = t * 128; c < std::min(N, (t + 1) * 128); ++c) sum += x.at(r * N + c);
    return sum;
  }, 1e-4, 1e-5);
}

// Several row and column tiles with tails: at grids of 4 a block's bias origin stays put from
// trip to trip (re-read from its ring stage), at 3 and 2 it moves (copied again).
void bias() {
  const long long M = 300, N = 200;
  DevTensor<float> x({M, N}, 5), b({1, N}, 6), y({M, N}, 0, true);
  PKT_LAUNCH(tile_bias, grid_blocks)(pk::LaunchContext{}, x.view(), b.view(), y.view());
  PKT_CUDA(cudaDeviceSynchronize());
  expect("tile_bias", y, [&](long long i) {
    const double v = x.at(i);
    return std::max(v + b.at(i % N), v * v);
  }, 1e-5, 1e-6);
}

// C = A * B (or B^T) in f32, T operands, K reduced in fp32.
template <class T, class Kernel>
void gemm(const char* what, Kernel kernel, int threads, bool transpose_b, long long M, long long N, long long K) {
  DevTensor<T> a({M, K}, 7), b(transpose_b ? std::vector<long long>{N, K} : std::vector<long long>{K, N}, 8);
  DevTensor<float> c({M, N}, 0, true);
  kernel<<<grid_blocks, threads>>>(pk::LaunchContext{}, a.view(), b.view(), c.view());
  PKT_CUDA(cudaDeviceSynchronize());
  expect(what, c, [&](long long i) {
    const long long r = i / N, col = i % N;
    double sum = 0;
    for (long long k = 0; k < K; ++k)
      sum += a.at(r * K + k) * (transpose_b ? b.at(col * K + k) : b.at(k * N + col));
    return sum;
  }, 1e-4 * std::sqrt(double(K)), 1e-5);
}

void rms_norm() {
  const long long M = 20, N = 3000;  // one partial tile per row
  const float eps = 1e-5f;
  DevTensor<bf16> x({M, N}, 9), w({1, N}, 10), y({M, N}, 0, true);
  PKT_LAUNCH(tile_rms_norm, grid_blocks)(pk::LaunchContext{}, x.view(), w.view(), y.view(), 1.f / N, eps);
  PKT_CUDA(cudaDeviceSynchronize());
  expect("tile_rms_norm", y, [&](long long i) {
    const long long r = i / N;
    double ss = 0;
    for (long long c = 0; c < N; ++c) ss += x.at(r * N + c) * x.at(r * N + c);
    return x.at(i) / std::sqrt(ss / N + eps) * w.at(i % N);
  }, 1e-3, 2e-2);
}

void swiglu() {
  const long long M = 40, N = 1000;
  DevTensor<bf16> g({M, N}, 11), u({M, N}, 12), y({M, N}, 0, true);
  PKT_LAUNCH(tile_swiglu, grid_blocks)(pk::LaunchContext{}, g.view(), u.view(), y.view());
  PKT_CUDA(cudaDeviceSynchronize());
  expect("tile_swiglu", y, [&](long long i) {
    const double a = g.at(i);
    return a / (1 + std::exp(-a)) * u.at(i);
  }, 1e-3, 2e-2);
}

void math() {
  const long long M = 45, N = 300;
  DevTensor<float> x({M, N}, 13), y({M, N}, 0, true);
  PKT_LAUNCH(tile_math, grid_blocks)(pk::LaunchContext{}, x.view(), y.view());
  PKT_CUDA(cudaDeviceSynchronize());
  expect("tile_math", y, [&](long long i) {
    const double t = x.at(i);
    const double gelu = 0.5 * t * (1 + std::tanh(0.7978845608 * (t + 0.044715 * t * t * t)));
    const double gelu_erf = 0.5 * t * (1 + std::erf(t / std::sqrt(2.0)));
    return gelu + 0.5 * gelu_erf - t * t + std::tanh(t) / (1 + std::exp(-t)) +
           std::sin(t) * std::cos(t) + std::log(std::fabs(t) + 1) + std::sqrt(std::fabs(t)) -
           std::min(t, 0.25);
  }, 1e-4, 1e-4);
}

void transpose() {
  const long long M = 75, N = 130;  // tails in both dimensions of the 32 x 64 tiles
  DevTensor<float> x({M, N}, 15), y({N, M}, 0, true);
  PKT_LAUNCH(tile_transpose, grid_blocks)(pk::LaunchContext{}, x.view(), y.view());
  PKT_CUDA(cudaDeviceSynchronize());
  expect("tile_transpose", y, [&](long long i) { return 2 * x.at((i % M) * N + i / M); }, 0, 0);
}

void unit_dims() {
  const long long M = 70, N = 100;  // tails of the 32-row steps, the 48- and 64 x 32 tiles
  DevTensor<float> x({M, N}, 16), v({M}, 17), y({N}, 0, true), z({M, N}, 0, true);
  PKT_LAUNCH(tile_unit_dims, grid_blocks)(pk::LaunchContext{}, x.view(), v.view(), y.view(), z.view());
  PKT_CUDA(cudaDeviceSynchronize());
  expect("tile_unit_dims (column sums)", y, [&](long long n) {
    double s = 0;
    for (long long m = 0; m < M; ++m) s += x.at(m * N + n);
    return s;
  }, 1e-5, 1e-5);
  expect("tile_unit_dims (column of a vector)", z, [&](long long i) {
    return static_cast<double>(x.at(i)) * v.at(i / N);
  }, 1e-6, 1e-6);
}

void causal_softmax() {
  const long long S = 300;  // tails of the 16 x 256 tiles in both dimensions
  DevTensor<float> s({S, S}, 14), p({S, S}, 0, true);
  PKT_LAUNCH(tile_causal_softmax, grid_blocks)(pk::LaunchContext{}, s.view(), p.view());
  PKT_CUDA(cudaDeviceSynchronize());
  // Per 256-column tile: masked and out-of-tensor elements are -1e30 and 0 (zero-filled load,
  // then masked only where the column exceeds the row), so the softmax runs over the tile.
  std::vector<double> want(S * S);
  for (long long r = 0; r < S; ++r)
    for (long long n0 = 0; n0 < S; n0 += 256) {
      auto v = [&](long long j) {
        const long long c = n0 + j;
        if (c > r) return -1e30;
        return c < S ? s.at(r * S + c) : 0.0;
      };
      double mx = -INFINITY, sum = 0;
      for (long long j = 0; j < 256; ++j) mx = std::max(mx, v(j));
      for (long long j = 0; j < 256; ++j) sum += std::exp(v(j) - mx);
      for (long long j = 0; j < 256 && n0 + j < S; ++j) want[r * S + n0 + j] = std::exp(v(j) - mx) / sum;
    }
  expect("tile_causal_softmax", p, [&](long long i) { return want[i]; }, 1e-6, 1e-4);
}

void band() {
  const long long M = 70, N = 100;
  DevTensor<bf16> x({M, N}, 15), y({M, N}, 0, true);
  PKT_LAUNCH(tile_band, grid_blocks)(pk::LaunchContext{}, x.view(), y.view());
  PKT_CUDA(cudaDeviceSynchronize());
  expect("tile_band", y, [&](long long i) {
    const double t = x.at(i);
    return (t > 0.5 && t < 1.5) || t >= 1.75 ? t : -t;
  }, 0, 0);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  for (int grid : {132, 4, 3, 2}) {
    grid_blocks = grid;
    std::printf("grid %d\n", grid);
    softmax();
    add();
    row_sums();
    bias();
    // These GEMMs take the Hopper template; their general-path twins are what a launch at these
    // sizes (K or N not whole 16-byte rows) runs, and what this test covers.
    gemm<f16>("tile_gemm_ab", tile_gemm_ab__general, pk_tile_gemm_ab__general::kThreads, false, 100, 90, 70);
    gemm<bf16>("tile_gemm_abt", tile_gemm_abt__general, pk_tile_gemm_abt__general::kThreads, true, 200, 150, 136);
    rms_norm();
    swiglu();
    math();
    causal_softmax();
    band();
    transpose();
    unit_dims();
  }
  if (cudaGetLastError() != cudaSuccess) pkt::fail("a launch failed");
  return pkt::finish("tile_path_test");
}
