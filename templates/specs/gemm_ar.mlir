// GEMM + all-reduce over any number of ranks. Every rank holds A[M, K] and B[N, K] (its slice
// of the reduction axis, B K-major) and ends with C[M, N] = sum over ranks of A * B^T. The
// product `p` is the all-reduce's input as the spec states it; it is scratch, so the fused
// lowering need not write it (each finished tile goes straight into every rank's C). bf16 in, fp32
// accumulation, bf16 out. N and K multiples of 8 take the template; other sizes run its
// general-path twin.
pk.kernel @gemm_ar(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>, %p: !pk.sym<?x?xbf16> {pk.scratch},
                   %c: !pk.sym<?x?xbf16>) {
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
    pk.tile.store %o, %p[%m, %n] : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.coll.all_reduce <sum> %p into %c : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  pk.return
}
