// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: a kernel name CUDA cannot use (non-ASCII here) is an error at the name.
#include <pk/spec.h>
using namespace pk;
// CHECK: audit-unicode-kernel-name.cpp:[[@LINE+1]]:16: error: PK_KERNEL: kernel name '{{.*}}' is not usable as a CUDA function name
PK_KERNEL void ядро(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i), i);
}
