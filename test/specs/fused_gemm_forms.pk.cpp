// The fused GEMM templates' other ways in: B stored [K, N] (mma, C = A * B: a torch weight [out, in]
// in dX = dY W) for gemm_rs, gemm_ar and ag_gemm, and a reduce-scatter of a Scratch product (the
// collective form of gemm_rs); then forms that stay unfused. Compiled by test/Fusion/fused-forms.test
// and run on a GPU by jit_gemm_test at every world size.
#include <pk/spec.h>
using namespace pk;

#define GEMM_KN(A, B, OUT)                                                             \
  for (auto [m, n] : tiles(A.rows(), B.cols(), {128, 256})) {                          \
    auto acc = zeros<f32, 128, 256>();                                                 \
    for (auto k : range(0, A.cols(), 64))                                              \
      acc = mma(load_smem<128, 64>(A, m, k), load_smem<64, 256>(B, k, n), acc);        \
    store(OUT, cast<bf16>(acc), m, n);                                                 \
  }

// The owner-loop form of gemm_rs with B [K, N].
PK_KERNEL void rs_adds_kn(Tensor<bf16, 2> dy, Tensor<bf16, 2> w, Sym<bf16, 2> dx) {
  for (auto [m, n] : tiles(dx.rows(), dx.cols(), {64, 256})) store(dx, zeros<bf16, 64, 256>(), m, n);
  index rows = dy.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, w.cols(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.cols(), 64))
      acc = mma(load_smem<128, 64>(dy, o * rows + m, k), load_smem<64, 256>(w, k, n), acc);
    store_add(dx.on(o), cast<bf16>(acc), m, n);
  }
}

// The product into a Scratch, then a reduce-scatter of it: gemm_rs, the output zeroed at launch,
// shapes the loop does not cover taking the general-path twin.
PK_KERNEL void rs_collective(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  reduce_scatter(Sum, p, c);
}

// The same with B [K, N].
PK_KERNEL void rs_collective_kn(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_KN(a, b, p)
  reduce_scatter(Sum, p, c);
}

// gemm_ar and ag_gemm with B [K, N].
PK_KERNEL void ar_kn(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_KN(a, b, p)
  all_reduce(Sum, p, c);
}
PK_KERNEL void ag_kn(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  GEMM_KN(a_full, b, c)
}

// A reduce-scatter into a local tensor, or of a product the caller may read, or by max, stays a
// launch of its own, with the reason.
PK_KERNEL void rs_local_out(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Tensor<bf16, 2> c) {
  GEMM_KN(a, b, p)
  reduce_scatter(Sum, p, c);
}
PK_KERNEL void rs_product_kept(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_KN(a, b, p)
  reduce_scatter(Sum, p, c);
}
PK_KERNEL void rs_max(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_KN(a, b, p)
  reduce_scatter(Max, p, c);
}

// A kernel with more phases than a fused template takes: the GEMM and its collective still become
// one launch of it, beside the other phases' launches (a tensor-parallel MLP: a GELU into h, the
// row GEMM into a Scratch, its all-reduce).
PK_KERNEL void gelu_then_gemm_ar(Tensor<bf16, 2> x, Tensor<bf16, 2> h, Tensor<bf16, 2> w, Scratch<bf16, 2> p,
                                 Sym<bf16, 2> out) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(h, cast<bf16>(gelu(cast<f32>(load<16, 256>(x, m, n)))), m, n);
  GEMM_KN(h, w, p)
  all_reduce(Sum, p, out);
}
// An all-gather of A, the GEMM, then a phase that reads the product: ag_gemm, then the phase.
PK_KERNEL void ag_gemm_then_scale(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c,
                                  Tensor<bf16, 2> y) {
  all_gather(a, a_full);
  GEMM_KN(a_full, b, c)
  for (auto [m, n] : tiles(c.rows(), c.cols(), {16, 256}))
    store(y, cast<bf16>(cast<f32>(load<16, 256>(c, m, n)) * 0.5f), m, n);
}

// Tiles of other shapes, retiled to the fused templates' 128x256x64: the owner form of gemm_rs
// with 64 x 256 tiles stepping K by 32, gemm_ar with 64 x 128 (B [N, K]), ag_gemm with 192 x 128.
PK_KERNEL void rs_adds_small(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256})) store(c, zeros<bf16, 64, 256>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.rows(), {1, 64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, o * rows + m, k), load<256, 32>(b, n, k), acc);
    store_add(c.on(o), cast<bf16>(acc), m, n);
  }
}
PK_KERNEL void ar_small(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
}
PK_KERNEL void ag_small(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  for (auto [m, n] : tiles(a_full.rows(), b.rows(), {192, 128})) {
    auto acc = zeros<f32, 192, 128>();
    for (auto k : range(0, a_full.cols(), 64)) acc = mma_t(load_smem<192, 64>(a_full, m, k), load_smem<128, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
