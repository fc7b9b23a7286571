// Set 24 (user specs, inference serving and sequence models), kernels pkc must refuse: each comment says why and
// gives the error's key words. Kernels whose error is a Clang error sit behind #ifdef PK_CXX_<ID> (one Clang
// error fails the whole file). Findings in test/specs/specs24_findings.md.
#include <pk/spec.h>
using namespace pk;

// B1: rotary of packed heads in place, the loop over heads (step 1) and the columns at h * 128 and h * 128 + 64.
// Each iteration reads and writes only its own head's 128 columns. Refused when the set was written (finding 2);
// accepted since (an index may be the loop variable times a constant plus a constant inside that many steps):
// lit B1 checks that it compiles (it stays in this file, at its line, so the
// other kernels keep theirs).
PK_KERNEL void b1_rope_heads_times_128_inplace(Tensor<bf16, 2> q, Tensor<f32, 2> cosT, Tensor<f32, 2> sinT,
                                               Tensor<i32, 1> pos) {
  for (auto [t, h] : tiles(q.rows(), q.cols() / 128, {16, 1})) {
    auto p = load<16>(pos, t);
    auto c = load_rows<16, 64>(cosT, p, 0);
    auto s = load_rows<16, 64>(sinT, p, 0);
    auto x1 = cast<f32>(load<16, 64>(q, t, h * 128));
    auto x2 = cast<f32>(load<16, 64>(q, t, h * 128 + 64));
    store(q, cast<bf16>(x1 * c - x2 * s), t, h * 128);
    store(q, cast<bf16>(x2 * c + x1 * s), t, h * 128 + 64);
  }
}

// B3: vocabulary top-k over a whole 4096-wide row at once. Key words: "at most 4096 - 2k elements", "take the top
// k of each part".
PK_KERNEL void b3_topk_whole_4096_row(Tensor<f32, 2> logits, Tensor<f32, 2> tv, Tensor<i32, 2> ti) {
  for (auto b : tiles(logits.rows(), {8})) {
    auto x = load<8, 4096>(logits, b, 0);
    store(tv, row_topk<16>(x), b, 0);
    store(ti, row_topk_index<16>(x), b, 0);
  }
}

// B4: causal conv1d written in place on x (reads the three rows before the tile, which the previous tile's
// iteration overwrites). Key words: "reads a tensor at other tiles than it writes".
PK_KERNEL void b4_causal_conv1d_inplace(Tensor<f32, 2> x, Tensor<f32, 2> w) {
  for (auto [t, c] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto k : range(0, 4)) acc = acc + load<16, 128>(x, t - 3 + k, c) * load<1, 128>(w, k, c);
    store(x, silu(acc), t, c);
  }
}

// B5: RWKV token shift that updates the carried last token in the same loop that reads it (the tile at t = 0 of
// sequence b reads last[b] while the tile holding T - 1 writes it). Key words: "reads a tensor at other tiles than
// it writes".
PK_KERNEL void b5_token_shift_state_same_loop(Tensor<bf16, 2> x, Tensor<bf16, 2> last, Tensor<f32, 1> mu,
                                             Tensor<bf16, 2> xk) {
  for (auto [t, c] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto xt = cast<f32>(load<16, 256>(x, t, c));
    auto xp = where(row_index<16, 256>(t) == 0.0f, cast<f32>(load<1, 256>(last, 0, c)), cast<f32>(load<16, 256>(x, t - 1, c)));
    store(xk, cast<bf16>(xt * load<1, 256>(mu, c) + xp * (1.0f - load<1, 256>(mu, c))), t, c);
    store(last, load<1, 256>(x, x.rows() - 1, c), 0, c);
  }
}

// B6 (accepted since the thirty-seventh session: masks of two element types join as an f32 mask): speculative acceptance combining a float mask with an integer one by && (the i32 comparison is an i32
// tile). Key words: "different element types", "cast<f32>(mask)".
#ifdef PK_CXX_B6
PK_KERNEL void b6_mask_f32_and_i32(Tensor<f32, 2> p, Tensor<i32, 2> draft, Tensor<f32, 2> out, float thr) {
  for (auto b : tiles(p.rows(), {16})) {
    auto ok = (load<16, 16>(p, b, 0) > thr) && (load<16, 16>(draft, b, 0) >= 0);
    store(out, where(ok, 1.0f, 0.0f), b, 0);
  }
}
#endif

