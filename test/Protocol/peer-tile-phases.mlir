// RUN: pkc-opt --pk-verify-protocol -split-input-file -verify-diagnostics %s
// Seeded removals from the device IR pkc emits for peer tiles in a kernel of phases
// (test/Passes/peer-tile-phases.cpp): each drops one of the grid-wide barriers
// pk-lower-collectives puts around a phase that writes into peers, and the checker must catch it.

// ar_then_add without the barrier after its store_add phase: a peer may still add into this
// rank's copy when this rank ends the kernel.
module {
  pk.kernel @ar_then_add(%arg0: !pk.sym<?x?xf32>, %arg1: !pk.sym<?x?xf32>, %arg2: !pk.sym<?x?xf32>) attributes {pk.level = "device"} {
    pk.worker <communicator> blocks 132 {
      %0 = pk.sync.flag 2 <block> : !pk.flag
      %1 = pk.sync.flag 3 <block> : !pk.flag
      %2 = pk.rank
      %3 = pk.world_size
      %c1 = arith.constant 1 : index
      %4 = arith.subi %3, %c1 : index
      %5 = pk.dim %arg0, 0 : !pk.sym<?x?xf32>
      %6 = pk.dim %arg0, 1 : !pk.sym<?x?xf32>
      %7 = arith.muli %5, %6 : index
      %8 = pk.dim %arg1, 0 : !pk.sym<?x?xf32>
      %9 = pk.dim %arg1, 1 : !pk.sym<?x?xf32>
      %10 = arith.muli %8, %9 : index
      %11 = arith.cmpi eq, %7, %10 : index
      pk.check %11, "pk.coll.all_reduce: input and output must have the same element count" expected %7 got %10
      %12 = arith.cmpi eq, %6, %9 : index
      pk.check %12, "pk.coll.all_reduce: dimension 1 of the input and the output must agree" expected %6 got %9
      pk.sync.signal_all %0
      pk.sync.wait %0, %4
      %c4 = arith.constant 4 : index
      %13 = arith.muli %7, %c4 : index
      %c2 = arith.constant 2 : index
      %14 = arith.subi %3, %c2 : index
      %15 = arith.muli %4, %14 : index
      %16 = arith.muli %15, %13 : index
      %c209089 = arith.constant 209089 : index
      %17 = arith.muli %c209089, %3 : index
      %18 = arith.cmpi sge, %16, %17 : index
      scf.if %18 {
        %23 = arith.addi %7, %4 : index
        %24 = arith.divsi %23, %3 : index
        %c3 = arith.constant 3 : index
        %25 = arith.addi %24, %c3 : index
        %26 = arith.divsi %25, %c4 : index
        %27 = arith.muli %26, %c4 : index
        %28 = arith.muli %2, %27 : index
        %29 = arith.minsi %28, %7 : index
        %30 = arith.addi %29, %27 : index
        %31 = arith.minsi %30, %7 : index
        %32 = arith.subi %31, %29 : index
        pk.tile.foreach (%arg3) to (%32) step [8192] {
          %33 = arith.subi %32, %arg3 : index
          %c8192 = arith.constant 8192 : index
          %34 = arith.minsi %c8192, %33 : index
          %35 = arith.addi %29, %arg3 : index
          pk.comm.reduce_into <sum> <ldst> %arg0[%35] into %arg1[%35] count %34 : !pk.sym<?x?xf32>, !pk.sym<?x?xf32>
        }
      } else {
        pk.tile.foreach (%arg3) to (%7) step [8192] {
          %23 = arith.subi %7, %arg3 : index
          %c8192 = arith.constant 8192 : index
          %24 = arith.minsi %c8192, %23 : index
          pk.comm.reduce_into <sum> <ldst> %arg0[%arg3] into %arg1[%arg3] on %2 count %24 : !pk.sym<?x?xf32>, !pk.sym<?x?xf32>
        }
      }
      pk.sync.signal_all %1
      pk.sync.wait %1, %4
      %19 = pk.sync.flag 0 <grid> : !pk.flag
      %20 = pk.grid_blocks
      %21 = arith.muli %3, %20 : index
      pk.sync.signal_all %19
      pk.sync.signal %19 on %2
      pk.sync.wait %19, %21
      pk.tile.foreach (%arg3, %arg4) to (%8, %9) step [16, 256] {
        %c0 = arith.constant 0 : index
        %23 = pk.tile.load %arg1[%arg3, %arg4] : !pk.sym<?x?xf32> -> !pk.tile<16x256xf32>
        %cst = arith.constant 2.000000e+00 : f32
        %24 = pk.tile.splat %cst : f32 -> !pk.tile<16x256xf32>
        %25 = pk.tile.map <mul> %23, %24 : !pk.tile<16x256xf32>, !pk.tile<16x256xf32> -> !pk.tile<16x256xf32>
        // expected-error@+1 {{reuse hazard for world size 2: rank 1 adds into rank 0's copy of argument 2 here}}
        pk.comm.store_add_async <ldst> %25, %arg2[%arg3, %arg4] on %c0 : !pk.tile<16x256xf32>, !pk.sym<?x?xf32>
      }
    }
    pk.return
  }
}

