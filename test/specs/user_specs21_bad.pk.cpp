// Set 21 (user specs), kernels pkc must refuse: each comment says why and gives the error's key words. Kernels
// whose error is a Clang error sit behind #ifdef PK_CXX_<ID> (one Clang error fails the whole file).
#include <pk/spec.h>
using namespace pk;

// B1: lse of [H, S, 1] flattened to a 1-D [H S] tensor stored at h S + m: the last query tile of head h is
// partial (S not a multiple of 64) and its padding rows land in head h + 1's first rows, which another tile
// stores. Key words: "race for world size 1", "lse".
PK_KERNEL void b1_lse_flat_heads_overlap(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                         Tensor<f32, 1> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h * q.dim(1) + m);
  }
}

// B2: gathering every rank's K block by 64-row pulls into [H, W S, D] at row j S + m: a partial last tile of
// block j overlaps block j + 1 (S not a multiple of 64). Key words: "race for world size 2", "kf".
PK_KERNEL void b2_pull_kv_blocks_overlap(Sym<bf16, 3> k, Tensor<bf16, 3> kf) {
  for (auto [j, h, m] : tiles(world_size(), k.dim(0), k.dim(1), {1, 1, 64}))
    store(kf, load<64, 64>(k.on(j), h, m, 0), h, j * k.dim(1) + m, 0);
}

// B3: a one-slot ring: each rank forwards the block it holds into the next rank's same slot while that rank
// still reads it. Key words: "race for world size 2", "kr".
PK_KERNEL void b3_ring_one_slot(Sym<bf16, 3> kr, Tensor<f32, 3> acc) {
  for (auto s : range(0, world_size())) {
    for (auto [h, m] : tiles(kr.dim(0), kr.dim(1), {1, 64}))
      store(kr.on(next_rank()), load<1, 64, 64>(kr, h, m, 0), h, m, 0);
    for (auto [h, m] : tiles(kr.dim(0), kr.dim(1), {1, 64}))
      store(acc, load<64, 64>(acc, h, m, 0) + cast<f32>(load<64, 64>(kr, h, m, 0)), h, m, 0);
  }
}

// B4: a ring whose host loop runs to the rank (a rank-dependent number of steps). Key words: "host loop",
// "bounds must be known on the host".
PK_KERNEL void b4_ring_steps_by_rank(Sym<bf16, 3> kr, Tensor<f32, 3> acc) {
  for (auto s : range(1, rank() + 1)) {
    index cur = s % 2 * (kr.dim(0) / 2), nxt = (s + 1) % 2 * (kr.dim(0) / 2);
    for (auto [h, m] : tiles(kr.dim(0) / 2, kr.dim(1), {1, 64}))
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
  }
}

// B5: the lse stored into a bf16 tensor without a cast. Key words: "store: tile element type 'f32' does not
// match tensor element type 'bf16'".
PK_KERNEL void b5_lse_bf16_no_cast(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                   Tensor<bf16, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// B6: P V with p left in f32. Key words: "mma: a and b must both be bf16, both f16".
PK_KERNEL void b6_pv_f32_probs(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto acc = zeros<f32, 64, 64>();
    auto l = zeros<f32, 64, 1>();
    for (auto n : range(0, k.rows(), 64)) {
      auto p = exp(mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale);
      l = l + row_sum(p);
      acc = mma(p, cast<f32>(load<64, 64>(v, n, 0)), acc);
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// B7: the ring's next rank chosen by a permutation read from memory. Key words: "cannot use an integer read
// from memory to choose a peer".
PK_KERNEL void b7_ring_peer_from_table(Sym<bf16, 3> kr, Tensor<i32, 1> nextr) {
  index p = nextr.at(rank());
  for (auto [h, m] : tiles(kr.dim(0) / 2, kr.dim(1), {1, 64}))
    store(kr.on(p), load<1, 64, 64>(kr, h, m, 0), kr.dim(0) / 2 + h, m, 0);
}

// B8: the output stored at the head only (m forgotten): every query tile of a head writes rows 0..63.
// Not refused at compile time (the sizes decide whether there is more than one query tile): the launch
// refuses it. Key words of its host check: "writes the same place", "dimension 1".
PK_KERNEL void b8_store_ignores_query_tile(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto s = mma_t(load<64, 64>(q, h, m, 0), load<64, 64>(k, h, 0, 0), zeros<f32, 64, 64>()) * scale;
    auto e = exp(s - row_max(s));
    store(o, cast<bf16>(e / row_sum(e)), h, 0, 0);
  }
}

// B9: KV-cache append and attention in one tile loop: tile (h, m) writes k rows m.. while other tiles read
// all of k. Key words: "reads a tensor at other tiles than it writes".
PK_KERNEL void b9_append_and_attend_one_loop(Tensor<bf16, 3> q, Tensor<bf16, 3> knew, Tensor<bf16, 3> k,
                                             Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    store(k, load<64, 64>(knew, h, m, 0), h, m, 0);
    auto qt = load<64, 64>(q, h, m, 0);
    auto acc = zeros<f32, 64, 64>();
    auto l = zeros<f32, 64, 1>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto p = exp(mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale);
      l = l + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(k, h, n, 0), acc);
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// B10: Ulysses with the all-to-all inside the head loop. Key words: "a collective moves whole tensors once per
// launch, so it cannot sit inside a tiles() loop".
PK_KERNEL void b10_a2a_inside_head_loop(Sym<bf16, 3> q, Sym<bf16, 3> qh, Tensor<bf16, 3> o) {
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 64})) {
    all_to_all(q, qh, 0, 1);
    store(o, load<64, 64>(qh, h, m, 0), h, m, 0);
  }
}

