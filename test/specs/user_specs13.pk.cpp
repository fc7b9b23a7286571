// The thirteenth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs, aimed at the recent
// changes: attention in f16 on the Hopper attention template (and the mixed-type cases that must
// stay on the general path), the explicit primitives with tiles of a tensor's trailing dimensions
// (3-D and 4-D symmetric tensors, 2-D and 1-D tiles, 1 x N rows into 1-D tensors), hand-written
// protocols the checker must accept, and small variations of shipped GEMM / norm / collective
// specs. Each kernel compiles alone (pkc FILE --kernel NAME); the emitted CUDA of each was read
// (test/specs/specs13_findings.md lists what was checked). Part (b), kernels that must be refused,
// is user_specs13_bad.pk.cpp.
#include <pk/spec.h>
using namespace pk;

// ========================================================================================== Attention in f16 on the Hopper attention template (q, k, v, o f16, p cast to f16)

// O = softmax(Q K^T * scale) V for [S, 64] f16 tensors (no lse); takes the f16 template instance
// (ParamsOf<NoScoreMap, true>).
PK_KERNEL void a_f16_d64(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
  }
}
// Causal grouped-query attention on [H, S, 128] f16 q and [H/G, S, 128] f16 k, v (K and V at head h /
// group), with the row log-sum-exp into [H, S, 1] f32; f16 template, kv_group = group.
PK_KERNEL void gqa_f16_causal_d128(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o,
                                   Tensor<f32, 3> lse, index group, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h / group, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 128>(v, h / group, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}
// Causal ALiBi attention (score minus (row - col) * slope, slope = 2^(-8 (h + 1) / H)) on [H, S, 64]
// f16; f16 template with a score map.
PK_KERNEL void alibi_f16_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    float slope = pow(2.0f, -8.0f * float(h + 1) / float(q.dim(0)));
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale -
               (row_index<64, 64>(m) - col_index<64, 64>(n)) * slope;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
  }
}
// Gemma-2 soft-capped scores (tanh(s * scale / cap) * cap) on [S, 128] f16 with a 1-D lse [S]; f16
// template with a score map.
PK_KERNEL void softcap_f16_d128(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f16, 2> o,
                                Tensor<f32, 1> lse, float scale, float cap) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = tanh(mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * (scale / cap)) * cap;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
    store(lse, mx + log(l), m);
  }
}
// Causal sliding-window attention (keys col > row - window) on [H, S, 64] f16 with lse; f16 template,
// score map and key-window skipping.
PK_KERNEL void window_f16_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o,
                              Tensor<f32, 3> lse, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      s = where((col <= row) * (col > row - window) * (col < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}
// Causal attention on [S, 128] f16 written with 128-row query tiles and 128-key steps and the mask as
// min(causal, in-range); f16 template (retiled).
PK_KERNEL void causal_f16_d128_bm128(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {128})) {
    auto qt = load<128, 128>(q, m, 0);
    auto mx = zeros<f32, 128, 1>() - 1e30f;
    auto l = zeros<f32, 128, 1>();
    auto acc = zeros<f32, 128, 128>();
    for (auto n : range(0, m + 128, 128)) {
      auto s = mma_t(qt, load<128, 128>(k, n, 0), zeros<f32, 128, 128>()) * scale;
      s = where(min(col_index<128, 128>(n) <= row_index<128, 128>(m), col_index<128, 128>(n) < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<128, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
  }
}
// Attention with a per-head additive bias read from an f16 [H, Sq, Sk] tensor at [h, m, n] (cast to
// f32) on [H, S, 64] f16; f16 template with a score map reading an f16 tensor (compiled with nvcc for
// sm_90a).
PK_KERNEL void bias3d_f16_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o,
                              Tensor<f16, 3> bias, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale + cast<f32>(load<64, 64>(bias, h, m, n));
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
  }
}
// Attention with a key-padding mask from an f16 [Sk] tensor (keep > 0.5) on [S, 64] f16; f16 template
// with a score map.
PK_KERNEL void keymask_f16_d64(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f16, 2> o,
                               Tensor<f16, 1> keep, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.rows()) * cast<f32>(load<1, 64>(keep, n) > 0.5f), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
  }
}
// Causal f16 attention whose key tiles are 128 rows while the query tiles are 64 (keys past the query
// masked); f16 template.
PK_KERNEL void w_k128(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 128)) {
      auto s = mma_t(qt, load<128, 64>(k, n, 0), zeros<f32, 64, 128>()) * scale;
      s = where((col_index<64, 128>(n) <= row_index<64, 128>(m)) * (col_index<64, 128>(n) < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<128, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
  }
}
// Causal f16 attention with 32-key steps and 32-row key tiles; f16 template.
PK_KERNEL void w_k32(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 32)) {
      auto s = mma_t(qt, load<32, 64>(k, n, 0), zeros<f32, 64, 32>()) * scale;
      s = where((col_index<64, 32>(n) <= row_index<64, 32>(m)) * (col_index<64, 32>(n) < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<32, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
  }
}
// Attention with a bottom-right causal mask col <= row + off (off an argument) and lse; a score map,
// not the template's own causal flag.
PK_KERNEL void v_bottom_right(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f16, 2> o, Tensor<f32, 2> lse, index off, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      s = where((col <= row + off) * (col < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
    store(lse, mx + log(l), m, 0);
  }
}
// Attention with a strict causal mask col < row (row 0 sees no key: undefined row, as the docs say); a
// score map, not the causal flag.
PK_KERNEL void v_strict_causal(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f16, 2> o, Tensor<f32, 2> lse, index off, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      s = where((col < row) * (col < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
    store(lse, mx + log(l), m, 0);
  }
}
// ========================================================================================== Mixed element types: these must take the general path (they do)

// q, k, v f16, p cast to f16, o stored as bf16: general path ('the output must be stored once as
// cast<T>(acc / l), T q's type').
PK_KERNEL void a_mix_o_bf16(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}
// q, k f16, v bf16 with p cast to bf16, o f16: general path ('p must be cast to q's type').
PK_KERNEL void a_mix_v_bf16(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<bf16, 2> v, Tensor<f16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
  }
}
// q, k, v f16, o stored in f32 without a cast: general path.
PK_KERNEL void a_f16_o_f32(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f32, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, acc / l, m, 0);
  }
}
// ========================================================================================== Explicit primitives with tiles of a tensor's trailing dimensions

