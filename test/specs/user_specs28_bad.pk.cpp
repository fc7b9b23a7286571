// Plausible mistakes in GEMM epilogues (the twenty-eighth user set): each must be refused at its line with a clear
// message. Clang errors sit behind -D PK_CXX_B<n>; the others are pkc's (test/Compile/user_specs28.test).
#include <pk/spec.h>
using namespace pk;

#define GEMM_T(A, B)                                                   \
  auto acc = zeros<f32, 128, 256>();                                   \
  for (auto k : range(0, A.cols(), 64))                                \
    acc = mma_t(load<128, 64>(A, m, k), load<256, 64>(B, n, k), acc);

#ifdef PK_CXX_B1
// B1: a bf16 bias row added to the f32 accumulator without a cast.
PK_KERNEL void b1_bias_uncast(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(acc + load<1, 256>(bias, 0, n)), m, n);
  }
}
#endif
#ifdef PK_CXX_B2
// B2: a per-column scale stored [N, 1] read as a column without transpose (256 x 1 against 128 x 256).
PK_KERNEL void b2_col_scale_untransposed(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> cs, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(acc * load<256, 1>(cs, n, 0)), m, n);
  }
}
#endif
#ifdef PK_CXX_B3
// B3: a 1-D vector transposed instead of reshaped.
PK_KERNEL void b3_transpose_1d(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> v, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(acc * transpose(load<128>(v, m))), m, n);
  }
}
#endif
#ifdef PK_CXX_B4
// B4: an i32 index tile scaled by a float.
PK_KERNEL void b4_int_times_float(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(acc + cast<i32>(row_index<128, 256>(m)) * 0.5f), m, n);
  }
}
#endif
#ifdef PK_CXX_B5
// B5: an i8 mask added to an i32 mask.
PK_KERNEL void b5_i8_plus_i32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<i8, 2> k8, Tensor<i32, 2> k32,
                              Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(where(load<128, 256>(k8, m, n) + load<128, 256>(k32, m, n), acc, 0.0f)), m, n);
  }
}
#endif
#ifdef PK_CXX_B6
// B6: a row scale loaded two columns wide.
PK_KERNEL void b6_scale_two_wide(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> rs, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(acc * load<128, 2>(rs, m, 0)), m, n);
  }
}
#endif

// B7: the f32 epilogue stored into a bf16 tensor without a cast.
PK_KERNEL void b7_store_f32_into_bf16(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, acc * 2.0f, m, n);
  }
}

// B8: an i8 mask compared with a constant it cannot hold.
PK_KERNEL void b8_i8_mask_wide_constant(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<i8, 2> k8, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(where(load<128, 256>(k8, m, n) != 300, acc, 0.0f)), m, n);
  }
}

// B9: a batched GEMM's tile stored without its batch.
PK_KERNEL void b9_batched_store_2d(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> y) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// B10: a [M, 1] row scale read with one index.
PK_KERNEL void b10_scale_one_index(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> rs, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(acc * load<128, 1>(rs, m)), m, n);
  }
}

// B11: a table row picked by a float argument.
PK_KERNEL void b11_float_row(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> t, Tensor<bf16, 2> y, float sel) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(acc * load<1, 256>(t, sel, n)), m, n);
  }
}

// B12: a dropout seed passed as a float.
PK_KERNEL void b12_float_seed(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> y, float seed) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(acc * uniform<128, 256>(seed, m, n)), m, n);
  }
}

// B13: a quantised i8 tile stored into a bf16 tensor.
PK_KERNEL void b13_i8_into_bf16(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<i8>(acc), m, n);
  }
}

// B14: a 1-D scale vector read with two indices.
PK_KERNEL void b14_at_two_indices(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(acc * s.at(0, 1)), m, n);
  }
}

// B15: the product stored a second time, transposed, into the same tensor.
PK_KERNEL void b15_second_store_transposed(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    GEMM_T(a, b)
    store(y, cast<bf16>(acc), m, n);
    store(y, cast<bf16>(acc), n, m);
  }
}
