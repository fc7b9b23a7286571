// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a virtual call is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
struct Base {
  virtual index size() const;
};
PK_KERNEL void k(Sym<f32, 1> x) {
  // CHECK: virtual-call.cpp:[[@LINE+1]]:{{[0-9]+}}: error: virtual calls are not in the spec language; call pk/spec.h operations directly
  auto n = Base{}.size();
}
