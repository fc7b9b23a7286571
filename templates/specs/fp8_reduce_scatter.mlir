// fp8_reduce_scatter (see fp8_reduce_scatter.pk.cpp): its .mlir twin, as
// `pkc fp8_reduce_scatter.pk.cpp --emit=mlir` writes it; test/Frontend/twins.test checks
// that both lower to the same device IR.
module {
  pk.kernel @fp8_reduce_scatter(%arg0: !pk.tensor<?x?xbf16>, %arg1: !pk.sym<?x?xf8E4M3FN> {pk.scratch}, %arg2: !pk.sym<?x?xf32> {pk.scratch}, %arg3: !pk.tensor<?x?xbf16>) {
    %0 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
    %1 = pk.dim %arg0, 1 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg4, %arg5) to (%0, %1) step [16, 128] {
      %4 = pk.tile.load %arg0[%arg4, %arg5] : !pk.tensor<?x?xbf16> -> !pk.tile<16x128xbf16>
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
      pk.tile.store %13, %arg1[%arg4, %arg5] : !pk.tile<16x128xf8E4M3FN>, !pk.sym<?x?xf8E4M3FN>
      %cst_1 = arith.constant 0.00223214296 : f32
      %14 = pk.tile.splat %cst_1 : f32 -> !pk.tile<16x1xf32>
      %15 = pk.tile.map <mul> %9, %14 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
      %c128 = arith.constant 128 : index
      %16 = arith.divsi %arg5, %c128 : index
      pk.tile.store %15, %arg2[%arg4, %16] : !pk.tile<16x1xf32>, !pk.sym<?x?xf32>
    }
    %2 = pk.dim %arg3, 0 : !pk.tensor<?x?xbf16>
    %3 = pk.dim %arg3, 1 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg4, %arg5) to (%2, %3) step [16, 128] {
      %4 = pk.tile.zeros : !pk.tile<16x128xf32>
      %c0 = arith.constant 0 : index
      %5 = pk.world_size
      %c1 = arith.constant 1 : index
      %6 = scf.for %arg6 = %c0 to %5 step %c1 iter_args(%arg7 = %4) -> (!pk.tile<16x128xf32>) {
        %8 = pk.rank
        %9 = pk.dim %arg3, 0 : !pk.tensor<?x?xbf16>
        %10 = arith.muli %8, %9 : index
        %11 = arith.addi %10, %arg4 : index
        %12 = pk.comm.load_peer <ldst> %arg1[%11, %arg5] on %arg6 : !pk.sym<?x?xf8E4M3FN> -> !pk.tile<16x128xf8E4M3FN>
        %13 = pk.tile.cast %12 : !pk.tile<16x128xf8E4M3FN> to !pk.tile<16x128xf32>
        %c128 = arith.constant 128 : index
        %14 = arith.divsi %arg5, %c128 : index
        %15 = pk.comm.load_peer <ldst> %arg2[%11, %14] on %arg6 : !pk.sym<?x?xf32> -> !pk.tile<16x1xf32>
        %16 = pk.tile.map <mul> %13, %15 : !pk.tile<16x128xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x128xf32>
        %17 = pk.tile.map <add> %arg7, %16 : !pk.tile<16x128xf32>, !pk.tile<16x128xf32> -> !pk.tile<16x128xf32>
        scf.yield %17 : !pk.tile<16x128xf32>
      }
      %7 = pk.tile.cast %6 : !pk.tile<16x128xf32> to !pk.tile<16x128xbf16>
      pk.tile.store %7, %arg3[%arg4, %arg5] : !pk.tile<16x128xbf16>, !pk.tensor<?x?xbf16>
    }
    pk.return
  }
}
