// The fifteenth user-written spec set, part (b): kernels that must be REFUSED (races, protocol errors,
// illegal uses), each with what is wrong, and the reproducers of the findings in
// test/specs/specs15_findings.md. First the findings: F1-F3 are correct kernels that pkc refuses (F1 at
// launch, by a host check; F2 and F3 at compile time), A1-A2 are races pkc accepts today; then kernels
// refused as they must be (R: races and hazards). Compile one kernel at a time (pkc FILE --kernel NAME):
// the file as a whole is refused.
#include <pk/spec.h>
using namespace pk;

// ========================================================================================== Findings

// F1. CORRECT, accepted at compile time, but REFUSED AT EVERY LAUNCH by its host check (finding 3). Ring
// attention's step 0: K and V in slot 0 of kr, vr [2H, S, 64] (the second slot is the landing slot of the
// ring), read at head 0 + h. The offset folds to 0, so the attention template drops the offset form and
// emits the plain rule "k must have q's heads" (pk-host-check ... if=eq(dim(0,0),dim(1,0))): H against
// 2H fails, and the launch is refused. The shipped templates/specs/ring_attention.pk.cpp has the same
// step-0 launch (ring_attention_*_launch1), so every shipped ring kernel is refused at its first launch,
// at every world size; the GQA form (ra_gqa_d128 in user_specs15.pk.cpp) likewise ("q's heads must be
// G x k's heads").
PK_KERNEL void f1_kv_stacked_offset_zero(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Sym<bf16, 3> vr, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  index cur = 0;  // slot 0 of kr, vr [2H, S, 64], as ring attention's step 0
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, kr.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < kr.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(vr, cur + h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}
// F2. CORRECT, REFUSED (finding 4). A host loop whose trip count is min(steps, 4): min of an integer argument
// and a constant is known on the host and the same on every rank, but SplitLaunches asks hostExprOf for
// the bounds without min / max (they are accepted only with the rank allowed), so the loop is refused as
// "bounds must be known on the host". max(world_size() - 1, 1) is refused the same way.
PK_KERNEL void f2_host_loop_min_bound(Sym<f32, 1> x, Sym<f32, 1> y, index steps) {
  for (auto s : range(0, min(steps, 4))) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.size(), {256})) store(x, load<256>(y, i) * 0.5f, i);
  }
}

// F3. CORRECT (low), REFUSED (finding 5). A zero fill whose zero tile (64 x 512) is wider than its step (64 x 256): two
// iterations write zeros into the same columns. The values agree, so the result is the same in any order,
// but the new write-overlap check refuses it as a race (a user zeroing a buffer in big tiles meets it).
PK_KERNEL void f3_zero_fill_overlapping_tiles(Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {64, 256})) store(y, zeros<bf16, 64, 512>(), m, n);
}

// A1. ACCEPTED RACE at W = 1 (finding 2). Two stores per tile into y [2M, N]: the tile at [m, n] and twice it at
// [m + M, n]. The last row tile is partial; its store still writes the tile's padding rows (zeros) past M,
// into [M, ceil(M / 16) 16), which tile m = 0's second store writes on another block. The 1-D loop form
// (a1_1d_form below) is refused with exactly this explanation; the 2-D loop form is too, since the fix.
PK_KERNEL void a1_pad_rows_overlap_2d(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    store(y, load<16, 128>(x, m, n), m, n);
    store(y, load<16, 128>(x, m, n) * 2.0f, m + x.rows(), n);
  }
}
// The 1-D loop form of A1: refused ("whose last 15 are padding of a clipped load").
PK_KERNEL void a1_1d_form(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    store(y, load<16, 128>(x, m, 0), m, 0);
    store(y, load<16, 128>(x, m, 0) * 2.0f, m + x.rows(), 0);
  }
}

