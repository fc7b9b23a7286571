// Set 37: routes and performance cliffs of communication.
// Each kernel: what it computes; the route a user expects from docs/language.md, README "How a
// collective moves its bytes", DESIGN.md rule 1-3.
#include <pk/spec.h>
using namespace pk;

// ---------- built-in collectives, plain ----------
// k01: all_gather 1-D bf16, whole body. Expect LL <=256K, push <=1M, direct, copy engine >=20 MiB.
PK_KERNEL void k01(Sym<bf16, 1> x, Sym<bf16, 1> y) { all_gather(x, y); }
// k02: all_gather 2-D f32 rows (dim 0) into a local Tensor. Same four routes.
PK_KERNEL void k02(Sym<f32, 2> x, Tensor<f32, 2> y) { all_gather(x, y); }
// k03: all_gather 2-D bf16 along dim 1 (column shards). Doc: strided pulls, one-round + CE off.
PK_KERNEL void k03(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_gather(x, y, 1); }
// k04: all_gather 3-D f16 along dim 2 (last dim). Strided pulls, runs of dim(2)/W.
PK_KERNEL void k04(Sym<f16, 3> x, Sym<f16, 3> y) { all_gather(x, y, 2); }
// k05: all_gather 3-D i32 along dim 0 (written explicitly as dim 0). Expect = k01 routes (contiguous).
PK_KERNEL void k05(Sym<i32, 3> x, Sym<i32, 3> y) { all_gather(x, y, 0); }
// k06: in-place all_gather (NCCL layout) bf16 2-D. Expect direct / push; CE?
PK_KERNEL void k06(Sym<bf16, 2> x) { all_gather(x, x); }
// k07: reduce_scatter Sum 1-D f32 into Sym. LL / push / direct; never CE (it reduces).
PK_KERNEL void k07(Sym<f32, 1> x, Sym<f32, 1> y) { reduce_scatter(Sum, x, y); }
// k08: reduce_scatter Max 2-D bf16 along dim 1 into a local Tensor. Strided.
PK_KERNEL void k08(Sym<bf16, 2> x, Tensor<bf16, 2> y) { reduce_scatter(Max, x, y, 1); }
// k09: reduce_scatter Sum 3-D i32 along dim 1. Exact int sums, strided.
PK_KERNEL void k09(Sym<i32, 3> x, Sym<i32, 3> y) { reduce_scatter(Sum, x, y, 1); }
// k10: in-place reduce_scatter bf16 1-D. Chunk r holds the result.
PK_KERNEL void k10(Sym<bf16, 1> x) { reduce_scatter(Sum, x, x); }
// k11: all_reduce Sum f16 2-D. LL / push / one-or-two-shot direct.
PK_KERNEL void k11(Sym<f16, 2> x, Sym<f16, 2> y) { all_reduce(Sum, x, y); }
// k12: all_reduce in place f32 3-D. Two-shot direct.
PK_KERNEL void k12(Sym<f32, 3> x) { all_reduce(Sum, x, x); }
// k13: all_reduce Max i32 1-D into a local Tensor (allowed? docs: output Sym or Tensor for AG/RS/A2A).
PK_KERNEL void k13(Sym<i32, 1> x, Tensor<i32, 1> y) { all_reduce(Max, x, y); }
// k14: all_to_all 1-D bf16. LL / push / direct / copy engine >= 20 MiB.
PK_KERNEL void k14(Sym<bf16, 1> x, Sym<bf16, 1> y) { all_to_all(x, y); }
// k15: all_to_all 3-D split 0 concat 1 (Ulysses). Strided pulls.
PK_KERNEL void k15(Sym<bf16, 3> x, Sym<bf16, 3> y) { all_to_all(x, y, 0, 1); }
// k16: all_to_all within dim 1 of 2-D f32. Strided.
PK_KERNEL void k16(Sym<f32, 2> x, Sym<f32, 2> y) { all_to_all(x, y, 1, 1); }
// k17: in-place all_to_all of 2-D bf16 (pairwise swaps).
PK_KERNEL void k17(Sym<bf16, 2> x) { all_to_all(x, x); }
// k18: all_gather on a Scratch input (contents after unspecified) -> Tensor. Same routes as k02.
PK_KERNEL void k18(Scratch<bf16, 2> x, Tensor<bf16, 2> y) { all_gather(x, y); }
// k19: all_reduce from a Sym into a Scratch output. Same routes as k11.
PK_KERNEL void k19(Sym<bf16, 2> x, Scratch<bf16, 2> y) { all_reduce(Sum, x, y); }
// k20: all_gather of a 3-D tensor along dim 1 whose dim 0 is 1 ([1, S, D]): logically contiguous.
//      A user expects the contiguous route (or at least long runs).
PK_KERNEL void k20(Sym<bf16, 3> x, Sym<bf16, 3> y) { all_gather(x, y, 1); }

