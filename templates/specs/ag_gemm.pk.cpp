// All-gather + GEMM: A is sharded by rows; every rank gathers it into a_full and computes
// C = A_full * B^T. `a_full` is scratch: the fused lowering need not copy this rank's own
// rows into it. The C++ twin of ag_gemm.mlir.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void ag_gemm(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b,
                       Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  for (auto [m, n] : tiles(a_full.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a_full.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a_full, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