// A2. ACCEPTED RACES (finding 1). Stores along a dimension other than the first at an index that is not
// "variable + constant": the write-overlap check compares only such indices, and the protocol checker
// models one tile along the other dimensions, so neither sees the overlap.
// a2a: 64-column tiles stored at n / 2: tiles n and n + 64 write [n/2, n/2 + 64) and [n/2 + 32, n/2 + 96).
PK_KERNEL void a2a_store_half_n(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, n) * 2.0f, m, n / 2);
}
// a2b: 256-column tiles stored at 2 n with a 64 step: [2n, 2n + 256) against [2n + 128, 2n + 384).
PK_KERNEL void a2b_store_2n_wide(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 256>(x, m, n), m, 2 * n);
}
// a2c: every tile from column 256 on lands at column 256 (min(n, 256)): many blocks, one place.
PK_KERNEL void a2c_store_min_cols(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, load<16, 128>(x, m, n) * 2.0f, m, min(n, 256));
}
// a2d: the peer form of a2a, into the next rank's copy.
PK_KERNEL void a2d_peer_half_n(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y.on(next_rank()), load<16, 64>(x, m, n), m, n / 2);
}
// a2e: the 3-D form of a2a (the last dimension).
PK_KERNEL void a2e_3d_half_n(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [b, m, n] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 64}))
    store(y, load<1, 16, 64>(x, b, m, n), b, m, n / 2);
}

// ========================================================================================== Refused as they must be

