// Vocabulary-parallel embedding lookup (see embedding_vocab_parallel.pk.cpp): its .mlir twin, as
// `pkc embedding_vocab_parallel.pk.cpp --emit=mlir` writes it; test/Frontend/twins.test checks
// that both lower to the same device IR.
module {
  pk.kernel @embedding_vocab_parallel(%arg0: !pk.tensor<?xi32>, %arg1: !pk.tensor<?x?xbf16>, %arg2: !pk.sym<?x?xbf16> {pk.scratch}, %arg3: !pk.sym<?x?xbf16>) {
    %0 = pk.dim %arg2, 0 : !pk.sym<?x?xbf16>
    %1 = pk.dim %arg2, 1 : !pk.sym<?x?xbf16>
    pk.tile.foreach (%arg4, %arg5) to (%0, %1) step [16, 256] {
      %2 = pk.tile.load %arg0[%arg4] : !pk.tensor<?xi32> -> !pk.tile<16xi32>
      %3 = pk.rank
      %4 = pk.dim %arg1, 0 : !pk.tensor<?x?xbf16>
      %5 = arith.muli %3, %4 : index
      %6 = pk.tile.splat %5 : index -> !pk.tile<16xi32>
      %7 = pk.tile.map <sub> %2, %6 : !pk.tile<16xi32>, !pk.tile<16xi32> -> !pk.tile<16xi32>
      %8 = pk.tile.load_rows %arg1[%7, %arg5] : !pk.tensor<?x?xbf16>, !pk.tile<16xi32> -> !pk.tile<16x256xbf16>
      pk.tile.store %8, %arg2[%arg4, %arg5] : !pk.tile<16x256xbf16>, !pk.sym<?x?xbf16>
    }
    pk.coll.all_reduce <sum> %arg2 into %arg3 : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
    pk.return
  }
}
