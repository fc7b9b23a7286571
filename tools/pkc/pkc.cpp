// pkc: compiles a kernel spec (.mlir, or .pk.cpp through the Clang front end) to device-level
// pk, CUDA C++, PTX or a cubin. Named phases, compiler-style flags, no partial outputs.
#include "pk/Driver/Driver.h"

#include <cstdlib>  // defines __GLIBC__ where glibc is the C library
#if defined(__GLIBC__)
#include <malloc.h>
#endif

int main(int argc, char **argv) {
#if defined(__GLIBC__)
  // The protocol checker models each configuration in event lists of up to a few hundred MB,
  // built and freed again for every world size. By default glibc maps each such block afresh
  // and unmaps it on free, so every configuration pays its page faults again (moe_dispatch:
  // 14 s, 4 of them in the kernel); keeping freed memory in the heap halves that.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the largest glibc takes; fixes the threshold
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  return pk::runPkcDriver(argc, argv);
}
