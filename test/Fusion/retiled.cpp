// RUN: pkc %s --explain -o %t.cu 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=CHECKS --input-file=%t.cu
// Tests that the fused GEMM templates take the spec's tiles of any shape, retiled to their own
// 128x256x64 (set 36 finding 1), and that a reduce-scatter over A's rows with the spec's tiles
// taller than the template's checks at launch that neither crosses an owner (else the twin).
#include <pk/spec.h>
using namespace pk;

// CHECK: template: pk.tile.foreach at {{.*}}retiled.cpp:[[@LINE+2]]:3: gemm_ar: {{.*}}the spec's 64x128 tiles stepping K by 32 are retiled to the template's 128x256x64
PK_KERNEL void ar_small_tiles(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, k), load<128, 32>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
}

// CHECK: template: pk.tile.foreach at {{.*}}retiled.cpp:[[@LINE+4]]:3: gemm_rs: {{.*}}the spec's 256x256 tiles stepping K by 64 are retiled
// CHECKS: pk-host-check rs_tall_tiles {{[0-9]+}} if=eq(0,rem(div(dim(0,0),world),256)) {{.*}} twin_rule each 256-row tile must lie inside one owner
PK_KERNEL void rs_tall_tiles(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  index rows = a.rows() / world_size();
  for (auto [m, n] : tiles(a.rows(), b.rows(), {256, 256})) {
    auto acc = zeros<f32, 256, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<256, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(m / rows), cast<bf16>(acc), m % rows, n);
  }
}

// The loop over the gathered rows written from the shard (x.rows() * world_size(), K to x.cols()):
// ag_gemm, the launch checking that the gathered A holds them.
// CHECK: template: pk.tile.foreach at {{.*}}retiled.cpp:[[@LINE+3]]:3: ag_gemm: persistent LCSC kernel
PK_KERNEL void ag_shard_bounds(Sym<bf16, 2> x, Scratch<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(x, a);
  for (auto [m, n] : tiles(x.rows() * world_size(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