// ---------- collectives between compute phases ----------
// k21: norm -> all_reduce -> norm (TP RMSNorm as in language.md, f32). One worker, grid barriers.
PK_KERNEL void k21(Tensor<f32, 2> x, Tensor<f32, 2> w, Sym<f32, 2> ss, Sym<f32, 2> total, Tensor<f32, 2> y,
                   float inv_n, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 2048>(x, m, 0);
    store(ss, row_sum(t * t), m, 0);
  }
  all_reduce(Sum, ss, total);
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 2048>(x, m, 0);
    store(y, t * rsqrt(load<8, 1>(total, m, 0) * inv_n + eps) * load<1, 2048>(w, 0, 0), m, 0);
  }
}
// k22: two collectives back to back, dependent: all_reduce then all_gather of its result.
PK_KERNEL void k22(Sym<bf16, 1> x, Sym<bf16, 1> s, Sym<bf16, 1> y) {
  all_reduce(Sum, x, s);
  all_gather(s, y);
}
// k23: two independent collectives in one kernel (separate workers expected).
PK_KERNEL void k23(Sym<bf16, 1> a, Sym<bf16, 1> b, Sym<f32, 1> c, Sym<f32, 1> d) {
  all_gather(a, b);
  all_reduce(Sum, c, d);
}
// k24: scale then all_gather (compute feeding a copy-only collective): CE should be off (not whole body).
PK_KERNEL void k24(Tensor<bf16, 2> x, Sym<bf16, 2> xs, Sym<bf16, 2> y, float s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) store(xs, cast<bf16>(cast<f32>(load<16, 256>(x, m, n)) * s), m, n);
  all_gather(xs, y);
}
// k25: reduce_scatter then all_gather (= all_reduce by hand), back to back on Syms.
PK_KERNEL void k25(Sym<bf16, 1> x, Sym<bf16, 1> part, Sym<bf16, 1> y) {
  reduce_scatter(Sum, x, part);
  all_gather(part, y);
}

