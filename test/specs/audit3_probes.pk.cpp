// Reproducers of the third audit (test/specs/audit3_findings.md): collectives and host checks.
// Each kernel compiles with pkc (`pkc audit3_probes.pk.cpp --kernel NAME -o x.cu`); the
// findings say which argument shapes or world sizes make the emitted code read or write past a
// tensor. Nothing here has run on a GPU.
#include <pk/spec.h>
using namespace pk;

// Finding 1: 5-D collectives read a fifth extent the kernel ABI does not have
// (SymTensor::shape[4] is SymTensor::numel), so the direct path moves numel^2 elements.
// Pass x, y as [2, 3, 4, 30] (numel 720, what the JIT and pk_torch accept for a 5-D spec
// argument): the device element count is 2*3*4*30*720 = 518400.
PK_KERNEL void all_reduce_5d(Sym<f32, 5> x, Sym<f32, 5> y) { all_reduce(Sum, x, y); }
PK_KERNEL void all_gather_5d(Sym<f32, 5> x, Sym<f32, 5> y) { all_gather(x, y); }
PK_KERNEL void broadcast_5d(Sym<bf16, 5> x, Tensor<bf16, 5> y, index root) { broadcast(x, y, root); }

// Finding 2: a 1-D prim::reduce whose only use is a store at the same index is reduced straight
// into the destination (pk::reduce_tile), with the count clipped to the SOURCE's numel only:
// y shorter than x is written past its end (x [4096], y [1000]: writes y[1000..4095]).
PK_KERNEL void prim_reduce_short_dst(Sym<f32, 1> x, Tensor<f32, 1> y) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size(), {256})) store(y, prim::reduce<256>(Sum, Ldst, x, i), i);
  prim::barrier(prim::flag(1));
}
// ... and the same fused path does not clip a negative origin: the first tile reads every rank's
// x[-1] and writes y[-1] (the register path reads zeros there and drops the store).
PK_KERNEL void prim_reduce_before_start(Sym<f32, 1> x, Tensor<f32, 1> y) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size(), {256})) store(y, prim::reduce<256>(Sum, Ldst, x, i - 1), i - 1);
  prim::barrier(prim::flag(1));
}
// Finding 2 (cont.): 1-D prim::all_reduce (pk::all_reduce_tile) clips the count to the source
// only and writes every rank's y: y [1000] with x [4096] is written past its end on every rank.
PK_KERNEL void prim_all_reduce_short_dst(Sym<f32, 1> x, Sym<f32, 1> y) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size() / world_size(), {256}))
    prim::all_reduce<1>(Sum, Ldst, x, y, i + rank() * (x.size() / world_size()));
  prim::barrier(prim::flag(1));
}

// Finding 5: a kernel with its own flags and a one-round collective; its lane slots are sized
// for the compiled grid (ceil(512 / 132) = 4 slots), but the launch grid may be smaller
// (pk::rank_grid: ranks sharing a GPU, or a GPU with fewer SMs), and the W x 32 lane words then
// run into the spec's shifted flag slots 8 and 9 (8 ranks sharing one 132-SM GPU: grid 16,
// lane words 64..319, user slot 8 = words 128..143).
PK_KERNEL void prim_flags_and_one_round(Sym<f32, 1> x, Sym<f32, 1> y) {
  prim::barrier(prim::flag(0));
  all_reduce(Sum, x, y);
  prim::barrier(prim::flag(1));
}
