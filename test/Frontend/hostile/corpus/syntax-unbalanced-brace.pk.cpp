#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x) {
  {