// B7: multi-LoRA with the adapter ids read from an f32 tensor (load_rows needs an integer index tile). Key words:
// "load_rows", "i32".
#ifdef PK_CXX_B7
PK_KERNEL void b7_lora_float_ids(Tensor<bf16, 2> x, Tensor<f32, 1> idx, Tensor<bf16, 2> A, Tensor<f32, 2> u) {
  for (auto t : tiles(x.rows(), {16}))
    store(u, row_sum(cast<f32>(load<16, 512>(x, t, 0)) * cast<f32>(load_rows<16, 512>(A, load<16, 1>(idx, t), 0))), t, 0);
}
#endif

// B8: SmoothQuant's per-token scale taken as row_max of the already quantised i32 values. Key words: "reduce float
// tiles", "cast<f32>(t)".
#ifdef PK_CXX_B8
PK_KERNEL void b8_row_max_of_i32(Tensor<i32, 2> q, Tensor<i32, 2> amax) {
  for (auto t : tiles(q.rows(), {4})) store(amax, row_max(abs(load<4, 1024>(q, t, 0))), t, 0);
}
#endif

// B9: the W8A8 GEMM written with int8 operands held in i32 (no integer tensor-core product in the language).
// Key words: "mma", "bf16", "fp8".
PK_KERNEL void b9_int8_mma(Tensor<i32, 2> xq, Tensor<i32, 2> wq, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(xq.rows(), wq.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, xq.cols(), 64)) acc = mma_t(load<64, 64>(xq, m, k), load<64, 64>(wq, n, k), acc);
    store(y, acc, m, n);
  }
}

// B10: decode steps as a host loop bounded by a step count read from device memory (max_new_tokens kept on the
// GPU). Key words: "host loop", "known on the host".
PK_KERNEL void b10_host_loop_bound_from_device(Tensor<i32, 1> steps, Sym<f32, 2> part, Tensor<f32, 2> acc) {
  for (auto s : range(0, steps.at(0), 1)) {
    all_reduce(Sum, part, part);
    for (auto [m, n] : tiles(acc.rows(), acc.cols(), {16, 256}))
      store(acc, load<16, 256>(acc, m, n) + load<16, 256>(part, m, n), m, n);
  }
}

// B11: RetNet's decay matrix written as pow of a tile by a tile (pow takes a float exponent). Key words: "pow"
// (Clang: no matching function).
#ifdef PK_CXX_B11
PK_KERNEL void b11_pow_tile_exponent(Tensor<f32, 2> d, float gamma) {
  for (auto i : tiles(d.rows(), {64}))
    store(d, pow(zeros<f32, 64, 64>() + gamma, row_index<64, 64>(i) - col_index<64, 64>(0)), i, 0);
}
#endif

// B12: the static-cache decode write with the position index left out (three indices for a 4-D cache). Key
// words: "one index per", "4".
PK_KERNEL void b12_static_cache_missing_index(Tensor<bf16, 3> k, Tensor<i64, 1> pos, Tensor<bf16, 4> kc) {
  for (auto [b, h] : tiles(k.dim(0), k.dim(1), {1, 1})) store(kc, load<128>(k, b, h, 0), b, h, pos.at(b));
}

// B13: the vocabulary-parallel greedy argmax stores each rank's candidate into the gathered tensor at column
// rank() from every row tile, but all-reduces it inside the tile loop. Key words: "collective", "tiles() loop".
PK_KERNEL void b13_allgather_in_tile_loop(Tensor<f32, 2> logits, Sym<f32, 2> cand, Sym<f32, 2> all) {
  for (auto b : tiles(logits.rows(), {8})) {
    store(cand, row_topk<1>(load<8, 2048>(logits, b, 0)), b, 0);
    all_gather(cand, all, 1);
  }
}

// B14: a Mamba-2 decode state update with the 64 x 128 state tile loaded at two indices for a 4-D state (the head
// index forgotten). Key words: "index", "dimension".
PK_KERNEL void b14_state_tile_too_few_indices(Tensor<f32, 4> state, Tensor<f32, 2> y) {
  for (auto [b, h] : tiles(state.dim(0), state.dim(1), {1, 1}))
    store(y, row_sum(load<64, 128>(state, b, 0)), b, 0);
}

// B15: min-p's keep mask combined with a C++ bool flag (whether min-p is enabled for the batch). Key words: "a
// mask combines with tiles, not with a C++ bool".
#ifdef PK_CXX_B15
PK_KERNEL void b15_mask_and_cxx_bool(Tensor<f32, 2> p, Tensor<f32, 2> out, float min_p, index enabled) {
  for (auto [b, n] : tiles(p.rows(), p.cols(), {4, 1024})) {
    auto t = load<4, 1024>(p, b, n);
    store(out, where((t < min_p) && (enabled != 0), 0.0f, t), b, n);
  }
}
#endif

