// RUN: pkc-opt %s | FileCheck %s
// RUN: pkc-opt %s | pkc-opt | FileCheck %s
// RUN: pkc-opt %s --mlir-print-op-generic | pkc-opt | FileCheck %s
// Round trip of every pk op, type and attribute.

// Tests that a scratch argument keeps its marker through a round trip.
// CHECK-LABEL: pk.kernel @scratch_arg
// CHECK-SAME: (%{{.*}}: !pk.sym<?xbf16> {pk.scratch}, %{{.*}}: !pk.sym<?xbf16>)
pk.kernel @scratch_arg(%p: !pk.sym<?xbf16> {pk.scratch}, %q: !pk.sym<?xbf16>) {
  pk.return
}

// Tests that the structure ops, rank and sizes round-trip.
// CHECK-LABEL: pk.kernel @structure
// CHECK-SAME: (%[[X:.*]]: !pk.sym<?x?xbf16>, %[[Y:.*]]: !pk.tensor<128x?xf32>, %{{.*}}: index, %{{.*}}: i32, %{{.*}}: f32)
pk.kernel @structure(%x: !pk.sym<?x?xbf16>, %y: !pk.tensor<128x?xf32>, %s: index, %i: i32, %f: f32) {
  // CHECK: pk.rank
  %r = pk.rank
  // CHECK: pk.world_size
  %w = pk.world_size
  // CHECK: pk.dim %[[X]], 1 : !pk.sym<?x?xbf16>
  %n = pk.dim %x, 1 : !pk.sym<?x?xbf16>
  // CHECK: pk.check %{{.*}}, "sizes differ" expected %{{.*}} got %{{.*}}
  %ok = arith.cmpi eq, %n, %s : index
  pk.check %ok, "sizes differ" expected %n got %s
  // CHECK: pk.worker <storer> blocks 4 {
  pk.worker <storer> blocks 4 {
    // CHECK: pk.tile.foreach (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step [128, 256] {
    pk.tile.foreach (%m, %k) to (%n, %n) step [128, 256] {
    }
  }
  // CHECK: pk.worker <loader> blocks 0
  pk.worker <loader> blocks 0 {}
  // CHECK: pk.worker <consumer> blocks 0
  pk.worker <consumer> blocks 0 {}
  // CHECK: pk.worker <communicator> blocks 0
  pk.worker <communicator> blocks 0 {}
  // CHECK: pk.return
  pk.return
}

