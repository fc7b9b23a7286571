#define F(x) x x x x x x x x
#define G(x) F(F(F(F(F(x)))))
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) {
  G(G(1));
}
