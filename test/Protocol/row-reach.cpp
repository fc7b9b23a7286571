// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// RUN: pkc %s -o /dev/null -DFIXED 2>&1 | FileCheck %s --check-prefix=FIXED
// Tests the race report of a hand all-to-all into blocks of R rows (set 37, finding 7): the last
// tile of a block carries the next block's rows (its load does not clip there) and stores them
// over the next rank's block; the report says so with the fix, and the [W, R, C] view compiles.
#include <pk/spec.h>
using namespace pk;
#ifndef FIXED
// CHECK: row-reach.cpp:[[@LINE+4]]:5: error: race for world size 2: {{.*}}: rank {{[0-9]}} stores a tile at rows [{{[0-9]+}}, {{[0-9]+}}) that reaches into rows [{{[0-9]+}}, {{[0-9]+}}) rank {{[0-9]}} stores (a load clips only at the end of the tensor it reads, so the last tile of a block of rows carries the next block's rows{{.*}}start each block of rows a whole number of tiles apart
PK_KERNEL void a2a_rows(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  index R = x.rows() / world_size();
  for (auto [p, m, n] : tiles(world_size(), R, x.cols(), {1, 64, 256}))
    store(y.on(p), load<64, 256>(x, p * R + m, n), rank() * R + m, n);
}
#else
// FIXED-NOT: error
// FIXED: pkc: wrote
PK_KERNEL void a2a_blocks(Sym<bf16, 3> x, Sym<bf16, 3> y) {
  for (auto [p, m, n] : tiles(world_size(), x.dim(1), x.dim(2), {1, 64, 256}))
    store(y.on(p), load<1, 64, 256>(x, p, m, n), rank(), m, n);
}
#endif