// B16: vLLM's copy_blocks written in place on one cache (gather from the source blocks, scatter into the
// destination blocks of the same tensor in one loop). Key words: see finding 3.
PK_KERNEL void b16_copy_blocks_inplace(Tensor<i32, 2> pairs, Tensor<bf16, 2> kc, index bs) {
  for (auto [i, j] : tiles(pairs.rows(), bs, {1, 16})) {
    auto r = cast<i32>(row_index<16, 1>(j));
    auto src = pairs.at(i, 0) * bs + r;
    auto dst = where(r < bs, pairs.at(i, 1) * bs + r, -1);
    for (auto n : range(0, kc.cols(), 256)) store_rows(kc, load_rows<16, 256>(kc, src, n), dst, n);
  }
}

// F1 (finding 1, now refused as a race: lit F1): a packed K|V cache [NS, 2 HD] (K in columns
// 0 .. HD - 1, V from HD) written by store_rows with 128-wide tiles at n and HD + n. When HD is not a multiple of
// 128, the last K tile's padding columns (zeros) are stored at columns HD .. (a store clips at the tensor's edge,
// and store_rows skips only padding rows), over V's first columns, which the n = 0 iteration stores, in no
// order. The same two stores written with store() are refused as a race (lit F1P); with store_rows nothing is
// reported.
PK_KERNEL void f1_packed_kv_cache_padding(Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<i32, 1> slot,
                                          Tensor<bf16, 2> kvc) {
  index hd = k.cols();
  for (auto [t, n] : tiles(k.rows(), k.cols(), {16, 128})) {
    auto s = load<16>(slot, t);
    store_rows(kvc, load<16, 128>(k, t, n), s, n);
    store_rows(kvc, load<16, 128>(v, t, n), s, hd + n);
  }
}

// F1P: the same packing with plain stores at the token's own row (refused: the contrast for finding 1).
PK_KERNEL void f1p_packed_kv_plain_store(Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> kvc) {
  index hd = k.cols();
  for (auto [t, n] : tiles(k.rows(), k.cols(), {16, 128})) {
    store(kvc, load<16, 128>(k, t, n), t, n);
    store(kvc, load<16, 128>(v, t, n), t, hd + n);
  }
}

// F1B (finding 1): store_rows of 128-wide tiles at column n / 2 with a column step of 128: neighbouring
// iterations' tiles overlap by 64 columns whatever the sizes; accepted with no diagnostic (store() at n / 2 is
// refused, docs/language.md "What the checks refuse").
PK_KERNEL void f1b_store_rows_half_column(Tensor<bf16, 2> k, Tensor<i32, 1> slot, Tensor<bf16, 2> c) {
  for (auto [t, n] : tiles(k.rows(), k.cols(), {16, 128})) store_rows(c, load<16, 128>(k, t, n), load<16>(slot, t), n / 2);
}

// F3 (finding 3: compiles, and is wrong by the language's no-overlap rule, with nothing to catch it): the
// repetition penalty written with the [B, V] output and its flat [B V, 1] view passed as two arguments (the only
// way to reach single elements of a row by id is a flat view; see the findings). pkc takes distinct arguments not
// to overlap, so the scatter through out_flat is not ordered after the copy into out: no barrier, and a copy tile
// that runs after the scatter overwrites the penalised logits with the raw ones.
PK_KERNEL void f3_penalty_two_views_unordered(Tensor<f32, 2> logits, Tensor<f32, 2> logits_flat, Tensor<i32, 2> prev,
                                              Tensor<f32, 2> out, Tensor<f32, 2> out_flat, float penalty) {
  for (auto [b, n] : tiles(logits.rows(), logits.cols(), {8, 1024})) store(out, load<8, 1024>(logits, b, n), b, n);
  index v = logits.cols();
  for (auto [b, j] : tiles(prev.rows(), prev.cols(), {1, 64})) {
    auto ids = reshape<64, 1>(load<1, 64>(prev, b, j));
    auto flat = where(ids >= 0, ids + b * v, -1);
    auto x = load_rows<64, 1>(logits_flat, flat, 0);
    store_rows(out_flat, where(x > 0.0f, x * (1.0f / penalty), x * penalty), flat, 0);
  }
}
