// Vocabulary-parallel cross-entropy (see cross_entropy_vocab_parallel.pk.cpp): its .mlir twin,
// as `pkc cross_entropy_vocab_parallel.pk.cpp --emit=mlir` writes it; test/Frontend/twins.test
// checks that both lower to the same device IR.
module {
  pk.kernel @cross_entropy_vocab_parallel(%arg0: !pk.tensor<?x?xf32>, %arg1: !pk.tensor<?x?xi32>, %arg2: !pk.sym<?x?xf32>, %arg3: !pk.sym<?x?xf32>, %arg4: !pk.sym<?x?xf32>, %arg5: !pk.sym<?x?xf32>, %arg6: !pk.tensor<?x?xf32>) {
    %0 = pk.rank
    %1 = pk.dim %arg0, 1 : !pk.tensor<?x?xf32>
    %2 = arith.muli %0, %1 : index
    %3 = pk.dim %arg0, 0 : !pk.tensor<?x?xf32>
    pk.tile.foreach (%arg7) to (%3) step [16] {
      %6 = pk.tile.zeros : !pk.tile<16x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %7 = pk.tile.splat %cst : f32 -> !pk.tile<16x1xf32>
      %8 = pk.tile.map <sub> %6, %7 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
      %c0 = arith.constant 0 : index
      %9 = pk.dim %arg0, 1 : !pk.tensor<?x?xf32>
      %c512 = arith.constant 512 : index
      %10 = scf.for %arg8 = %c0 to %9 step %c512 iter_args(%arg9 = %8) -> (!pk.tile<16x1xf32>) {
        %11 = pk.tile.iota %arg8 dim 1 : !pk.tile<16x512xf32>
        %12 = pk.dim %arg0, 1 : !pk.tensor<?x?xf32>
        %13 = arith.index_cast %12 : index to i64
        %14 = arith.sitofp %13 : i64 to f32
        %15 = pk.tile.splat %14 : f32 -> !pk.tile<16x512xf32>
        %16 = pk.tile.map <lt> %11, %15 : !pk.tile<16x512xf32>, !pk.tile<16x512xf32> -> !pk.tile<16x512xf32>
        %17 = pk.tile.load %arg0[%arg7, %arg8] : !pk.tensor<?x?xf32> -> !pk.tile<16x512xf32>
        %cst_1 = arith.constant -1.000000e+30 : f32
        %18 = pk.tile.splat %cst_1 : f32 -> !pk.tile<16x512xf32>
        %19 = pk.tile.select %16, %17, %18 : !pk.tile<16x512xf32>, !pk.tile<16x512xf32>
        %20 = pk.tile.reduce_rows <max> %19 : !pk.tile<16x512xf32> -> !pk.tile<16x1xf32>
        %21 = pk.tile.map <max> %arg9, %20 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
        scf.yield %21 : !pk.tile<16x1xf32>
      }
      %c0_0 = arith.constant 0 : index
      pk.tile.store %10, %arg2[%arg7, %c0_0] : !pk.tile<16x1xf32>, !pk.sym<?x?xf32>
    }
    pk.coll.all_reduce <max> %arg2 into %arg3 : !pk.sym<?x?xf32>, !pk.sym<?x?xf32>
    %4 = pk.dim %arg0, 0 : !pk.tensor<?x?xf32>
    pk.tile.foreach (%arg7) to (%4) step [16] {
      %c0 = arith.constant 0 : index
      %6 = pk.tile.load %arg3[%arg7, %c0] : !pk.sym<?x?xf32> -> !pk.tile<16x1xf32>
      %c0_0 = arith.constant 0 : index
      %7 = pk.tile.load %arg1[%arg7, %c0_0] : !pk.tensor<?x?xi32> -> !pk.tile<16x1xi32>
      %8 = pk.tile.splat %2 : index -> !pk.tile<16x1xi32>
      %9 = pk.tile.map <sub> %7, %8 : !pk.tile<16x1xi32>, !pk.tile<16x1xi32> -> !pk.tile<16x1xi32>
      %10 = pk.tile.cast %9 : !pk.tile<16x1xi32> to !pk.tile<16x1xf32>
      %11 = pk.tile.zeros : !pk.tile<16x1xf32>
      %12 = pk.tile.zeros : !pk.tile<16x1xf32>
      %c0_1 = arith.constant 0 : index
      %13 = pk.dim %arg0, 1 : !pk.tensor<?x?xf32>
      %c512 = arith.constant 512 : index
      %14:2 = scf.for %arg8 = %c0_1 to %13 step %c512 iter_args(%arg9 = %11, %arg10 = %12) -> (!pk.tile<16x1xf32>, !pk.tile<16x1xf32>) {
        %15 = pk.tile.load %arg0[%arg7, %arg8] : !pk.tensor<?x?xf32> -> !pk.tile<16x512xf32>
        %16 = pk.tile.iota %arg8 dim 1 : !pk.tile<16x512xf32>
        %17 = pk.dim %arg0, 1 : !pk.tensor<?x?xf32>
        %18 = arith.index_cast %17 : index to i64
        %19 = arith.sitofp %18 : i64 to f32
        %20 = pk.tile.splat %19 : f32 -> !pk.tile<16x512xf32>
        %21 = pk.tile.map <lt> %16, %20 : !pk.tile<16x512xf32>, !pk.tile<16x512xf32> -> !pk.tile<16x512xf32>
        %22 = pk.tile.map <sub> %15, %6 : !pk.tile<16x512xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x512xf32>
        %23 = pk.tile.map <exp> %22 : !pk.tile<16x512xf32> -> !pk.tile<16x512xf32>
        %cst = arith.constant 0.000000e+00 : f32
        %24 = pk.tile.splat %cst : f32 -> !pk.tile<16x512xf32>
        %25 = pk.tile.select %21, %23, %24 : !pk.tile<16x512xf32>, !pk.tile<16x512xf32>
        %26 = pk.tile.reduce_rows <sum> %25 : !pk.tile<16x512xf32> -> !pk.tile<16x1xf32>
        %27 = pk.tile.map <add> %arg9, %26 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
        %28 = pk.tile.map <eq> %16, %10 : !pk.tile<16x512xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x512xf32>
        %cst_3 = arith.constant 0.000000e+00 : f32
        %29 = pk.tile.splat %cst_3 : f32 -> !pk.tile<16x512xf32>
        %30 = pk.tile.select %28, %15, %29 : !pk.tile<16x512xf32>, !pk.tile<16x512xf32>
        %31 = pk.tile.reduce_rows <sum> %30 : !pk.tile<16x512xf32> -> !pk.tile<16x1xf32>
        %32 = pk.tile.map <add> %arg10, %31 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
        scf.yield %27, %32 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32>
      }
      %c0_2 = arith.constant 0 : index
      pk.tile.store %14#0, %arg4[%arg7, %c0_2] : !pk.tile<16x1xf32>, !pk.sym<?x?xf32>
      %c1 = arith.constant 1 : index
      pk.tile.store %14#1, %arg4[%arg7, %c1] : !pk.tile<16x1xf32>, !pk.sym<?x?xf32>
    }
    pk.coll.all_reduce <sum> %arg4 into %arg5 : !pk.sym<?x?xf32>, !pk.sym<?x?xf32>
    %5 = pk.dim %arg0, 0 : !pk.tensor<?x?xf32>
    pk.tile.foreach (%arg7) to (%5) step [16] {
      %c0 = arith.constant 0 : index
      %6 = pk.tile.load %arg5[%arg7, %c0] : !pk.sym<?x?xf32> -> !pk.tile<16x1xf32>
      %7 = pk.tile.map <log> %6 : !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
      %c0_0 = arith.constant 0 : index
      %8 = pk.tile.load %arg3[%arg7, %c0_0] : !pk.sym<?x?xf32> -> !pk.tile<16x1xf32>
      %9 = pk.tile.map <add> %7, %8 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
      %c1 = arith.constant 1 : index
      %10 = pk.tile.load %arg5[%arg7, %c1] : !pk.sym<?x?xf32> -> !pk.tile<16x1xf32>
      %11 = pk.tile.map <sub> %9, %10 : !pk.tile<16x1xf32>, !pk.tile<16x1xf32> -> !pk.tile<16x1xf32>
      %c0_1 = arith.constant 0 : index
      pk.tile.store %11, %arg6[%arg7, %c0_1] : !pk.tile<16x1xf32>, !pk.tensor<?x?xf32>
    }
    pk.return
  }
}
