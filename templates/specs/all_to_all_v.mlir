// all_to_all_v (see all_to_all_v.pk.cpp): its .mlir twin, as
// `pkc all_to_all_v.pk.cpp --emit=mlir` writes it; test/Frontend/twins.test checks
// that both lower to the same device IR.
module {
  pk.kernel @all_to_all_v(%arg0: !pk.tensor<?x?xbf16>, %arg1: !pk.tensor<?xi32>, %arg2: !pk.sym<?x?xbf16>, %arg3: !pk.sym<?xi32>) {
    %0 = pk.world_size
    pk.tile.foreach (%arg4) to (%0) step [1] {
      %3 = pk.tile.load %arg1[%arg4] : !pk.tensor<?xi32> -> !pk.tile<1xi32>
      %4 = pk.rank
      pk.coll.store_tile %3, %arg3[%4] on %arg4 : !pk.tile<1xi32>, !pk.sym<?xi32>
    }
    %1 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
    %2 = pk.dim %arg0, 1 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg4, %arg5) to (%1, %2) step [32, 512] {
      %3 = pk.tile.load %arg0[%arg4, %arg5] : !pk.tensor<?x?xbf16> -> !pk.tile<32x512xbf16>
      %4 = pk.tile.zeros : !pk.tile<32xi32>
      %c1 = arith.constant 1 : index
      %5 = pk.tile.splat %c1 : index -> !pk.tile<32xi32>
      %6 = pk.tile.map <add> %4, %5 : !pk.tile<32xi32>, !pk.tile<32xi32> -> !pk.tile<32xi32>
      %7 = pk.tile.cumsum %6 : !pk.tile<32xi32>
      %c1_0 = arith.constant 1 : index
      %8 = arith.subi %arg4, %c1_0 : index
      %9 = pk.tile.splat %8 : index -> !pk.tile<32xi32>
      %10 = pk.tile.map <add> %7, %9 : !pk.tile<32xi32>, !pk.tile<32xi32> -> !pk.tile<32xi32>
      %11 = pk.tile.zeros : !pk.tile<1xi32>
      %c0 = arith.constant 0 : index
      %12 = pk.world_size
      %c1_1 = arith.constant 1 : index
      %13 = scf.for %arg6 = %c0 to %12 step %c1_1 iter_args(%arg7 = %11) -> (!pk.tile<1xi32>) {
        %14 = pk.tile.load %arg1[%arg6] : !pk.tensor<?xi32> -> !pk.tile<1xi32>
        %15 = pk.tile.zeros : !pk.tile<1xi32>
        %c0_2 = arith.constant 0 : index
        %16 = pk.rank
        %c1_3 = arith.constant 1 : index
        %17 = scf.for %arg8 = %c0_2 to %16 step %c1_3 iter_args(%arg9 = %15) -> (!pk.tile<1xi32>) {
          %28 = pk.comm.load_peer <ldst> %arg3[%arg8] on %arg6 : !pk.sym<?xi32> -> !pk.tile<1xi32>
          %29 = pk.tile.map <add> %arg9, %28 : !pk.tile<1xi32>, !pk.tile<1xi32> -> !pk.tile<1xi32>
          scf.yield %29 : !pk.tile<1xi32>
        }
        %18 = pk.tile.map <ge> %10, %arg7 : !pk.tile<32xi32>, !pk.tile<1xi32> -> !pk.tile<32xi32>
        %19 = pk.tile.map <add> %arg7, %14 : !pk.tile<1xi32>, !pk.tile<1xi32> -> !pk.tile<1xi32>
        %20 = pk.tile.map <lt> %10, %19 : !pk.tile<32xi32>, !pk.tile<1xi32> -> !pk.tile<32xi32>
        %21 = pk.tile.map <mul> %18, %20 : !pk.tile<32xi32>, !pk.tile<32xi32> -> !pk.tile<32xi32>
        %22 = pk.tile.map <add> %17, %10 : !pk.tile<1xi32>, !pk.tile<32xi32> -> !pk.tile<32xi32>
        %23 = pk.tile.map <sub> %22, %arg7 : !pk.tile<32xi32>, !pk.tile<1xi32> -> !pk.tile<32xi32>
        %c1_4 = arith.constant 1 : index
        %c0_5 = arith.constant 0 : index
        %24 = arith.subi %c0_5, %c1_4 : index
        %25 = pk.tile.splat %24 : index -> !pk.tile<32xi32>
        %26 = pk.tile.select %21, %23, %25 : !pk.tile<32xi32>, !pk.tile<32xi32>
        pk.tile.store_rows %3, %arg2[%26, %arg5] on %arg6 : !pk.tile<32x512xbf16>, !pk.sym<?x?xbf16>, !pk.tile<32xi32>
        %27 = pk.tile.map <add> %arg7, %14 : !pk.tile<1xi32>, !pk.tile<1xi32> -> !pk.tile<1xi32>
        scf.yield %27 : !pk.tile<1xi32>
      }
    }
    pk.return
  }
}
