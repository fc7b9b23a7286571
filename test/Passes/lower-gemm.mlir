// RUN: pkc-opt %s -split-input-file -verify-diagnostics --pk-select-transport --pk-select-overlap --pk-lower-gemm | FileCheck %s
// pk-lower-gemm: GEMM tile loops become LCSC template instances; the owner reduce-add rides
// on the compute block's storer (intra-SM), the all-gather on communicator blocks (inter-SM).

// Tests that a GEMM whose tiles are added into their owners lowers to the intra-SM
// reduce-scatter template, with TMA chosen for the computed tile.
// CHECK-LABEL: pk.kernel @rs
// CHECK-SAME: rule 1 (transport): pk.coll.add_tile at {{.*}}: tma: 64 KiB tile computed by tensor cores
// CHECK-SAME: rule 2 (overlap): pk.coll.add_tile at {{.*}}: intra_sm: the transfer has the compute tile's granularity
// CHECK-SAME: gemm_rs template: the storer warp reduce-adds each finished 64x64 bf16 box into its owner
// CHECK-SAME: the spec's 128-row tiles go to the owner of their first row, so the template runs when a.rows() / world_size() is a multiple of 128
// CHECK-SAME: the tiles are added into the output's contents, as store_add is everywhere
// CHECK-SAME: pk.gemm = {a = 0 : i64, b = 1 : i64, b_layout = "nk", c = 2 : i64, fallback = "rs__general", job = "gemm_rs", owner_tiles = 128 : i64}
// CHECK-SAME: pk.level = "device"
// CHECK-NEXT: pk.return
pk.kernel @rs(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.sym<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  %world = pk.world_size
  %rows = arith.divui %m_all, %world : index
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    %owner = arith.divui %m, %rows : index
    %row = arith.remui %m, %rows : index
    pk.coll.add_tile %o, %c[%row, %n] on %owner : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that a loop zeroing all of the output before the reduce-scatter GEMM is taken by the
// template as its launch's memset (zero_out), so y ends as the sum alone on both paths.
// CHECK-LABEL: pk.kernel @rs_zeroed
// CHECK-SAME: the spec's zero fill of the output before the loop becomes a memset
// CHECK-SAME: pk.gemm = {a = 0 : i64, b = 1 : i64, b_layout = "nk", c = 2 : i64, fallback = "rs_zeroed__general", job = "gemm_rs", owner_tiles = 128 : i64, zero_out}
// CHECK-NEXT: pk.return
pk.kernel @rs_zeroed(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.sym<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  %world = pk.world_size
  %rows = arith.divui %m_all, %world : index
  %c_rows = pk.dim %c, 0 : !pk.sym<?x?xbf16>
  %c_cols = pk.dim %c, 1 : !pk.sym<?x?xbf16>
  pk.tile.foreach (%i, %j) to (%c_rows, %c_cols) step [32, 64] {
    %z = pk.tile.zeros : !pk.tile<32x64xbf16>
    pk.tile.store %z, %c[%i, %j] : !pk.tile<32x64xbf16>, !pk.sym<?x?xbf16>
  }
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    %owner = arith.divui %m, %rows : index
    %row = arith.remui %m, %rows : index
    pk.coll.add_tile %o, %c[%row, %n] on %owner : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that a fill with anything but zeros (here half of the rows only) is not a memset: the
// kernel keeps both loops on the general path.
// CHECK-LABEL: pk.kernel @rs_half_fill
// CHECK-SAME: general tile path (register tiles, pk/tile/mma.cuh): the loop does not take a fused GEMM template: 'pk.tile.store' cannot be part of a kernel
// CHECK-NOT: pk.gemm =
pk.kernel @rs_half_fill(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.sym<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  %world = pk.world_size
  %rows = arith.divui %m_all, %world : index
  %c_rows = pk.dim %c, 0 : !pk.sym<?x?xbf16>
  %half = arith.divui %c_rows, %c2 : index
  %c_cols = pk.dim %c, 1 : !pk.sym<?x?xbf16>
  pk.tile.foreach (%i, %j) to (%half, %c_cols) step [32, 64] {
    %z = pk.tile.zeros : !pk.tile<32x64xbf16>
    pk.tile.store %z, %c[%i, %j] : !pk.tile<32x64xbf16>, !pk.sym<?x?xbf16>
  }
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    %owner = arith.divui %m, %rows : index
    %row = arith.remui %m, %rows : index
    pk.coll.add_tile %o, %c[%row, %n] on %owner : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that a GEMM over an all-gathered A lowers to the inter-SM template: communicator
// blocks push row blocks, their number chosen at launch.
// CHECK-LABEL: pk.kernel @ag
// CHECK-SAME: rule 2 (overlap): pk.coll.all_gather at {{.*}}: inter_sm, fused with the GEMM: the shard is gathered ahead of the tile loop at a coarser granularity
// CHECK-SAME: Communicator SMs: chosen at launch
// CHECK-SAME: pk.gemm = {a = 0 : i64, b = 2 : i64, b_layout = "nk", c = 3 : i64, fallback = "ag__general", job = "ag_gemm", landing = 1 : i64}
// CHECK-NEXT: pk.return
pk.kernel @ag(%a: !pk.sym<?x?xbf16>, %a_full: !pk.sym<?x?xbf16> {pk.scratch}, %b: !pk.tensor<?x?xbf16>, %c: !pk.tensor<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  pk.coll.all_gather %a into %a_full : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  %m_all = pk.dim %a_full, 0 : !pk.sym<?x?xbf16>
  %k_all = pk.dim %a_full, 1 : !pk.sym<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a_full[%m, %k] : !pk.sym<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.tile.store %o, %c[%m, %n] : !pk.tile<128x256xbf16>, !pk.tensor<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that a GEMM stored into an all-reduce's input fuses into the push all-reduce template
// and a plain stored GEMM into the GEMM template.
// CHECK-LABEL: pk.kernel @ar
// CHECK-SAME: intra_sm, fused with the GEMM: the all-reduce's input is produced tile by tile
// CHECK-SAME: pk.gemm = {a = 0 : i64, b = 1 : i64, b_layout = "nk", c = 3 : i64, fallback = "ar__general", job = "gemm_ar"}
pk.kernel @ar(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %p: !pk.sym<?x?xbf16> {pk.scratch}, %c: !pk.sym<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.tile.store %o, %p[%m, %n] : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.coll.all_reduce <sum> %p into %c : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  pk.return
}

// CHECK-LABEL: pk.kernel @plain
// CHECK-SAME: pk.gemm = {a = 0 : i64, b = 1 : i64, b_layout = "nk", c = 2 : i64, fallback = "plain__general", in = "bf16", job = "gemm", out = "bf16"}
pk.kernel @plain(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.tensor<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.tile.store %o, %c[%m, %n] : !pk.tile<128x256xbf16>, !pk.tensor<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that a reduce-add the user forced onto registers (inter-SM) has no template: the loop
// stays on the general tile path, which adds the tiles into their owners with registers.
// CHECK-LABEL: pk.kernel @rs_ldst
// CHECK-SAME: general tile path (register tiles, pk/tile/mma.cuh): the loop does not take a fused GEMM template: GEMM + reduce-scatter: only the intra-SM lowering has a template (overlap is 'inter_sm')
// CHECK: pk.tile.foreach
// CHECK: pk.coll.add_tile
pk.kernel @rs_ldst(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.sym<?x?xbf16>, %rows: index) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    %owner = arith.divui %m, %rows : index
    %row = arith.remui %m, %rows : index
    pk.coll.add_tile %o, %c[%row, %n] on %owner {transport = #pk.transport<ldst>} : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that a local GEMM loop with another tile shape and K step takes the template, retiled,
// and the decision says so.
// CHECK-LABEL: pk.kernel @k32
// CHECK-SAME: the spec's 128x256 tiles stepping K by 32 are retiled to the template's 128x256x64
// CHECK-SAME: job = "gemm"
pk.kernel @k32(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.tensor<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %acc = scf.for %k = %c0 to %k_all step %c32 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x32xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x32xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x32xbf16, smem>, !pk.tile<256x32xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.tile.store %o, %c[%m, %n] : !pk.tile<128x256xbf16>, !pk.tensor<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that a local GEMM loop storing its f32 accumulator takes the template with an f32
// output (the storer hands over 32-column f32 boxes).
// CHECK-LABEL: pk.kernel @f32_out
// CHECK-SAME: pk.gemm = {a = 0 : i64, b = 1 : i64, b_layout = "nk", c = 2 : i64, fallback = "f32_out__general", in = "bf16", job = "gemm", out = "f32"}
pk.kernel @f32_out(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    pk.tile.store %acc, %c[%m, %n] : !pk.tile<128x256xf32>, !pk.tensor<?x?xf32>
  }
  pk.return
}

// -----

// Tests that a GEMM storing an fp8 cast of its accumulator stays on the general path, and the
// decision names the output types the template stores.
// CHECK-LABEL: pk.kernel @fp8_out
// CHECK-SAME: the loop does not take the Hopper GEMM template: GEMM: the template's output is bf16, f16 or f32 (or i32 from i8 operands); this store writes a 128 x 256 f8E4M3FN tile
// CHECK: pk.tile.foreach
pk.kernel @fp8_out(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.tensor<?x?xf8E4M3FN>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xf8E4M3FN>
    pk.tile.store %o, %c[%m, %n] : !pk.tile<128x256xf8E4M3FN>, !pk.tensor<?x?xf8E4M3FN>
  }
  pk.return
}

// -----

// Tests the owner loop form: tiles (o, m, n) over (world_size, rows, N) adding A[o * rows + m, k]
// products into owner o's rows: the gemm_rs template with no owner-crossing check (its tiles
// follow each owner's rows, as the template's do).
// CHECK-LABEL: pk.kernel @rs_owners
// CHECK-SAME: each owner's rows in 128-row tiles (any rows per owner)
// CHECK-SAME: pk.gemm = {a = 0 : i64, b = 1 : i64, b_layout = "nk", c = 2 : i64, fallback = "rs_owners__general", job = "gemm_rs"}
pk.kernel @rs_owners(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.sym<?x?xbf16>) {
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %world = pk.world_size
  %rows = arith.divsi %m_all, %world : index
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%o, %m, %n) to (%world, %rows, %n_all) step [1, 128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %c0 = arith.constant 0 : index
    %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
    %c64 = arith.constant 64 : index
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %base = arith.muli %o, %rows : index
      %row = arith.addi %base, %m : index
      %ta = pk.tile.load %a[%row, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %out = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.coll.add_tile %out, %c[%m, %n] on %o : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that the owner form's A row must be o * rows + m: A read at [m, k] for every owner is
// not a reduce-scatter the template computes.
// CHECK-LABEL: pk.kernel @rs_owners_wrong_row
// CHECK-SAME: GEMM over owners: operands must be pk.tile.load A[o * rows + m, k] and B[n, k]
pk.kernel @rs_owners_wrong_row(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.sym<?x?xbf16>) {
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %world = pk.world_size
  %rows = arith.divsi %m_all, %world : index
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%o, %m, %n) to (%world, %rows, %n_all) step [1, 128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %c0 = arith.constant 0 : index
    %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
    %c64 = arith.constant 64 : index
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %out = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.coll.add_tile %out, %c[%m, %n] on %o : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}
