// all_to_all_v: an all-to-all whose split sizes are known only at run time, exchanged on the
// device (torch's all_to_all_single with input and output split sizes, without a host round
// trip for the sizes). Each rank's x [N, H] holds its rows grouped by destination: send[p] rows
// for rank p, in rank order (their sum at most N). Rank r's rows for rank p land in p's y
// [M, H] after the rows the lower ranks send p, so y holds, in source-rank order, every row sent
// to it; recv [W] on rank p gets recv[s] = the rows rank s sent it. M must hold what arrives
// (rows past M are dropped). Row indices are exact below 2^24 rows.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void all_to_all_v(Tensor<bf16, 2> x, Tensor<i32, 1> send, Sym<bf16, 2> y, Sym<i32, 1> recv) {
  // Sizes: this rank's count for rank p into p's recv[rank()].
  for (auto p : tiles(world_size(), {1})) store(recv.on(p), load<1>(send, p), rank());
  // Rows: each tile of x's rows goes, row by row, to the rank whose block holds it.
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 512})) {
    auto rows = load<32, 512>(x, t, n);
    auto i = cumsum(zeros<i32, 32>() + 1) + (t - 1);  // the rows' indices in x
    auto off = zeros<i32, 1>();                       // where the rows for rank p start in x
    for (auto p : range(0, world_size())) {
      auto count = load<1>(send, p);
      auto base = zeros<i32, 1>();  // where they start in p's y: after the lower ranks' rows
      for (auto s : range(0, rank())) base = base + load<1>(recv.on(p), s);
      store_rows(y.on(p), rows, where((i >= off) * (i < off + count), base + i - off, -1), n);
      off = off + count;
    }
  }
}
