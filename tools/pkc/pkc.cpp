// pkc: compiles a kernel spec (.mlir, or .pk.cpp through the Clang front end) to device-level
// pk, CUDA C++, PTX or a cubin. Named phases, compiler-style flags, no partial outputs.
#include "pk/Driver/Driver.h"

int main(int argc, char **argv) { return pk::runPkcDriver(argc, argv); }
