// RUN: pkc %s -o - | FileCheck %s
// Tests that a kernel whose flag slots times its blocks would pass the kernel's 2048 flag words
// (nine all-reduce phases: 17 grid-wide barriers and the first all-reduce's arrival, 18 slots) runs on fewer blocks instead of writing into the next
// kernel's flags.
#include <pk/spec.h>
using namespace pk;
// CHECK: constexpr int kBlocks = 113; {{.*}} 18 flag slots x 113 blocks fill the kernel's 2048 flag words (it would take 132 blocks)
// CHECK: pk-launch many_phases threads={{[0-9]+}} blocks=113 flag_slots=18
PK_KERNEL void many_phases(Sym<f32, 2> a, Sym<f32, 2> b) {
  all_reduce(Sum, a, b);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(a, load<16, 64>(b, m, n) * 0.5f, m, n);
  all_reduce(Sum, a, b);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(a, load<16, 64>(b, m, n) * 0.5f, m, n);
  all_reduce(Sum, a, b);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(a, load<16, 64>(b, m, n) * 0.5f, m, n);
  all_reduce(Sum, a, b);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(a, load<16, 64>(b, m, n) * 0.5f, m, n);
  all_reduce(Sum, a, b);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(a, load<16, 64>(b, m, n) * 0.5f, m, n);
  all_reduce(Sum, a, b);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(a, load<16, 64>(b, m, n) * 0.5f, m, n);
  all_reduce(Sum, a, b);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(a, load<16, 64>(b, m, n) * 0.5f, m, n);
  all_reduce(Sum, a, b);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(a, load<16, 64>(b, m, n) * 0.5f, m, n);
  all_reduce(Sum, a, b);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(a, load<16, 64>(b, m, n) * 0.5f, m, n);
}
