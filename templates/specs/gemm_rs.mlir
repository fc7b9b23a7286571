// GEMM + reduce-scatter over any number of ranks. Every rank holds A[M, K] and B[N, K] (its
// slice of the reduction axis; B is K-major, a linear layer's weight) and ends with the rows
// [r * M / W, (r + 1) * M / W) of sum over ranks of A * B^T in C[M / W, N]. bf16 in, fp32
// accumulation, bf16 out; M a multiple of W. N and K multiples of 8 (TMA row pitches) take the
// template; other sizes run its general-path twin.
// store_add adds into C's contents, so the first loop zeroes C (the template's memset). The tile
// loop walks each owner o's rows: A's rows o * rows + m .. + 127 go into owner o's rows m ..,
// clipped at the owner's end, so any M that W divides is reduce-scattered whole.
pk.kernel @gemm_rs(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.sym<?x?xbf16>) {
  %c_rows = pk.dim %c, 0 : !pk.sym<?x?xbf16>
  %c_cols = pk.dim %c, 1 : !pk.sym<?x?xbf16>
  pk.tile.foreach (%i, %j) to (%c_rows, %c_cols) step [64, 256] {
    %z = pk.tile.zeros : !pk.tile<64x256xbf16>
    pk.tile.store %z, %c[%i, %j] : !pk.tile<64x256xbf16>, !pk.sym<?x?xbf16>
  }
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %world = pk.world_size
  %rows = arith.divsi %m_all, %world : index
  %owners = pk.world_size
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%o, %m, %n) to (%owners, %rows, %n_all) step [1, 128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %c0 = arith.constant 0 : index
    %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
    %c64 = arith.constant 64 : index
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %base = arith.muli %o, %rows : index
      %row = arith.addi %base, %m : index
      %ta = pk.tile.load %a[%row, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %out = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.coll.add_tile %out, %c[%m, %n] on %o : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}
