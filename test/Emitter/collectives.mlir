// RUN: pkc %s --profile=%S/../Passes/Inputs/crossover.profile -o - | FileCheck %s
// Text tier of the emitted CUDA for the collective primitives (no GPU, no NVRTC).

// Tests that a broadcast first offers the one-round path (with the root), then pulls from
// the root's copy with copy_elems into the local output, on the fixed grid the pass chose,
// between two flag rounds.
// CHECK-LABEL: // pk-launch broadcast threads=512 blocks=132 flag_slots=8 copy_engine=broadcast:100663296:0:1:2 args=!pk.sym<?xf16>,!pk.tensor<?xf16>,index
// CHECK: extern "C" __global__ void __launch_bounds__(512, 1) broadcast(pk::LaunchContext ctx, pk::SymTensor<pk::f16> arg0, pk::Tensor<pk::f16> arg1, long long arg2)
// CHECK: pk::push_small<pk::SmallCollective::broadcast, pk::ReduceOp::sum>(ctx, arg0.peer[ctx.rank], arg0.numel, arg1.data, arg1.numel, arg2,
// CHECK: pk::signal_all(ctx, [[ARRIVE:flag[0-9]+]]);
// CHECK: pk::wait_ge(ctx, [[ARRIVE]], pk_direct_epoch{{[0-9]+}} *
// CHECK: pk::copy_elems(arg0.peer[arg2] + [[I:i[0-9]+]], arg1.data + [[I]], {{v[0-9]+}});
// CHECK: pk::signal_all(ctx, [[DEPART:flag[0-9]+]]);
// CHECK: pk::wait_ge(ctx, [[DEPART]], pk_direct_epoch{{[0-9]+}} *
pk.kernel @broadcast(%x: !pk.sym<?xf16>, %y: !pk.tensor<?xf16>, %root: index) {
  pk.coll.broadcast %x into %y root %root : !pk.sym<?xf16>, !pk.tensor<?xf16>
  pk.return
}

// Tests that a reduce-scatter into a local output reduces this rank's block with a
// one-pointer destination list.
// CHECK-LABEL: // pk-launch reduce_scatter
// CHECK: float* const [[DST:pk_dst[0-9]+]][1] = {arg1.data};
// CHECK: pk::reduce_into<pk::ReduceOp::max>(ctx, arg0, {{v[0-9]+}}, {{v[0-9]+}}, [[DST]], 1, {{i[0-9]+}});
pk.kernel @reduce_scatter(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>) {
  pk.coll.reduce_scatter <max> %x into %y : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// Tests that a dynamic all-reduce branches at run time; two-shot writes every rank's copy.
// CHECK-LABEL: // pk-launch all_reduce
// CHECK: const bool [[TWO:p[0-9]+]] = {{v[0-9]+}} >= {{v[0-9]+}};
// CHECK: if ([[TWO]]) {
// CHECK: pk::reduce_into<pk::ReduceOp::sum>(ctx, arg0, [[AT:v[0-9]+]], {{v[0-9]+}}, arg1.peer, ctx.world, [[AT]]);
// CHECK: } else {
// CHECK: pk::reduce_into<pk::ReduceOp::sum>(ctx, arg0, {{i[0-9]+}}, {{v[0-9]+}}, {{pk_dst[0-9]+}}, 1, {{i[0-9]+}});
pk.kernel @all_reduce(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}