// Ring push of 2-D tiles into plane [1, 2] of a 4-D Sym [A, B, R, C] on next_rank, Grid barriers, then
// a local copy of that plane into out.
PK_KERNEL void p1_store4d(Sym<f32, 2> x, Sym<f32, 4> buf, Tensor<f32, 4> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_async(Ldst, buf.on(next_rank()), load<16, 128>(x, m, n), 1, 2, m, n);
  prim::barrier(prim::flag(1, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(buf, 1, 2, m, n), 1, 2, m, n);
  prim::barrier(prim::flag(2, Grid));
}
// 1-D tiles of x pushed into row [1, 2, :] of next's 3-D buffer; then read back from this rank's own
// copy with prim::load_peer of 1-D tiles.
PK_KERNEL void p2_store1d_in3d(Sym<f32, 1> x, Sym<f32, 3> buf, Tensor<f32, 3> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto n : tiles(x.size(), {256}))
    prim::store_async(Ldst, buf.on(next_rank()), load<256>(x, n), 1, 2, n);
  prim::barrier(prim::flag(1, Grid));
  for (auto n : tiles(x.size(), {256}))
    store(out, prim::load_peer<256>(Ldst, buf.on(rank()), 1, 2, n), 1, 2, n);
  prim::barrier(prim::flag(2, Grid));
}
// 1 x N rows of row 0 of a 2-D Sym added (store_add_async) into next's 1-D buffer; read back from
// prev's copy as 1 x N rows stored into a 1-D out.
PK_KERNEL void p3_row_into_1d(Sym<f32, 2> x, Sym<f32, 1> buf, Tensor<f32, 1> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto n : tiles(x.cols(), {256}))
    prim::store_add_async(Ldst, buf.on(next_rank()), load<1, 256>(x, 0, n), n);
  prim::barrier(prim::flag(1, Grid));
  for (auto n : tiles(x.cols(), {256}))
    store(out, prim::load_peer<1, 256>(Ldst, buf.on(prev_rank()), n), n);
  prim::barrier(prim::flag(2, Grid));
}
// prim::reduce (Sum over ranks) of 2-D tiles of plane [1, 1] of a 4-D Sym into a 2-D out.
PK_KERNEL void p4_reduce4d(Sym<f32, 4> x, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.dim(2), x.dim(3), {16, 128}))
    store(out, prim::reduce<16, 128>(Sum, Ldst, x, 1, 1, m, n), m, n);
  prim::barrier(prim::flag(1, Grid));
}
// prim::reduce (Max over ranks) of a 1-D Sym read as 1 x 256 rows, stored into row 0 of a 2-D out.
PK_KERNEL void p5_reduce_row1d(Sym<f32, 1> x, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto n : tiles(x.size(), {256}))
    store(out, prim::reduce<1, 256>(Max, Ldst, x, n), 0, n);
  prim::barrier(prim::flag(1, Grid));
}
// 1-D tiles of row r (an argument; any r, outside reads zeros) of prev's 2-D Sym into a 1-D out.
PK_KERNEL void p8_row_from2d(Sym<f32, 2> x, Tensor<f32, 1> out, index r) {
  prim::barrier(prim::flag(0, Grid));
  for (auto n : tiles(x.cols(), {256}))
    store(out, prim::load_peer<256>(Ldst, x.on(prev_rank()), r, n), n);
  prim::barrier(prim::flag(1, Grid));
}
// Row sums of 64 x 128 tiles (64 x 1 columns) pushed into next's 1-D buffer at m.
PK_KERNEL void p10_col_into_1d(Sym<f32, 2> x, Sym<f32, 1> buf) {
  prim::barrier(prim::flag(0, Grid));
  for (auto m : tiles(x.rows(), {64}))
    prim::store_async(Ldst, buf.on(next_rank()), row_sum(load<64, 128>(x, m, 0)), m);
  prim::barrier(prim::flag(1, Grid));
}
// A·B where A's 64 x 32 tiles are pulled from prev's 3-D Sym [H, S, K] at head h (register tile
// reshaped, then mma).
PK_KERNEL void b9_mma_trailing_peer(Sym<bf16, 3> a, Tensor<bf16, 2> b, Tensor<f32, 3> c) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [h, m] : tiles(a.dim(0), a.dim(1), {1, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.dim(2), 32))
      acc = mma(prim::load_peer<64, 32>(Ldst, a.on(prev_rank()), h, m, k), load<32, 64>(b, k, 0), acc);
    store(c, acc, h, m, 0);
  }
  prim::barrier(prim::flag(1, Grid));
}
// prim::reduce (Min) of 1-D tiles of the last dimension of a 4-D Sym at [1, 2, 3, n].
PK_KERNEL void b10_reduce_4d_1d_tile(Sym<f32, 4> x, Tensor<f32, 1> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto n : tiles(x.dim(3), {256}))
    store(out, prim::reduce<256>(Min, Ldst, x, 1, 2, 3, n), n);
  prim::barrier(prim::flag(1, Grid));
}
// prim::reduce (Max) of i32 2-D tiles of plane 0 of a 3-D Sym.
PK_KERNEL void b5_reduce_i32_max_3d(Sym<i32, 3> x, Tensor<i32, 2> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.dim(1), x.dim(2), {16, 128}))
    store(out, prim::reduce<16, 128>(Max, Ldst, x, 0, m, n), m, n);
  prim::barrier(prim::flag(1, Grid));
}
// ========================================================================================== Hand-written protocols (pk::prim) that are correct and accepted

