// Mistakes a user makes with kernel arguments and the ways in (test/Compile/user_specs30.test checks each is
// refused at its line, with --kernel; the ones Clang itself refuses are compiled only with -D PK_CXX_B<n>).
#include <pk/spec.h>
using namespace pk;

// b1. A double scalar: scalars compute in f32.
PK_KERNEL void b1_double_scalar(Tensor<f32, 1> x, Tensor<f32, 1> y, double s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * float(s), i);
}

// b2. A bool scalar.
PK_KERNEL void b2_bool_scalar(Tensor<f32, 1> x, Tensor<f32, 1> y, bool flip) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i), i);
}

// b3. A tensor of rank 5 (a launch passes four extents).
PK_KERNEL void b3_rank5(Tensor<f32, 5> x, Tensor<f32, 1> y) {
  for (auto i : tiles(y.size(), {256})) store(y, load<256>(y, i), i);
}

// b4. A pointer parameter.
PK_KERNEL void b4_pointer(float* p, Tensor<f32, 1> y) {
  for (auto i : tiles(y.size(), {256})) store(y, zeros<f32, 256>(), i);
}

// b5. An f32 tile stored into an i32 tensor without a cast.
PK_KERNEL void b5_store_type(Tensor<f32, 1> x, Tensor<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i), i);
}

// b6. A kernel parameter reassigned.
PK_KERNEL void b6_reassign(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  s = s * 2.0f;
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * s, i);
}

#ifdef PK_CXX_B7
// b7. A collective of a local tensor (its input must be symmetric; Clang: static_assert with the fix).
PK_KERNEL void b7_local_collective(Tensor<f32, 1> x, Sym<f32, 1> y) { all_reduce(Sum, x, y); }
#endif

// b8. An fp8 all-reduce (fp8 tensors do not reduce).
PK_KERNEL void b8_fp8_reduce(Sym<f8e4m3, 1> x, Sym<f8e4m3, 1> y) { all_reduce(Sum, x, y); }

// b9. A bit operation on an index scalar.
PK_KERNEL void b9_index_bits(Tensor<f32, 1> x, Tensor<f32, 1> y, index b) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * float(b & 1), i);
}

// b10. An i8 tile beside a constant that does not fit 8 bits.
PK_KERNEL void b10_i8_constant(Tensor<i8, 1> x, Tensor<i8, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) + 300, i);
}

// b11. A kernel named main.
PK_KERNEL void main(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i), i);
}

// b12. A range loop with a constant step of 0.
PK_KERNEL void b12_zero_step(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 1>();
    for (auto k : range(0, x.cols(), 0)) acc = acc + row_sum(load<16, 64>(x, m, k));
    store(y, acc, m, 0);
  }
}

// b13. A kernel that is a template.
template <int N>
PK_KERNEL void b13_template(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {N})) store(y, load<N>(x, i), i);
}
template void b13_template<256>(Tensor<f32, 1>, Tensor<f32, 1>);

// b14. An integer scalar read of a symmetric tensor choosing a peer.
PK_KERNEL void b14_peer_from_memory(Tensor<i32, 1> who, Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y.on(who.at(0)), load<256>(x, i), i);
}

#ifdef PK_CXX_B15
// b15. .at() of a symmetric tensor (Clang: static_assert with the fix).
PK_KERNEL void b15_sym_at(Sym<f32, 1> x, Tensor<f32, 1> y) {
  float v = x.at(0);
  for (auto i : tiles(y.size(), {256})) store(y, zeros<f32, 256>() + v, i);
}
#endif

#ifdef PK_CXX_B16
// b16. .on() of a local tensor (Clang: static_assert with the fix).
PK_KERNEL void b16_local_on(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x.on(next_rank()), i), i);
}
#endif

#ifdef PK_CXX_B17
// b17. A 64-bit element type the language does not have (f64).
PK_KERNEL void b17_f64(Tensor<f64, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, cast<f32>(load<256>(x, i)), i);
}
#endif

#ifdef PK_CXX_B18
// b18. Math on an integer tile (Clang: no overload).
PK_KERNEL void b18_int_math(Tensor<i32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, exp(load<256>(x, i)), i);
}
#endif