// -----

// shift_then_ar without the barrier before its store phase: a rank may write into a peer's copy
// before the peer is ready for this launch (it may still read it in the previous one).
module {
  pk.kernel @shift_then_ar(%arg0: !pk.sym<?x?xf32>, %arg1: !pk.sym<?x?xf32>, %arg2: !pk.sym<?x?xf32>) attributes {pk.level = "device"} {
    pk.worker <communicator> blocks 132 {
      %0 = pk.dim %arg0, 0 : !pk.sym<?x?xf32>
      %1 = pk.dim %arg0, 1 : !pk.sym<?x?xf32>
      %3 = pk.rank
      %4 = pk.world_size
      %5 = pk.grid_blocks
      %6 = arith.muli %4, %5 : index
      pk.tile.foreach (%arg3, %arg4) to (%0, %1) step [16, 256] {
        %c1_0 = arith.constant 1 : index
        %25 = arith.addi %3, %c1_0 : index
        %26 = arith.remsi %25, %4 : index
        %27 = pk.tile.load %arg0[%arg3, %arg4] : !pk.sym<?x?xf32> -> !pk.tile<16x256xf32>
        // expected-error@+1 {{race for world size 2: rank 1 writes rank 0's copy of argument 1 here with no wait ordering it}}
        pk.comm.store_async <ldst> %27, %arg1[%arg3, %arg4] on %26 : !pk.tile<16x256xf32>, !pk.sym<?x?xf32>
      }
      %7 = pk.sync.flag 1 <grid> : !pk.flag
      pk.sync.signal_all %7
      pk.sync.signal %7 on %3
      pk.sync.wait %7, %6
      %8 = pk.sync.flag 2 <block> : !pk.flag
      %9 = pk.sync.flag 3 <block> : !pk.flag
      %c1 = arith.constant 1 : index
      %10 = arith.subi %4, %c1 : index
      %11 = pk.dim %arg1, 0 : !pk.sym<?x?xf32>
      %12 = pk.dim %arg1, 1 : !pk.sym<?x?xf32>
      %13 = arith.muli %11, %12 : index
      %14 = pk.dim %arg2, 0 : !pk.sym<?x?xf32>
      %15 = pk.dim %arg2, 1 : !pk.sym<?x?xf32>
      %16 = arith.muli %14, %15 : index
      %17 = arith.cmpi eq, %13, %16 : index
      pk.check %17, "pk.coll.all_reduce: input and output must have the same element count" expected %13 got %16
      %18 = arith.cmpi eq, %12, %15 : index
      pk.check %18, "pk.coll.all_reduce: dimension 1 of the input and the output must agree" expected %12 got %15
      pk.sync.signal_all %8
      pk.sync.wait %8, %10
      %c4 = arith.constant 4 : index
      %19 = arith.muli %13, %c4 : index
      %c2 = arith.constant 2 : index
      %20 = arith.subi %4, %c2 : index
      %21 = arith.muli %10, %20 : index
      %22 = arith.muli %21, %19 : index
      %c209089 = arith.constant 209089 : index
      %23 = arith.muli %c209089, %4 : index
      %24 = arith.cmpi sge, %22, %23 : index
      scf.if %24 {
        %25 = arith.addi %13, %10 : index
        %26 = arith.divsi %25, %4 : index
        %c3 = arith.constant 3 : index
        %27 = arith.addi %26, %c3 : index
        %28 = arith.divsi %27, %c4 : index
        %29 = arith.muli %28, %c4 : index
        %30 = arith.muli %3, %29 : index
        %31 = arith.minsi %30, %13 : index
        %32 = arith.addi %31, %29 : index
        %33 = arith.minsi %32, %13 : index
        %34 = arith.subi %33, %31 : index
        pk.tile.foreach (%arg3) to (%34) step [8192] {
          %35 = arith.subi %34, %arg3 : index
          %c8192 = arith.constant 8192 : index
          %36 = arith.minsi %c8192, %35 : index
          %37 = arith.addi %31, %arg3 : index
          pk.comm.reduce_into <sum> <ldst> %arg1[%37] into %arg2[%37] count %36 : !pk.sym<?x?xf32>, !pk.sym<?x?xf32>
        }
      } else {
        pk.tile.foreach (%arg3) to (%13) step [8192] {
          %25 = arith.subi %13, %arg3 : index
          %c8192 = arith.constant 8192 : index
          %26 = arith.minsi %c8192, %25 : index
          pk.comm.reduce_into <sum> <ldst> %arg1[%arg3] into %arg2[%arg3] on %3 count %26 : !pk.sym<?x?xf32>, !pk.sym<?x?xf32>
        }
      }
      pk.sync.signal_all %9
      pk.sync.wait %9, %10
    }
    pk.return
  }
}
