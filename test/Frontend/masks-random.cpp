// RUN: pkc %s --emit=mlir | FileCheck %s
// RUN: pkc %s -o %t.cu --explain 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s --check-prefix=CUDA --input-file=%t.cu
// RUN: not pkc %s -DBAD_DIM -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD_DIM
// RUN: not pkc %s -DBAD_ORIGINS -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD_ORIGINS
// Tests masks combined by && || ! (a comparison is used as it is; any other tile is compared
// with 0 first), dim_index on a 3-D tile, and uniform(): an i32 hash chain from the seed's two
// words over each coordinate, on the general path and in the GEMM template's epilogue; a
// sliding window written with && still takes the attention template.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @logic
// CHECK: %[[X:.*]] = pk.tile.load
// CHECK: %[[Y:.*]] = pk.tile.load
// CHECK: %[[XT:.*]] = pk.tile.map <ne> %[[X]], %{{.*}} : !pk.tile<32x64xf32>
// CHECK: %[[YT:.*]] = pk.tile.map <ne> %[[Y]], %{{.*}} : !pk.tile<32x64xf32>
// CHECK: pk.tile.map <mul> %[[XT]], %[[YT]]
// CHECK: pk.tile.map <ne> %[[X]]
// CHECK: pk.tile.map <ne> %[[Y]]
// CHECK: pk.tile.map <max>
// CHECK: pk.tile.map <eq> %[[X]]
PK_KERNEL void logic(Tensor<f32, 2> a, Tensor<f32, 2> b, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {32, 64})) {
    auto x = load<32, 64>(a, m, n);
    auto y = load<32, 64>(b, m, n);
    store(out, (x && y) + 2.f * (x || y) + 4.f * !x, m, n);
  }
}

// Comparisons are masks already: && is their product, with no compare against 0.
// CHECK-LABEL: pk.kernel @band
// CHECK: %[[LE:.*]] = pk.tile.map <le>
// CHECK: %[[GT:.*]] = pk.tile.map <gt>
// CHECK-NEXT: pk.tile.map <mul> %[[LE]], %[[GT]]
PK_KERNEL void band(Tensor<f32, 2> s, Tensor<f32, 2> out, index w) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {64, 64})) {
    auto r = row_index<64, 64>(m);
    auto c = col_index<64, 64>(n);
    store(out, where((c <= r) && (c > r - w), load<64, 64>(s, m, n), -1e30f), m, n);
  }
}

// The trailing-dimension form: the leading origin b splatted, then the tile's coordinates.
// CHECK-LABEL: pk.kernel @noise_of_a_head
// CHECK: %[[B:.*]] = pk.tile.splat %{{.*}} : index -> !pk.tile<16x64xi32>
// CHECK: pk.tile.map <hash> %{{.*}}, %[[B]]
// CHECK: pk.tile.iota %{{.*}} dim 0 : !pk.tile<16x64xi32>
PK_KERNEL void noise_of_a_head(Tensor<f32, 3> out, index seed) {
  for (auto [b, m, n] : tiles(out.dim(0), out.dim(1), out.dim(2), {1, 16, 64}))
    store(out, uniform<16, 64>(seed, b, m, n), b, m, n);
}

// CHECK-LABEL: pk.kernel @coords
// CHECK: pk.tile.iota %{{.*}} dim 2 : !pk.tile<2x16x32xf32>
PK_KERNEL void coords(Tensor<f32, 3> out) {
  for (auto [b, s, h] : tiles(out.dim(0), out.dim(1), out.dim(2), {2, 16, 32}))
    store(out, dim_index<2, 2, 16, 32>(h), b, s, h);
}

