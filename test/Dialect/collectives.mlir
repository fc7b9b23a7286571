// RUN: pkc-opt %s | FileCheck %s
// RUN: pkc-opt %s | pkc-opt | FileCheck %s
// RUN: pkc-opt %s --mlir-print-op-generic | pkc-opt | FileCheck %s
// Round trip of the rooted collective intent ops and the copy / reduce_into primitives.

// Tests that broadcast, reduce, gather and scatter round-trip with their root.
// CHECK-LABEL: pk.kernel @rooted
pk.kernel @rooted(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %root: index) {
  // CHECK: pk.coll.broadcast %{{.*}} into %{{.*}} root %[[ROOT:.*]] : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.coll.broadcast %x into %y root %root : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  // CHECK: pk.coll.reduce <max> %{{.*}} into %{{.*}} root %{{.*}} : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.coll.reduce <max> %x into %y root %root : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  // CHECK: pk.coll.gather %{{.*}} into %{{.*}} root %{{.*}} {transport = #pk.transport<ldst>}
  pk.coll.gather %x into %y root %root {transport = #pk.transport<ldst>} : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  // CHECK: pk.coll.scatter %{{.*}} into %{{.*}} root %{{.*}} : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.coll.scatter %x into %y root %root : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}

// Tests that all_gather and reduce_scatter keep a dimension other than the first, and print
// none for the default.
// CHECK-LABEL: pk.kernel @along_dim
pk.kernel @along_dim(%x: !pk.sym<?x?xbf16>, %y: !pk.sym<?x?xbf16>) {
  // CHECK: pk.coll.all_gather %{{.*}} into %{{.*}} {dim = 1 : i64} : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  pk.coll.all_gather %x into %y {dim = 1 : i64} : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  // CHECK: pk.coll.reduce_scatter <sum> %{{.*}} into %{{.*}} {dim = 1 : i64}
  pk.coll.reduce_scatter <sum> %x into %y {dim = 1 : i64} : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  // CHECK: pk.coll.all_gather %{{.*}} into %{{.*}} : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  pk.coll.all_gather %x into %y {dim = 0 : i64} : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  pk.return
}

// Tests that copies name ranks only for symmetric ends, and that reduce_into may target one
// rank, every rank, or a local tensor.
// CHECK-LABEL: pk.kernel @primitives
pk.kernel @primitives(%x: !pk.sym<?xf32>, %s: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>, %i: index, %r: index) {
  // CHECK: pk.comm.copy <ldst> %{{.*}}[%{{.*}}] on %{{.*}} into %{{.*}}[%{{.*}}] count %{{.*}} : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.comm.copy <ldst> %x[%i] on %r into %y[%i] count %i : !pk.sym<?xf32>, !pk.tensor<?xf32>
  // CHECK: pk.comm.copy <ldst> %{{.*}}[%{{.*}}] into %{{.*}}[%{{.*}}] on %{{.*}} count %{{.*}} : !pk.tensor<?xf32>, !pk.sym<?xf32>
  pk.comm.copy <ldst> %y[%i] into %s[%i] on %r count %i : !pk.tensor<?xf32>, !pk.sym<?xf32>
  // CHECK: pk.comm.reduce_into <sum> <ldst> %{{.*}}[%{{.*}}] into %{{.*}}[%{{.*}}] count %{{.*}} : !pk.sym<?xf32>, !pk.sym<?xf32>
  pk.comm.reduce_into <sum> <ldst> %x[%i] into %s[%i] count %i : !pk.sym<?xf32>, !pk.sym<?xf32>
  // CHECK: pk.comm.reduce_into <min> <ldst> %{{.*}}[%{{.*}}] into %{{.*}}[%{{.*}}] on %{{.*}} count
  pk.comm.reduce_into <min> <ldst> %x[%i] into %s[%i] on %r count %i : !pk.sym<?xf32>, !pk.sym<?xf32>
  // CHECK: pk.comm.reduce_into <max> <ldst> %{{.*}}[%{{.*}}] into %{{.*}}[%{{.*}}] count %{{.*}} : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.comm.reduce_into <max> <ldst> %x[%i] into %y[%i] count %i : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// Tests that the one-round small-message path round-trips with and without a reduction kind
// and a root.
// CHECK-LABEL: pk.kernel @push_small
pk.kernel @push_small(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %root: index) {
  %a = pk.sync.flag 0 <block> : !pk.flag
  %d = pk.sync.flag 1 <block> : !pk.flag
  %l = pk.sync.flag 2 <block> : !pk.flag
  %c = pk.sync.flag 3 <block> : !pk.flag
  // CHECK: %{{.*}} = pk.comm.push_small <all_reduce> reduce <sum> %{{.*}}, %{{.*}} flags(%{{.*}}, %{{.*}}, %{{.*}}) max 1048576 ll 262144 : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  %t0 = pk.comm.push_small <all_reduce> reduce <sum> %x, %y flags(%d, %c, %l) max 1048576 ll 262144 : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  // CHECK: %{{.*}} = pk.comm.push_small <gather> %{{.*}}, %{{.*}} root %{{.*}} flags(%{{.*}}, %{{.*}}, %{{.*}}) max 4096 ll 0 : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  %t1 = pk.comm.push_small <gather> %x, %y root %root flags(%d, %c, %l) max 4096 ll 0 : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}
