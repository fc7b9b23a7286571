// RUN: pkc %s -o - 2>&1 | FileCheck %s
// RUN: not pkc %s -o /dev/null -DSKEWED 2>&1 | FileCheck %s --check-prefix=SKEWED
// Tests flags with run-time slots (`prim::flag(1 + tile)`, a flag per tile): the protocol
// checker follows each tile's slot, so a ring that signals and waits on the tile's own flag is
// proved, and one that waits on the neighbouring tile's flag is caught. The emitted slot is
// checked against the kernel's flag region at run time.
#include <pk/spec.h>
using namespace pk;
#ifndef SKEWED
// CHECK-NOT: warning
// CHECK-LABEL: tile_flag_ring(
// CHECK: const long long [[S:slot[0-9]+]] = 0LL + {{v[0-9]+}};
// CHECK-NEXT: if (!pk::flag_slot_ok(ctx, [[S]])) return;
// CHECK-NEXT: const int {{flag[0-9]+}} = int([[S]]) * gridDim.x + blockIdx.x;  // per-block slot
PK_KERNEL void tile_flag_ring(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto ready = prim::flag(1 + m / 16 * ((x.cols() + 127) / 128) + n / 128);
    auto t = load<16, 128>(x, m, n);
    prim::store_async(Ldst, y.on(next_rank()), t, m, n);
    prim::signal(ready, next_rank());
    prim::wait(ready, 1);
    store(out, load<16, 128>(y, m, n) + t, m, n);
  }
}
#else
PK_KERNEL void skewed(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> out) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size(), {256})) {
    prim::store_async(Ldst, y.on(next_rank()), load<256>(x, i), i);
    prim::signal(prim::flag(1 + i / 256), next_rank());
// SKEWED: tile-flags.cpp:[[@LINE+1]]:5: error: wait on flag slot {{[0-9]+}} can never complete
    prim::wait(prim::flag(2 + i / 256), 1);
    store(out, load<256>(y, i), i);
  }
}
#endif