// CHECK-LABEL: pk.kernel @dropout
// CHECK: pk.tile.map <hash> %{{.*}}, %{{.*}} : !pk.tile<32x128xi32>
// CHECK: pk.tile.iota %{{.*}} dim 0 : !pk.tile<32x128xi32>
// CHECK: pk.tile.map <hash>
// CHECK: pk.tile.iota %{{.*}} dim 1 : !pk.tile<32x128xi32>
// CHECK: pk.tile.map <hash>
// CHECK: pk.tile.map <div>
// CHECK: pk.tile.cast %{{.*}} : !pk.tile<32x128xi32> to !pk.tile<32x128xf32>
// CUDA: pk::tile::map({{.*}}[](int x, int y) { return pk::tile::wrap_hash(x, y); });
PK_KERNEL void dropout(Tensor<bf16, 2> x, Tensor<bf16, 2> y, index seed, float p) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto t = cast<f32>(load<32, 128>(x, m, n));
    store(y, cast<bf16>(where(uniform<32, 128>(seed, m, n) < p, 0.f, t * (1.f / (1.f - p)))), m, n);
  }
}

// EXPLAIN: template: pk.tile.foreach at {{.*}}masks-random.cpp:[[@LINE+5]]:3: gemm: persistent LCSC kernel
// CUDA-LABEL: namespace pk_gemm_dropout {
// CUDA: long long i0;  // sub(rem(add(rem(arg(3),4294967296),4294967296),4294967296),2147483648)
// CUDA: const int v{{[0-9]+}} = pk::tile::wrap_hash(
PK_KERNEL void gemm_dropout(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index seed) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(where(uniform<128, 256>(seed, m, n) < 0.1f, 0.f, acc)), m, n);
  }
}

// EXPLAIN: template: pk.tile.foreach at {{.*}}masks-random.cpp:[[@LINE+3]]:3: attention: {{.*}} a sliding window of arg(6) keys
PK_KERNEL void window_attention(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                Tensor<f32, 2> lse, float scale, index w) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto c = col_index<64, 64>(n), r = row_index<64, 64>(m);
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((c <= r) && (c < k.rows()) && (c > r - w), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
    store(lse, mx + log(l), m, 0);
  }
}

// Tests that ! of comparisons of coordinates (never NaN) is the inverse comparison, through && by
// De Morgan, so the same window written with ! takes the template with the same window; ! of a
// comparison of values that may be NaN stays a test against 0.
// EXPLAIN: template: pk.tile.foreach at {{.*}}masks-random.cpp:[[@LINE+3]]:3: attention: {{.*}} a sliding window of arg(6) keys
PK_KERNEL void window_attention_not(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                    Tensor<f32, 2> lse, float scale, index w) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto c = col_index<64, 64>(n), r = row_index<64, 64>(m);
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(!((c > r) || (c >= k.rows())) && !(c <= r - w), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
    store(lse, mx + log(l), m, 0);
  }
}

// CHECK-LABEL: pk.kernel @not_of_values
// CHECK: %[[GT:.*]] = pk.tile.map <gt>
// CHECK: pk.tile.map <eq> %[[GT]]
// CHECK: %[[LE:.*]] = pk.tile.map <le>
// CHECK-NOT: pk.tile.map <eq> %[[LE]]
PK_KERNEL void not_of_values(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 64>(x, m, 0);
    store(y, where(!(t > 0.0f) && !(col_index<16, 64>(0) > row_index<16, 64>(m)), t, 1.0f), m, 0);
  }
}

#ifdef BAD_DIM
PK_KERNEL void bad_dim(Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 16}))
// BAD_DIM: masks-random.cpp:[[@LINE+1]]:16: error: dim_index<D, S...>: D (2) must name one of the tile's 2 dimensions, counted from 0
    store(out, dim_index<2, 16, 16>(m), m, n);
}
#endif

#ifdef BAD_ORIGINS
PK_KERNEL void bad_origins(Tensor<f32, 2> out, index seed) {
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 16}))
// BAD_ORIGINS: masks-random.cpp:[[@LINE+1]]:16: error: uniform<S...>(seed, i0, ...) takes the seed and one origin per dimension of the tile (2), or of the tensor the tile is of (at most 4), got 1
    store(out, uniform<16, 16>(seed, m), m, n);
}
#endif
