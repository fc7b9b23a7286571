// Forward attention of one head (see attention.pk.cpp for what each kernel computes): the
// .mlir twin of attention.pk.cpp, as `pkc attention.pk.cpp --emit=mlir` writes it;
// test/Frontend/twins.test checks that both lower to the same device IR.
module {
  pk.kernel @attention_d64(%arg0: !pk.tensor<?x?xbf16>, %arg1: !pk.tensor<?x?xbf16>, %arg2: !pk.tensor<?x?xbf16>, %arg3: !pk.tensor<?x?xbf16>, %arg4: !pk.tensor<?x?xf32>, %arg5: f32) {
    %0 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg6) to (%0) step [64] {
      %c0 = arith.constant 0 : index
      %1 = pk.tile.load %arg0[%arg6, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16>
      %2 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %3 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %4 = pk.tile.map <sub> %2, %3 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %5 = pk.tile.zeros : !pk.tile<64x1xf32>
      %6 = pk.tile.zeros : !pk.tile<64x64xf32>
      %c0_0 = arith.constant 0 : index
      %7 = pk.dim %arg1, 0 : !pk.tensor<?x?xbf16>
      %c64 = arith.constant 64 : index
      %8:3 = scf.for %arg7 = %c0_0 to %7 step %c64 iter_args(%arg8 = %5, %arg9 = %6, %arg10 = %4) -> (!pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>) {
        %c0_3 = arith.constant 0 : index
        %13 = pk.tile.load %arg1[%arg7, %c0_3] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16>
        %14 = pk.tile.zeros : !pk.tile<64x64xf32>
        %15 = pk.tile.mma %1, %13, %14 {transpose_b} : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        %16 = pk.tile.splat %arg5 : f32 -> !pk.tile<64x64xf32>
        %17 = pk.tile.map <mul> %15, %16 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %18 = pk.tile.iota %arg7 dim 1 : !pk.tile<64x64xf32>
        %19 = pk.dim %arg1, 0 : !pk.tensor<?x?xbf16>
        %20 = arith.index_cast %19 : index to i64
        %21 = arith.sitofp %20 : i64 to f32
        %22 = pk.tile.splat %21 : f32 -> !pk.tile<64x64xf32>
        %23 = pk.tile.map <lt> %18, %22 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_4 = arith.constant -1.000000e+30 : f32
        %24 = pk.tile.splat %cst_4 : f32 -> !pk.tile<64x64xf32>
        %25 = pk.tile.select %23, %17, %24 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %26 = pk.tile.reduce_rows <max> %25 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %27 = pk.tile.map <max> %arg10, %26 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %28 = pk.tile.map <sub> %25, %27 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %29 = pk.tile.map <exp> %28 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %30 = pk.tile.map <sub> %arg10, %27 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %31 = pk.tile.map <exp> %30 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %32 = pk.tile.map <mul> %arg8, %31 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %33 = pk.tile.reduce_rows <sum> %29 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %34 = pk.tile.map <add> %32, %33 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %35 = pk.tile.cast %29 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %c0_5 = arith.constant 0 : index
        %36 = pk.tile.load %arg2[%arg7, %c0_5] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16>
        %37 = pk.tile.map <mul> %arg9, %31 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %38 = pk.tile.mma %35, %36, %37 : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        scf.yield %34, %38, %27 : !pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>
      }
      %9 = pk.tile.map <div> %8#1, %8#0 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
      %10 = pk.tile.cast %9 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
      %c0_1 = arith.constant 0 : index
      pk.tile.store %10, %arg3[%arg6, %c0_1] : !pk.tile<64x64xbf16>, !pk.tensor<?x?xbf16>
      %11 = pk.tile.map <log> %8#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %12 = pk.tile.map <add> %8#2, %11 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %c0_2 = arith.constant 0 : index
      pk.tile.store %12, %arg4[%arg6, %c0_2] : !pk.tile<64x1xf32>, !pk.tensor<?x?xf32>
    }
    pk.return
  }
  pk.kernel @attention_causal_d64(%arg0: !pk.tensor<?x?xbf16>, %arg1: !pk.tensor<?x?xbf16>, %arg2: !pk.tensor<?x?xbf16>, %arg3: !pk.tensor<?x?xbf16>, %arg4: !pk.tensor<?x?xf32>, %arg5: f32) {
    %0 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg6) to (%0) step [64] {
      %c0 = arith.constant 0 : index
      %1 = pk.tile.load %arg0[%arg6, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16>
      %2 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %3 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %4 = pk.tile.map <sub> %2, %3 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %5 = pk.tile.zeros : !pk.tile<64x1xf32>
      %6 = pk.tile.zeros : !pk.tile<64x64xf32>
      %c0_0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %7 = arith.addi %arg6, %c64 : index
      %c64_1 = arith.constant 64 : index
      %8:3 = scf.for %arg7 = %c0_0 to %7 step %c64_1 iter_args(%arg8 = %5, %arg9 = %6, %arg10 = %4) -> (!pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>) {
        %c0_4 = arith.constant 0 : index
        %13 = pk.tile.load %arg1[%arg7, %c0_4] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16>
        %14 = pk.tile.zeros : !pk.tile<64x64xf32>
        %15 = pk.tile.mma %1, %13, %14 {transpose_b} : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        %16 = pk.tile.splat %arg5 : f32 -> !pk.tile<64x64xf32>
        %17 = pk.tile.map <mul> %15, %16 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %18 = pk.tile.iota %arg7 dim 1 : !pk.tile<64x64xf32>
        %19 = pk.tile.iota %arg6 dim 0 : !pk.tile<64x64xf32>
        %20 = pk.tile.map <le> %18, %19 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %21 = pk.tile.iota %arg7 dim 1 : !pk.tile<64x64xf32>
        %22 = pk.dim %arg1, 0 : !pk.tensor<?x?xbf16>
        %23 = arith.index_cast %22 : index to i64
        %24 = arith.sitofp %23 : i64 to f32
        %25 = pk.tile.splat %24 : f32 -> !pk.tile<64x64xf32>
        %26 = pk.tile.map <lt> %21, %25 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %27 = pk.tile.map <mul> %20, %26 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_5 = arith.constant -1.000000e+30 : f32
        %28 = pk.tile.splat %cst_5 : f32 -> !pk.tile<64x64xf32>
        %29 = pk.tile.select %27, %17, %28 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %30 = pk.tile.reduce_rows <max> %29 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %31 = pk.tile.map <max> %arg10, %30 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %32 = pk.tile.map <sub> %29, %31 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %33 = pk.tile.map <exp> %32 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %34 = pk.tile.map <sub> %arg10, %31 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %35 = pk.tile.map <exp> %34 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %36 = pk.tile.map <mul> %arg8, %35 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %37 = pk.tile.reduce_rows <sum> %33 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %38 = pk.tile.map <add> %36, %37 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %39 = pk.tile.cast %33 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %c0_6 = arith.constant 0 : index
        %40 = pk.tile.load %arg2[%arg7, %c0_6] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16>
        %41 = pk.tile.map <mul> %arg9, %35 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %42 = pk.tile.mma %39, %40, %41 : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        scf.yield %38, %42, %31 : !pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>
      }
      %9 = pk.tile.map <div> %8#1, %8#0 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
      %10 = pk.tile.cast %9 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
      %c0_2 = arith.constant 0 : index
      pk.tile.store %10, %arg3[%arg6, %c0_2] : !pk.tile<64x64xbf16>, !pk.tensor<?x?xbf16>
      %11 = pk.tile.map <log> %8#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %12 = pk.tile.map <add> %8#2, %11 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %c0_3 = arith.constant 0 : index
      pk.tile.store %12, %arg4[%arg6, %c0_3] : !pk.tile<64x1xf32>, !pk.tensor<?x?xf32>
    }
    pk.return
  }
  pk.kernel @attention_d128(%arg0: !pk.tensor<?x?xbf16>, %arg1: !pk.tensor<?x?xbf16>, %arg2: !pk.tensor<?x?xbf16>, %arg3: !pk.tensor<?x?xbf16>, %arg4: !pk.tensor<?x?xf32>, %arg5: f32) {
    %0 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg6) to (%0) step [64] {
      %c0 = arith.constant 0 : index
      %1 = pk.tile.load %arg0[%arg6, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<64x128xbf16>
      %2 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %3 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %4 = pk.tile.map <sub> %2, %3 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %5 = pk.tile.zeros : !pk.tile<64x1xf32>
      %6 = pk.tile.zeros : !pk.tile<64x128xf32>
      %c0_0 = arith.constant 0 : index
      %7 = pk.dim %arg1, 0 : !pk.tensor<?x?xbf16>
      %c64 = arith.constant 64 : index
      %8:3 = scf.for %arg7 = %c0_0 to %7 step %c64 iter_args(%arg8 = %5, %arg9 = %6, %arg10 = %4) -> (!pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>) {
        %c0_3 = arith.constant 0 : index
        %13 = pk.tile.load %arg1[%arg7, %c0_3] : !pk.tensor<?x?xbf16> -> !pk.tile<64x128xbf16>
        %14 = pk.tile.zeros : !pk.tile<64x64xf32>
        %15 = pk.tile.mma %1, %13, %14 {transpose_b} : !pk.tile<64x128xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x64xf32>
        %16 = pk.tile.splat %arg5 : f32 -> !pk.tile<64x64xf32>
        %17 = pk.tile.map <mul> %15, %16 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %18 = pk.tile.iota %arg7 dim 1 : !pk.tile<64x64xf32>
        %19 = pk.dim %arg1, 0 : !pk.tensor<?x?xbf16>
        %20 = arith.index_cast %19 : index to i64
        %21 = arith.sitofp %20 : i64 to f32
        %22 = pk.tile.splat %21 : f32 -> !pk.tile<64x64xf32>
        %23 = pk.tile.map <lt> %18, %22 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_4 = arith.constant -1.000000e+30 : f32
        %24 = pk.tile.splat %cst_4 : f32 -> !pk.tile<64x64xf32>
        %25 = pk.tile.select %23, %17, %24 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %26 = pk.tile.reduce_rows <max> %25 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %27 = pk.tile.map <max> %arg10, %26 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %28 = pk.tile.map <sub> %25, %27 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %29 = pk.tile.map <exp> %28 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %30 = pk.tile.map <sub> %arg10, %27 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %31 = pk.tile.map <exp> %30 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %32 = pk.tile.map <mul> %arg8, %31 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %33 = pk.tile.reduce_rows <sum> %29 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %34 = pk.tile.map <add> %32, %33 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %35 = pk.tile.cast %29 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %c0_5 = arith.constant 0 : index
        %36 = pk.tile.load %arg2[%arg7, %c0_5] : !pk.tensor<?x?xbf16> -> !pk.tile<64x128xbf16>
        %37 = pk.tile.map <mul> %arg9, %31 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %38 = pk.tile.mma %35, %36, %37 : !pk.tile<64x64xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x128xf32>
        scf.yield %34, %38, %27 : !pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>
      }
      %9 = pk.tile.map <div> %8#1, %8#0 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
      %10 = pk.tile.cast %9 : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
      %c0_1 = arith.constant 0 : index
      pk.tile.store %10, %arg3[%arg6, %c0_1] : !pk.tile<64x128xbf16>, !pk.tensor<?x?xbf16>
      %11 = pk.tile.map <log> %8#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %12 = pk.tile.map <add> %8#2, %11 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %c0_2 = arith.constant 0 : index
      pk.tile.store %12, %arg4[%arg6, %c0_2] : !pk.tile<64x1xf32>, !pk.tensor<?x?xf32>
    }
    pk.return
  }
  pk.kernel @attention_causal_d128(%arg0: !pk.tensor<?x?xbf16>, %arg1: !pk.tensor<?x?xbf16>, %arg2: !pk.tensor<?x?xbf16>, %arg3: !pk.tensor<?x?xbf16>, %arg4: !pk.tensor<?x?xf32>, %arg5: f32) {
    %0 = pk.dim %arg0, 0 : !pk.tensor<?x?xbf16>
    pk.tile.foreach (%arg6) to (%0) step [64] {
      %c0 = arith.constant 0 : index
      %1 = pk.tile.load %arg0[%arg6, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<64x128xbf16>
      %2 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %3 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %4 = pk.tile.map <sub> %2, %3 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %5 = pk.tile.zeros : !pk.tile<64x1xf32>
      %6 = pk.tile.zeros : !pk.tile<64x128xf32>
      %c0_0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %7 = arith.addi %arg6, %c64 : index
      %c64_1 = arith.constant 64 : index
      %8:3 = scf.for %arg7 = %c0_0 to %7 step %c64_1 iter_args(%arg8 = %5, %arg9 = %6, %arg10 = %4) -> (!pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>) {
        %c0_4 = arith.constant 0 : index
        %13 = pk.tile.load %arg1[%arg7, %c0_4] : !pk.tensor<?x?xbf16> -> !pk.tile<64x128xbf16>
        %14 = pk.tile.zeros : !pk.tile<64x64xf32>
        %15 = pk.tile.mma %1, %13, %14 {transpose_b} : !pk.tile<64x128xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x64xf32>
        %16 = pk.tile.splat %arg5 : f32 -> !pk.tile<64x64xf32>
        %17 = pk.tile.map <mul> %15, %16 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %18 = pk.tile.iota %arg7 dim 1 : !pk.tile<64x64xf32>
        %19 = pk.tile.iota %arg6 dim 0 : !pk.tile<64x64xf32>
        %20 = pk.tile.map <le> %18, %19 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %21 = pk.tile.iota %arg7 dim 1 : !pk.tile<64x64xf32>
        %22 = pk.dim %arg1, 0 : !pk.tensor<?x?xbf16>
        %23 = arith.index_cast %22 : index to i64
        %24 = arith.sitofp %23 : i64 to f32
        %25 = pk.tile.splat %24 : f32 -> !pk.tile<64x64xf32>
        %26 = pk.tile.map <lt> %21, %25 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %27 = pk.tile.map <mul> %20, %26 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_5 = arith.constant -1.000000e+30 : f32
        %28 = pk.tile.splat %cst_5 : f32 -> !pk.tile<64x64xf32>
        %29 = pk.tile.select %27, %17, %28 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %30 = pk.tile.reduce_rows <max> %29 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %31 = pk.tile.map <max> %arg10, %30 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %32 = pk.tile.map <sub> %29, %31 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %33 = pk.tile.map <exp> %32 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %34 = pk.tile.map <sub> %arg10, %31 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %35 = pk.tile.map <exp> %34 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %36 = pk.tile.map <mul> %arg8, %35 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %37 = pk.tile.reduce_rows <sum> %33 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %38 = pk.tile.map <add> %36, %37 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %39 = pk.tile.cast %33 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %c0_6 = arith.constant 0 : index
        %40 = pk.tile.load %arg2[%arg7, %c0_6] : !pk.tensor<?x?xbf16> -> !pk.tile<64x128xbf16>
        %41 = pk.tile.map <mul> %arg9, %35 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %42 = pk.tile.mma %39, %40, %41 : !pk.tile<64x64xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x128xf32>
        scf.yield %38, %42, %31 : !pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>
      }
      %9 = pk.tile.map <div> %8#1, %8#0 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
      %10 = pk.tile.cast %9 : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
      %c0_2 = arith.constant 0 : index
      pk.tile.store %10, %arg3[%arg6, %c0_2] : !pk.tile<64x128xbf16>, !pk.tensor<?x?xbf16>
      %11 = pk.tile.map <log> %8#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %12 = pk.tile.map <add> %8#2, %11 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %c0_3 = arith.constant 0 : index
      pk.tile.store %12, %arg4[%arg6, %c0_3] : !pk.tile<64x1xf32>, !pk.tensor<?x?xf32>
    }
    pk.return
  }
}