// Ring handoff of every head of [H, S, D]: 2-D tiles pushed into next's y at [h, m, 0], one Block
// flag, the consumer tiled as the producer, out = y + x.
PK_KERNEL void c1_ring_heads(Sym<f32, 3> x, Sym<f32, 3> y, Tensor<f32, 3> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16}))
    prim::store_async(Ldst, y.on(next_rank()), load<16, 64>(x, h, m, 0), h, m, 0);
  prim::signal(f, next_rank());
  prim::wait(f, 1);
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16}))
    store(out, load<16, 64>(y, h, m, 0) + load<16, 64>(x, h, m, 0), h, m, 0);
  prim::barrier(prim::flag(2));
}
// All-gather by pushes into plane rank() of every rank's y [W, R, C], Grid barriers, out = y / 2 (y's
// planes read over y's own shape).
PK_KERNEL void c2_ag_planes(Sym<f32, 2> x, Sym<f32, 3> y, Tensor<f32, 3> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    for (auto p : range(0, world_size()))
      prim::store_async(Ldst, y.on(p), load<16, 128>(x, m, n), rank(), m, n);
  prim::barrier(prim::flag(1, Grid));
  for (auto [p, m, n] : tiles(y.dim(0), y.dim(1), y.dim(2), {1, 16, 128}))
    store(out, load<16, 128>(y, p, m, n) * 0.5f, p, m, n);
  prim::barrier(prim::flag(2, Grid));
}
// Reduce to an owner (argument) by adds into plane [0, 0] of a 4-D Sym, zeroed first behind a Grid
// barrier; the owner's out = the sum.
PK_KERNEL void c3_adds_4d(Tensor<f32, 2> x, Sym<f32, 4> acc, Tensor<f32, 2> out, index owner) {
  for (auto [m, n] : tiles(acc.dim(2), acc.dim(3), {16, 128})) store(acc, zeros<f32, 16, 128>(), 0, 0, m, n);
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_add_async(Ldst, acc.on(owner), load<16, 128>(x, m, n), 0, 0, m, n);
  prim::barrier(prim::flag(1, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(acc, 0, 0, m, n), m, n);
  prim::barrier(prim::flag(2, Grid));
}
// x = exp(a) per head, Block barrier, out = prim::reduce(Sum) of x over ranks at the same tiles (block
// b reads what block b of every rank wrote).
PK_KERNEL void c4_reduce_heads_block(Tensor<f32, 3> a, Sym<f32, 3> x, Tensor<f32, 3> out) {
  for (auto [h, m] : tiles(a.dim(0), a.dim(1), {1, 16}))
    store(x, exp(load<16, 128>(a, h, m, 0)), h, m, 0);
  prim::barrier(prim::flag(0));
  for (auto [h, m] : tiles(a.dim(0), a.dim(1), {1, 16}))
    store(out, prim::reduce<16, 128>(Sum, Ldst, x, h, m, 0), h, m, 0);
  prim::barrier(prim::flag(1));
}
// Four ring steps through two planes (s % 2) of a 3-D buffer with a 'full' flag and a 'free' flag per
// step; out accumulates the steps.
PK_KERNEL void c5_double_buffer_planes(Sym<f32, 2> x, Sym<f32, 3> buf, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto s : range(0, 4, 1)) {
    auto full = prim::flag(1 + s);
    auto free_ = prim::flag(5 + s);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      prim::store_async(Ldst, buf.on(next_rank()), load<16, 128>(x, m, n) * float(s + 1), s % 2, m, n);
    prim::signal(full, next_rank());
    prim::wait(full, 1);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      store(out, load<16, 128>(buf, s % 2, m, n) + load<16, 128>(out, m, n), m, n);
    prim::signal(free_, prev_rank());
    prim::wait(free_, 1);
  }
  prim::barrier(prim::flag(9));
}
// Ring all-gather by forwarding (W - 1 steps, one Block flag per step), planes of y [W, R, C]; every
// loop tiles over x's shape.
PK_KERNEL void c6_ring_ag_forward(Sym<f32, 2> x, Sym<f32, 3> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    store(y, load<16, 128>(x, m, n), rank(), m, n);
    prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(x, m, n), rank(), m, n);
  }
  prim::signal(prim::flag(2), next_rank());
  prim::wait(prim::flag(2), 1);
  for (auto s : range(1, world_size(), 1)) {
    index c = (rank() - s + world_size()) % world_size();
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(y, c, m, n), c, m, n);
    prim::signal(prim::flag(2 + s), next_rank());
    prim::wait(prim::flag(2 + s), 1);
  }
  prim::barrier(prim::flag(1));
}
// Exchange of heads with the mirror rank W - 1 - rank() (itself at the middle), Block flag, out = y -
// x.
PK_KERNEL void c7_mirror_exchange_heads(Sym<f32, 3> x, Sym<f32, 3> y, Tensor<f32, 3> out) {
  index peer = world_size() - 1 - rank();
  prim::barrier(prim::flag(0));
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 32}))
    prim::store_async(Ldst, y.on(peer), load<32, 64>(x, h, m, 0), h, m, 0);
  prim::signal(prim::flag(1), peer);
  prim::wait(prim::flag(1), 1);
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 32}))
    store(out, load<32, 64>(y, h, m, 0) - load<32, 64>(x, h, m, 0), h, m, 0);
  prim::barrier(prim::flag(2));
}
// Two-shot all-reduce by hand on [H, S, D]: rank r reduces heads r, r + W, ... (prim::reduce of 2-D
// tiles) and pushes the sum into every rank's y.
PK_KERNEL void c8_two_shot_heads(Sym<f32, 3> x, Sym<f32, 3> y) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [hh, m] : tiles((x.dim(0) + world_size() - 1) / world_size(), x.dim(1), {1, 16})) {
    index h = hh * world_size() + rank();
    auto t = prim::reduce<16, 128>(Sum, Ldst, x, h, m, 0);
    for (auto p : range(0, world_size()))
      prim::store_async(Ldst, y.on(p), t, h, m, 0);
  }
  prim::barrier(prim::flag(1, Grid));
}
// A flag per (head, row tile) (run-time slot), push, signal, wait, out = y * x.
PK_KERNEL void c9_per_tile_flags_heads(Sym<f32, 3> x, Sym<f32, 3> y, Tensor<f32, 3> out) {
  prim::barrier(prim::flag(0));
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 64})) {
    auto f = prim::flag(1 + h * ((x.dim(1) + 63) / 64) + m / 64);
    auto t = load<64, 32>(x, h, m, 0);
    prim::store_async(Ldst, y.on(next_rank()), t, h, m, 0);
    prim::signal(f, next_rank());
    prim::wait(f, 1);
    store(out, load<64, 32>(y, h, m, 0) * t, h, m, 0);
  }
}
// 1 x 1 x 64 rows of a [B, S, D] tensor pushed into owner b % W at column block rank() * 64, Grid
// barriers, copy out.
PK_KERNEL void c10_rows_to_owner(Tensor<f32, 3> x, Sym<f32, 3> y, Tensor<f32, 3> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {1, 1}))
    prim::store_async(Ldst, y.on(b % world_size()), load<1, 1, 64>(x, b, s, 0), b, s, rank() * 64);
  prim::barrier(prim::flag(1, Grid));
  for (auto [b, s] : tiles(y.dim(0), y.dim(1), {1, 1}))
    store(out, load<1, 1, 64>(y, b, s, 0), b, s, 0);
  prim::barrier(prim::flag(2, Grid));
}
// Halo exchange per head (first row to prev's halo row 1, last row to next's halo row 0: 1 x D rows
// into a 3-D Sym), Grid barrier, a 3-row stencil whose rows before the start read zeros.
PK_KERNEL void c11_halo_heads(Sym<f32, 3> x, Sym<f32, 3> halo, Tensor<f32, 3> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto h : tiles(x.dim(0), {1})) {
    prim::store_async(Ldst, halo.on(prev_rank()), load<1, 128>(x, h, 0, 0), h, 1, 0);
    prim::store_async(Ldst, halo.on(next_rank()), load<1, 128>(x, h, x.dim(1) - 1, 0), h, 0, 0);
  }
  prim::barrier(prim::flag(1, Grid));
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16}))
    store(out, load<16, 128>(x, h, m - 1, 0) + load<16, 128>(x, h, m, 0) + load<16, 128>(x, h, m + 1, 0) +
               load<1, 128>(halo, h, 0, 0) * 0.0f, h, m, 0);
  prim::barrier(prim::flag(2, Grid));
}
// ========================================================================================== GEMM epilogues

