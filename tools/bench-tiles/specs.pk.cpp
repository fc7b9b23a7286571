// Memory-bound kernels written as specs for pk-bench-tiles: the general tile path on rows of
// 8192 bf16 elements; element-wise kernels take 8 x 1024 tiles, row-wise ones a whole row per
// tile (16 elements per thread of a 512-thread block either way).
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void copy(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 1024})) store(y, load<8, 1024>(x, m, n), m, n);
}

// The same copy with rank-3 tiles of x, y viewed [rows, 8, 1024] (a tile of trailing dimensions,
// as NHWC images and [B, T, D] activations take them): vector runs like the 2-D tiles.
PK_KERNEL void copy_3d(Tensor<bf16, 3> x, Tensor<bf16, 3> y) {
  for (auto [m, j, n] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 8, 1024}))
    store(y, load<1, 8, 1024>(x, m, j, n), m, j, n);
}

// The same bytes as integer tiles (the bench views the bf16 buffers as i8 [rows, 2 cols] and i32
// [rows, cols / 2]): 16 KiB a tile, as the bf16 copy's.
PK_KERNEL void copy_i8(Tensor<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 2048})) store(y, load<8, 2048>(x, m, n), m, n);
}
PK_KERNEL void copy_i32(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 512})) store(y, load<8, 512>(x, m, n), m, n);
}

PK_KERNEL void add(Tensor<bf16, 2> x, Tensor<bf16, 2> y, Tensor<bf16, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 1024}))
    store(z, cast<bf16>(cast<f32>(load<8, 1024>(x, m, n)) + cast<f32>(load<8, 1024>(y, m, n))), m, n);
}

PK_KERNEL void silu_mul(Tensor<bf16, 2> g, Tensor<bf16, 2> u, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(g.rows(), g.cols(), {8, 1024}))
    store(y, cast<bf16>(silu(cast<f32>(load<8, 1024>(g, m, n))) * cast<f32>(load<8, 1024>(u, m, n))), m, n);
}

PK_KERNEL void rms_norm(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> y, float inv_n, float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 8192})) {
    auto t = cast<f32>(load<1, 8192>(x, m, n));
    store(y, cast<bf16>(t * rsqrt(row_sum(t * t) * inv_n + eps) * cast<f32>(load<1, 8192>(w, 0, n))), m, n);
  }
}

PK_KERNEL void layer_norm(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> b, Tensor<bf16, 2> y,
                          float inv_n, float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 8192})) {
    auto t = cast<f32>(load<1, 8192>(x, m, n));
    auto d = t - row_sum(t) * inv_n;
    auto r = d * rsqrt(row_sum(d * d) * inv_n + eps);
    store(y, cast<bf16>(r * cast<f32>(load<1, 8192>(w, 0, n)) + cast<f32>(load<1, 8192>(b, 0, n))), m, n);
  }
}

PK_KERNEL void softmax(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 8192})) {
    auto t = cast<f32>(load<1, 8192>(x, m, n));
    auto e = exp(t - row_max(t));
    store(y, cast<bf16>(e / row_sum(e)), m, n);
  }
}