// Tests that tile loads, stores and compute round-trip.
// CHECK-LABEL: pk.kernel @tiles
pk.kernel @tiles(%a: !pk.tensor<?x?xbf16>, %b: !pk.sym<?x?xbf16>, %c: !pk.tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  // CHECK: pk.tile.load %{{.*}}[%{{.*}}, %{{.*}}] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
  %ta = pk.tile.load %a[%c0, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
  // CHECK: pk.tile.load %{{.*}} : !pk.sym<?x?xbf16> -> !pk.tile<64x256xbf16, smem>
  %tb = pk.tile.load %b[%c0, %c0] : !pk.sym<?x?xbf16> -> !pk.tile<64x256xbf16, smem>
  // CHECK: pk.tile.zeros : !pk.tile<128x256xf32>
  %acc = pk.tile.zeros : !pk.tile<128x256xf32>
  // CHECK: pk.tile.mma %{{.*}}, %{{.*}}, %{{.*}} : !pk.tile<128x64xbf16, smem>, !pk.tile<64x256xbf16, smem>, !pk.tile<128x256xf32>
  %r = pk.tile.mma %ta, %tb, %acc : !pk.tile<128x64xbf16, smem>, !pk.tile<64x256xbf16, smem>, !pk.tile<128x256xf32>
  // CHECK: pk.tile.mma %{{.*}}, %{{.*}}, %{{.*}} {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
  %tw = pk.tile.load %a[%c0, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
  %rt = pk.tile.mma %ta, %tw, %acc {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
  // CHECK: pk.tile.map <add> %{{.*}}, %{{.*}} : !pk.tile<128x256xf32>, !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
  %s = pk.tile.map <add> %r, %r : !pk.tile<128x256xf32>, !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
  // CHECK: pk.tile.map <exp> %{{.*}} : !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
  %e = pk.tile.map <exp> %s : !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
  %f1 = arith.constant 2.0 : f32
  // CHECK: pk.scalar_map <rsqrt> %{{.*}}
  %f2 = pk.scalar_map <rsqrt> %f1
  // CHECK: pk.scalar_map <max> %{{.*}}, %{{.*}}
  %f3 = pk.scalar_map <max> %f1, %f2
  // CHECK: pk.tile.reduce_rows <max> %{{.*}} : !pk.tile<128x256xf32> -> !pk.tile<128x1xf32>
  %m = pk.tile.reduce_rows <max> %e : !pk.tile<128x256xf32> -> !pk.tile<128x1xf32>
  // CHECK: pk.tile.map <sub> %{{.*}}, %{{.*}} : !pk.tile<128x256xf32>, !pk.tile<128x1xf32> -> !pk.tile<128x256xf32>
  %d = pk.tile.map <sub> %e, %m : !pk.tile<128x256xf32>, !pk.tile<128x1xf32> -> !pk.tile<128x256xf32>
  // CHECK: pk.tile.map <add> %{{.*}}, %{{.*}} : !pk.tile<64xi32>, !pk.tile<1xi32> -> !pk.tile<64xi32>
  %iv = pk.tile.zeros : !pk.tile<64xi32>
  %one = pk.tile.zeros : !pk.tile<1xi32>
  %iv1 = pk.tile.map <add> %iv, %one : !pk.tile<64xi32>, !pk.tile<1xi32> -> !pk.tile<64xi32>
  // Broadcasts in any dimension, from both sides: an outer product, and a bias over heads.
  // CHECK: pk.tile.map <mul> %{{.*}}, %{{.*}} : !pk.tile<128x1xf32>, !pk.tile<1x256xf32> -> !pk.tile<128x256xf32>
  %row = pk.tile.zeros : !pk.tile<1x256xf32>
  %outer = pk.tile.map <mul> %m, %row : !pk.tile<128x1xf32>, !pk.tile<1x256xf32> -> !pk.tile<128x256xf32>
  // CHECK: pk.tile.map <add> %{{.*}}, %{{.*}} : !pk.tile<4x16x64xf32>, !pk.tile<1x1x64xf32> -> !pk.tile<4x16x64xf32>
  %heads = pk.tile.zeros : !pk.tile<4x16x64xf32>
  %bias = pk.tile.zeros : !pk.tile<1x1x64xf32>
  %hb = pk.tile.map <add> %heads, %bias : !pk.tile<4x16x64xf32>, !pk.tile<1x1x64xf32> -> !pk.tile<4x16x64xf32>
  // CHECK: pk.tile.map <gelu_erf> %{{.*}} : !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
  %g = pk.tile.map <gelu_erf> %d : !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
  // CHECK: pk.tile.splat %{{.*}} : f32 -> !pk.tile<128x256xf32>
  %half = arith.constant 0.5 : f32
  %h = pk.tile.splat %half : f32 -> !pk.tile<128x256xf32>
  // CHECK: pk.tile.map <pow> %{{.*}}, %{{.*}} : !pk.tile<128x256xf32>, !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
  %p = pk.tile.map <pow> %g, %h : !pk.tile<128x256xf32>, !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
  // CHECK: pk.tile.iota %{{.*}} dim 1 : !pk.tile<128x256xf32>
  %cols = pk.tile.iota %c0 dim 1 : !pk.tile<128x256xf32>
  // CHECK: pk.tile.map <le> %{{.*}}, %{{.*}} : !pk.tile<128x256xf32>, !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
  %mask = pk.tile.map <le> %cols, %e : !pk.tile<128x256xf32>, !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
  // CHECK: pk.tile.select %{{.*}}, %{{.*}}, %{{.*}} : !pk.tile<128x256xf32>, !pk.tile<128x256xf32>
  %sel = pk.tile.select %mask, %e, %h : !pk.tile<128x256xf32>, !pk.tile<128x256xf32>
  // CHECK: pk.tile.cast %{{.*}} : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
  %o = pk.tile.cast %e : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
  // CHECK: pk.tile.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !pk.tile<128x256xf32>, !pk.tensor<?x?xf32>
  pk.tile.store %e, %c[%c0, %c0] : !pk.tile<128x256xf32>, !pk.tensor<?x?xf32>
  pk.return
}

// Tests that communication intent round-trips, with and without prescribed choices.
// CHECK-LABEL: pk.kernel @intent
pk.kernel @intent(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %g: !pk.sym<?xbf16>, %c: !pk.sym<?x?xbf16>,
                  %s: !pk.sym<?x?x128xbf16>, %h: !pk.sym<?x?x128xbf16>) {
  // CHECK: pk.coll.all_reduce <sum> %{{.*}} into %{{.*}} : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  // CHECK: pk.coll.all_reduce <max> {{.*}} {algorithm = #pk.algorithm<two_shot>, transport = #pk.transport<ldst>}
  pk.coll.all_reduce <max> %x into %y {transport = #pk.transport<ldst>, algorithm = #pk.algorithm<two_shot>} : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  // CHECK: pk.coll.all_gather %{{.*}} into %{{.*}} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %g : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  // CHECK: pk.coll.all_gather %{{.*}} into %{{.*}} : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  // CHECK: pk.coll.all_to_all %{{.*}} into %{{.*}} : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.coll.all_to_all %x into %y : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  // CHECK: pk.coll.reduce_scatter <min> %{{.*}} into %{{.*}} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.reduce_scatter <min> %x into %g : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  // CHECK: pk.coll.all_to_all %{{.*}} into %{{.*}} {transport = #pk.transport<copy_engine>}
  pk.coll.all_to_all %x into %g {transport = #pk.transport<copy_engine>} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  // CHECK: pk.coll.all_to_all %{{.*}} into %{{.*}} {concat_dim = 1 : i64} : !pk.sym<?x?x128xbf16>
  pk.coll.all_to_all %s into %h {split_dim = 0 : i64, concat_dim = 1 : i64} : !pk.sym<?x?x128xbf16>, !pk.sym<?x?x128xbf16>
  %c0 = arith.constant 0 : index
  %t = pk.tile.zeros : !pk.tile<128x256xf32>
  %tb = pk.tile.cast %t : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
  // CHECK: pk.coll.store_tile %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] on %{{.*}} : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  pk.coll.store_tile %tb, %c[%c0, %c0] on %c0 : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  // CHECK: pk.coll.add_tile {{.*}} {overlap = #pk.overlap<intra_sm>}
  pk.coll.add_tile %tb, %c[%c0, %c0] on %c0 {overlap = #pk.overlap<intra_sm>} : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  pk.return
}

// Tests that the device primitives round-trip.
// CHECK-LABEL: pk.kernel @primitives
pk.kernel @primitives(%x: !pk.sym<?xbf16>, %c: !pk.sym<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  pk.worker <communicator> blocks 8 {
    // CHECK: pk.sync.flag 0 <block> : !pk.flag
    %f = pk.sync.flag 0 <block> : !pk.flag
    // CHECK: pk.sync.flag 3 <grid> : !pk.flag
    %g = pk.sync.flag 3 <grid> : !pk.flag
    // CHECK: pk.sync.signal %{{.*}} on %{{.*}}
    pk.sync.signal %f on %c1
    // CHECK: pk.sync.signal_all %{{.*}}
    pk.sync.signal_all %f
    // CHECK: pk.sync.wait %{{.*}}, %{{.*}}{{$}}
    pk.sync.wait %f, %c1
    // CHECK: pk.sync.wait %{{.*}}, %{{.*}} compare <eq>
    pk.sync.wait %g, %c1 compare <eq>
    // CHECK: pk.sync.barrier %{{.*}}
    pk.sync.barrier %g
    // CHECK: pk.comm.reduce <sum> <ldst> %{{.*}}[%{{.*}}] : !pk.sym<?xbf16> -> !pk.tile<4096xbf16>
    %t = pk.comm.reduce <sum> <ldst> %x[%c0] : !pk.sym<?xbf16> -> !pk.tile<4096xbf16>
    // CHECK: pk.comm.all_reduce <min> <multimem> %{{.*}}[%{{.*}}] into %{{.*}} {shape = array<i64: 4096>}
    pk.comm.all_reduce <min> <multimem> %x[%c0] into %x {shape = array<i64: 4096>} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
    // CHECK: pk.comm.load_peer <tma> %{{.*}}[%{{.*}}, %{{.*}}] on %{{.*}} : !pk.sym<?x?xbf16> -> !pk.tile<128x256xbf16, smem>
    %p = pk.comm.load_peer <tma> %c[%c0, %c0] on %c1 : !pk.sym<?x?xbf16> -> !pk.tile<128x256xbf16, smem>
    // CHECK: pk.comm.store_async <tma> %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] on %{{.*}} : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    pk.comm.store_async <tma> %p, %c[%c0, %c0] on %c1 : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    // CHECK: pk.comm.store_add_async <ldst> %{{.*}} : !pk.tile<4096xbf16>, !pk.sym<?xbf16>
    pk.comm.store_add_async <ldst> %t, %x[%c0] on %c1 : !pk.tile<4096xbf16>, !pk.sym<?xbf16>
  }
  pk.return
}

// CHECK-LABEL: pk.kernel @int_rows
pk.kernel @int_rows(%ids: !pk.tensor<?xi32>, %x: !pk.tensor<?x?xbf16>, %y: !pk.tensor<?x?xf32>, %lo: index) {
  %c0 = arith.constant 0 : index
  // CHECK: pk.tile.load %{{.*}}[%{{.*}}] : !pk.tensor<?xi32> -> !pk.tile<16xi32>
  %i = pk.tile.load %ids[%c0] : !pk.tensor<?xi32> -> !pk.tile<16xi32>
  // CHECK: pk.tile.splat %{{.*}} : index -> !pk.tile<16xi32>
  %l = pk.tile.splat %lo : index -> !pk.tile<16xi32>
  // CHECK: pk.tile.map <rem> %{{.*}}, %{{.*}} : !pk.tile<16xi32>, !pk.tile<16xi32> -> !pk.tile<16xi32>
  %r = pk.tile.map <rem> %i, %l : !pk.tile<16xi32>, !pk.tile<16xi32> -> !pk.tile<16xi32>
  // CHECK: pk.tile.load_rows %{{.*}}[%{{.*}}, %{{.*}}] : !pk.tensor<?x?xbf16>, !pk.tile<16xi32> -> !pk.tile<16x64xbf16>
  %t = pk.tile.load_rows %x[%r, %c0] : !pk.tensor<?x?xbf16>, !pk.tile<16xi32> -> !pk.tile<16x64xbf16>
  %f = pk.tile.cast %t : !pk.tile<16x64xbf16> to !pk.tile<16x64xf32>
  // CHECK: pk.tile.store_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {add} : !pk.tile<16x64xf32>, !pk.tensor<?x?xf32>, !pk.tile<16xi32>
  pk.tile.store_rows %f, %y[%r, %c0] {add} : !pk.tile<16x64xf32>, !pk.tensor<?x?xf32>, !pk.tile<16xi32>
  // CHECK: pk.tile.store_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !pk.tile<16x64xf32>, !pk.tensor<?x?xf32>, !pk.tile<16xi32>
  pk.tile.store_rows %f, %y[%r, %c0] : !pk.tile<16x64xf32>, !pk.tensor<?x?xf32>, !pk.tile<16xi32>
  // CHECK: pk.tile.transpose %{{.*}} : !pk.tile<16x64xf32> -> !pk.tile<64x16xf32>
  %tt = pk.tile.transpose %f : !pk.tile<16x64xf32> -> !pk.tile<64x16xf32>
  // CHECK: pk.tile.reshape %{{.*}} : !pk.tile<16x64xf32> -> !pk.tile<1x16x64xf32>
  %rs = pk.tile.reshape %f : !pk.tile<16x64xf32> -> !pk.tile<1x16x64xf32>
  // CHECK: pk.tile.histogram %{{.*}} : !pk.tile<16xi32> -> !pk.tile<8xi32>
  %h = pk.tile.histogram %i : !pk.tile<16xi32> -> !pk.tile<8xi32>
  // CHECK: pk.tile.cumsum %{{.*}} : !pk.tile<8xi32>
  %cs = pk.tile.cumsum %h : !pk.tile<8xi32>
  // CHECK: pk.tile.cumsum %{{.*}} : !pk.tile<4x64xf32>
  %rowtile = pk.tile.zeros : !pk.tile<4x64xf32>
  %rows = pk.tile.cumsum %rowtile : !pk.tile<4x64xf32>
  // CHECK: pk.tile.cumsum %{{.*}} : !pk.tile<2x4x64xi32>
  %z3 = pk.tile.zeros : !pk.tile<2x4x64xi32>
  %c3 = pk.tile.cumsum %z3 : !pk.tile<2x4x64xi32>
  // CHECK: pk.load_scalar %{{.*}}[%{{.*}}] : !pk.tensor<?xi32> -> index
  %count = pk.load_scalar %ids[%c0] : !pk.tensor<?xi32> -> index
  pk.return
}

// Rows moved from and into peers' copies, and slots claimed from counters (MoE dispatch).
// CHECK-LABEL: pk.kernel @peer_rows
pk.kernel @peer_rows(%ids: !pk.tensor<?xi32>, %s: !pk.sym<?x?xbf16>, %fill: !pk.sym<?xi32>, %p: index) {
  %c0 = arith.constant 0 : index
  %i = pk.tile.load %ids[%c0] : !pk.tensor<?xi32> -> !pk.tile<16xi32>
  // CHECK: pk.tile.claim %{{.*}}[%{{.*}}] : !pk.sym<?xi32>, !pk.tile<16xi32> -> !pk.tile<16xi32>
  %slot = pk.tile.claim %fill[%i] : !pk.sym<?xi32>, !pk.tile<16xi32> -> !pk.tile<16xi32>
  // CHECK: pk.tile.load_rows %{{.*}}[%{{.*}}, %{{.*}}] on %{{.*}} : !pk.sym<?x?xbf16>, !pk.tile<16xi32> -> !pk.tile<16x64xbf16>
  %t = pk.tile.load_rows %s[%slot, %c0] on %p : !pk.sym<?x?xbf16>, !pk.tile<16xi32> -> !pk.tile<16x64xbf16>
  // CHECK: pk.tile.load_rows %{{.*}}[%{{.*}}, %{{.*}}] : !pk.sym<?x?xbf16>, !pk.tile<16xi32> -> !pk.tile<16x64xbf16>
  %u = pk.tile.load_rows %s[%slot, %c0] : !pk.sym<?x?xbf16>, !pk.tile<16xi32> -> !pk.tile<16x64xbf16>
  // CHECK: pk.tile.store_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] on %{{.*}} {add} : !pk.tile<16x64xbf16>, !pk.sym<?x?xbf16>, !pk.tile<16xi32>
  pk.tile.store_rows %t, %s[%slot, %c0] on %p {add} : !pk.tile<16x64xbf16>, !pk.sym<?x?xbf16>, !pk.tile<16xi32>
  pk.return
}

// fp8 tensors and tiles: loads, casts both ways, stores.
// CHECK-LABEL: pk.kernel @fp8_tiles
pk.kernel @fp8_tiles(%x: !pk.tensor<?x?xf8E4M3FN>, %y: !pk.sym<?x?xf8E5M2>) {
  %c0 = arith.constant 0 : index
  // CHECK: pk.tile.load %{{.*}}[%{{.*}}, %{{.*}}] : !pk.tensor<?x?xf8E4M3FN> -> !pk.tile<16x128xf8E4M3FN>
  %t = pk.tile.load %x[%c0, %c0] : !pk.tensor<?x?xf8E4M3FN> -> !pk.tile<16x128xf8E4M3FN>
  // CHECK: pk.tile.cast %{{.*}} : !pk.tile<16x128xf8E4M3FN> to !pk.tile<16x128xf32>
  %f = pk.tile.cast %t : !pk.tile<16x128xf8E4M3FN> to !pk.tile<16x128xf32>
  // CHECK: pk.tile.map <round> %{{.*}} : !pk.tile<16x128xf32> -> !pk.tile<16x128xf32>
  %r = pk.tile.map <round> %f : !pk.tile<16x128xf32> -> !pk.tile<16x128xf32>
  // CHECK: pk.tile.map <floor> %{{.*}} : !pk.tile<16x128xf32> -> !pk.tile<16x128xf32>
  %fl = pk.tile.map <floor> %r : !pk.tile<16x128xf32> -> !pk.tile<16x128xf32>
  // CHECK: pk.tile.map <ceil> %{{.*}} : !pk.tile<16x128xf32> -> !pk.tile<16x128xf32>
  %ce = pk.tile.map <ceil> %fl : !pk.tile<16x128xf32> -> !pk.tile<16x128xf32>
  // CHECK: pk.tile.cast %{{.*}} : !pk.tile<16x128xf32> to !pk.tile<16x128xf8E5M2>
  %q = pk.tile.cast %ce : !pk.tile<16x128xf32> to !pk.tile<16x128xf8E5M2>
  // CHECK: pk.tile.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !pk.tile<16x128xf8E5M2>, !pk.sym<?x?xf8E5M2>
  pk.tile.store %q, %y[%c0, %c0] : !pk.tile<16x128xf8E5M2>, !pk.sym<?x?xf8E5M2>
  pk.return
}

// i8 tensors and tiles: loads, wrapping maps, casts both ways, stores.
// CHECK-LABEL: pk.kernel @i8_tiles
pk.kernel @i8_tiles(%x: !pk.tensor<?x?xi8>, %y: !pk.sym<?x?xi8>) {
  %c0 = arith.constant 0 : index
  // CHECK: pk.tile.load %{{.*}}[%{{.*}}, %{{.*}}] : !pk.tensor<?x?xi8> -> !pk.tile<16x64xi8>
  %t = pk.tile.load %x[%c0, %c0] : !pk.tensor<?x?xi8> -> !pk.tile<16x64xi8>
  // CHECK: pk.tile.map <add> %{{.*}}, %{{.*}} : !pk.tile<16x64xi8>, !pk.tile<16x64xi8> -> !pk.tile<16x64xi8>
  %s = pk.tile.map <add> %t, %t : !pk.tile<16x64xi8>, !pk.tile<16x64xi8> -> !pk.tile<16x64xi8>
  // CHECK: pk.tile.cast %{{.*}} : !pk.tile<16x64xi8> to !pk.tile<16x64xbf16>
  %f = pk.tile.cast %s : !pk.tile<16x64xi8> to !pk.tile<16x64xbf16>
  // CHECK: pk.tile.cast %{{.*}} : !pk.tile<16x64xbf16> to !pk.tile<16x64xi8>
  %q = pk.tile.cast %f : !pk.tile<16x64xbf16> to !pk.tile<16x64xi8>
  // CHECK: pk.tile.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !pk.tile<16x64xi8>, !pk.sym<?x?xi8>
  pk.tile.store %q, %y[%c0, %c0] : !pk.tile<16x64xi8>, !pk.sym<?x?xi8>
  // i8 times i8 into an i32 accumulator (W8A8):
  %acc = pk.tile.zeros : !pk.tile<16x16xi32>
  // CHECK: pk.tile.mma %{{.*}}, %{{.*}}, %{{.*}} {transpose_b} : !pk.tile<16x64xi8>, !pk.tile<16x64xi8>, !pk.tile<16x16xi32>
  %p = pk.tile.mma %t, %t, %acc {transpose_b} : !pk.tile<16x64xi8>, !pk.tile<16x64xi8>, !pk.tile<16x16xi32>
  pk.return
}