// C = relu(A·B^T + bias[n] + R) in f16 (f16 bias [N] and residual [M, N]); GEMM template, f16 epilogue
// loads.
PK_KERNEL void g1_f16_bias_res_relu(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 1> bias, Tensor<f16, 2> r, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    auto y = acc + cast<f32>(load<1, 128>(bias, n)) + cast<f32>(load<128, 128>(r, m, n));
    store(c, cast<f16>(max(y, 0.0f)), m, n);
  }
}
// C = silu((A·B) * s[m]) into f32, s an f32 [M] column; template (f32 output).
PK_KERNEL void g2_bf16_rowscale_silu_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> s, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 128>(b, k, n), acc);
    store(c, silu(acc * load<64, 1>(s, m)), m, n);
  }
}
// C = A·B with f16 operands stored as bf16; template.
PK_KERNEL void g3_f16_in_bf16_out(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 256>(b, k, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
// C += A·B^T (C read at the tile it stores), bf16; template.
PK_KERNEL void g4_accumulate_into_c(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<128, 256>(c, m, n))), m, n);
  }
}
// C = gelu_erf(A·B^T + rb[0, n] - cb[m, 0]) with a bf16 [1, N] row and f32 [M, 1] column; template.
PK_KERNEL void g5_row_col_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> rb, Tensor<f32, 2> cb, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(gelu_erf(acc + cast<f32>(load<1, 256>(rb, 0, n)) - load<128, 1>(cb, m, 0))), m, n);
  }
}
// C = A[:, 64:]·B[:, 64:]^T (K loop from 64): general path.
PK_KERNEL void g6_k_from_64(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(64, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
// A·B^T with the K loop bounded by b.cols(); template whose twin rule 'B must have A's K columns'
// sends other shapes to the general twin.
PK_KERNEL void g7_k_bound_bcols(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, b.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
// A·B^T over C's tiles with K bounded by an argument: general path.
PK_KERNEL void g8_bounds_args(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index klen) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, klen, 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
// Logits A·B^T into f32 with columns past vocab set to -1e4; template.
PK_KERNEL void g9_vocab_mask_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, index vocab) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, where(col_index<128, 256>(n) < vocab, acc, -1e4f), m, n);
  }
}
// C = A·B^T * sc[layer] + bias2d[layer, n] (scalars at an argument index); template.
PK_KERNEL void g10_scalar_at_arg(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> sc, Tensor<bf16, 2> bias2d, Tensor<bf16, 2> c, index layer) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * sc.at(layer) + cast<f32>(load<1, 256>(bias2d, layer, n))), m, n);
  }
}
// A·B^T stored at a column offset of a wider C: general path.
PK_KERNEL void g11_out_col_offset(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index off) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n + off);
  }
}
// A·B^T kept on even rows where keep[m] != 0 (i32 column), zero elsewhere; template.
PK_KERNEL void g12_rowparity_i32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<i32, 1> keep, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto ok = (cast<i32>(row_index<128, 256>(m)) % 2 == 0) * (load<128, 1>(keep, m) != 0);
    store(c, cast<bf16>(where(ok, acc, 0.0f)), m, n);
  }
}
// ========================================================================================== Norms, softmax, collectives along other dimensions

