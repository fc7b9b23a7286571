// RUN: pkc %s --explain -o %t.cu 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// Tests element programs at their edges: a 3-D tensor's scalar at the head (x.at(h, 0, 0)),
// integer abs of a difference of i32 indices, an i32 comparison as a mask factor and an integer
// rounded to bf16 in a score map; an i64 tile refused with a message; in a GEMM epilogue the
// accumulator converted to i32 and back, a row parity, and a bias row at a host-known row.
#include <pk/spec.h>
using namespace pk;
// CHECK-LABEL: decisions for kernel 'edge_map_d64'
// CHECK: attention: the loop is an online-softmax attention, head dim 64, with a score map of 21 steps
PK_KERNEL void edge_map_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> t3, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    float c = t3.at(h, 0, 0);
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto d = abs(cast<i32>(row) - cast<i32>(col));
      auto s = qk * scale - cast<f32>(cast<bf16>(d)) * c;
      s = where(cast<f32>(d < 100) * (col < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}
// CHECK-LABEL: decisions for kernel 'edge_i64_d64'
// CHECK: not the attention template: {{.*}}integer tiles in a score map must be i32
PK_KERNEL void edge_i64_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<i64, 1> seg, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where(cast<f32>(load<64, 1>(seg, m) == load<1, 64>(seg, n)) * (col < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}
// CHECK-LABEL: decisions for kernel 'edge_gemm'
// CHECK: gemm: persistent {{.*}}an element-wise epilogue of 16 steps
PK_KERNEL void edge_gemm(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index layer, Tensor<f32, 2> bias2) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto kk : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, kk), load_smem<256, 64>(b, n, kk), acc);
    auto r = cast<i32>(row_index<128, 256>(m));
    auto y = where(cast<f32>(r % 3 == 0), cast<f32>(cast<i32>(acc)), acc) + load<1, 256>(bias2, layer, n);
    store(c, cast<bf16>(y), m, n);
  }
}

// CUDA-LABEL: namespace pk_edge_map_d64
// CUDA: pk::tile::load_or_zero(e.t4 + ((long long)v11 * e.t4_rows + 0) * e.t4_cols + 0, (unsigned long long)v11 < (unsigned long long)e.t4_planes && 0 < e.t4_rows && 0 < e.t4_cols)
// CUDA: const int v8 = pk::tile::wrap_abs(v7);
// CUDA: const float v10 = pk::to_float(pk::from_float<pk::bf16>(v9));
// CUDA: const int v17 = int(v8 < static_cast<int>(100ll));
// CUDA-LABEL: namespace pk_edge_gemm
// The row's steps once per row, the bias row once per column, the rest per element:
// CUDA: __device__ static PreRow prepare_row(
// CUDA: const int v4 = pk::tile::wrap_rem(v1, static_cast<int>(3ll));
// CUDA: __device__ static PreCol prepare_col(
// CUDA: pk::tile::load_or_zero(e.t4 + (long long)e.i0 * e.t4_cols + col, (unsigned long long)e.i0 < (unsigned long long)e.t4_rows && col < e.t4_cols)
// CUDA: __device__ static float apply(
// CUDA: const int v10 = __float2int_rz(v9);
// CUDA: const float v12 = r.v8 != 0.f ? v11 : v9;
