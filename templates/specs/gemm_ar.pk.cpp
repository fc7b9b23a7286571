// GEMM + all-reduce: every rank computes its partial product P = A * B^T (its slice of the
// reduction axis) and every rank ends with C = the sum of P over ranks.
// `p` is scratch: the fused lowering need not write it. The C++ twin of gemm_ar.mlir.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void gemm_ar(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  pk::all_reduce(Sum, p, c);
}
