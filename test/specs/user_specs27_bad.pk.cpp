// The twenty-seventh user-written spec set, part (b): i8 kernels a user could plausibly write that are wrong or
// unsupported; each must be refused at its line with a clear error (test/Compile/user_specs27.test). Kernels whose
// error is a Clang error sit behind -D PK_CXX_<ID>.
#include <pk/spec.h>
using namespace pk;

// B1. Summing int8 gradients across ranks in i8 (would wrap at 8 bits): all_reduce refuses i8.
PK_KERNEL void b1_all_reduce_i8(Sym<i8, 2> g, Sym<i8, 2> out) { all_reduce(Sum, g, out); }

// B2. reduce_scatter of i8 shards: refused likewise.
PK_KERNEL void b2_reduce_scatter_i8(Sym<i8, 2> g, Sym<i8, 2> out) { reduce_scatter(Sum, g, out); }

// B3. Row sum of an i8 tile (Clang: row reductions take float tiles).
#ifdef PK_CXX_B3
PK_KERNEL void b3_row_sum_i8(Tensor<i8, 2> q, Tensor<f32, 2> s) {
  for (auto m : tiles(q.rows(), {16})) store(s, cast<f32>(row_sum(load<16, 128>(q, m, 0))), m, 0);
}
#endif

// B4. Rows gathered by an i8 index tile (Clang: rows move by i32 / i64 indices).
#ifdef PK_CXX_B4
PK_KERNEL void b4_load_rows_by_i8(Tensor<i8, 1> ids, Tensor<f32, 2> table, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(ids.size(), y.cols(), {16, 64})) store(y, load_rows<16, 64>(table, load<16>(ids, m), n), m, n);
}
#endif

// B5. A histogram of i8 values without the cast (Clang).
#ifdef PK_CXX_B5
PK_KERNEL void b5_histogram_i8(Tensor<i8, 1> q, Tensor<i32, 1> h) {
  for (auto z : tiles(1, {1})) store(h, histogram<64>(load<1024>(q, 0)), 0);
}
#endif

// B6. Quantised values stored without the cast: an f32 tile into an i8 tensor.
PK_KERNEL void b6_store_f32_into_i8(Tensor<f32, 2> x, Tensor<i8, 2> q) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(q, round(load<16, 64>(x, m, n) * 127.0f), m, n);
}

// B7. An uint8 constant beside an i8 tile (0xF0 does not fit -128 .. 127).
PK_KERNEL void b7_u8_mask_constant(Tensor<i8, 2> q, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 64})) store(y, load<16, 64>(q, m, n) & 0xF0, m, n);
}

// B8. int8 operands into mma with an f32 accumulator (pkc must refuse: accumulate into i32, or widen to bf16).
PK_KERNEL void b8_mma_i8_operands(Tensor<i8, 2> a, Tensor<i8, 2> b, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, k), load<64, 32>(b, n, k), acc);
    store(y, acc, m, n);
  }
}

// B9. An i8 tile added into a peer's copy (store_add takes f32, bf16, f16, i32 and i64).
PK_KERNEL void b9_store_add_i8_peer(Tensor<i8, 2> x, Sym<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store_add(y.on(next_rank()), load<16, 64>(x, m, n), m, n);
}

// B10. An i8 tile scaled by a float without a cast (Clang: float scalars are for float tiles).
#ifdef PK_CXX_B10
PK_KERNEL void b10_i8_times_float(Tensor<i8, 2> q, Tensor<f32, 2> y, float s) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 64})) store(y, cast<f32>(load<16, 64>(q, m, n) * s), m, n);
}
#endif

// B11. round() of an i8 tile (Clang: math is for float tiles).
#ifdef PK_CXX_B11
PK_KERNEL void b11_round_i8(Tensor<i8, 2> q, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 64})) store(y, round(load<16, 64>(q, m, n)), m, n);
}
#endif

// B12. An i8 tile and an i32 tile combined without a cast (Clang: different element types).
#ifdef PK_CXX_B12
PK_KERNEL void b12_i8_plus_i32(Tensor<i8, 2> q, Tensor<i32, 2> z, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 64})) store(y, load<16, 64>(q, m, n) + load<16, 64>(z, m, n), m, n);
}
#endif

// B13. store_add of int8 counts into a local tensor (reductions refuse i8).
PK_KERNEL void b13_store_add_i8_local(Tensor<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store_add(y, load<16, 64>(x, m, n), 0, n);
}

// B14. claim() with an i8 counter (Clang: counters are i32 / i64).
#ifdef PK_CXX_B14
PK_KERNEL void b14_claim_i8_counter(Tensor<i8, 1> fill, Tensor<i32, 1> e, Tensor<i8, 1> slot) {
  for (auto t : tiles(e.size(), {32})) store(slot, claim(fill, load<32>(e, t)), t);
}
#endif

// B15. row_topk of an i8 tile (Clang: top-k ranks float tiles).
#ifdef PK_CXX_B15
PK_KERNEL void b15_topk_i8(Tensor<i8, 2> q, Tensor<i32, 2> ix) {
  for (auto m : tiles(q.rows(), {16})) store(ix, row_topk_index<2>(load<16, 64>(q, m, 0)), m, 0);
}
#endif

// B16. int8 reduction across ranks with the primitive (prim::reduce sums in fp32 into the tile's type).
PK_KERNEL void b16_prim_reduce_i8(Sym<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, prim::reduce<16, 64>(Sum, Ldst, x, m, n), m, n);
}

// B17. A weight-only GEMM with int8 B cast to f16 but bf16 A (mma needs one type).
PK_KERNEL void b17_i8_weight_mixed_types(Tensor<bf16, 2> x, Tensor<i8, 2> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<f16>(load<256, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// B18. A reduce of i8 to a root (refused as all_reduce is).
PK_KERNEL void b18_reduce_i8_root(Sym<i8, 2> x, Sym<i8, 2> y) { reduce(Max, x, y, 0); }