#ifdef PK_CXX_B11
// B11: all-gather of K whose input is a local Tensor (not symmetric). Key words: "a collective's input must be symmetric: declare it Sym<T, R>" (a static assertion of pk/spec.h; before: Clang's bare "no matching function").
PK_KERNEL void b11_allgather_local_input(Tensor<bf16, 3> k, Tensor<bf16, 3> kf) {
  all_gather(k, kf, 1);
}
#endif

// B12: two stores of o per tile (the tile's two 64-row halves written from a 64-row tile at m and m + 64 with a
// step of 64): overlapping writes. Key words: "writes elements that the same store writes at another tile".
PK_KERNEL void b12_double_store_overlap(Tensor<bf16, 3> q, Tensor<bf16, 3> o) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto t = load<64, 64>(q, h, m, 0);
    store(o, t, h, m, 0);
    store(o, t, h, m + 64, 0);
  }
}

// B13: the ring merge's step read at run time from a tensor bounds the host loop. Key words: "bounds must be
// known on the host".
PK_KERNEL void b13_ring_steps_from_tensor(Sym<bf16, 3> kr, Tensor<i32, 1> steps) {
  for (auto s : range(1, steps.at(0))) {
    index cur = s % 2 * (kr.dim(0) / 2), nxt = (s + 1) % 2 * (kr.dim(0) / 2);
    for (auto [h, m] : tiles(kr.dim(0) / 2, kr.dim(1), {1, 64}))
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
  }
}

// B14: a ring send split into chunks by a run-time step inside one tile loop that moves tiles to a peer: the
// protocol checker counts the trips of such a loop, so its step must be a constant. Key words: "constant step".
PK_KERNEL void b14_ring_send_runtime_step(Sym<bf16, 3> kr, index chunk) {
  for (auto [h, m] : tiles(kr.dim(0) / 2, kr.dim(1), {1, 64}))
    for (auto c : range(0, 64, chunk))
      store(kr.on(next_rank()), load<1, 64, 64>(kr, h, m, 0), kr.dim(0) / 2 + h, m, 0);
}

// B15: reduce-scatter of bf16 partial outputs along the sequence into a tensor of the wrong rank (2-D into 3-D).
// Key words: "reduce_scatter", "rank".
PK_KERNEL void b15_rs_rank_mismatch(Sym<f32, 2> yp, Sym<f32, 3> ys) {
  reduce_scatter(Sum, yp, ys);
}

#ifdef PK_CXX_B16
// B16 (accepted since the thirty-seventh session: masks of two element types join as an f32 mask): a float causal mask && an i32 chunk mask (chunked local attention): the two tiles differ in type.
// Key words: "the two tiles have different element types".
PK_KERNEL void b16_chunk_mask_int_and_float(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<f32, 3> s, index chunk) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto sc = mma_t(load<64, 64>(q, h, m, 0), load<64, 64>(k, h, 0, 0), zeros<f32, 64, 64>());
    auto r = row_index<64, 64>(m), c = col_index<64, 64>(0);
    store(s, where((c <= r) && (cast<i32>(r) / chunk == cast<i32>(c) / chunk), sc, -1e30f), h, m, 0);
  }
}
#endif

#ifdef PK_CXX_B17
// B17: q k^T with q of head dim 64 and k of head dim 128 (a GQA port that mixed up the head dims).
// Key words: "static assertion failed", "mma_t".
PK_KERNEL void b17_qk_head_dims_differ(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<f32, 3> s) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64}))
    store(s, mma_t(load<64, 64>(q, h, m, 0), load<64, 128>(k, h, 0, 0), zeros<f32, 64, 64>()), h, m, 0);
}
#endif

#ifdef PK_CXX_B18
// B18: a 3-D tensor loaded with two indices (the head forgotten). Key words: "no matching function" or an index
// count assertion.
PK_KERNEL void b18_load_3d_two_indices(Tensor<bf16, 3> q, Tensor<bf16, 3> o) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64}))
    store(o, load<64, 64>(q, m, 0), h, m, 0);
}
#endif