// LayerNorm of 1024 f16 columns (4-row tiles), f32 weight and bias, f16 out.
PK_KERNEL void m1_layernorm_f16(Tensor<f16, 2> x, Tensor<f32, 1> w, Tensor<f32, 1> b, Tensor<f16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto t = cast<f32>(load<4, 1024>(x, m, 0));
    auto mu = row_sum(t) * (1.0f / 1024.0f);
    auto d = t - mu;
    auto var = row_sum(d * d) * (1.0f / 1024.0f);
    store(y, cast<f16>(d * rsqrt(var + eps) * load<1, 1024>(w, 0) + load<1, 1024>(b, 0)), m, 0);
  }
}
// Row softmax of 2048 bf16 columns with 2-row tiles.
PK_KERNEL void m2_softmax_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {2})) {
    auto t = cast<f32>(load<2, 2048>(x, m, 0));
    auto e = exp(t - row_max(t));
    store(y, cast<bf16>(e / row_sum(e)), m, 0);
  }
}
// RMSNorm of [B, S, 512] bf16 with 8 x 512 tiles of the trailing dimensions.
PK_KERNEL void m3_rmsnorm_3d(Tensor<bf16, 3> x, Tensor<bf16, 1> w, Tensor<bf16, 3> y, float eps) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {1, 8})) {
    auto t = cast<f32>(load<8, 512>(x, b, s, 0));
    auto r = rsqrt(row_sum(t * t) * (1.0f / 512.0f) + eps);
    store(y, cast<bf16>(t * r * cast<f32>(load<1, 512>(w, 0))), b, s, 0);
  }
}
// All-gather of [R, C] column shards into [R, W C].
PK_KERNEL void m4_ag_dim1(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  all_gather(x, y, 1);
}
// Reduce-scatter (Sum) along dimension 1, then out = y + bias[n].
PK_KERNEL void m5_rs_dim1_bias(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 1> bias, Tensor<f32, 2> out) {
  reduce_scatter(Sum, x, y, 1);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {8, 256}))
    store(out, load<8, 256>(y, m, n) + load<1, 256>(bias, n), m, n);
}
// All-gather along dimension 2 of [H, S, D/W] f16 shards.
PK_KERNEL void m6_ag_dim2(Sym<f16, 3> x, Sym<f16, 3> y) {
  all_gather(x, y, 2);
}
// Reduce-scatter (Max) along dimension 1 of a 3-D f32 tensor.
PK_KERNEL void m7_rs_dim1_3d_max(Sym<f32, 3> x, Sym<f32, 3> y) {
  reduce_scatter(Max, x, y, 1);
}
// All-gather along dimension 1 in place.
PK_KERNEL void m8_ag_dim1_inplace(Sym<f32, 2> x) {
  all_gather(x, x, 1);
}
// All-reduce, then each row divided by s[m] (16 x 1 columns of a 1-D tensor).
PK_KERNEL void m9_ar_then_colnorm(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 1> s, Tensor<f32, 2> out) {
  all_reduce(Sum, x, y);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    store(out, load<16, 64>(y, m, n) / load<16, 1>(s, m), m, n);
}