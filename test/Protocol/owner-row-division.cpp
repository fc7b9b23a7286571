// RUN: pkc %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=warning
// RUN: pkc %specs/gemm_rs.pk.cpp --templates=false -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=warning
// Tests that a peer index computed with `/` and `%` by `x.rows() / world_size()` (each rank adds
// its rows into their owner's row block: the form --explain asks for to fuse a reduce-scatter,
// and the shipped gemm_rs off the template) is modelled. An index division or remainder by zero
// gives 0, as at run time (pk::scalar_div / scalar_rem), so the one-row sizes the checker picks
// (rows = 0 at world sizes above 1) no longer leave the protocol unverified with "warning:
// protocol not verified: division by zero while evaluating the protocol".
#include <pk/spec.h>
using namespace pk;
// CHECK: pkc: wrote
PK_KERNEL void rs_owner_div(Tensor<f32, 2> x, Sym<f32, 2> y) {
  index rows = x.rows() / world_size();
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store_add(y.on(m / rows), load<16, 64>(x, m, n), m % rows, n);
}
