// MoE dispatch sending fp8 (see moe_dispatch_fp8.pk.cpp): its .mlir twin, as
// `pkc moe_dispatch_fp8.pk.cpp --emit=mlir` writes it; test/Frontend/twins.test checks
// that both lower to the same device IR.
module {
  pk.kernel @moe_dispatch_fp8(%arg0: !pk.tensor<?x?xbf16>, %arg1: !pk.tensor<?x?xi32>, %arg2: !pk.sym<?xi32> {pk.scratch}, %arg3: !pk.tensor<?x?xi32>, %arg4: !pk.sym<?x?xf8E4M3FN>, %arg5: !pk.sym<?x?xf32>, %arg6: !pk.sym<?xi32>) {
    %0 = pk.dim %arg6, 0 : !pk.sym<?xi32>
    %1 = pk.world_size
    %2 = arith.divsi %0, %1 : index
    %3 = pk.dim %arg2, 0 : !pk.sym<?xi32>
    pk.tile.foreach (%arg7) to (%3) step [1024] {
      %9 = pk.tile.zeros : !pk.tile<1024xi32>
      pk.tile.store %9, %arg2[%arg7] : !pk.tile<1024xi32>, !pk.sym<?xi32>
    }
    %4 = pk.dim %arg1, 0 : !pk.tensor<?x?xi32>
    %5 = pk.dim %arg1, 1 : !pk.tensor<?x?xi32>
    pk.tile.foreach (%arg7, %arg8) to (%4, %5) step [256, 1] {
      %9 = pk.tile.load %arg1[%arg7, %arg8] : !pk.tensor<?x?xi32> -> !pk.tile<256x1xi32>
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
      pk.tile.store %29, %arg3[%arg7, %arg8] : !pk.tile<256x1xi32>, !pk.tensor<?x?xi32>
    }
    %6 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
    %7 = pk.dim %arg0, 1 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg7, %arg8) to (%6, %7) step [128, 128] {
      %9 = pk.tile.load %arg0[%arg7, %arg8] : !pk.tensor<?x?xbf16> -> !pk.tile<128x128xbf16>
      %10 = pk.tile.cast %9 : !pk.tile<128x128xbf16> to !pk.tile<128x128xf32>
      %11 = pk.tile.map <abs> %10 : !pk.tile<128x128xf32> -> !pk.tile<128x128xf32>
      %12 = pk.tile.reduce_rows <max> %11 : !pk.tile<128x128xf32> -> !pk.tile<128x1xf32>
      %cst = arith.constant 1.000000e-30 : f32
      %13 = pk.tile.splat %cst : f32 -> !pk.tile<128x1xf32>
      %14 = pk.tile.map <max> %12, %13 : !pk.tile<128x1xf32>, !pk.tile<128x1xf32> -> !pk.tile<128x1xf32>
      %cst_0 = arith.constant 4.480000e+02 : f32
      %15 = pk.tile.splat %cst_0 : f32 -> !pk.tile<128x1xf32>
      %16 = pk.tile.map <div> %15, %14 : !pk.tile<128x1xf32>, !pk.tile<128x1xf32> -> !pk.tile<128x1xf32>
      %17 = pk.tile.map <mul> %10, %16 : !pk.tile<128x128xf32>, !pk.tile<128x1xf32> -> !pk.tile<128x128xf32>
      %18 = pk.tile.cast %17 : !pk.tile<128x128xf32> to !pk.tile<128x128xf8E4M3FN>
      %cst_1 = arith.constant 0.00223214296 : f32
      %19 = pk.tile.splat %cst_1 : f32 -> !pk.tile<128x1xf32>
      %20 = pk.tile.map <mul> %14, %19 : !pk.tile<128x1xf32>, !pk.tile<128x1xf32> -> !pk.tile<128x1xf32>
      %c0 = arith.constant 0 : index
      %21 = pk.dim %arg1, 1 : !pk.tensor<?x?xi32>
      %c1 = arith.constant 1 : index
      scf.for %arg9 = %c0 to %21 step %c1 {
        %22 = pk.tile.load %arg1[%arg7, %arg9] : !pk.tensor<?x?xi32> -> !pk.tile<128x1xi32>
        %23 = pk.tile.splat %2 : index -> !pk.tile<128x1xi32>
        %24 = pk.tile.map <div> %22, %23 : !pk.tile<128x1xi32>, !pk.tile<128x1xi32> -> !pk.tile<128x1xi32>
        %25 = pk.tile.load %arg3[%arg7, %arg9] : !pk.tensor<?x?xi32> -> !pk.tile<128x1xi32>
        %c0_2 = arith.constant 0 : index
        %26 = pk.world_size
        %c1_3 = arith.constant 1 : index
        scf.for %arg10 = %c0_2 to %26 step %c1_3 {
          %27 = pk.tile.splat %arg10 : index -> !pk.tile<128x1xi32>
          %28 = pk.tile.map <eq> %24, %27 : !pk.tile<128x1xi32>, !pk.tile<128x1xi32> -> !pk.tile<128x1xi32>
          %c1_4 = arith.constant 1 : index
          %c0_5 = arith.constant 0 : index
          %29 = arith.subi %c0_5, %c1_4 : index
          %30 = pk.tile.splat %29 : index -> !pk.tile<128x1xi32>
          %31 = pk.tile.select %28, %25, %30 : !pk.tile<128x1xi32>, !pk.tile<128x1xi32>
          pk.tile.store_rows %18, %arg4[%31, %arg8] on %arg10 : !pk.tile<128x128xf8E4M3FN>, !pk.sym<?x?xf8E4M3FN>, !pk.tile<128x1xi32>
          %32 = pk.tile.splat %arg10 : index -> !pk.tile<128x1xi32>
          %33 = pk.tile.map <eq> %24, %32 : !pk.tile<128x1xi32>, !pk.tile<128x1xi32> -> !pk.tile<128x1xi32>
          %c1_6 = arith.constant 1 : index
          %c0_7 = arith.constant 0 : index
          %34 = arith.subi %c0_7, %c1_6 : index
          %35 = pk.tile.splat %34 : index -> !pk.tile<128x1xi32>
          %36 = pk.tile.select %33, %25, %35 : !pk.tile<128x1xi32>, !pk.tile<128x1xi32>
          %c128 = arith.constant 128 : index
          %37 = arith.divsi %arg8, %c128 : index
          pk.tile.store_rows %20, %arg5[%36, %37] on %arg10 : !pk.tile<128x1xf32>, !pk.sym<?x?xf32>, !pk.tile<128x1xi32>
        }
      }
    }
    %8 = pk.world_size
    pk.tile.foreach (%arg7, %arg8) to (%8, %2) step [1, 1] {
      %9 = arith.muli %arg7, %2 : index
      %10 = arith.addi %9, %arg8 : index
      %11 = pk.tile.load %arg2[%10] : !pk.sym<?xi32> -> !pk.tile<1xi32>
      %12 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
      %13 = pk.tile.splat %12 : index -> !pk.tile<1xi32>
      %14 = pk.tile.map <min> %11, %13 : !pk.tile<1xi32>, !pk.tile<1xi32> -> !pk.tile<1xi32>
      %15 = pk.rank
      %16 = arith.muli %15, %2 : index
      %17 = arith.addi %16, %arg8 : index
      pk.coll.store_tile %14, %arg6[%17] on %arg7 : !pk.tile<1xi32>, !pk.sym<?xi32>
    }
    pk.return
  }
}