// R1. 32-row tiles stored at 2 m with an 8-row step: [2m, 2m + 32) against [2m + 16, 2m + 48).
PK_KERNEL void r1_rows_2m_tall(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 128}))
    store(y, load<32, 128>(x, m, n), 2 * m, n);
}
// R2. A 32-row tile at a 16-row step, stored inside a range loop over columns.
PK_KERNEL void r2_nested_range_tall(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto n : range(0, x.cols(), 128))
      store(y, load<32, 128>(x, m, n) * 0.5f, m, n);
}
// R3. 1-D: a 256-element tile at a 128 step.
PK_KERNEL void r3_1d_tile_wider(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {128}))
    store(y, load<256>(x, i) + 1.0f, i);
}
// R4. 1-D: a second 256-element store 128 on, with a 256 step.
PK_KERNEL void r4_1d_second_store(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    store(y, load<256>(x, i), i);
    store(y, load<256>(x, i) * 2.0f, i + 128);
  }
}
// R5. 3-D: 32 rows at a 16-row step.
PK_KERNEL void r5_3d_taller(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [b, m, n] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 64}))
    store(y, load<1, 32, 64>(x, b, m, n), b, m, n);
}
// R6. 3-D: two batches per tile at a batch step of 1.
PK_KERNEL void r6_3d_two_batches(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [b, m, n] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 64}))
    store(y, load<2, 16, 64>(x, b, m, n), b, m, n);
}
// R7. A second store 64 columns BEFORE the tile: it overwrites the previous tile's last 64 columns.
PK_KERNEL void r7_store_before_tile(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    store(y, load<16, 128>(x, m, n), m, n);
    store(y, load<16, 64>(x, m, n) * 2.0f, m, n - 64);
  }
}
// R8. Into the next rank: a 256-element tile at a 128 step.
PK_KERNEL void r8_peer_1d_wider(Tensor<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {128}))
    store(y.on(next_rank()), load<256>(x, i) * 3.0f, i);
}
// R9. Every rank into rank 0 at rows m + 8 rank(): the 16-row tiles of ranks r and r + 1 overlap by 8 rows.
PK_KERNEL void r9_peer_ranks_overlap(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y.on(0), load<16, 128>(x, m, n), m + rank() * 8, n);
}
// R10. A ring pass with ONE slot: each rank pushes its k, v into the next rank's k, v while that rank reads
// its own k, v to push them on (the two slots of ring attention exist to avoid this).
PK_KERNEL void r10_ring_one_slot(Tensor<bf16, 3> q, Sym<bf16, 3> k, Sym<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  index H = q.dim(0), S = q.dim(1);
  for (auto s : range(0, world_size())) {
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      store(k.on(next_rank()), load<1, 64, 64>(k, h, m, 0), h, m, 0);
      store(v.on(next_rank()), load<1, 64, 64>(v, h, m, 0), h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) store(o, load<1, 64, 64>(k, h, m, 0), h, m, 0);
  }
}
// R11. Ring by pulls into the slot it reads: this rank overwrites kr while the next rank pulls from it.
PK_KERNEL void r11_ring_pull_same_slot(Sym<bf16, 3> kr, Tensor<bf16, 3> o) {
  for (auto s : range(1, world_size())) {
    for (auto [h, m] : tiles(kr.dim(0), kr.dim(1), {1, 64}))
      store(kr, load<1, 64, 64>(kr.on(prev_rank()), h, m, 0), h, m, 0);
    for (auto [h, m] : tiles(kr.dim(0), kr.dim(1), {1, 64}))
      store(o, load<1, 64, 64>(o, h, m, 0) + load<1, 64, 64>(kr, h, m, 0), h, m, 0);
  }
}
// R12. Pushing into the next rank's slot 1 and reading this rank's slot 1 in the same loop (the previous rank
// writes it meanwhile).
PK_KERNEL void r12_send_and_read_other_slot(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Tensor<bf16, 3> o) {
  index H = q.dim(0);
  for (auto [h, m] : tiles(H, q.dim(1), {1, 64})) {
    store(kr.on(next_rank()), load<1, 64, 64>(kr, h, m, 0), H + h, m, 0);
    store(o, load<1, 64, 64>(kr, H + h, m, 0), h, m, 0);
  }
}
// R13. Into the next rank and the previous rank at the same place: at W = 2 (and W = 1) they are one rank.
PK_KERNEL void r13_next_and_prev_same_place(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    store(y.on(next_rank()), load<16, 128>(x, m, n), m, n);
    store(y.on(prev_rank()), load<16, 128>(x, m, n) * 2.0f, m, n);
  }
}
// R14. 16-row tiles packed at m / 16 * 8: consecutive tiles 8 rows apart overlap by 8.
PK_KERNEL void r14_rows_packed_wrong(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, load<16, 128>(x, m, n), m / 16 * 8, n);
}
// R15. Rows clamped at min(m, 64): every tile from row 64 on writes rows [64, 80).
PK_KERNEL void r15_min_clamped_rows(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, load<16, 128>(x, m, n), min(m, 64), n);
}
// R16. A halo into the next rank's top half and the previous rank's bottom half, y [2R, C]: the partial last
// tile's padding rows spill into the bottom half another rank writes (refused at W = 1 already; A1: the local form).
PK_KERNEL void r16_halo_padding(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    store(y.on(next_rank()), load<16, 128>(x, m, n), m, n);
    store(y.on(prev_rank()), load<16, 128>(x, m, n) * 2.0f, m + x.rows(), n);
  }
}
// R17. Ring attention where the attention reads the slot the previous rank is pushing into in the same host
// step: the send and the attention share a tile loop.
PK_KERNEL void r17_ring_fused_send_attention(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Tensor<bf16, 3> o) {
  index H = q.dim(0);
  for (auto s : range(0, world_size())) {
    index cur = s % 2 * H, nxt = (s + 1) % 2 * H;
    for (auto [h, m] : tiles(H, q.dim(1), {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(o, load<1, 64, 64>(kr, nxt + h, m, 0), h, m, 0);
    }
  }
}
// R18. An in-place update that reads y one tile to the right of the tile it writes (another block writes
// that tile meanwhile).
PK_KERNEL void r18_read_other_tile_of_output(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, load<16, 128>(x, m, n) + load<16, 128>(y, m, n + 128), m, n);
}
// R19. A host loop whose trip count depends on the rank: ranks would make different launches.
PK_KERNEL void r19_host_loop_by_rank(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto s : range(0, rank() + 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.size(), {256})) store(x, load<256>(y, i) * 0.5f, i);
  }
}
// R20. An all-reduce inside a tile loop.
PK_KERNEL void r20_collective_in_tile_loop(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    all_reduce(Sum, x, y);
    store(x, load<16, 64>(y, m, 0), m, 0);
  }
}
// R21. A host loop over ring steps with a step computed at run time from an argument.
PK_KERNEL void r21_host_loop_runtime_step(Sym<f32, 1> x, Sym<f32, 1> y, index step) {
  for (auto s : range(0, world_size(), step)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.size(), {256})) store(x, load<256>(y, i) * 0.5f, i);
  }
}
// R22. A ring pass that carries a float from step to step through a host loop.
PK_KERNEL void r22_host_loop_carries(Sym<f32, 1> x, Sym<f32, 1> y, float a) {
  float w = a;
  for (auto s : range(0, world_size())) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.size(), {256})) store(x, load<256>(y, i) * w, i);
    w = w * 0.5f;
  }
}