// ---------- hand-written collectives with peer tiles ----------
// k26: all_gather by pushing own rows into every peer (rows blocks of y at rank()*R). Expect
//      TMA/ld-st stores per tile, intra-SM, one arrive/depart round.
PK_KERNEL void k26(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) {
    auto t = load<64, 256>(x, m, n);
    for (auto p : range(0, world_size())) store(y.on(p), t, rank() * x.rows() + m, n);
  }
}
// k27: all_gather by pulling every peer's tile: load(x.on(p)) into local y.
PK_KERNEL void k27(Sym<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256}))
    for (auto p : range(0, world_size())) store(y, load<64, 256>(x.on(p), m, n), p * x.rows() + m, n);
}
// k28: reduce_scatter by store_add into the owner (rows per owner = x.rows()/W), y zeroed first.
PK_KERNEL void k28(Sym<f32, 2> x, Sym<f32, 2> y) {
  index rows = y.rows();
  for (auto [m, n] : tiles(y.rows(), y.cols(), {64, 256})) store(y, zeros<f32, 64, 256>(), m, n);
  for (auto [o, m, n] : tiles(world_size(), rows, x.cols(), {1, 64, 256}))
    store_add(y.on(o), load<64, 256>(x, o * rows + m, n), m, n);
}
// k29: reduce_scatter by pulling peers' chunks and summing in registers (f32).
PK_KERNEL void k29(Sym<f32, 2> x, Tensor<f32, 2> y) {
  index rows = y.rows();
  for (auto [m, n] : tiles(rows, x.cols(), {32, 256})) {
    auto acc = zeros<f32, 32, 256>();
    for (auto p : range(0, world_size())) acc = acc + load<32, 256>(x.on(p), rank() * rows + m, n);
    store(y, acc, m, n);
  }
}
// k30: all_reduce by pulling every peer's tile (one-shot by hand), bf16.
PK_KERNEL void k30(Sym<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256})) {
    auto acc = zeros<f32, 32, 256>();
    for (auto p : range(0, world_size())) acc = acc + cast<f32>(load<32, 256>(x.on(p), m, n));
    store(y, cast<bf16>(acc), m, n);
  }
}
// k31: ring all_gather by hand: host loop of W-1 trips, each pushing the slot received last trip to next_rank.
//      y holds W blocks; step s sends block (rank - s) mod W. Expect a ring (one launch per trip).
PK_KERNEL void k31(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  index R = x.rows();
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) store(y, load<64, 256>(x, m, n), rank() * R + m, n);
  for (auto s : range(0, world_size() - 1, 1)) {
    for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) {
      index blk = (rank() - s + world_size()) % world_size();
      store(y.on(next_rank()), load<64, 256>(y, blk * R + m, n), blk * R + m, n);
    }
  }
}
// k32: ring shift of a whole tensor (one step): y on next = x. Expect per-tile stores, intra-SM.
PK_KERNEL void k32(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) store(y.on(next_rank()), load<64, 256>(x, m, n), m, n);
}
// k33: ring shift, element-granular tiles (1 x 8) over a 1-D tensor: a cliff candidate.
PK_KERNEL void k33(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {8})) store(y.on(next_rank()), load<8>(x, i), i);
}
// k34: hand all_gather along dim 1 with peer stores of column blocks.
PK_KERNEL void k34(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 128})) {
    auto t = load<64, 128>(x, m, n);
    for (auto p : range(0, world_size())) store(y.on(p), t, m, rank() * x.cols() + n);
  }
}
// k35: hand all_to_all by pushes: block p of x (rows p*R..) goes to rank p's y at block rank().
PK_KERNEL void k35(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  index R = x.rows() / world_size();
  for (auto [p, m, n] : tiles(world_size(), R, x.cols(), {1, 64, 256}))
    store(y.on(p), load<64, 256>(x, p * R + m, n), rank() * R + m, n);
}
// k36: hand all_reduce by store_add into every peer (each rank adds its tile into all), y zeroed first.
PK_KERNEL void k36(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {64, 256})) store(y, zeros<f32, 64, 256>(), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) {
    auto t = load<64, 256>(x, m, n);
    for (auto p : range(0, world_size())) store_add(y.on(p), t, m, n);
  }
}
// k37: store_add of bf16 into the owner with a cast of computed f32 values (SiLU of x) -> RS.
PK_KERNEL void k37(Tensor<f32, 2> x, Sym<bf16, 2> y) {
  index rows = y.rows();
  for (auto [m, n] : tiles(y.rows(), y.cols(), {64, 256})) store(y, zeros<bf16, 64, 256>(), m, n);
  for (auto [o, m, n] : tiles(world_size(), rows, x.cols(), {1, 64, 256}))
    store_add(y.on(o), cast<bf16>(silu(load<64, 256>(x, o * rows + m, n))), m, n);
}

// ---------- GEMM + collective fusions ----------
// k38: gemm_ar as shipped but all_reduce of a cast: p stored f32, AR into bf16? (type change) -> not legal; instead
//      product stored bf16 into Scratch, AR into Sym. Baseline = shipped gemm_ar. Expect gemm_ar template.
PK_KERNEL void k38(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
}
// k39: gemm_ar with the product into a Sym (not Scratch). Docs: pkc refuses the fusion and says why.
PK_KERNEL void k39(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
}
// k40: GEMM product into Scratch, then reduce_scatter along rows (fused form 1 of gemm_rs).
PK_KERNEL void k40(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  reduce_scatter(Sum, p, c);
}
// k41: GEMM into Scratch then reduce_scatter along dim 1 (column owner). Expect: not fused, GEMM template +
//      RS launch (docs), with a reason.
PK_KERNEL void k41(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  reduce_scatter(Sum, p, c, 1);
}
// k42: ag_gemm with the gathered input as Scratch, along dim 0 (shipped form, f16? no: bf16) but B as [K, N] (mma).
PK_KERNEL void k42(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  for (auto [m, n] : tiles(a_full.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a_full.cols(), 64)) acc = mma(load_smem<128, 64>(a_full, m, k), load_smem<64, 256>(b, k, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
// k43: ag_gemm with all_gather along dim 1 (K-sharded A): not the fused form; expect AG launch + GEMM template.
PK_KERNEL void k43(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(a, a_full, 1);
  for (auto [m, n] : tiles(a_full.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a_full.cols(), 64)) acc = mma_t(load_smem<128, 64>(a_full, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
// k44: gemm_ar with a bias epilogue before the all-reduce (epilogue in p). Docs: fused templates take no epilogue ->
//      GEMM template launch + AR launch expected, with the reason.
PK_KERNEL void k44(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc + cast<f32>(load<1, 256>(bias, 0, n))), m, n);
  }
  all_reduce(Sum, p, c);
}
// k45: GEMM f32 product in a Scratch then all_reduce f32 (f32 output GEMM). Expect GEMM template + AR.
PK_KERNEL void k45(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<f32, 2> p, Sym<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, acc, m, n);
  }
  all_reduce(Sum, p, c);
}
// k46: GEMM + all_reduce then a norm on the result (3 phases). Expect gemm_ar launch + norm launch.
PK_KERNEL void k46(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c, Tensor<bf16, 2> o) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
  for (auto [m, n] : tiles(c.rows(), c.cols(), {8, 1024})) {
    auto t = cast<f32>(load<8, 1024>(c, m, n));
    store(o, cast<bf16>(t * rsqrt(row_sum(t * t) * (1.0f / 1024.0f) + 1e-6f)), m, n);
  }
}

