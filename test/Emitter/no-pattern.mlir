// RUN: not pkc %s --emit=cuda -o /dev/null 2>&1 | FileCheck %s
// Tests that ops without an emission pattern are explicit errors at their location.

// CHECK: no-pattern.mlir:[[@LINE+2]]:8: error: no CUDA emission pattern for 'arith.addf'
pk.kernel @scalar(%x: f32) attributes {pk.level = "device"} {
  %y = arith.addf %x, %x : f32
  pk.return
}
