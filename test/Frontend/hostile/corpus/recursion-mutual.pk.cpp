#include <pk/spec.h>
using namespace pk;
PK_KERNEL void b(Sym<f32, 1> x, Tensor<f32, 1> y);
PK_KERNEL void a(Sym<f32, 1> x, Tensor<f32, 1> y) { b(x, y); }
PK_KERNEL void b(Sym<f32, 1> x, Tensor<f32, 1> y) { a(x, y); }
