#include <pk/spec.h>
using namespace pk;
<<<<<<< HEAD
PK_KERNEL void k() {}
=======
PK_KERNEL void k(int) {}
>>>>>>> branch
