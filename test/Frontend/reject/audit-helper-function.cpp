// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: a call to a helper function with a body (a template here) is an error at the call.
#include <pk/spec.h>
using namespace pk;
template <class T> T twice(T t) { return t + t; }
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
// CHECK: audit-helper-function.cpp:[[@LINE+1]]:14: error: calls to 'twice' are not in the spec language; only pk/spec.h operations can be called
    store(y, twice(load<16, 32>(x, m, n)), m, n);
}
