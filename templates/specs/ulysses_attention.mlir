// Ulysses sequence parallelism for attention (see ulysses_attention.pk.cpp for what each kernel
// computes): the .mlir twin of ulysses_attention.pk.cpp, as `pkc ulysses_attention.pk.cpp
// --emit=mlir` writes it; test/Frontend/twins.test checks that both lower to the same device IR.
module {
  pk.kernel @ulysses_attention_d64(%arg0: !pk.sym<?x?x?xbf16>, %arg1: !pk.sym<?x?x?xbf16>, %arg2: !pk.sym<?x?x?xbf16>, %arg3: !pk.sym<?x?x?xbf16>, %arg4: !pk.sym<?x?x?xbf16>, %arg5: !pk.sym<?x?x?xbf16>, %arg6: !pk.sym<?x?x?xbf16>, %arg7: !pk.sym<?x?x?xbf16>, %arg8: !pk.tensor<?x?x?xf32>, %arg9: f32) {
    pk.coll.all_to_all %arg0 into %arg4 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.coll.all_to_all %arg1 into %arg5 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.coll.all_to_all %arg2 into %arg6 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    %0 = pk.dim %arg4, 0 : !pk.sym<?x?x?xbf16>
    %1 = pk.dim %arg4, 1 : !pk.sym<?x?x?xbf16>
    pk.tile.foreach (%arg10, %arg11) to (%0, %1) step [1, 64] {
      %c0 = arith.constant 0 : index
      %2 = pk.tile.load %arg4[%arg10, %arg11, %c0] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
      %3 = pk.tile.reshape %2 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
      %4 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %5 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %6 = pk.tile.map <sub> %4, %5 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %7 = pk.tile.zeros : !pk.tile<64x1xf32>
      %8 = pk.tile.zeros : !pk.tile<64x64xf32>
      %c0_0 = arith.constant 0 : index
      %9 = pk.dim %arg5, 1 : !pk.sym<?x?x?xbf16>
      %c64 = arith.constant 64 : index
      %10:3 = scf.for %arg12 = %c0_0 to %9 step %c64 iter_args(%arg13 = %7, %arg14 = %8, %arg15 = %6) -> (!pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>) {
        %c0_3 = arith.constant 0 : index
        %17 = pk.tile.load %arg5[%arg10, %arg12, %c0_3] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %18 = pk.tile.reshape %17 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %19 = pk.tile.zeros : !pk.tile<64x64xf32>
        %20 = pk.tile.mma %3, %18, %19 {transpose_b} : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        %21 = pk.tile.splat %arg9 : f32 -> !pk.tile<64x64xf32>
        %22 = pk.tile.map <mul> %20, %21 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %23 = pk.tile.iota %arg12 dim 1 : !pk.tile<64x64xf32>
        %24 = pk.dim %arg5, 1 : !pk.sym<?x?x?xbf16>
        %25 = arith.index_cast %24 : index to i64
        %26 = arith.sitofp %25 : i64 to f32
        %27 = pk.tile.splat %26 : f32 -> !pk.tile<64x64xf32>
        %28 = pk.tile.map <lt> %23, %27 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_4 = arith.constant -1.000000e+30 : f32
        %29 = pk.tile.splat %cst_4 : f32 -> !pk.tile<64x64xf32>
        %30 = pk.tile.select %28, %22, %29 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %31 = pk.tile.reduce_rows <max> %30 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %32 = pk.tile.map <max> %arg15, %31 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %33 = pk.tile.map <sub> %30, %32 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %34 = pk.tile.map <exp> %33 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %35 = pk.tile.map <sub> %arg15, %32 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %36 = pk.tile.map <exp> %35 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %37 = pk.tile.map <mul> %arg13, %36 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %38 = pk.tile.reduce_rows <sum> %34 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %39 = pk.tile.map <add> %37, %38 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %40 = pk.tile.cast %34 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %c0_5 = arith.constant 0 : index
        %41 = pk.tile.load %arg6[%arg10, %arg12, %c0_5] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %42 = pk.tile.reshape %41 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %43 = pk.tile.map <mul> %arg14, %36 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %44 = pk.tile.mma %40, %42, %43 : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        scf.yield %39, %44, %32 : !pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>
      }
      %11 = pk.tile.map <div> %10#1, %10#0 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
      %12 = pk.tile.cast %11 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
      %13 = pk.tile.reshape %12 : !pk.tile<64x64xbf16> -> !pk.tile<1x64x64xbf16>
      %c0_1 = arith.constant 0 : index
      pk.tile.store %13, %arg7[%arg10, %arg11, %c0_1] : !pk.tile<1x64x64xbf16>, !pk.sym<?x?x?xbf16>
      %14 = pk.tile.map <log> %10#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %15 = pk.tile.map <add> %10#2, %14 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %16 = pk.tile.reshape %15 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
      %c0_2 = arith.constant 0 : index
      pk.tile.store %16, %arg8[%arg10, %arg11, %c0_2] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
    }
    pk.coll.all_to_all %arg7 into %arg3 {split_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.return
  }
  pk.kernel @ulysses_attention_d128(%arg0: !pk.sym<?x?x?xbf16>, %arg1: !pk.sym<?x?x?xbf16>, %arg2: !pk.sym<?x?x?xbf16>, %arg3: !pk.sym<?x?x?xbf16>, %arg4: !pk.sym<?x?x?xbf16>, %arg5: !pk.sym<?x?x?xbf16>, %arg6: !pk.sym<?x?x?xbf16>, %arg7: !pk.sym<?x?x?xbf16>, %arg8: !pk.tensor<?x?x?xf32>, %arg9: f32) {
    pk.coll.all_to_all %arg0 into %arg4 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.coll.all_to_all %arg1 into %arg5 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.coll.all_to_all %arg2 into %arg6 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    %0 = pk.dim %arg4, 0 : !pk.sym<?x?x?xbf16>
    %1 = pk.dim %arg4, 1 : !pk.sym<?x?x?xbf16>
    pk.tile.foreach (%arg10, %arg11) to (%0, %1) step [1, 64] {
      %c0 = arith.constant 0 : index
      %2 = pk.tile.load %arg4[%arg10, %arg11, %c0] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
      %3 = pk.tile.reshape %2 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
      %4 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %5 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %6 = pk.tile.map <sub> %4, %5 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %7 = pk.tile.zeros : !pk.tile<64x1xf32>
      %8 = pk.tile.zeros : !pk.tile<64x128xf32>
      %c0_0 = arith.constant 0 : index
      %9 = pk.dim %arg5, 1 : !pk.sym<?x?x?xbf16>
      %c64 = arith.constant 64 : index
      %10:3 = scf.for %arg12 = %c0_0 to %9 step %c64 iter_args(%arg13 = %7, %arg14 = %8, %arg15 = %6) -> (!pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>) {
        %c0_3 = arith.constant 0 : index
        %17 = pk.tile.load %arg5[%arg10, %arg12, %c0_3] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %18 = pk.tile.reshape %17 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %19 = pk.tile.zeros : !pk.tile<64x64xf32>
        %20 = pk.tile.mma %3, %18, %19 {transpose_b} : !pk.tile<64x128xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x64xf32>
        %21 = pk.tile.splat %arg9 : f32 -> !pk.tile<64x64xf32>
        %22 = pk.tile.map <mul> %20, %21 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %23 = pk.tile.iota %arg12 dim 1 : !pk.tile<64x64xf32>
        %24 = pk.dim %arg5, 1 : !pk.sym<?x?x?xbf16>
        %25 = arith.index_cast %24 : index to i64
        %26 = arith.sitofp %25 : i64 to f32
        %27 = pk.tile.splat %26 : f32 -> !pk.tile<64x64xf32>
        %28 = pk.tile.map <lt> %23, %27 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_4 = arith.constant -1.000000e+30 : f32
        %29 = pk.tile.splat %cst_4 : f32 -> !pk.tile<64x64xf32>
        %30 = pk.tile.select %28, %22, %29 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %31 = pk.tile.reduce_rows <max> %30 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %32 = pk.tile.map <max> %arg15, %31 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %33 = pk.tile.map <sub> %30, %32 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %34 = pk.tile.map <exp> %33 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %35 = pk.tile.map <sub> %arg15, %32 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %36 = pk.tile.map <exp> %35 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %37 = pk.tile.map <mul> %arg13, %36 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %38 = pk.tile.reduce_rows <sum> %34 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %39 = pk.tile.map <add> %37, %38 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %40 = pk.tile.cast %34 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %c0_5 = arith.constant 0 : index
        %41 = pk.tile.load %arg6[%arg10, %arg12, %c0_5] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %42 = pk.tile.reshape %41 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %43 = pk.tile.map <mul> %arg14, %36 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %44 = pk.tile.mma %40, %42, %43 : !pk.tile<64x64xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x128xf32>
        scf.yield %39, %44, %32 : !pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>
      }
      %11 = pk.tile.map <div> %10#1, %10#0 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
      %12 = pk.tile.cast %11 : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
      %13 = pk.tile.reshape %12 : !pk.tile<64x128xbf16> -> !pk.tile<1x64x128xbf16>
      %c0_1 = arith.constant 0 : index
      pk.tile.store %13, %arg7[%arg10, %arg11, %c0_1] : !pk.tile<1x64x128xbf16>, !pk.sym<?x?x?xbf16>
      %14 = pk.tile.map <log> %10#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %15 = pk.tile.map <add> %10#2, %14 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %16 = pk.tile.reshape %15 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
      %c0_2 = arith.constant 0 : index
      pk.tile.store %16, %arg8[%arg10, %arg11, %c0_2] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
    }
    pk.coll.all_to_all %arg7 into %arg3 {split_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.return
  }
  pk.kernel @ulysses_attention_causal_d64(%arg0: !pk.sym<?x?x?xbf16>, %arg1: !pk.sym<?x?x?xbf16>, %arg2: !pk.sym<?x?x?xbf16>, %arg3: !pk.sym<?x?x?xbf16>, %arg4: !pk.sym<?x?x?xbf16>, %arg5: !pk.sym<?x?x?xbf16>, %arg6: !pk.sym<?x?x?xbf16>, %arg7: !pk.sym<?x?x?xbf16>, %arg8: !pk.tensor<?x?x?xf32>, %arg9: f32) {
    pk.coll.all_to_all %arg0 into %arg4 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.coll.all_to_all %arg1 into %arg5 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.coll.all_to_all %arg2 into %arg6 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    %0 = pk.dim %arg4, 0 : !pk.sym<?x?x?xbf16>
    %1 = pk.dim %arg4, 1 : !pk.sym<?x?x?xbf16>
    pk.tile.foreach (%arg10, %arg11) to (%0, %1) step [1, 64] {
      %c0 = arith.constant 0 : index
      %2 = pk.tile.load %arg4[%arg10, %arg11, %c0] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
      %3 = pk.tile.reshape %2 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
      %4 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %5 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %6 = pk.tile.map <sub> %4, %5 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %7 = pk.tile.zeros : !pk.tile<64x1xf32>
      %8 = pk.tile.zeros : !pk.tile<64x64xf32>
      %c0_0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %9 = arith.addi %arg11, %c64 : index
      %c64_1 = arith.constant 64 : index
      %10:3 = scf.for %arg12 = %c0_0 to %9 step %c64_1 iter_args(%arg13 = %7, %arg14 = %8, %arg15 = %6) -> (!pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>) {
        %c0_4 = arith.constant 0 : index
        %17 = pk.tile.load %arg5[%arg10, %arg12, %c0_4] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %18 = pk.tile.reshape %17 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %19 = pk.tile.zeros : !pk.tile<64x64xf32>
        %20 = pk.tile.mma %3, %18, %19 {transpose_b} : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        %21 = pk.tile.splat %arg9 : f32 -> !pk.tile<64x64xf32>
        %22 = pk.tile.map <mul> %20, %21 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %23 = pk.tile.iota %arg12 dim 1 : !pk.tile<64x64xf32>
        %24 = pk.tile.iota %arg11 dim 0 : !pk.tile<64x64xf32>
        %25 = pk.tile.map <le> %23, %24 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %26 = pk.tile.iota %arg12 dim 1 : !pk.tile<64x64xf32>
        %27 = pk.dim %arg5, 1 : !pk.sym<?x?x?xbf16>
        %28 = arith.index_cast %27 : index to i64
        %29 = arith.sitofp %28 : i64 to f32
        %30 = pk.tile.splat %29 : f32 -> !pk.tile<64x64xf32>
        %31 = pk.tile.map <lt> %26, %30 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %32 = pk.tile.map <mul> %25, %31 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_5 = arith.constant -1.000000e+30 : f32
        %33 = pk.tile.splat %cst_5 : f32 -> !pk.tile<64x64xf32>
        %34 = pk.tile.select %32, %22, %33 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %35 = pk.tile.reduce_rows <max> %34 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %36 = pk.tile.map <max> %arg15, %35 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %37 = pk.tile.map <sub> %34, %36 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %38 = pk.tile.map <exp> %37 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %39 = pk.tile.map <sub> %arg15, %36 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %40 = pk.tile.map <exp> %39 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %41 = pk.tile.map <mul> %arg13, %40 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %42 = pk.tile.reduce_rows <sum> %38 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %43 = pk.tile.map <add> %41, %42 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %44 = pk.tile.cast %38 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %c0_6 = arith.constant 0 : index
        %45 = pk.tile.load %arg6[%arg10, %arg12, %c0_6] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %46 = pk.tile.reshape %45 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %47 = pk.tile.map <mul> %arg14, %40 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %48 = pk.tile.mma %44, %46, %47 : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        scf.yield %43, %48, %36 : !pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>
      }
      %11 = pk.tile.map <div> %10#1, %10#0 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
      %12 = pk.tile.cast %11 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
      %13 = pk.tile.reshape %12 : !pk.tile<64x64xbf16> -> !pk.tile<1x64x64xbf16>
      %c0_2 = arith.constant 0 : index
      pk.tile.store %13, %arg7[%arg10, %arg11, %c0_2] : !pk.tile<1x64x64xbf16>, !pk.sym<?x?x?xbf16>
      %14 = pk.tile.map <log> %10#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %15 = pk.tile.map <add> %10#2, %14 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %16 = pk.tile.reshape %15 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
      %c0_3 = arith.constant 0 : index
      pk.tile.store %16, %arg8[%arg10, %arg11, %c0_3] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
    }
    pk.coll.all_to_all %arg7 into %arg3 {split_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.return
  }
  pk.kernel @ulysses_attention_causal_d128(%arg0: !pk.sym<?x?x?xbf16>, %arg1: !pk.sym<?x?x?xbf16>, %arg2: !pk.sym<?x?x?xbf16>, %arg3: !pk.sym<?x?x?xbf16>, %arg4: !pk.sym<?x?x?xbf16>, %arg5: !pk.sym<?x?x?xbf16>, %arg6: !pk.sym<?x?x?xbf16>, %arg7: !pk.sym<?x?x?xbf16>, %arg8: !pk.tensor<?x?x?xf32>, %arg9: f32) {
    pk.coll.all_to_all %arg0 into %arg4 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.coll.all_to_all %arg1 into %arg5 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.coll.all_to_all %arg2 into %arg6 {concat_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    %0 = pk.dim %arg4, 0 : !pk.sym<?x?x?xbf16>
    %1 = pk.dim %arg4, 1 : !pk.sym<?x?x?xbf16>
    pk.tile.foreach (%arg10, %arg11) to (%0, %1) step [1, 64] {
      %c0 = arith.constant 0 : index
      %2 = pk.tile.load %arg4[%arg10, %arg11, %c0] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
      %3 = pk.tile.reshape %2 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
      %4 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %5 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %6 = pk.tile.map <sub> %4, %5 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %7 = pk.tile.zeros : !pk.tile<64x1xf32>
      %8 = pk.tile.zeros : !pk.tile<64x128xf32>
      %c0_0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %9 = arith.addi %arg11, %c64 : index
      %c64_1 = arith.constant 64 : index
      %10:3 = scf.for %arg12 = %c0_0 to %9 step %c64_1 iter_args(%arg13 = %7, %arg14 = %8, %arg15 = %6) -> (!pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>) {
        %c0_4 = arith.constant 0 : index
        %17 = pk.tile.load %arg5[%arg10, %arg12, %c0_4] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %18 = pk.tile.reshape %17 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %19 = pk.tile.zeros : !pk.tile<64x64xf32>
        %20 = pk.tile.mma %3, %18, %19 {transpose_b} : !pk.tile<64x128xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x64xf32>
        %21 = pk.tile.splat %arg9 : f32 -> !pk.tile<64x64xf32>
        %22 = pk.tile.map <mul> %20, %21 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %23 = pk.tile.iota %arg12 dim 1 : !pk.tile<64x64xf32>
        %24 = pk.tile.iota %arg11 dim 0 : !pk.tile<64x64xf32>
        %25 = pk.tile.map <le> %23, %24 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %26 = pk.tile.iota %arg12 dim 1 : !pk.tile<64x64xf32>
        %27 = pk.dim %arg5, 1 : !pk.sym<?x?x?xbf16>
        %28 = arith.index_cast %27 : index to i64
        %29 = arith.sitofp %28 : i64 to f32
        %30 = pk.tile.splat %29 : f32 -> !pk.tile<64x64xf32>
        %31 = pk.tile.map <lt> %26, %30 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %32 = pk.tile.map <mul> %25, %31 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_5 = arith.constant -1.000000e+30 : f32
        %33 = pk.tile.splat %cst_5 : f32 -> !pk.tile<64x64xf32>
        %34 = pk.tile.select %32, %22, %33 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %35 = pk.tile.reduce_rows <max> %34 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %36 = pk.tile.map <max> %arg15, %35 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %37 = pk.tile.map <sub> %34, %36 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %38 = pk.tile.map <exp> %37 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %39 = pk.tile.map <sub> %arg15, %36 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %40 = pk.tile.map <exp> %39 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %41 = pk.tile.map <mul> %arg13, %40 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %42 = pk.tile.reduce_rows <sum> %38 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %43 = pk.tile.map <add> %41, %42 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %44 = pk.tile.cast %38 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %c0_6 = arith.constant 0 : index
        %45 = pk.tile.load %arg6[%arg10, %arg12, %c0_6] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %46 = pk.tile.reshape %45 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %47 = pk.tile.map <mul> %arg14, %40 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %48 = pk.tile.mma %44, %46, %47 : !pk.tile<64x64xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x128xf32>
        scf.yield %43, %48, %36 : !pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>
      }
      %11 = pk.tile.map <div> %10#1, %10#0 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
      %12 = pk.tile.cast %11 : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
      %13 = pk.tile.reshape %12 : !pk.tile<64x128xbf16> -> !pk.tile<1x64x128xbf16>
      %c0_2 = arith.constant 0 : index
      pk.tile.store %13, %arg7[%arg10, %arg11, %c0_2] : !pk.tile<1x64x128xbf16>, !pk.sym<?x?x?xbf16>
      %14 = pk.tile.map <log> %10#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %15 = pk.tile.map <add> %10#2, %14 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %16 = pk.tile.reshape %15 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
      %c0_3 = arith.constant 0 : index
      pk.tile.store %16, %arg8[%arg10, %arg11, %c0_3] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
    }
    pk.coll.all_to_all %arg7 into %arg3 {split_dim = 1 : i64} : !pk.sym<?x?x?xbf16>, !pk.sym<?x?x?xbf16>
    pk.return
  }
}
