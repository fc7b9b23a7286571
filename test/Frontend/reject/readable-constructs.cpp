// RUN: not pkc %s -o /dev/null -DSTEPS 2>&1 | FileCheck %s --check-prefix=STEPS
// RUN: not pkc %s -o /dev/null -DSIZEOF 2>&1 | FileCheck %s --check-prefix=SIZEOF
// RUN: not pkc %s -o /dev/null -DDIM 2>&1 | FileCheck %s --check-prefix=DIM
// Tests that refused C++ constructs are named as a user writes them (not as Clang's AST class),
// that a braced step list short of the loop's dimensions is an error at the list (C++ fills the
// rest with 0, which has no location), and that a negative dimension says why.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
#ifdef STEPS
// STEPS: readable-constructs.cpp:[[@LINE+1]]:48: error: give one tile step per dimension (2), e.g. {128, 256}; this list has 1
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16})) store(y, load<16, 32>(x, m, n), m, n);
#endif
#ifdef SIZEOF
// SIZEOF: readable-constructs.cpp:[[@LINE+1]]:13: error: sizeof / alignof is not in the spec language
  index s = sizeof(float);
#endif
#ifdef DIM
// DIM: readable-constructs.cpp:[[@LINE+1]]:19: error: dimension -1 is out of range: dimensions count from 0
  index d = x.dim(-1);
#endif
}
