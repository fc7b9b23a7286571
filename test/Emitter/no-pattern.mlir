// RUN: not pkc %s --emit=cuda -o /dev/null 2>&1 | FileCheck %s
// Tests that ops without an emission pattern are explicit errors at their location.

// CHECK: no-pattern.mlir:[[@LINE+2]]:8: error: no CUDA emission pattern for 'pk.tile.load'
pk.kernel @mma(%a: !pk.tensor<?x?xbf16>, %i: index) attributes {pk.level = "device"} {
  %t = pk.tile.load %a[%i, %i] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16, smem>
  %acc = pk.tile.zeros : !pk.tile<64x64xf32>
  %r = pk.tile.mma %t, %t, %acc : !pk.tile<64x64xbf16, smem>, !pk.tile<64x64xbf16, smem>, !pk.tile<64x64xf32>
  pk.return
}
