// All-gather + GEMM over any number of ranks. Rank r holds its row shard A_r[Ms, K] and
// B[N, K] (K-major); every rank ends with C[W * Ms, N] = [A_0; ...; A_{W-1}] * B^T. `a_full`
// ([W * Ms, K], symmetric) is the landing buffer of the gathered rows; it is
// scratch, so the fused lowering need not copy this rank's own rows into it. bf16 in, fp32
// accumulation, bf16 out. N and K multiples of 8 (TMA row pitches) take the template; other
// sizes run its general-path twin.
pk.kernel @ag_gemm(%a: !pk.sym<?x?xbf16>, %a_full: !pk.sym<?x?xbf16> {pk.scratch}, %b: !pk.tensor<?x?xbf16>,
                   %c: !pk.tensor<?x?xbf16>) {
  pk.coll.all_gather %a into %a_full : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  %m_all = pk.dim %a_full, 0 : !pk.sym<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %c0 = arith.constant 0 : index
    %k_all = pk.dim %a_full, 1 : !pk.sym<?x?xbf16>
    %c64 = arith.constant 64 : index
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a_full[%m, %k] : !pk.sym<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.tile.store %o, %c[%m, %n] : !pk.tile<128x256xbf16>, !pk.tensor<?x?xbf16>
  }
  pk.return
}
