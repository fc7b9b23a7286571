// C[M, N] = A[M, K] * B[N, K]^T on one GPU (B is K-major, a linear layer's weight). bf16 in,
// fp32 accumulation, bf16 out; tails in M and N clipped. N and K multiples of 8 (TMA row
// pitches) take the Hopper template, other sizes its general-path twin. The .mlir twin of
// gemm.pk.cpp.
pk.kernel @gemm(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %c: !pk.tensor<?x?xbf16>) {
  %m_all = pk.dim %a, 0 : !pk.tensor<?x?xbf16>
  %n_all = pk.dim %b, 0 : !pk.tensor<?x?xbf16>
  pk.tile.foreach (%m, %n) to (%m_all, %n_all) step [128, 256] {
    %zero = pk.tile.zeros : !pk.tile<128x256xf32>
    %c0 = arith.constant 0 : index
    %k_all = pk.dim %a, 1 : !pk.tensor<?x?xbf16>
    %c64 = arith.constant 64 : index
    %acc = scf.for %k = %c0 to %k_all step %c64 iter_args(%x = %zero) -> (!pk.tile<128x256xf32>) {
      %ta = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
      %tb = pk.tile.load %b[%n, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<256x64xbf16, smem>
      %r = pk.tile.mma %ta, %tb, %x {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
      scf.yield %r : !pk.tile<128x256xf32>
    }
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.tile.store %o, %c[%m, %n] : !pk.tile<128x256xbf16>, !pk.tensor<?x?xbf16>
  }
  pk.return
}
