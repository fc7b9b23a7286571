// MoE combine (see moe_combine.pk.cpp): its .mlir twin, as
// `pkc moe_combine.pk.cpp --emit=mlir` writes it; test/Frontend/twins.test checks
// that both lower to the same device IR.
module {
  pk.kernel @moe_combine(%arg0: !pk.sym<?x?xbf16>, %arg1: !pk.tensor<?x?xi32>, %arg2: !pk.tensor<?x?xf32>, %arg3: !pk.tensor<?x?xi32>, %arg4: !pk.tensor<?x?xbf16>, %arg5: index) {
    %0 = pk.dim %arg4, 0 : !pk.tensor<?x?xbf16>
    %1 = pk.dim %arg4, 1 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg6, %arg7) to (%0, %1) step [32, 512] {
      %2 = pk.tile.zeros : !pk.tile<32x512xf32>
      %c0 = arith.constant 0 : index
      %3 = pk.dim %arg1, 1 : !pk.tensor<?x?xi32>
      %c1 = arith.constant 1 : index
      %4 = scf.for %arg8 = %c0 to %3 step %c1 iter_args(%arg9 = %2) -> (!pk.tile<32x512xf32>) {
        %6 = pk.tile.load %arg1[%arg6, %arg8] : !pk.tensor<?x?xi32> -> !pk.tile<32x1xi32>
        %7 = pk.tile.splat %arg5 : index -> !pk.tile<32x1xi32>
        %8 = pk.tile.map <div> %6, %7 : !pk.tile<32x1xi32>, !pk.tile<32x1xi32> -> !pk.tile<32x1xi32>
        %9 = pk.tile.load %arg3[%arg6, %arg8] : !pk.tensor<?x?xi32> -> !pk.tile<32x1xi32>
        %10 = pk.tile.load %arg2[%arg6, %arg8] : !pk.tensor<?x?xf32> -> !pk.tile<32x1xf32>
        %c0_0 = arith.constant 0 : index
        %11 = pk.world_size
        %c1_1 = arith.constant 1 : index
        %12 = scf.for %arg10 = %c0_0 to %11 step %c1_1 iter_args(%arg11 = %arg9) -> (!pk.tile<32x512xf32>) {
          %13 = pk.tile.splat %arg10 : index -> !pk.tile<32x1xi32>
          %14 = pk.tile.map <eq> %8, %13 : !pk.tile<32x1xi32>, !pk.tile<32x1xi32> -> !pk.tile<32x1xi32>
          %c1_2 = arith.constant 1 : index
          %c0_3 = arith.constant 0 : index
          %15 = arith.subi %c0_3, %c1_2 : index
          %16 = pk.tile.splat %15 : index -> !pk.tile<32x1xi32>
          %17 = pk.tile.select %14, %9, %16 : !pk.tile<32x1xi32>, !pk.tile<32x1xi32>
          %18 = pk.tile.load_rows %arg0[%17, %arg7] on %arg10 : !pk.sym<?x?xbf16>, !pk.tile<32x1xi32> -> !pk.tile<32x512xbf16>
          %19 = pk.tile.cast %18 : !pk.tile<32x512xbf16> to !pk.tile<32x512xf32>
          %20 = pk.tile.map <mul> %19, %10 : !pk.tile<32x512xf32>, !pk.tile<32x1xf32> -> !pk.tile<32x512xf32>
          %21 = pk.tile.map <add> %arg11, %20 : !pk.tile<32x512xf32>, !pk.tile<32x512xf32> -> !pk.tile<32x512xf32>
          scf.yield %21 : !pk.tile<32x512xf32>
        }
        scf.yield %12 : !pk.tile<32x512xf32>
      }
      %5 = pk.tile.cast %4 : !pk.tile<32x512xf32> to !pk.tile<32x512xbf16>
      pk.tile.store %5, %arg4[%arg6, %arg7] : !pk.tile<32x512xbf16>, !pk.tensor<?x?xbf16>
    }
    pk.return
  }
}
