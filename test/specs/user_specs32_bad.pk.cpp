// Set 32's findings and refusals (test/specs/specs32_findings.md), each checked at its line by
// test/Compile/user_specs32.test. Clang errors sit behind -D PK_CXX_B<n>.
#include <pk/spec.h>
using namespace pk;

// Finding 1 (silent): where(mask, n, -1) with n an index (long) and -1 an int matches no integer overload
// (where(c, I, I) wants one type) and takes where(c, float, float): n goes through f32 (16777217 -> 16777216).
PK_KERNEL void b1_where_index_and_int(Tensor<i32, 1> y, index n) {
  for (auto i : tiles(y.size(), {64})) store(y, cast<i32>(where(dim_index<0, 64>(i) < 32.0f, n, -1)), i);
}

// Finding 2: the running sum of a long i64 tensor in one block, carrying the chunk's last sum, is refused (the
// one-tile loop reads back what it stored); the integer reduction a user reaches for next compiles now (fixed:
// exact integer row reductions; b32_cumsum_carry in user_specs32.pk.cpp runs it).
PK_KERNEL void b2_cumsum_carry_readback(Tensor<i64, 1> x, Tensor<i64, 1> y) {
  for (auto z : tiles(1, {1})) {
    auto carry = zeros<i64, 1>();
    for (auto i : range(0, x.size(), 1000)) {
      store(y, cumsum(load<1000>(x, i)) + carry, i);
      carry = load<1>(y, min(i + 999, x.size() - 1));
    }
  }
}
#ifdef PK_CXX_B2
PK_KERNEL void b2b_cumsum_carry_rowsum(Tensor<i64, 1> x, Tensor<i64, 1> y) {
  for (auto z : tiles(1, {1})) {
    auto carry = zeros<i64, 1, 1>();
    for (auto i : range(0, x.size(), 1000)) {
      auto c = load<1, 1000>(x, i);
      store(y, cumsum(c) + carry, i);
      carry = carry + row_sum(c);
    }
  }
}
#endif

// Finding 3 (diagnostic): store_add_rows of an fp8 tile is refused under the name store_rows.
PK_KERNEL void b3_store_add_rows_fp8(Tensor<f8e4m3, 2> acc, Tensor<f8e4m3, 2> v, Tensor<i32, 1> ids) {
  for (auto [t, n] : tiles(v.rows(), v.cols(), {16, 32})) store_add_rows(acc, load<16, 32>(v, t, n), load<16>(ids, t), n);
}

// A good refusal: store_add of an fp8 tile names store_add and says what to do.
PK_KERNEL void b4_store_add_fp8(Tensor<f8e5m2, 2> acc, Tensor<f32, 2> v) {
  for (auto [t, n] : tiles(v.rows(), v.cols(), {16, 32})) store_add(acc, cast<f8e5m2>(load<16, 32>(v, t, n)), t, n);
}
