// MoE dispatch (see moe_dispatch.pk.cpp): its .mlir twin, as
// `pkc moe_dispatch.pk.cpp --emit=mlir` writes it; test/Frontend/twins.test checks
// that both lower to the same device IR.
module {
  pk.kernel @moe_dispatch(%arg0: !pk.tensor<?x?xbf16>, %arg1: !pk.tensor<?x?xi32>, %arg2: !pk.sym<?xi32> {pk.scratch}, %arg3: !pk.tensor<?x?xi32>, %arg4: !pk.sym<?x?xbf16>, %arg5: !pk.sym<?xi32>) {
    %0 = pk.dim %arg5, 0 : !pk.sym<?xi32>
    %1 = pk.world_size
    %2 = arith.divsi %0, %1 : index
    %3 = pk.dim %arg2, 0 : !pk.sym<?xi32>
    pk.tile.foreach (%arg6) to (%3) step [1024] {
      %9 = pk.tile.zeros : !pk.tile<1024xi32>
      pk.tile.store %9, %arg2[%arg6] : !pk.tile<1024xi32>, !pk.sym<?xi32>
    }
    %4 = pk.dim %arg1, 0 : !pk.tensor<?x?xi32>
    %5 = pk.dim %arg1, 1 : !pk.tensor<?x?xi32>
    pk.tile.foreach (%arg6, %arg7) to (%4, %5) step [256, 1] {
      %9 = pk.tile.load %arg1[%arg6, %arg7] : !pk.tensor<?x?xi32> -> !pk.tile<256x1xi32>
      %10 = pk.tile.claim %arg2[%9] : !pk.sym<?xi32>, !pk.tile<256x1xi32> -> !pk.tile<256x1xi32>
      %c0 = arith.constant 0 : index
      %11 = pk.tile.splat %c0 : index -> !pk.tile<256x1xi32>
      %12 = pk.tile.map <ge> %10, %11 : !pk.tile<256x1xi32>, !pk.tile<256x1xi32> -> !pk.tile<256x1xi32>
      %13 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
      %14 = pk.tile.splat %13 : index -> !pk.tile<256x1xi32>
      %15 = pk.tile.map <lt> %10, %14 : !pk.tile<256x1xi32>, !pk.tile<256x1xi32> -> !pk.tile<256x1xi32>
      %16 = pk.tile.map <mul> %12, %15 : !pk.tile<256x1xi32>, !pk.tile<256x1xi32> -> !pk.tile<256x1xi32>
      %17 = pk.tile.splat %2 : index -> !pk.tile<256x1xi32>
      %18 = pk.tile.map <rem> %9, %17 : !pk.tile<256x1xi32>, !pk.tile<256x1xi32> -> !pk.tile<256x1xi32>
      %19 = pk.rank
      %20 = arith.muli %19, %2 : index
      %21 = pk.tile.splat %20 : index -> !pk.tile<256x1xi32>
      %22 = pk.tile.map <add> %18, %21 : !pk.tile<256x1xi32>, !pk.tile<256x1xi32> -> !pk.tile<256x1xi32>
      %23 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
      %24 = pk.tile.splat %23 : index -> !pk.tile<256x1xi32>
      %25 = pk.tile.map <mul> %22, %24 : !pk.tile<256x1xi32>, !pk.tile<256x1xi32> -> !pk.tile<256x1xi32>
      %26 = pk.tile.map <add> %25, %10 : !pk.tile<256x1xi32>, !pk.tile<256x1xi32> -> !pk.tile<256x1xi32>
      %c1 = arith.constant 1 : index
      %c0_0 = arith.constant 0 : index
      %27 = arith.subi %c0_0, %c1 : index
      %28 = pk.tile.splat %27 : index -> !pk.tile<256x1xi32>
      %29 = pk.tile.select %16, %26, %28 : !pk.tile<256x1xi32>, !pk.tile<256x1xi32>
      pk.tile.store %29, %arg3[%arg6, %arg7] : !pk.tile<256x1xi32>, !pk.tensor<?x?xi32>
    }
    %6 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
    %7 = pk.dim %arg0, 1 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg6, %arg7) to (%6, %7) step [32, 1024] {
      %9 = pk.tile.load %arg0[%arg6, %arg7] : !pk.tensor<?x?xbf16> -> !pk.tile<32x1024xbf16>
      %c0 = arith.constant 0 : index
      %10 = pk.dim %arg1, 1 : !pk.tensor<?x?xi32>
      %c1 = arith.constant 1 : index
      scf.for %arg8 = %c0 to %10 step %c1 {
        %11 = pk.tile.load %arg1[%arg6, %arg8] : !pk.tensor<?x?xi32> -> !pk.tile<32x1xi32>
        %12 = pk.tile.splat %2 : index -> !pk.tile<32x1xi32>
        %13 = pk.tile.map <div> %11, %12 : !pk.tile<32x1xi32>, !pk.tile<32x1xi32> -> !pk.tile<32x1xi32>
        %14 = pk.tile.load %arg3[%arg6, %arg8] : !pk.tensor<?x?xi32> -> !pk.tile<32x1xi32>
        %c0_0 = arith.constant 0 : index
        %15 = pk.world_size
        %c1_1 = arith.constant 1 : index
        scf.for %arg9 = %c0_0 to %15 step %c1_1 {
          %16 = pk.tile.splat %arg9 : index -> !pk.tile<32x1xi32>
          %17 = pk.tile.map <eq> %13, %16 : !pk.tile<32x1xi32>, !pk.tile<32x1xi32> -> !pk.tile<32x1xi32>
          %c1_2 = arith.constant 1 : index
          %c0_3 = arith.constant 0 : index
          %18 = arith.subi %c0_3, %c1_2 : index
          %19 = pk.tile.splat %18 : index -> !pk.tile<32x1xi32>
          %20 = pk.tile.select %17, %14, %19 : !pk.tile<32x1xi32>, !pk.tile<32x1xi32>
          pk.tile.store_rows %9, %arg4[%20, %arg7] on %arg9 : !pk.tile<32x1024xbf16>, !pk.sym<?x?xbf16>, !pk.tile<32x1xi32>
        }
      }
    }
    %8 = pk.world_size
    pk.tile.foreach (%arg6, %arg7) to (%8, %2) step [1, 1] {
      %9 = arith.muli %arg6, %2 : index
      %10 = arith.addi %9, %arg7 : index
      %11 = pk.tile.load %arg2[%10] : !pk.sym<?xi32> -> !pk.tile<1xi32>
      %12 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
      %13 = pk.tile.splat %12 : index -> !pk.tile<1xi32>
      %14 = pk.tile.map <min> %11, %13 : !pk.tile<1xi32>, !pk.tile<1xi32> -> !pk.tile<1xi32>
      %15 = pk.rank
      %16 = arith.muli %15, %2 : index
      %17 = arith.addi %16, %arg7 : index
      pk.coll.store_tile %14, %arg5[%17] on %arg6 : !pk.tile<1xi32>, !pk.sym<?xi32>
    }
    pk.return
  }
}
