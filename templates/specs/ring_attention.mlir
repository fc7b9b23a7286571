// Ring attention (see ring_attention.pk.cpp for what each kernel computes): the .mlir twin of
// ring_attention.pk.cpp, as `pkc ring_attention.pk.cpp --emit=mlir` writes it;
// test/Frontend/twins.test checks that both lower to the same device IR.
module {
  pk.kernel @ring_attention_d64(%arg0: !pk.tensor<?x?x?xbf16>, %arg1: !pk.sym<?x?x?xbf16>, %arg2: !pk.sym<?x?x?xbf16>, %arg3: !pk.tensor<?x?x?xbf16>, %arg4: !pk.tensor<?x?x?xf32>, %arg5: !pk.tensor<?x?x?xbf16>, %arg6: !pk.tensor<?x?x?xf32>, %arg7: f32) {
    %0 = pk.dim %arg0, 0 : !pk.tensor<?x?x?xbf16>
    %1 = pk.dim %arg0, 1 : !pk.tensor<?x?x?xbf16>
    %c0 = arith.constant 0 : index
    %2 = pk.world_size
    %c1 = arith.constant 1 : index
    %3 = arith.subi %2, %c1 : index
    %c1_0 = arith.constant 1 : index
    %4 = arith.minsi %3, %c1_0 : index
    %5 = arith.muli %0, %4 : index
    pk.tile.foreach (%arg8, %arg9) to (%5, %1) step [1, 64] {
      %7 = pk.rank
      %8 = pk.world_size
      %c1_3 = arith.constant 1 : index
      %9 = arith.addi %7, %c1_3 : index
      %10 = arith.remsi %9, %8 : index
      %11 = arith.addi %c0, %arg8 : index
      %c0_4 = arith.constant 0 : index
      %12 = pk.tile.load %arg1[%11, %arg9, %c0_4] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
      %13 = arith.addi %0, %arg8 : index
      %c0_5 = arith.constant 0 : index
      pk.coll.store_tile %12, %arg1[%13, %arg9, %c0_5] on %10 : !pk.tile<1x64x64xbf16>, !pk.sym<?x?x?xbf16>
      %14 = pk.rank
      %15 = pk.world_size
      %c1_6 = arith.constant 1 : index
      %16 = arith.addi %14, %c1_6 : index
      %17 = arith.remsi %16, %15 : index
      %18 = arith.addi %c0, %arg8 : index
      %c0_7 = arith.constant 0 : index
      %19 = pk.tile.load %arg2[%18, %arg9, %c0_7] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
      %20 = arith.addi %0, %arg8 : index
      %c0_8 = arith.constant 0 : index
      pk.coll.store_tile %19, %arg2[%20, %arg9, %c0_8] on %17 : !pk.tile<1x64x64xbf16>, !pk.sym<?x?x?xbf16>
    }
    pk.tile.foreach (%arg8, %arg9) to (%0, %1) step [1, 64] {
      %c0_3 = arith.constant 0 : index
      %7 = pk.tile.load %arg0[%arg8, %arg9, %c0_3] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
      %8 = pk.tile.reshape %7 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
      %9 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %10 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %11 = pk.tile.map <sub> %9, %10 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %12 = pk.tile.zeros : !pk.tile<64x1xf32>
      %13 = pk.tile.zeros : !pk.tile<64x64xf32>
      %c0_4 = arith.constant 0 : index
      %14 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
      %c64 = arith.constant 64 : index
      %15:3 = scf.for %arg10 = %c0_4 to %14 step %c64 iter_args(%arg11 = %12, %arg12 = %13, %arg13 = %11) -> (!pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>) {
        %22 = arith.addi %c0, %arg8 : index
        %c0_7 = arith.constant 0 : index
        %23 = pk.tile.load %arg1[%22, %arg10, %c0_7] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %24 = pk.tile.reshape %23 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %25 = pk.tile.zeros : !pk.tile<64x64xf32>
        %26 = pk.tile.mma %8, %24, %25 {transpose_b} : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        %27 = pk.tile.splat %arg7 : f32 -> !pk.tile<64x64xf32>
        %28 = pk.tile.map <mul> %26, %27 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %29 = pk.tile.iota %arg10 dim 1 : !pk.tile<64x64xf32>
        %30 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
        %31 = arith.index_cast %30 : index to i64
        %32 = arith.sitofp %31 : i64 to f32
        %33 = pk.tile.splat %32 : f32 -> !pk.tile<64x64xf32>
        %34 = pk.tile.map <lt> %29, %33 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_8 = arith.constant -1.000000e+30 : f32
        %35 = pk.tile.splat %cst_8 : f32 -> !pk.tile<64x64xf32>
        %36 = pk.tile.select %34, %28, %35 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %37 = pk.tile.reduce_rows <max> %36 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %38 = pk.tile.map <max> %arg13, %37 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %39 = pk.tile.map <sub> %36, %38 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %40 = pk.tile.map <exp> %39 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %41 = pk.tile.map <sub> %arg13, %38 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %42 = pk.tile.map <exp> %41 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %43 = pk.tile.map <mul> %arg11, %42 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %44 = pk.tile.reduce_rows <sum> %40 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %45 = pk.tile.map <add> %43, %44 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %46 = pk.tile.cast %40 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %47 = arith.addi %c0, %arg8 : index
        %c0_9 = arith.constant 0 : index
        %48 = pk.tile.load %arg2[%47, %arg10, %c0_9] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %49 = pk.tile.reshape %48 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %50 = pk.tile.map <mul> %arg12, %42 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %51 = pk.tile.mma %46, %49, %50 : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        scf.yield %45, %51, %38 : !pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>
      }
      %16 = pk.tile.map <div> %15#1, %15#0 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
      %17 = pk.tile.cast %16 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
      %18 = pk.tile.reshape %17 : !pk.tile<64x64xbf16> -> !pk.tile<1x64x64xbf16>
      %c0_5 = arith.constant 0 : index
      pk.tile.store %18, %arg3[%arg8, %arg9, %c0_5] : !pk.tile<1x64x64xbf16>, !pk.tensor<?x?x?xbf16>
      %19 = pk.tile.map <log> %15#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %20 = pk.tile.map <add> %15#2, %19 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %21 = pk.tile.reshape %20 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
      %c0_6 = arith.constant 0 : index
      pk.tile.store %21, %arg4[%arg8, %arg9, %c0_6] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
    }
    %c1_1 = arith.constant 1 : index
    %6 = pk.world_size
    %c1_2 = arith.constant 1 : index
    scf.for %arg8 = %c1_1 to %6 step %c1_2 {
      %c2 = arith.constant 2 : index
      %7 = arith.remsi %arg8, %c2 : index
      %8 = arith.muli %7, %0 : index
      %c1_3 = arith.constant 1 : index
      %9 = arith.addi %arg8, %c1_3 : index
      %c2_4 = arith.constant 2 : index
      %10 = arith.remsi %9, %c2_4 : index
      %11 = arith.muli %10, %0 : index
      %12 = pk.world_size
      %c1_5 = arith.constant 1 : index
      %13 = arith.subi %12, %c1_5 : index
      %14 = arith.subi %13, %arg8 : index
      %c1_6 = arith.constant 1 : index
      %15 = arith.minsi %14, %c1_6 : index
      %16 = arith.muli %0, %15 : index
      pk.tile.foreach (%arg9, %arg10) to (%16, %1) step [1, 64] {
        %17 = pk.rank
        %18 = pk.world_size
        %c1_7 = arith.constant 1 : index
        %19 = arith.addi %17, %c1_7 : index
        %20 = arith.remsi %19, %18 : index
        %21 = arith.addi %8, %arg9 : index
        %c0_8 = arith.constant 0 : index
        %22 = pk.tile.load %arg1[%21, %arg10, %c0_8] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %23 = arith.addi %11, %arg9 : index
        %c0_9 = arith.constant 0 : index
        pk.coll.store_tile %22, %arg1[%23, %arg10, %c0_9] on %20 : !pk.tile<1x64x64xbf16>, !pk.sym<?x?x?xbf16>
        %24 = pk.rank
        %25 = pk.world_size
        %c1_10 = arith.constant 1 : index
        %26 = arith.addi %24, %c1_10 : index
        %27 = arith.remsi %26, %25 : index
        %28 = arith.addi %8, %arg9 : index
        %c0_11 = arith.constant 0 : index
        %29 = pk.tile.load %arg2[%28, %arg10, %c0_11] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %30 = arith.addi %11, %arg9 : index
        %c0_12 = arith.constant 0 : index
        pk.coll.store_tile %29, %arg2[%30, %arg10, %c0_12] on %27 : !pk.tile<1x64x64xbf16>, !pk.sym<?x?x?xbf16>
      }
      pk.tile.foreach (%arg9, %arg10) to (%0, %1) step [1, 64] {
        %c0_7 = arith.constant 0 : index
        %17 = pk.tile.load %arg0[%arg9, %arg10, %c0_7] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %18 = pk.tile.reshape %17 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %19 = pk.tile.zeros : !pk.tile<64x1xf32>
        %cst = arith.constant 1.000000e+30 : f32
        %20 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
        %21 = pk.tile.map <sub> %19, %20 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %22 = pk.tile.zeros : !pk.tile<64x1xf32>
        %23 = pk.tile.zeros : !pk.tile<64x64xf32>
        %c0_8 = arith.constant 0 : index
        %24 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
        %c64 = arith.constant 64 : index
        %25:3 = scf.for %arg11 = %c0_8 to %24 step %c64 iter_args(%arg12 = %22, %arg13 = %23, %arg14 = %21) -> (!pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>) {
          %32 = arith.addi %8, %arg9 : index
          %c0_11 = arith.constant 0 : index
          %33 = pk.tile.load %arg1[%32, %arg11, %c0_11] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
          %34 = pk.tile.reshape %33 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
          %35 = pk.tile.zeros : !pk.tile<64x64xf32>
          %36 = pk.tile.mma %18, %34, %35 {transpose_b} : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
          %37 = pk.tile.splat %arg7 : f32 -> !pk.tile<64x64xf32>
          %38 = pk.tile.map <mul> %36, %37 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %39 = pk.tile.iota %arg11 dim 1 : !pk.tile<64x64xf32>
          %40 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
          %41 = arith.index_cast %40 : index to i64
          %42 = arith.sitofp %41 : i64 to f32
          %43 = pk.tile.splat %42 : f32 -> !pk.tile<64x64xf32>
          %44 = pk.tile.map <lt> %39, %43 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %cst_12 = arith.constant -1.000000e+30 : f32
          %45 = pk.tile.splat %cst_12 : f32 -> !pk.tile<64x64xf32>
          %46 = pk.tile.select %44, %38, %45 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
          %47 = pk.tile.reduce_rows <max> %46 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
          %48 = pk.tile.map <max> %arg14, %47 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %49 = pk.tile.map <sub> %46, %48 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
          %50 = pk.tile.map <exp> %49 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %51 = pk.tile.map <sub> %arg14, %48 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %52 = pk.tile.map <exp> %51 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %53 = pk.tile.map <mul> %arg12, %52 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %54 = pk.tile.reduce_rows <sum> %50 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
          %55 = pk.tile.map <add> %53, %54 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %56 = pk.tile.cast %50 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
          %57 = arith.addi %8, %arg9 : index
          %c0_13 = arith.constant 0 : index
          %58 = pk.tile.load %arg2[%57, %arg11, %c0_13] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
          %59 = pk.tile.reshape %58 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
          %60 = pk.tile.map <mul> %arg13, %52 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
          %61 = pk.tile.mma %56, %59, %60 : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
          scf.yield %55, %61, %48 : !pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>
        }
        %26 = pk.tile.map <div> %25#1, %25#0 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %27 = pk.tile.cast %26 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %28 = pk.tile.reshape %27 : !pk.tile<64x64xbf16> -> !pk.tile<1x64x64xbf16>
        %c0_9 = arith.constant 0 : index
        pk.tile.store %28, %arg5[%arg9, %arg10, %c0_9] : !pk.tile<1x64x64xbf16>, !pk.tensor<?x?x?xbf16>
        %29 = pk.tile.map <log> %25#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %30 = pk.tile.map <add> %25#2, %29 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %31 = pk.tile.reshape %30 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
        %c0_10 = arith.constant 0 : index
        pk.tile.store %31, %arg6[%arg9, %arg10, %c0_10] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
      }
      pk.tile.foreach (%arg9, %arg10) to (%0, %1) step [1, 64] {
        %c0_7 = arith.constant 0 : index
        %17 = pk.tile.load %arg4[%arg9, %arg10, %c0_7] : !pk.tensor<?x?x?xf32> -> !pk.tile<1x64x1xf32>
        %18 = pk.tile.reshape %17 : !pk.tile<1x64x1xf32> -> !pk.tile<64x1xf32>
        %c0_8 = arith.constant 0 : index
        %19 = pk.tile.load %arg6[%arg9, %arg10, %c0_8] : !pk.tensor<?x?x?xf32> -> !pk.tile<1x64x1xf32>
        %20 = pk.tile.reshape %19 : !pk.tile<1x64x1xf32> -> !pk.tile<64x1xf32>
        %21 = pk.tile.map <max> %18, %20 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %22 = pk.tile.map <sub> %18, %21 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %23 = pk.tile.map <exp> %22 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %24 = pk.tile.map <sub> %20, %21 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %25 = pk.tile.map <exp> %24 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %c0_9 = arith.constant 0 : index
        %26 = pk.tile.load %arg3[%arg9, %arg10, %c0_9] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %27 = pk.tile.reshape %26 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %28 = pk.tile.cast %27 : !pk.tile<64x64xbf16> to !pk.tile<64x64xf32>
        %29 = pk.tile.map <mul> %28, %23 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %c0_10 = arith.constant 0 : index
        %30 = pk.tile.load %arg5[%arg9, %arg10, %c0_10] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %31 = pk.tile.reshape %30 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %32 = pk.tile.cast %31 : !pk.tile<64x64xbf16> to !pk.tile<64x64xf32>
        %33 = pk.tile.map <mul> %32, %25 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %34 = pk.tile.map <add> %29, %33 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %35 = pk.tile.map <add> %23, %25 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %36 = pk.tile.map <div> %34, %35 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %37 = pk.tile.cast %36 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %38 = pk.tile.reshape %37 : !pk.tile<64x64xbf16> -> !pk.tile<1x64x64xbf16>
        %c0_11 = arith.constant 0 : index
        pk.tile.store %38, %arg3[%arg9, %arg10, %c0_11] : !pk.tile<1x64x64xbf16>, !pk.tensor<?x?x?xbf16>
        %39 = pk.tile.map <add> %23, %25 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %40 = pk.tile.map <log> %39 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %41 = pk.tile.map <add> %21, %40 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %42 = pk.tile.reshape %41 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
        %c0_12 = arith.constant 0 : index
        pk.tile.store %42, %arg4[%arg9, %arg10, %c0_12] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
      }
    }
    pk.return
  }
  pk.kernel @ring_attention_d128(%arg0: !pk.tensor<?x?x?xbf16>, %arg1: !pk.sym<?x?x?xbf16>, %arg2: !pk.sym<?x?x?xbf16>, %arg3: !pk.tensor<?x?x?xbf16>, %arg4: !pk.tensor<?x?x?xf32>, %arg5: !pk.tensor<?x?x?xbf16>, %arg6: !pk.tensor<?x?x?xf32>, %arg7: f32) {
    %0 = pk.dim %arg0, 0 : !pk.tensor<?x?x?xbf16>
    %1 = pk.dim %arg0, 1 : !pk.tensor<?x?x?xbf16>
    %c0 = arith.constant 0 : index
    %2 = pk.world_size
    %c1 = arith.constant 1 : index
    %3 = arith.subi %2, %c1 : index
    %c1_0 = arith.constant 1 : index
    %4 = arith.minsi %3, %c1_0 : index
    %5 = arith.muli %0, %4 : index
    pk.tile.foreach (%arg8, %arg9) to (%5, %1) step [1, 64] {
      %7 = pk.rank
      %8 = pk.world_size
      %c1_3 = arith.constant 1 : index
      %9 = arith.addi %7, %c1_3 : index
      %10 = arith.remsi %9, %8 : index
      %11 = arith.addi %c0, %arg8 : index
      %c0_4 = arith.constant 0 : index
      %12 = pk.tile.load %arg1[%11, %arg9, %c0_4] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
      %13 = arith.addi %0, %arg8 : index
      %c0_5 = arith.constant 0 : index
      pk.coll.store_tile %12, %arg1[%13, %arg9, %c0_5] on %10 : !pk.tile<1x64x128xbf16>, !pk.sym<?x?x?xbf16>
      %14 = pk.rank
      %15 = pk.world_size
      %c1_6 = arith.constant 1 : index
      %16 = arith.addi %14, %c1_6 : index
      %17 = arith.remsi %16, %15 : index
      %18 = arith.addi %c0, %arg8 : index
      %c0_7 = arith.constant 0 : index
      %19 = pk.tile.load %arg2[%18, %arg9, %c0_7] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
      %20 = arith.addi %0, %arg8 : index
      %c0_8 = arith.constant 0 : index
      pk.coll.store_tile %19, %arg2[%20, %arg9, %c0_8] on %17 : !pk.tile<1x64x128xbf16>, !pk.sym<?x?x?xbf16>
    }
    pk.tile.foreach (%arg8, %arg9) to (%0, %1) step [1, 64] {
      %c0_3 = arith.constant 0 : index
      %7 = pk.tile.load %arg0[%arg8, %arg9, %c0_3] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
      %8 = pk.tile.reshape %7 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
      %9 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %10 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %11 = pk.tile.map <sub> %9, %10 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %12 = pk.tile.zeros : !pk.tile<64x1xf32>
      %13 = pk.tile.zeros : !pk.tile<64x128xf32>
      %c0_4 = arith.constant 0 : index
      %14 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
      %c64 = arith.constant 64 : index
      %15:3 = scf.for %arg10 = %c0_4 to %14 step %c64 iter_args(%arg11 = %12, %arg12 = %13, %arg13 = %11) -> (!pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>) {
        %22 = arith.addi %c0, %arg8 : index
        %c0_7 = arith.constant 0 : index
        %23 = pk.tile.load %arg1[%22, %arg10, %c0_7] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %24 = pk.tile.reshape %23 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %25 = pk.tile.zeros : !pk.tile<64x64xf32>
        %26 = pk.tile.mma %8, %24, %25 {transpose_b} : !pk.tile<64x128xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x64xf32>
        %27 = pk.tile.splat %arg7 : f32 -> !pk.tile<64x64xf32>
        %28 = pk.tile.map <mul> %26, %27 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %29 = pk.tile.iota %arg10 dim 1 : !pk.tile<64x64xf32>
        %30 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
        %31 = arith.index_cast %30 : index to i64
        %32 = arith.sitofp %31 : i64 to f32
        %33 = pk.tile.splat %32 : f32 -> !pk.tile<64x64xf32>
        %34 = pk.tile.map <lt> %29, %33 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_8 = arith.constant -1.000000e+30 : f32
        %35 = pk.tile.splat %cst_8 : f32 -> !pk.tile<64x64xf32>
        %36 = pk.tile.select %34, %28, %35 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %37 = pk.tile.reduce_rows <max> %36 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %38 = pk.tile.map <max> %arg13, %37 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %39 = pk.tile.map <sub> %36, %38 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %40 = pk.tile.map <exp> %39 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %41 = pk.tile.map <sub> %arg13, %38 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %42 = pk.tile.map <exp> %41 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %43 = pk.tile.map <mul> %arg11, %42 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %44 = pk.tile.reduce_rows <sum> %40 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %45 = pk.tile.map <add> %43, %44 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %46 = pk.tile.cast %40 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %47 = arith.addi %c0, %arg8 : index
        %c0_9 = arith.constant 0 : index
        %48 = pk.tile.load %arg2[%47, %arg10, %c0_9] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %49 = pk.tile.reshape %48 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %50 = pk.tile.map <mul> %arg12, %42 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %51 = pk.tile.mma %46, %49, %50 : !pk.tile<64x64xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x128xf32>
        scf.yield %45, %51, %38 : !pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>
      }
      %16 = pk.tile.map <div> %15#1, %15#0 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
      %17 = pk.tile.cast %16 : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
      %18 = pk.tile.reshape %17 : !pk.tile<64x128xbf16> -> !pk.tile<1x64x128xbf16>
      %c0_5 = arith.constant 0 : index
      pk.tile.store %18, %arg3[%arg8, %arg9, %c0_5] : !pk.tile<1x64x128xbf16>, !pk.tensor<?x?x?xbf16>
      %19 = pk.tile.map <log> %15#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %20 = pk.tile.map <add> %15#2, %19 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %21 = pk.tile.reshape %20 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
      %c0_6 = arith.constant 0 : index
      pk.tile.store %21, %arg4[%arg8, %arg9, %c0_6] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
    }
    %c1_1 = arith.constant 1 : index
    %6 = pk.world_size
    %c1_2 = arith.constant 1 : index
    scf.for %arg8 = %c1_1 to %6 step %c1_2 {
      %c2 = arith.constant 2 : index
      %7 = arith.remsi %arg8, %c2 : index
      %8 = arith.muli %7, %0 : index
      %c1_3 = arith.constant 1 : index
      %9 = arith.addi %arg8, %c1_3 : index
      %c2_4 = arith.constant 2 : index
      %10 = arith.remsi %9, %c2_4 : index
      %11 = arith.muli %10, %0 : index
      %12 = pk.world_size
      %c1_5 = arith.constant 1 : index
      %13 = arith.subi %12, %c1_5 : index
      %14 = arith.subi %13, %arg8 : index
      %c1_6 = arith.constant 1 : index
      %15 = arith.minsi %14, %c1_6 : index
      %16 = arith.muli %0, %15 : index
      pk.tile.foreach (%arg9, %arg10) to (%16, %1) step [1, 64] {
        %17 = pk.rank
        %18 = pk.world_size
        %c1_7 = arith.constant 1 : index
        %19 = arith.addi %17, %c1_7 : index
        %20 = arith.remsi %19, %18 : index
        %21 = arith.addi %8, %arg9 : index
        %c0_8 = arith.constant 0 : index
        %22 = pk.tile.load %arg1[%21, %arg10, %c0_8] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %23 = arith.addi %11, %arg9 : index
        %c0_9 = arith.constant 0 : index
        pk.coll.store_tile %22, %arg1[%23, %arg10, %c0_9] on %20 : !pk.tile<1x64x128xbf16>, !pk.sym<?x?x?xbf16>
        %24 = pk.rank
        %25 = pk.world_size
        %c1_10 = arith.constant 1 : index
        %26 = arith.addi %24, %c1_10 : index
        %27 = arith.remsi %26, %25 : index
        %28 = arith.addi %8, %arg9 : index
        %c0_11 = arith.constant 0 : index
        %29 = pk.tile.load %arg2[%28, %arg10, %c0_11] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %30 = arith.addi %11, %arg9 : index
        %c0_12 = arith.constant 0 : index
        pk.coll.store_tile %29, %arg2[%30, %arg10, %c0_12] on %27 : !pk.tile<1x64x128xbf16>, !pk.sym<?x?x?xbf16>
      }
      pk.tile.foreach (%arg9, %arg10) to (%0, %1) step [1, 64] {
        %c0_7 = arith.constant 0 : index
        %17 = pk.tile.load %arg0[%arg9, %arg10, %c0_7] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %18 = pk.tile.reshape %17 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %19 = pk.tile.zeros : !pk.tile<64x1xf32>
        %cst = arith.constant 1.000000e+30 : f32
        %20 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
        %21 = pk.tile.map <sub> %19, %20 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %22 = pk.tile.zeros : !pk.tile<64x1xf32>
        %23 = pk.tile.zeros : !pk.tile<64x128xf32>
        %c0_8 = arith.constant 0 : index
        %24 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
        %c64 = arith.constant 64 : index
        %25:3 = scf.for %arg11 = %c0_8 to %24 step %c64 iter_args(%arg12 = %22, %arg13 = %23, %arg14 = %21) -> (!pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>) {
          %32 = arith.addi %8, %arg9 : index
          %c0_11 = arith.constant 0 : index
          %33 = pk.tile.load %arg1[%32, %arg11, %c0_11] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
          %34 = pk.tile.reshape %33 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
          %35 = pk.tile.zeros : !pk.tile<64x64xf32>
          %36 = pk.tile.mma %18, %34, %35 {transpose_b} : !pk.tile<64x128xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x64xf32>
          %37 = pk.tile.splat %arg7 : f32 -> !pk.tile<64x64xf32>
          %38 = pk.tile.map <mul> %36, %37 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %39 = pk.tile.iota %arg11 dim 1 : !pk.tile<64x64xf32>
          %40 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
          %41 = arith.index_cast %40 : index to i64
          %42 = arith.sitofp %41 : i64 to f32
          %43 = pk.tile.splat %42 : f32 -> !pk.tile<64x64xf32>
          %44 = pk.tile.map <lt> %39, %43 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %cst_12 = arith.constant -1.000000e+30 : f32
          %45 = pk.tile.splat %cst_12 : f32 -> !pk.tile<64x64xf32>
          %46 = pk.tile.select %44, %38, %45 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
          %47 = pk.tile.reduce_rows <max> %46 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
          %48 = pk.tile.map <max> %arg14, %47 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %49 = pk.tile.map <sub> %46, %48 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
          %50 = pk.tile.map <exp> %49 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %51 = pk.tile.map <sub> %arg14, %48 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %52 = pk.tile.map <exp> %51 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %53 = pk.tile.map <mul> %arg12, %52 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %54 = pk.tile.reduce_rows <sum> %50 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
          %55 = pk.tile.map <add> %53, %54 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %56 = pk.tile.cast %50 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
          %57 = arith.addi %8, %arg9 : index
          %c0_13 = arith.constant 0 : index
          %58 = pk.tile.load %arg2[%57, %arg11, %c0_13] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
          %59 = pk.tile.reshape %58 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
          %60 = pk.tile.map <mul> %arg13, %52 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
          %61 = pk.tile.mma %56, %59, %60 : !pk.tile<64x64xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x128xf32>
          scf.yield %55, %61, %48 : !pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>
        }
        %26 = pk.tile.map <div> %25#1, %25#0 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %27 = pk.tile.cast %26 : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
        %28 = pk.tile.reshape %27 : !pk.tile<64x128xbf16> -> !pk.tile<1x64x128xbf16>
        %c0_9 = arith.constant 0 : index
        pk.tile.store %28, %arg5[%arg9, %arg10, %c0_9] : !pk.tile<1x64x128xbf16>, !pk.tensor<?x?x?xbf16>
        %29 = pk.tile.map <log> %25#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %30 = pk.tile.map <add> %25#2, %29 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %31 = pk.tile.reshape %30 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
        %c0_10 = arith.constant 0 : index
        pk.tile.store %31, %arg6[%arg9, %arg10, %c0_10] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
      }
      pk.tile.foreach (%arg9, %arg10) to (%0, %1) step [1, 64] {
        %c0_7 = arith.constant 0 : index
        %17 = pk.tile.load %arg4[%arg9, %arg10, %c0_7] : !pk.tensor<?x?x?xf32> -> !pk.tile<1x64x1xf32>
        %18 = pk.tile.reshape %17 : !pk.tile<1x64x1xf32> -> !pk.tile<64x1xf32>
        %c0_8 = arith.constant 0 : index
        %19 = pk.tile.load %arg6[%arg9, %arg10, %c0_8] : !pk.tensor<?x?x?xf32> -> !pk.tile<1x64x1xf32>
        %20 = pk.tile.reshape %19 : !pk.tile<1x64x1xf32> -> !pk.tile<64x1xf32>
        %21 = pk.tile.map <max> %18, %20 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %22 = pk.tile.map <sub> %18, %21 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %23 = pk.tile.map <exp> %22 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %24 = pk.tile.map <sub> %20, %21 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %25 = pk.tile.map <exp> %24 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %c0_9 = arith.constant 0 : index
        %26 = pk.tile.load %arg3[%arg9, %arg10, %c0_9] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %27 = pk.tile.reshape %26 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %28 = pk.tile.cast %27 : !pk.tile<64x128xbf16> to !pk.tile<64x128xf32>
        %29 = pk.tile.map <mul> %28, %23 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %c0_10 = arith.constant 0 : index
        %30 = pk.tile.load %arg5[%arg9, %arg10, %c0_10] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %31 = pk.tile.reshape %30 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %32 = pk.tile.cast %31 : !pk.tile<64x128xbf16> to !pk.tile<64x128xf32>
        %33 = pk.tile.map <mul> %32, %25 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %34 = pk.tile.map <add> %29, %33 : !pk.tile<64x128xf32>, !pk.tile<64x128xf32> -> !pk.tile<64x128xf32>
        %35 = pk.tile.map <add> %23, %25 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %36 = pk.tile.map <div> %34, %35 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %37 = pk.tile.cast %36 : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
        %38 = pk.tile.reshape %37 : !pk.tile<64x128xbf16> -> !pk.tile<1x64x128xbf16>
        %c0_11 = arith.constant 0 : index
        pk.tile.store %38, %arg3[%arg9, %arg10, %c0_11] : !pk.tile<1x64x128xbf16>, !pk.tensor<?x?x?xbf16>
        %39 = pk.tile.map <add> %23, %25 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %40 = pk.tile.map <log> %39 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %41 = pk.tile.map <add> %21, %40 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %42 = pk.tile.reshape %41 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
        %c0_12 = arith.constant 0 : index
        pk.tile.store %42, %arg4[%arg9, %arg10, %c0_12] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
      }
    }
    pk.return
  }
  pk.kernel @ring_attention_causal_d64(%arg0: !pk.tensor<?x?x?xbf16>, %arg1: !pk.sym<?x?x?xbf16>, %arg2: !pk.sym<?x?x?xbf16>, %arg3: !pk.tensor<?x?x?xbf16>, %arg4: !pk.tensor<?x?x?xf32>, %arg5: !pk.tensor<?x?x?xbf16>, %arg6: !pk.tensor<?x?x?xf32>, %arg7: f32) {
    %0 = pk.dim %arg0, 0 : !pk.tensor<?x?x?xbf16>
    %1 = pk.dim %arg0, 1 : !pk.tensor<?x?x?xbf16>
    %c0 = arith.constant 0 : index
    %2 = pk.world_size
    %c1 = arith.constant 1 : index
    %3 = arith.subi %2, %c1 : index
    %c1_0 = arith.constant 1 : index
    %4 = arith.minsi %3, %c1_0 : index
    %5 = arith.muli %0, %4 : index
    pk.tile.foreach (%arg8, %arg9) to (%5, %1) step [1, 64] {
      %7 = pk.rank
      %8 = pk.world_size
      %c1_3 = arith.constant 1 : index
      %9 = arith.addi %7, %c1_3 : index
      %10 = arith.remsi %9, %8 : index
      %11 = arith.addi %c0, %arg8 : index
      %c0_4 = arith.constant 0 : index
      %12 = pk.tile.load %arg1[%11, %arg9, %c0_4] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
      %13 = arith.addi %0, %arg8 : index
      %c0_5 = arith.constant 0 : index
      pk.coll.store_tile %12, %arg1[%13, %arg9, %c0_5] on %10 : !pk.tile<1x64x64xbf16>, !pk.sym<?x?x?xbf16>
      %14 = pk.rank
      %15 = pk.world_size
      %c1_6 = arith.constant 1 : index
      %16 = arith.addi %14, %c1_6 : index
      %17 = arith.remsi %16, %15 : index
      %18 = arith.addi %c0, %arg8 : index
      %c0_7 = arith.constant 0 : index
      %19 = pk.tile.load %arg2[%18, %arg9, %c0_7] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
      %20 = arith.addi %0, %arg8 : index
      %c0_8 = arith.constant 0 : index
      pk.coll.store_tile %19, %arg2[%20, %arg9, %c0_8] on %17 : !pk.tile<1x64x64xbf16>, !pk.sym<?x?x?xbf16>
    }
    pk.tile.foreach (%arg8, %arg9) to (%0, %1) step [1, 64] {
      %c0_3 = arith.constant 0 : index
      %7 = pk.tile.load %arg0[%arg8, %arg9, %c0_3] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
      %8 = pk.tile.reshape %7 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
      %9 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %10 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %11 = pk.tile.map <sub> %9, %10 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %12 = pk.tile.zeros : !pk.tile<64x1xf32>
      %13 = pk.tile.zeros : !pk.tile<64x64xf32>
      %c0_4 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %14 = arith.addi %arg9, %c64 : index
      %c64_5 = arith.constant 64 : index
      %15:3 = scf.for %arg10 = %c0_4 to %14 step %c64_5 iter_args(%arg11 = %12, %arg12 = %13, %arg13 = %11) -> (!pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>) {
        %22 = arith.addi %c0, %arg8 : index
        %c0_8 = arith.constant 0 : index
        %23 = pk.tile.load %arg1[%22, %arg10, %c0_8] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %24 = pk.tile.reshape %23 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %25 = pk.tile.zeros : !pk.tile<64x64xf32>
        %26 = pk.tile.mma %8, %24, %25 {transpose_b} : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        %27 = pk.tile.splat %arg7 : f32 -> !pk.tile<64x64xf32>
        %28 = pk.tile.map <mul> %26, %27 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %29 = pk.tile.iota %arg10 dim 1 : !pk.tile<64x64xf32>
        %30 = pk.tile.iota %arg9 dim 0 : !pk.tile<64x64xf32>
        %31 = pk.tile.map <le> %29, %30 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %32 = pk.tile.iota %arg10 dim 1 : !pk.tile<64x64xf32>
        %33 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
        %34 = arith.index_cast %33 : index to i64
        %35 = arith.sitofp %34 : i64 to f32
        %36 = pk.tile.splat %35 : f32 -> !pk.tile<64x64xf32>
        %37 = pk.tile.map <lt> %32, %36 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %38 = pk.tile.map <mul> %31, %37 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_9 = arith.constant -1.000000e+30 : f32
        %39 = pk.tile.splat %cst_9 : f32 -> !pk.tile<64x64xf32>
        %40 = pk.tile.select %38, %28, %39 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %41 = pk.tile.reduce_rows <max> %40 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %42 = pk.tile.map <max> %arg13, %41 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %43 = pk.tile.map <sub> %40, %42 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %44 = pk.tile.map <exp> %43 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %45 = pk.tile.map <sub> %arg13, %42 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %46 = pk.tile.map <exp> %45 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %47 = pk.tile.map <mul> %arg11, %46 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %48 = pk.tile.reduce_rows <sum> %44 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %49 = pk.tile.map <add> %47, %48 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %50 = pk.tile.cast %44 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %51 = arith.addi %c0, %arg8 : index
        %c0_10 = arith.constant 0 : index
        %52 = pk.tile.load %arg2[%51, %arg10, %c0_10] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %53 = pk.tile.reshape %52 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %54 = pk.tile.map <mul> %arg12, %46 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %55 = pk.tile.mma %50, %53, %54 : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
        scf.yield %49, %55, %42 : !pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>
      }
      %16 = pk.tile.map <div> %15#1, %15#0 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
      %17 = pk.tile.cast %16 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
      %18 = pk.tile.reshape %17 : !pk.tile<64x64xbf16> -> !pk.tile<1x64x64xbf16>
      %c0_6 = arith.constant 0 : index
      pk.tile.store %18, %arg3[%arg8, %arg9, %c0_6] : !pk.tile<1x64x64xbf16>, !pk.tensor<?x?x?xbf16>
      %19 = pk.tile.map <log> %15#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %20 = pk.tile.map <add> %15#2, %19 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %21 = pk.tile.reshape %20 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
      %c0_7 = arith.constant 0 : index
      pk.tile.store %21, %arg4[%arg8, %arg9, %c0_7] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
    }
    %c1_1 = arith.constant 1 : index
    %6 = pk.world_size
    %c1_2 = arith.constant 1 : index
    scf.for %arg8 = %c1_1 to %6 step %c1_2 {
      %c2 = arith.constant 2 : index
      %7 = arith.remsi %arg8, %c2 : index
      %8 = arith.muli %7, %0 : index
      %c1_3 = arith.constant 1 : index
      %9 = arith.addi %arg8, %c1_3 : index
      %c2_4 = arith.constant 2 : index
      %10 = arith.remsi %9, %c2_4 : index
      %11 = arith.muli %10, %0 : index
      %12 = pk.world_size
      %c1_5 = arith.constant 1 : index
      %13 = arith.subi %12, %c1_5 : index
      %14 = arith.subi %13, %arg8 : index
      %c1_6 = arith.constant 1 : index
      %15 = arith.minsi %14, %c1_6 : index
      %16 = pk.rank
      %17 = pk.world_size
      %18 = arith.addi %16, %17 : index
      %19 = arith.subi %18, %arg8 : index
      %20 = pk.world_size
      %21 = arith.remsi %19, %20 : index
      %22 = pk.rank
      %23 = arith.subi %21, %22 : index
      %c0_7 = arith.constant 0 : index
      %24 = arith.maxsi %23, %c0_7 : index
      %c1_8 = arith.constant 1 : index
      %25 = arith.minsi %24, %c1_8 : index
      %26 = arith.muli %0, %15 : index
      pk.tile.foreach (%arg9, %arg10) to (%26, %1) step [1, 64] {
        %27 = pk.rank
        %28 = pk.world_size
        %c1_9 = arith.constant 1 : index
        %29 = arith.addi %27, %c1_9 : index
        %30 = arith.remsi %29, %28 : index
        %31 = arith.addi %8, %arg9 : index
        %c0_10 = arith.constant 0 : index
        %32 = pk.tile.load %arg1[%31, %arg10, %c0_10] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %33 = arith.addi %11, %arg9 : index
        %c0_11 = arith.constant 0 : index
        pk.coll.store_tile %32, %arg1[%33, %arg10, %c0_11] on %30 : !pk.tile<1x64x64xbf16>, !pk.sym<?x?x?xbf16>
        %34 = pk.rank
        %35 = pk.world_size
        %c1_12 = arith.constant 1 : index
        %36 = arith.addi %34, %c1_12 : index
        %37 = arith.remsi %36, %35 : index
        %38 = arith.addi %8, %arg9 : index
        %c0_13 = arith.constant 0 : index
        %39 = pk.tile.load %arg2[%38, %arg10, %c0_13] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %40 = arith.addi %11, %arg9 : index
        %c0_14 = arith.constant 0 : index
        pk.coll.store_tile %39, %arg2[%40, %arg10, %c0_14] on %37 : !pk.tile<1x64x64xbf16>, !pk.sym<?x?x?xbf16>
      }
      pk.tile.foreach (%arg9, %arg10) to (%0, %1) step [1, 64] {
        %c0_9 = arith.constant 0 : index
        %27 = pk.tile.load %arg0[%arg9, %arg10, %c0_9] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %28 = pk.tile.reshape %27 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %29 = pk.tile.zeros : !pk.tile<64x1xf32>
        %cst = arith.constant 1.000000e+30 : f32
        %30 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
        %31 = pk.tile.map <sub> %29, %30 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %32 = pk.tile.zeros : !pk.tile<64x1xf32>
        %33 = pk.tile.zeros : !pk.tile<64x64xf32>
        %c0_10 = arith.constant 0 : index
        %c64 = arith.constant 64 : index
        %34 = arith.addi %arg10, %c64 : index
        %c64_11 = arith.constant 64 : index
        %35:3 = scf.for %arg11 = %c0_10 to %34 step %c64_11 iter_args(%arg12 = %32, %arg13 = %33, %arg14 = %31) -> (!pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>) {
          %42 = arith.addi %8, %arg9 : index
          %c0_14 = arith.constant 0 : index
          %43 = pk.tile.load %arg1[%42, %arg11, %c0_14] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
          %44 = pk.tile.reshape %43 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
          %45 = pk.tile.zeros : !pk.tile<64x64xf32>
          %46 = pk.tile.mma %28, %44, %45 {transpose_b} : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
          %47 = pk.tile.splat %arg7 : f32 -> !pk.tile<64x64xf32>
          %48 = pk.tile.map <mul> %46, %47 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %49 = pk.tile.iota %arg11 dim 1 : !pk.tile<64x64xf32>
          %50 = pk.tile.iota %arg10 dim 0 : !pk.tile<64x64xf32>
          %51 = pk.tile.map <le> %49, %50 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %c1_15 = arith.constant 1 : index
          %52 = arith.subi %c1_15, %25 : index
          %53 = arith.index_cast %52 : index to i64
          %54 = arith.sitofp %53 : i64 to f32
          %55 = pk.tile.splat %54 : f32 -> !pk.tile<64x64xf32>
          %56 = pk.tile.map <add> %50, %55 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %57 = pk.tile.map <lt> %49, %56 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %58 = pk.tile.map <mul> %51, %57 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %59 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
          %60 = arith.index_cast %59 : index to i64
          %61 = arith.sitofp %60 : i64 to f32
          %62 = pk.tile.splat %61 : f32 -> !pk.tile<64x64xf32>
          %63 = pk.tile.map <lt> %49, %62 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %64 = pk.tile.map <mul> %58, %63 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %cst_16 = arith.constant -1.000000e+30 : f32
          %65 = pk.tile.splat %cst_16 : f32 -> !pk.tile<64x64xf32>
          %66 = pk.tile.select %64, %48, %65 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
          %67 = pk.tile.reduce_rows <max> %66 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
          %68 = pk.tile.map <max> %arg14, %67 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %69 = pk.tile.map <sub> %66, %68 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
          %70 = pk.tile.map <exp> %69 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %71 = pk.tile.map <sub> %arg14, %68 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %72 = pk.tile.map <exp> %71 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %73 = pk.tile.map <mul> %arg12, %72 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %74 = pk.tile.reduce_rows <sum> %70 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
          %75 = pk.tile.map <add> %73, %74 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %76 = pk.tile.cast %70 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
          %77 = arith.addi %8, %arg9 : index
          %c0_17 = arith.constant 0 : index
          %78 = pk.tile.load %arg2[%77, %arg11, %c0_17] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
          %79 = pk.tile.reshape %78 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
          %80 = pk.tile.map <mul> %arg13, %72 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
          %81 = pk.tile.mma %76, %79, %80 : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
          scf.yield %75, %81, %68 : !pk.tile<64x1xf32>, !pk.tile<64x64xf32>, !pk.tile<64x1xf32>
        }
        %36 = pk.tile.map <div> %35#1, %35#0 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %37 = pk.tile.cast %36 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %38 = pk.tile.reshape %37 : !pk.tile<64x64xbf16> -> !pk.tile<1x64x64xbf16>
        %c0_12 = arith.constant 0 : index
        pk.tile.store %38, %arg5[%arg9, %arg10, %c0_12] : !pk.tile<1x64x64xbf16>, !pk.tensor<?x?x?xbf16>
        %39 = pk.tile.map <log> %35#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %40 = pk.tile.map <add> %35#2, %39 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %41 = pk.tile.reshape %40 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
        %c0_13 = arith.constant 0 : index
        pk.tile.store %41, %arg6[%arg9, %arg10, %c0_13] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
      }
      pk.tile.foreach (%arg9, %arg10) to (%0, %1) step [1, 64] {
        %c0_9 = arith.constant 0 : index
        %27 = pk.tile.load %arg4[%arg9, %arg10, %c0_9] : !pk.tensor<?x?x?xf32> -> !pk.tile<1x64x1xf32>
        %28 = pk.tile.reshape %27 : !pk.tile<1x64x1xf32> -> !pk.tile<64x1xf32>
        %c0_10 = arith.constant 0 : index
        %29 = pk.tile.load %arg6[%arg9, %arg10, %c0_10] : !pk.tensor<?x?x?xf32> -> !pk.tile<1x64x1xf32>
        %30 = pk.tile.reshape %29 : !pk.tile<1x64x1xf32> -> !pk.tile<64x1xf32>
        %31 = pk.tile.map <max> %28, %30 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %32 = pk.tile.map <sub> %28, %31 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %33 = pk.tile.map <exp> %32 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %34 = pk.tile.map <sub> %30, %31 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %35 = pk.tile.map <exp> %34 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %c0_11 = arith.constant 0 : index
        %36 = pk.tile.load %arg3[%arg9, %arg10, %c0_11] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %37 = pk.tile.reshape %36 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %38 = pk.tile.cast %37 : !pk.tile<64x64xbf16> to !pk.tile<64x64xf32>
        %39 = pk.tile.map <mul> %38, %33 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %c0_12 = arith.constant 0 : index
        %40 = pk.tile.load %arg5[%arg9, %arg10, %c0_12] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x64xbf16>
        %41 = pk.tile.reshape %40 : !pk.tile<1x64x64xbf16> -> !pk.tile<64x64xbf16>
        %42 = pk.tile.cast %41 : !pk.tile<64x64xbf16> to !pk.tile<64x64xf32>
        %43 = pk.tile.map <mul> %42, %35 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %44 = pk.tile.map <add> %39, %43 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %45 = pk.tile.map <add> %33, %35 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %46 = pk.tile.map <div> %44, %45 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %47 = pk.tile.cast %46 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %48 = pk.tile.reshape %47 : !pk.tile<64x64xbf16> -> !pk.tile<1x64x64xbf16>
        %c0_13 = arith.constant 0 : index
        pk.tile.store %48, %arg3[%arg9, %arg10, %c0_13] : !pk.tile<1x64x64xbf16>, !pk.tensor<?x?x?xbf16>
        %49 = pk.tile.map <add> %33, %35 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %50 = pk.tile.map <log> %49 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %51 = pk.tile.map <add> %31, %50 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %52 = pk.tile.reshape %51 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
        %c0_14 = arith.constant 0 : index
        pk.tile.store %52, %arg4[%arg9, %arg10, %c0_14] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
      }
    }
    pk.return
  }
  pk.kernel @ring_attention_causal_d128(%arg0: !pk.tensor<?x?x?xbf16>, %arg1: !pk.sym<?x?x?xbf16>, %arg2: !pk.sym<?x?x?xbf16>, %arg3: !pk.tensor<?x?x?xbf16>, %arg4: !pk.tensor<?x?x?xf32>, %arg5: !pk.tensor<?x?x?xbf16>, %arg6: !pk.tensor<?x?x?xf32>, %arg7: f32) {
    %0 = pk.dim %arg0, 0 : !pk.tensor<?x?x?xbf16>
    %1 = pk.dim %arg0, 1 : !pk.tensor<?x?x?xbf16>
    %c0 = arith.constant 0 : index
    %2 = pk.world_size
    %c1 = arith.constant 1 : index
    %3 = arith.subi %2, %c1 : index
    %c1_0 = arith.constant 1 : index
    %4 = arith.minsi %3, %c1_0 : index
    %5 = arith.muli %0, %4 : index
    pk.tile.foreach (%arg8, %arg9) to (%5, %1) step [1, 64] {
      %7 = pk.rank
      %8 = pk.world_size
      %c1_3 = arith.constant 1 : index
      %9 = arith.addi %7, %c1_3 : index
      %10 = arith.remsi %9, %8 : index
      %11 = arith.addi %c0, %arg8 : index
      %c0_4 = arith.constant 0 : index
      %12 = pk.tile.load %arg1[%11, %arg9, %c0_4] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
      %13 = arith.addi %0, %arg8 : index
      %c0_5 = arith.constant 0 : index
      pk.coll.store_tile %12, %arg1[%13, %arg9, %c0_5] on %10 : !pk.tile<1x64x128xbf16>, !pk.sym<?x?x?xbf16>
      %14 = pk.rank
      %15 = pk.world_size
      %c1_6 = arith.constant 1 : index
      %16 = arith.addi %14, %c1_6 : index
      %17 = arith.remsi %16, %15 : index
      %18 = arith.addi %c0, %arg8 : index
      %c0_7 = arith.constant 0 : index
      %19 = pk.tile.load %arg2[%18, %arg9, %c0_7] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
      %20 = arith.addi %0, %arg8 : index
      %c0_8 = arith.constant 0 : index
      pk.coll.store_tile %19, %arg2[%20, %arg9, %c0_8] on %17 : !pk.tile<1x64x128xbf16>, !pk.sym<?x?x?xbf16>
    }
    pk.tile.foreach (%arg8, %arg9) to (%0, %1) step [1, 64] {
      %c0_3 = arith.constant 0 : index
      %7 = pk.tile.load %arg0[%arg8, %arg9, %c0_3] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
      %8 = pk.tile.reshape %7 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
      %9 = pk.tile.zeros : !pk.tile<64x1xf32>
      %cst = arith.constant 1.000000e+30 : f32
      %10 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
      %11 = pk.tile.map <sub> %9, %10 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %12 = pk.tile.zeros : !pk.tile<64x1xf32>
      %13 = pk.tile.zeros : !pk.tile<64x128xf32>
      %c0_4 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %14 = arith.addi %arg9, %c64 : index
      %c64_5 = arith.constant 64 : index
      %15:3 = scf.for %arg10 = %c0_4 to %14 step %c64_5 iter_args(%arg11 = %12, %arg12 = %13, %arg13 = %11) -> (!pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>) {
        %22 = arith.addi %c0, %arg8 : index
        %c0_8 = arith.constant 0 : index
        %23 = pk.tile.load %arg1[%22, %arg10, %c0_8] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %24 = pk.tile.reshape %23 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %25 = pk.tile.zeros : !pk.tile<64x64xf32>
        %26 = pk.tile.mma %8, %24, %25 {transpose_b} : !pk.tile<64x128xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x64xf32>
        %27 = pk.tile.splat %arg7 : f32 -> !pk.tile<64x64xf32>
        %28 = pk.tile.map <mul> %26, %27 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %29 = pk.tile.iota %arg10 dim 1 : !pk.tile<64x64xf32>
        %30 = pk.tile.iota %arg9 dim 0 : !pk.tile<64x64xf32>
        %31 = pk.tile.map <le> %29, %30 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %32 = pk.tile.iota %arg10 dim 1 : !pk.tile<64x64xf32>
        %33 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
        %34 = arith.index_cast %33 : index to i64
        %35 = arith.sitofp %34 : i64 to f32
        %36 = pk.tile.splat %35 : f32 -> !pk.tile<64x64xf32>
        %37 = pk.tile.map <lt> %32, %36 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %38 = pk.tile.map <mul> %31, %37 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %cst_9 = arith.constant -1.000000e+30 : f32
        %39 = pk.tile.splat %cst_9 : f32 -> !pk.tile<64x64xf32>
        %40 = pk.tile.select %38, %28, %39 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
        %41 = pk.tile.reduce_rows <max> %40 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %42 = pk.tile.map <max> %arg13, %41 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %43 = pk.tile.map <sub> %40, %42 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
        %44 = pk.tile.map <exp> %43 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
        %45 = pk.tile.map <sub> %arg13, %42 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %46 = pk.tile.map <exp> %45 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %47 = pk.tile.map <mul> %arg11, %46 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %48 = pk.tile.reduce_rows <sum> %44 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
        %49 = pk.tile.map <add> %47, %48 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %50 = pk.tile.cast %44 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
        %51 = arith.addi %c0, %arg8 : index
        %c0_10 = arith.constant 0 : index
        %52 = pk.tile.load %arg2[%51, %arg10, %c0_10] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %53 = pk.tile.reshape %52 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %54 = pk.tile.map <mul> %arg12, %46 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %55 = pk.tile.mma %50, %53, %54 : !pk.tile<64x64xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x128xf32>
        scf.yield %49, %55, %42 : !pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>
      }
      %16 = pk.tile.map <div> %15#1, %15#0 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
      %17 = pk.tile.cast %16 : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
      %18 = pk.tile.reshape %17 : !pk.tile<64x128xbf16> -> !pk.tile<1x64x128xbf16>
      %c0_6 = arith.constant 0 : index
      pk.tile.store %18, %arg3[%arg8, %arg9, %c0_6] : !pk.tile<1x64x128xbf16>, !pk.tensor<?x?x?xbf16>
      %19 = pk.tile.map <log> %15#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %20 = pk.tile.map <add> %15#2, %19 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %21 = pk.tile.reshape %20 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
      %c0_7 = arith.constant 0 : index
      pk.tile.store %21, %arg4[%arg8, %arg9, %c0_7] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
    }
    %c1_1 = arith.constant 1 : index
    %6 = pk.world_size
    %c1_2 = arith.constant 1 : index
    scf.for %arg8 = %c1_1 to %6 step %c1_2 {
      %c2 = arith.constant 2 : index
      %7 = arith.remsi %arg8, %c2 : index
      %8 = arith.muli %7, %0 : index
      %c1_3 = arith.constant 1 : index
      %9 = arith.addi %arg8, %c1_3 : index
      %c2_4 = arith.constant 2 : index
      %10 = arith.remsi %9, %c2_4 : index
      %11 = arith.muli %10, %0 : index
      %12 = pk.world_size
      %c1_5 = arith.constant 1 : index
      %13 = arith.subi %12, %c1_5 : index
      %14 = arith.subi %13, %arg8 : index
      %c1_6 = arith.constant 1 : index
      %15 = arith.minsi %14, %c1_6 : index
      %16 = pk.rank
      %17 = pk.world_size
      %18 = arith.addi %16, %17 : index
      %19 = arith.subi %18, %arg8 : index
      %20 = pk.world_size
      %21 = arith.remsi %19, %20 : index
      %22 = pk.rank
      %23 = arith.subi %21, %22 : index
      %c0_7 = arith.constant 0 : index
      %24 = arith.maxsi %23, %c0_7 : index
      %c1_8 = arith.constant 1 : index
      %25 = arith.minsi %24, %c1_8 : index
      %26 = arith.muli %0, %15 : index
      pk.tile.foreach (%arg9, %arg10) to (%26, %1) step [1, 64] {
        %27 = pk.rank
        %28 = pk.world_size
        %c1_9 = arith.constant 1 : index
        %29 = arith.addi %27, %c1_9 : index
        %30 = arith.remsi %29, %28 : index
        %31 = arith.addi %8, %arg9 : index
        %c0_10 = arith.constant 0 : index
        %32 = pk.tile.load %arg1[%31, %arg10, %c0_10] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %33 = arith.addi %11, %arg9 : index
        %c0_11 = arith.constant 0 : index
        pk.coll.store_tile %32, %arg1[%33, %arg10, %c0_11] on %30 : !pk.tile<1x64x128xbf16>, !pk.sym<?x?x?xbf16>
        %34 = pk.rank
        %35 = pk.world_size
        %c1_12 = arith.constant 1 : index
        %36 = arith.addi %34, %c1_12 : index
        %37 = arith.remsi %36, %35 : index
        %38 = arith.addi %8, %arg9 : index
        %c0_13 = arith.constant 0 : index
        %39 = pk.tile.load %arg2[%38, %arg10, %c0_13] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %40 = arith.addi %11, %arg9 : index
        %c0_14 = arith.constant 0 : index
        pk.coll.store_tile %39, %arg2[%40, %arg10, %c0_14] on %37 : !pk.tile<1x64x128xbf16>, !pk.sym<?x?x?xbf16>
      }
      pk.tile.foreach (%arg9, %arg10) to (%0, %1) step [1, 64] {
        %c0_9 = arith.constant 0 : index
        %27 = pk.tile.load %arg0[%arg9, %arg10, %c0_9] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %28 = pk.tile.reshape %27 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %29 = pk.tile.zeros : !pk.tile<64x1xf32>
        %cst = arith.constant 1.000000e+30 : f32
        %30 = pk.tile.splat %cst : f32 -> !pk.tile<64x1xf32>
        %31 = pk.tile.map <sub> %29, %30 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %32 = pk.tile.zeros : !pk.tile<64x1xf32>
        %33 = pk.tile.zeros : !pk.tile<64x128xf32>
        %c0_10 = arith.constant 0 : index
        %c64 = arith.constant 64 : index
        %34 = arith.addi %arg10, %c64 : index
        %c64_11 = arith.constant 64 : index
        %35:3 = scf.for %arg11 = %c0_10 to %34 step %c64_11 iter_args(%arg12 = %32, %arg13 = %33, %arg14 = %31) -> (!pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>) {
          %42 = arith.addi %8, %arg9 : index
          %c0_14 = arith.constant 0 : index
          %43 = pk.tile.load %arg1[%42, %arg11, %c0_14] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
          %44 = pk.tile.reshape %43 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
          %45 = pk.tile.zeros : !pk.tile<64x64xf32>
          %46 = pk.tile.mma %28, %44, %45 {transpose_b} : !pk.tile<64x128xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x64xf32>
          %47 = pk.tile.splat %arg7 : f32 -> !pk.tile<64x64xf32>
          %48 = pk.tile.map <mul> %46, %47 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %49 = pk.tile.iota %arg11 dim 1 : !pk.tile<64x64xf32>
          %50 = pk.tile.iota %arg10 dim 0 : !pk.tile<64x64xf32>
          %51 = pk.tile.map <le> %49, %50 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %c1_15 = arith.constant 1 : index
          %52 = arith.subi %c1_15, %25 : index
          %53 = arith.index_cast %52 : index to i64
          %54 = arith.sitofp %53 : i64 to f32
          %55 = pk.tile.splat %54 : f32 -> !pk.tile<64x64xf32>
          %56 = pk.tile.map <add> %50, %55 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %57 = pk.tile.map <lt> %49, %56 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %58 = pk.tile.map <mul> %51, %57 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %59 = pk.dim %arg1, 1 : !pk.sym<?x?x?xbf16>
          %60 = arith.index_cast %59 : index to i64
          %61 = arith.sitofp %60 : i64 to f32
          %62 = pk.tile.splat %61 : f32 -> !pk.tile<64x64xf32>
          %63 = pk.tile.map <lt> %49, %62 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %64 = pk.tile.map <mul> %58, %63 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %cst_16 = arith.constant -1.000000e+30 : f32
          %65 = pk.tile.splat %cst_16 : f32 -> !pk.tile<64x64xf32>
          %66 = pk.tile.select %64, %48, %65 : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
          %67 = pk.tile.reduce_rows <max> %66 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
          %68 = pk.tile.map <max> %arg14, %67 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %69 = pk.tile.map <sub> %66, %68 : !pk.tile<64x64xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x64xf32>
          %70 = pk.tile.map <exp> %69 : !pk.tile<64x64xf32> -> !pk.tile<64x64xf32>
          %71 = pk.tile.map <sub> %arg14, %68 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %72 = pk.tile.map <exp> %71 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %73 = pk.tile.map <mul> %arg12, %72 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %74 = pk.tile.reduce_rows <sum> %70 : !pk.tile<64x64xf32> -> !pk.tile<64x1xf32>
          %75 = pk.tile.map <add> %73, %74 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
          %76 = pk.tile.cast %70 : !pk.tile<64x64xf32> to !pk.tile<64x64xbf16>
          %77 = arith.addi %8, %arg9 : index
          %c0_17 = arith.constant 0 : index
          %78 = pk.tile.load %arg2[%77, %arg11, %c0_17] : !pk.sym<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
          %79 = pk.tile.reshape %78 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
          %80 = pk.tile.map <mul> %arg13, %72 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
          %81 = pk.tile.mma %76, %79, %80 : !pk.tile<64x64xbf16>, !pk.tile<64x128xbf16>, !pk.tile<64x128xf32>
          scf.yield %75, %81, %68 : !pk.tile<64x1xf32>, !pk.tile<64x128xf32>, !pk.tile<64x1xf32>
        }
        %36 = pk.tile.map <div> %35#1, %35#0 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %37 = pk.tile.cast %36 : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
        %38 = pk.tile.reshape %37 : !pk.tile<64x128xbf16> -> !pk.tile<1x64x128xbf16>
        %c0_12 = arith.constant 0 : index
        pk.tile.store %38, %arg5[%arg9, %arg10, %c0_12] : !pk.tile<1x64x128xbf16>, !pk.tensor<?x?x?xbf16>
        %39 = pk.tile.map <log> %35#0 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %40 = pk.tile.map <add> %35#2, %39 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %41 = pk.tile.reshape %40 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
        %c0_13 = arith.constant 0 : index
        pk.tile.store %41, %arg6[%arg9, %arg10, %c0_13] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
      }
      pk.tile.foreach (%arg9, %arg10) to (%0, %1) step [1, 64] {
        %c0_9 = arith.constant 0 : index
        %27 = pk.tile.load %arg4[%arg9, %arg10, %c0_9] : !pk.tensor<?x?x?xf32> -> !pk.tile<1x64x1xf32>
        %28 = pk.tile.reshape %27 : !pk.tile<1x64x1xf32> -> !pk.tile<64x1xf32>
        %c0_10 = arith.constant 0 : index
        %29 = pk.tile.load %arg6[%arg9, %arg10, %c0_10] : !pk.tensor<?x?x?xf32> -> !pk.tile<1x64x1xf32>
        %30 = pk.tile.reshape %29 : !pk.tile<1x64x1xf32> -> !pk.tile<64x1xf32>
        %31 = pk.tile.map <max> %28, %30 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %32 = pk.tile.map <sub> %28, %31 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %33 = pk.tile.map <exp> %32 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %34 = pk.tile.map <sub> %30, %31 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %35 = pk.tile.map <exp> %34 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %c0_11 = arith.constant 0 : index
        %36 = pk.tile.load %arg3[%arg9, %arg10, %c0_11] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %37 = pk.tile.reshape %36 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %38 = pk.tile.cast %37 : !pk.tile<64x128xbf16> to !pk.tile<64x128xf32>
        %39 = pk.tile.map <mul> %38, %33 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %c0_12 = arith.constant 0 : index
        %40 = pk.tile.load %arg5[%arg9, %arg10, %c0_12] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x64x128xbf16>
        %41 = pk.tile.reshape %40 : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
        %42 = pk.tile.cast %41 : !pk.tile<64x128xbf16> to !pk.tile<64x128xf32>
        %43 = pk.tile.map <mul> %42, %35 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %44 = pk.tile.map <add> %39, %43 : !pk.tile<64x128xf32>, !pk.tile<64x128xf32> -> !pk.tile<64x128xf32>
        %45 = pk.tile.map <add> %33, %35 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %46 = pk.tile.map <div> %44, %45 : !pk.tile<64x128xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x128xf32>
        %47 = pk.tile.cast %46 : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
        %48 = pk.tile.reshape %47 : !pk.tile<64x128xbf16> -> !pk.tile<1x64x128xbf16>
        %c0_13 = arith.constant 0 : index
        pk.tile.store %48, %arg3[%arg9, %arg10, %c0_13] : !pk.tile<1x64x128xbf16>, !pk.tensor<?x?x?xbf16>
        %49 = pk.tile.map <add> %33, %35 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %50 = pk.tile.map <log> %49 : !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %51 = pk.tile.map <add> %31, %50 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
        %52 = pk.tile.reshape %51 : !pk.tile<64x1xf32> -> !pk.tile<1x64x1xf32>
        %c0_14 = arith.constant 0 : index
        pk.tile.store %52, %arg4[%arg9, %arg10, %c0_14] : !pk.tile<1x64x1xf32>, !pk.tensor<?x?x?xf32>
      }
    }
    pk.return
  }
}
