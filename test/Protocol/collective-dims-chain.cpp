// RUN: pkc %s --kernel=rs2_ag1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHAIN
// RUN: pkc %s --kernel=float_scalar_reads -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCALAR
// Tests two cases of the protocol model's sizes and ops (user_specs6 findings 1 and 2):
// - a tensor that is the output of one collective along dimension 2 and the input of another
//   along dimension 1 gets modelled extents that pass both collectives' shape checks (before,
//   the all-gather's output kept extent 1 along dimension 2 while its input had many, so runs
//   of r overlapped in g and a race that cannot happen was reported at world size 1);
// - a float scalar read (x.at(i) of an f32 tensor) is modelled as a read of that tensor, so a
//   kernel that communicates is proved rather than left unverified with a warning (the tensor is
//   a local one, which no peer writes).
#include <pk/spec.h>
using namespace pk;

// CHAIN-NOT: error
// CHAIN-NOT: warning
// CHAIN: pkc: wrote
PK_KERNEL void rs2_ag1(Sym<f32, 3> x, Sym<f32, 3> r, Sym<f32, 3> g, Tensor<f32, 3> y) {
  reduce_scatter(Max, x, r, 2);
  all_gather(r, g, 1);
  for (auto [a, b, c] : tiles(g.dim(0), g.dim(1), g.dim(2), {2, 4, 8})) store(y, load<2, 4, 8>(g, a, b, c), a, b, c);
}

// SCALAR-NOT: warning
// SCALAR: pkc: wrote
PK_KERNEL void float_scalar_reads(Tensor<f32, 1> x, Sym<f32, 1> tot, Tensor<f32, 1> all, Tensor<f32, 1> y) {
  for (auto i : tiles(1, {1})) store(tot, load<1>(x, 0), 0);
  all_gather(tot, all);
  for (auto i : tiles(x.size(), {256})) {
    float before = 0.0f;
    for (auto q : range(0, rank())) before = before + all.at(q);
    store(y, load<256>(x, i) + before, i);
  }
}