// ---------- routes that must NOT be taken / forced thresholds ----------
// k47: small all_reduce with --allow-multicast (compile only): expect multicast chosen only with the flag.
PK_KERNEL void k47(Sym<bf16, 1> x, Sym<bf16, 1> y) { all_reduce(Sum, x, y); }
// k48: all_gather along dim 1 where a copy engine must not be chosen (strided).
PK_KERNEL void k48(Sym<f32, 2> x, Tensor<f32, 2> y) { all_gather(x, y, 1); }
// k49: broadcast then compute: not whole body, so no copy engine.
PK_KERNEL void k49(Sym<bf16, 1> x, Sym<bf16, 1> y, Tensor<bf16, 1> z, index root) {
  broadcast(x, y, root);
  for (auto i : tiles(y.size(), {1024})) store(z, cast<bf16>(cast<f32>(load<1024>(y, i)) * 2.0f), i);
}
// k50: all_to_all f32 1-D in place (pairwise swaps): direct; CE? LL?
PK_KERNEL void k50(Sym<f32, 1> x) { all_to_all(x, x); }

// ---------- the refused hand-written forms (k26, k31, k34, k35), rewritten as the errors advise ----------
// k51: k26 with y viewed [W, R, C]: every rank pushes its rows into block rank() of every peer.
PK_KERNEL void k51(Sym<bf16, 2> x, Sym<bf16, 3> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) {
    auto t = load<64, 256>(x, m, n);
    for (auto p : range(0, world_size())) store(y.on(p), t, rank(), m, n);
  }
}
// k52: k31 ring all_gather by hand as a host loop of W-1 trips, y viewed [W, R, C].
PK_KERNEL void k52(Sym<bf16, 2> x, Sym<bf16, 3> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) store(y, load<64, 256>(x, m, n), rank(), m, n);
  for (auto s : range(0, world_size() - 1, 1)) {
    for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) {
      index blk = (rank() - s + world_size()) % world_size();
      store(y.on(next_rank()), load<64, 256>(y, blk, m, n), blk, m, n);
    }
  }
}
// k53: k35 hand all_to_all, x and y viewed [W, R, C]: block p of x -> block rank() of rank p's y.
PK_KERNEL void k53(Sym<bf16, 3> x, Sym<bf16, 3> y) {
  for (auto [p, m, n] : tiles(world_size(), x.dim(1), x.dim(2), {1, 64, 256}))
    store(y.on(p), load<64, 256>(x, p, m, n), rank(), m, n);
}
// k54: k26 with store_rows (the fix language.md gives for a fixed [W R, C] layout).
PK_KERNEL void k54(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) {
    auto t = load<64, 256>(x, m, n);
    for (auto p : range(0, world_size()))
      store_rows(y.on(p), t, cast<i32>(row_index<64, 1>(m)) + rank() * x.rows(), n);
  }
}
// k55: k34 hand all_gather along dim 1, y viewed [R, W, C].
PK_KERNEL void k55(Sym<bf16, 2> x, Sym<bf16, 3> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 128})) {
    auto t = load<64, 128>(x, m, n);
    for (auto p : range(0, world_size())) store(y.on(p), reshape<64, 1, 128>(t), m, rank(), n);
  }
}
// k56: decode-style tiny all_reduce in place (the common TP decode spelling). Expect LL for KB messages.
PK_KERNEL void k56(Sym<bf16, 2> x) { all_reduce(Sum, x, x); }
