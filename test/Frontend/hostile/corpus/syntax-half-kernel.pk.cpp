#include <pk/spec.h>
using namespace pk;
PK_KERNEL void