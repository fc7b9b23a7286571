// GEMM + reduce-scatter: every rank holds A[M, K] and B[N, K] (its slice of the reduction
// axis) and ends with rows [r * M / W, (r + 1) * M / W) of the sum over ranks of A * B^T.
// store_add adds into c's contents, so the first loop zeroes c (the template takes it as a
// memset ahead of the launch). The tile loop walks each owner's rows: tile (o, m, n) multiplies
// A's rows o * rows + m .. + 127 and adds them into owner o's rows m .., the rows past the
// owner's end clipped, so any M that world_size divides is reduce-scattered whole. The C++ twin
// of gemm_rs.mlir.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void gemm_rs(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256}))
    store(c, zeros<bf16, 64, 256>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, o * rows + m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(o), cast<bf16>(acc), m, n);
  }
}
