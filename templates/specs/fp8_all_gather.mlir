// fp8_all_gather (see fp8_all_gather.pk.cpp): its .mlir twin, as
// `pkc fp8_all_gather.pk.cpp --emit=mlir` writes it; test/Frontend/twins.test checks
// that both lower to the same device IR.
module {
  pk.kernel @fp8_all_gather(%arg0: !pk.tensor<?x?xbf16>, %arg1: !pk.sym<?x?xf8E4M3FN> {pk.scratch}, %arg2: !pk.sym<?x?xf32> {pk.scratch}, %arg3: !pk.sym<?x?xf8E4M3FN> {pk.scratch}, %arg4: !pk.sym<?x?xf32> {pk.scratch}, %arg5: !pk.tensor<?x?xbf16>) {
    %0 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
    %1 = pk.dim %arg0, 1 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg6, %arg7) to (%0, %1) step [16, 128] {
      %4 = pk.tile.load %arg0[%arg6, %arg7] : !pk.tensor<?x?xbf16> -> !pk.tile<16x128xbf16>
      %5 = pk.tile.cast %4 : !pk.tile<16x128xbf16> to !pk.tile<16x128xf32>
      %6 = pk.tile.map <abs> %5 : !pk.tile<16x128xf32> -> !pk.tile<16x128xf32>
      %7 = pk.tile.reduce_rows <max> %6 : !pk.tile<16x128xf32> -> !pk.tile<16x1xf32>
      %cst = arith.constant 1.000000e-30 : f32
      %8 = pk.tile.splat %cst : f32 -> !pk.tile<16x1xf32>
      %9 = pk.tile.map <max> %7, %8 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
      %cst_0 = arith.constant 4.480000e+02 : f32
      %10 = pk.tile.splat %cst_0 : f32 -> !pk.tile<16x1xf32>
      %11 = pk.tile.map <div> %10, %9 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
      %12 = pk.tile.map <mul> %5, %11 : !pk.tile<16x128xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x128xf32>
      %13 = pk.tile.cast %12 : !pk.tile<16x128xf32> to !pk.tile<16x128xf8E4M3FN>
      pk.tile.store %13, %arg1[%arg6, %arg7] : !pk.tile<16x128xf8E4M3FN>, !pk.sym<?x?xf8E4M3FN>
      %cst_1 = arith.constant 0.00223214296 : f32
      %14 = pk.tile.splat %cst_1 : f32 -> !pk.tile<16x1xf32>
      %15 = pk.tile.map <mul> %9, %14 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
      %c128 = arith.constant 128 : index
      %16 = arith.divsi %arg7, %c128 : index
      pk.tile.store %15, %arg2[%arg6, %16] : !pk.tile<16x1xf32>, !pk.sym<?x?xf32>
    }
    pk.coll.all_gather %arg1 into %arg3 : !pk.sym<?x?xf8E4M3FN>, !pk.sym<?x?xf8E4M3FN>
    pk.coll.all_gather %arg2 into %arg4 : !pk.sym<?x?xf32>, !pk.sym<?x?xf32>
    %2 = pk.dim %arg5, 0 : !pk.tensor<?x?xbf16>
    %3 = pk.dim %arg5, 1 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg6, %arg7) to (%2, %3) step [16, 128] {
      %4 = pk.tile.load %arg3[%arg6, %arg7] : !pk.sym<?x?xf8E4M3FN> -> !pk.tile<16x128xf8E4M3FN>
      %5 = pk.tile.cast %4 : !pk.tile<16x128xf8E4M3FN> to !pk.tile<16x128xf32>
      %c128 = arith.constant 128 : index
      %6 = arith.divsi %arg7, %c128 : index
      %7 = pk.tile.load %arg4[%arg6, %6] : !pk.sym<?x?xf32> -> !pk.tile<16x1xf32>
      %8 = pk.tile.map <mul> %5, %7 : !pk.tile<16x128xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x128xf32>
      %9 = pk.tile.cast %8 : !pk.tile<16x128xf32> to !pk.tile<16x128xbf16>
      pk.tile.store %9, %arg5[%arg6, %arg7] : !pk.tile<16x128xbf16>, !pk.tensor<?x?xbf16>
    }
    pk.return
  }
}
