// RUN: not pkc %s --emit=cuda -o /dev/null 2>&1 | FileCheck %s
// Tests that ops without an emission pattern are explicit errors at their location.

// CHECK: no-pattern.mlir:[[@LINE+3]]:9: error: no CUDA emission pattern for 'arith.cmpf'
pk.kernel @scalar(%x: f32) attributes {pk.level = "device"} {
  %c = arith.constant 0 : index
  %ok = arith.cmpf oeq, %x, %x : f32
  pk.check %ok, "used, so the compare is not dead code" expected %c got %c
  pk.return
}
