// RUN: pkc %s --emit=mlir | FileCheck %s
// Tests that kernel parameters map to pk tensor types and index.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @params
// CHECK-SAME: !pk.tensor<?x?xbf16>, %{{.*}}: !pk.sym<?x?x?xf16>, %{{.*}}: !pk.tensor<?xf32>, %{{.*}}: index
PK_KERNEL void params(Tensor<bf16, 2> a, const Sym<f16, 3> &b, Tensor<f32, 1> c, index n) {}

namespace inner {
// Tests that kernels inside namespaces are found.
// CHECK-LABEL: pk.kernel @nested(
PK_KERNEL void nested(Sym<f32, 1> x) {}
}

// Not a kernel: no PK_KERNEL marker, so it is not lowered.
// CHECK-NOT: @helper
void helper(Sym<f32, 1> x) {}
