// RUN: not pkc %s --emit=cuda -o /dev/null 2>&1 | FileCheck %s
// Tests that a worker role the emitter cannot place yet is an explicit error.

// CHECK: no-pattern-role.mlir:[[@LINE+2]]:3: error: no CUDA emission pattern for worker role 'loader' yet
pk.kernel @k() attributes {pk.level = "device"} {
  pk.worker <loader> blocks 1 {
    %c = arith.constant 0 : index
    %ok = arith.constant true
    pk.check %ok, "an op with an effect, so the worker is not dead code" expected %c got %c
  }
  pk.return
}
