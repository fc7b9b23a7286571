// RUN: pkc %s --emit=mlir | FileCheck %s
// Tests the eight primitives (plus peer loads and flags) written explicitly.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @prims
// CHECK-SAME: (%[[X:.*]]: !pk.sym<?xbf16>, %[[Y:.*]]: !pk.sym<?xbf16>)
PK_KERNEL void prims(Sym<bf16, 1> x, Sym<bf16, 1> y) {
  // CHECK: %[[F:.*]] = pk.sync.flag 3 <block> {pk.spec} : !pk.flag
  // CHECK: %[[G:.*]] = pk.sync.flag 4 <grid> {pk.spec} : !pk.flag
  auto f = prim::flag(3);
  auto g = prim::flag(4, Grid);
  for (auto i : tiles(x.size(), {4096})) {
    // CHECK: %[[T:.*]] = pk.comm.reduce <sum> <ldst> %[[X]][%{{.*}}] : !pk.sym<?xbf16> -> !pk.tile<4096xbf16>
    auto t = prim::reduce<4096>(Sum, Ldst, x, i);
    // CHECK: pk.comm.store_async <ldst> %[[T]], %[[Y]][%{{.*}}] on %{{.*}} : !pk.tile<4096xbf16>, !pk.sym<?xbf16>
    prim::store_async(Ldst, y.on(next_rank()), t, i);
    // CHECK: %[[S:.*]] = pk.comm.load_peer <tma> %[[X]][%{{.*}}] on %{{.*}} : !pk.sym<?xbf16> -> !pk.tile<4096xbf16, smem>
    auto s = prim::load_peer_smem<4096>(Tma, x.on(0), i);
    // CHECK: pk.comm.store_add_async <tma> %[[S]], %[[Y]][%{{.*}}] on %{{.*}}
    prim::store_add_async(Tma, y.on(prev_rank()), s, i);
    // CHECK: pk.comm.load_peer <ldst> {{.*}} -> !pk.tile<4096xbf16>
    auto r = prim::load_peer<4096>(Ldst, x.on(1), i);
    // CHECK: pk.comm.all_reduce <max> <ldst> %[[X]][%{{.*}}] into %[[Y]] {shape = array<i64: 4096>}
    prim::all_reduce<4096>(Max, Ldst, x, y, i);
  }
  // CHECK: pk.sync.signal %[[F]] on %{{.*}}
  // CHECK: pk.sync.signal_all %[[G]]
  // CHECK: pk.sync.wait %[[F]], %{{.*}}
  // CHECK: pk.sync.barrier %[[G]]
  prim::signal(f, next_rank());
  prim::signal_all(g);
  prim::wait(f, world_size() - 1);
  prim::barrier(g);
}
