// The fifteenth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs, aimed mostly at this
// session's changes: ring attention (other slot layouts, f16, head dims 64 / 128, GQA with an offset,
// a causal contiguous layout, pulls instead of pushes), K/V read at c + h with c from arguments, the
// rank, prev_rank() and min / max; score maps and GEMM epilogues using rank() and integer min / max and
// one 1-D tensor read as a row and a column; batched GEMMs with one shared 2-D weight; the new
// write-overlap check (kernels it must NOT refuse: strided stores, stores at 2 * n, tiles exactly the
// step, other tensors, nested range loops, 1-D / 3-D / 4-D tensors, peer stores); zero fills before a
// GEMM + reduce-scatter; and norms, softmax, rotary, collectives along dimensions, phases and in place,
// MoE, fp8 and index min / max. Each kernel compiles alone (pkc FILE --kernel NAME) and the file compiles
// as a whole; test/specs/specs15_findings.md says what was checked in the emitted CUDA. Part (b) is
// user_specs15_bad.pk.cpp. (ra_gqa_d128 and every other ring kernel here compile, but their step-0
// launch is refused by its host check today: finding F1.)
#include <pk/spec.h>
using namespace pk;

// ========================================================================================== Ring attention

// Ring attention in f16, head dim 64, non-causal: K/V pushed into the next rank's other slot of kr, vr [2H, S, 64].
PK_KERNEL void ra_f16_d64(Tensor<f16, 3> q, Sym<f16, 3> kr, Sym<f16, 3> vr, Tensor<f16, 3> o, Tensor<f32, 3> lse, Tensor<f16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = q.dim(1);
  {
    index cur = 0, nxt = H, sends = min(world_size() - 1, 1);
    for (auto [h, m] : tiles(H * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 64>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, kr.dim(1), 64)) {
        auto sc = mma_t(qt, load<64, 64>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where(col_index<64, 64>(n) < kr.dim(1), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<f16>(p), load<64, 64>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(o, cast<f16>(acc / l), h, m, 0);
      store(lse, mx + log(l), h, m, 0);
    }
  }
  for (auto s : range(1, world_size())) {
    index cur = s % 2 * H, nxt = (s + 1) % 2 * H;
    index sends = min(world_size() - 1 - s, 1);
    for (auto [h, m] : tiles(H * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 64>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, kr.dim(1), 64)) {
        auto sc = mma_t(qt, load<64, 64>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where(col_index<64, 64>(n) < kr.dim(1), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<f16>(p), load<64, 64>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(op, cast<f16>(acc / l), h, m, 0);
      store(lp, mx + log(l), h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto l0 = load<64, 1>(lse, h, m, 0);
      auto l1 = load<64, 1>(lp, h, m, 0);
      auto top = max(l0, l1);
      auto w0 = exp(l0 - top);
      auto w1 = exp(l1 - top);
      auto o1 = cast<f32>(load<64, 64>(o, h, m, 0)) * w0 + cast<f32>(load<64, 64>(op, h, m, 0)) * w1;
      store(o, cast<f16>(o1 / (w0 + w1)), h, m, 0);
      store(lse, top + log(w0 + w1), h, m, 0);
    }
  }
}
// Grouped-query ring attention: kr, vr [2 Hkv, S, 128] (two slots of Hkv heads), q [H, S, 128] with H = G Hkv;
// K/V read at cur + h / G (cur = s % 2 * Hkv).
PK_KERNEL void ra_gqa_d128(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Sym<bf16, 3> vr, Tensor<bf16, 3> o, Tensor<f32, 3> lse, Tensor<bf16, 3> op, Tensor<f32, 3> lp, float scale, index G) {
  index H = q.dim(0), S = q.dim(1);
  index Hkv = kr.dim(0) / 2;
  {
    index cur = 0, nxt = Hkv, sends = min(world_size() - 1, 1);
    for (auto [h, m] : tiles(Hkv * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 128>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 128>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto qt = load<64, 128>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 128>();
      for (auto n : range(0, kr.dim(1), 64)) {
        auto sc = mma_t(qt, load<64, 128>(kr, cur + h / G, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where(col_index<64, 64>(n) < kr.dim(1), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<bf16>(p), load<64, 128>(vr, cur + h / G, n, 0), acc * corr);
        mx = mnew;
      }
      store(o, cast<bf16>(acc / l), h, m, 0);
      store(lse, mx + log(l), h, m, 0);
    }
  }
  for (auto s : range(1, world_size())) {
    index cur = s % 2 * Hkv, nxt = (s + 1) % 2 * Hkv;
    index sends = min(world_size() - 1 - s, 1);
    for (auto [h, m] : tiles(Hkv * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 128>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 128>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto qt = load<64, 128>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 128>();
      for (auto n : range(0, kr.dim(1), 64)) {
        auto sc = mma_t(qt, load<64, 128>(kr, cur + h / G, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where(col_index<64, 64>(n) < kr.dim(1), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<bf16>(p), load<64, 128>(vr, cur + h / G, n, 0), acc * corr);
        mx = mnew;
      }
      store(op, cast<bf16>(acc / l), h, m, 0);
      store(lp, mx + log(l), h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto l0 = load<64, 1>(lse, h, m, 0);
      auto l1 = load<64, 1>(lp, h, m, 0);
      auto top = max(l0, l1);
      auto w0 = exp(l0 - top);
      auto w1 = exp(l1 - top);
      auto o1 = cast<f32>(load<64, 128>(o, h, m, 0)) * w0 + cast<f32>(load<64, 128>(op, h, m, 0)) * w1;
      store(o, cast<bf16>(o1 / (w0 + w1)), h, m, 0);
      store(lse, top + log(w0 + w1), h, m, 0);
    }
  }
}
// Ring attention by pulls: each step pulls the previous rank's current slot into this rank's other slot
// (instead of pushing into the next rank), then the attention at cur + h on the template and the merge.
PK_KERNEL void ra_pull_d64(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Sym<bf16, 3> vr, Tensor<bf16, 3> o, Tensor<f32, 3> lse, Tensor<bf16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = q.dim(1);
  {
    index cur = 0, nxt = H, sends = min(world_size() - 1, 1);
    for (auto [h, m] : tiles(H * sends, S, {1, 64})) {
      store(kr, load<1, 64, 64>(kr.on(prev_rank()), cur + h, m, 0), nxt + h, m, 0);
      store(vr, load<1, 64, 64>(vr.on(prev_rank()), cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, kr.dim(1), 64)) {
        auto sc = mma_t(qt, load<64, 64>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where(col_index<64, 64>(n) < kr.dim(1), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<bf16>(p), load<64, 64>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(o, cast<bf16>(acc / l), h, m, 0);
      store(lse, mx + log(l), h, m, 0);
    }
  }
  for (auto s : range(1, world_size())) {
    index cur = s % 2 * H, nxt = (s + 1) % 2 * H;
    index sends = min(world_size() - 1 - s, 1);
    for (auto [h, m] : tiles(H * sends, S, {1, 64})) {
      store(kr, load<1, 64, 64>(kr.on(prev_rank()), cur + h, m, 0), nxt + h, m, 0);
      store(vr, load<1, 64, 64>(vr.on(prev_rank()), cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, kr.dim(1), 64)) {
        auto sc = mma_t(qt, load<64, 64>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where(col_index<64, 64>(n) < kr.dim(1), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<bf16>(p), load<64, 64>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(op, cast<bf16>(acc / l), h, m, 0);
      store(lp, mx + log(l), h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto l0 = load<64, 1>(lse, h, m, 0);
      auto l1 = load<64, 1>(lp, h, m, 0);
      auto top = max(l0, l1);
      auto w0 = exp(l0 - top);
      auto w1 = exp(l1 - top);
      auto o1 = cast<f32>(load<64, 64>(o, h, m, 0)) * w0 + cast<f32>(load<64, 64>(op, h, m, 0)) * w1;
      store(o, cast<bf16>(o1 / (w0 + w1)), h, m, 0);
      store(lse, top + log(w0 + w1), h, m, 0);
    }
  }
}
// Causal ring attention on the contiguous layout (rank r holds positions [r S, (r + 1) S)): step 0 is a
// plain causal attention; at step s the block came from rank j = (r - s) mod W and a key is visible when
// its global position j S + col <= r S + row (all visible for j < r, none for j > r: then lse ~ -1e30 and
// the merge gives the partial weight 0). The mask is a score map with the rank and the host loop's step.
PK_KERNEL void ra_contig_causal_d128(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Sym<bf16, 3> vr, Tensor<bf16, 3> o, Tensor<f32, 3> lse, Tensor<bf16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = q.dim(1);
  {
    index cur = 0, nxt = H, sends = min(world_size() - 1, 1);
    for (auto [h, m] : tiles(H * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 128>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 128>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto qt = load<64, 128>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 128>();
      for (auto n : range(0, m + 64, 64)) {
        auto sc = mma_t(qt, load<64, 128>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<bf16>(p), load<64, 128>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(o, cast<bf16>(acc / l), h, m, 0);
      store(lse, mx + log(l), h, m, 0);
    }
  }
  for (auto s : range(1, world_size())) {
    index cur = s % 2 * H, nxt = (s + 1) % 2 * H;
    index sends = min(world_size() - 1 - s, 1);
    index j = (rank() + world_size() - s) % world_size();  // the block came from rank j
    for (auto [h, m] : tiles(H * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 128>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 128>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto qt = load<64, 128>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 128>();
      for (auto n : range(0, kr.dim(1), 64)) {
        auto sc = mma_t(qt, load<64, 128>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where((col_index<64, 64>(n) + float(j * S) <= row_index<64, 64>(m) + float(rank() * S)) * (col_index<64, 64>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<bf16>(p), load<64, 128>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(op, cast<bf16>(acc / l), h, m, 0);
      store(lp, mx + log(l), h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto l0 = load<64, 1>(lse, h, m, 0);
      auto l1 = load<64, 1>(lp, h, m, 0);
      auto top = max(l0, l1);
      auto w0 = exp(l0 - top);
      auto w1 = exp(l1 - top);
      auto o1 = cast<f32>(load<64, 128>(o, h, m, 0)) * w0 + cast<f32>(load<64, 128>(op, h, m, 0)) * w1;
      store(o, cast<bf16>(o1 / (w0 + w1)), h, m, 0);
      store(lse, top + log(w0 + w1), h, m, 0);
    }
  }
}

// ========================================================================================== K/V at an offset the host knows

// A KV cache of every layer stacked along the heads (k, v [L H, S, 64]): this layer's heads at layer H + h.
PK_KERNEL void a_layer_kv_cache(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale, index layer) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, layer * q.dim(0) + h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, layer * q.dim(0) + h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}
// GQA with K/V heads stacked after c others: head c + h / g.
PK_KERNEL void a_gqa_kv_offset(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale, index c, index g) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, c + h / g, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, c + h / g, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}
// K/V gathered from every rank ([W H, S, 64]); attend to the previous rank's heads (prev_rank() H + h).
PK_KERNEL void a_prev_rank_kv(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, prev_rank() * q.dim(0) + h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, prev_rank() * q.dim(0) + h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}
// The layer index clamped into the cache with integer min / max.
PK_KERNEL void a_minmax_layer(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale, index layer) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, min(max(layer, 0), k.dim(0) / q.dim(0) - 1) * q.dim(0) + h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, min(max(layer, 0), k.dim(0) / q.dim(0) - 1) * q.dim(0) + h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}
// f16, head dim 64, K/V at c + h.
PK_KERNEL void a_f16_d64_kv_offset(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o, float scale, index c) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, c + h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, c + h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
  }
}
// K and V in one tensor kv [2H, S, 64]: K heads [0, H), V heads [H, 2H). V at another offset than K: the general
// path (the template has one offset for both).
PK_KERNEL void a_kv_one_tensor(Tensor<bf16, 3> q, Tensor<bf16, 3> kv, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, kv.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(kv, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < kv.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(kv, q.dim(0) + h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}
// Tensor-parallel ALiBi: this rank holds heads [r H, (r + 1) H) of W H; the slope uses the global head.
PK_KERNEL void a_tp_alibi_rank(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    float slope = pow(2.0f, -8.0f * float(rank() * q.dim(0) + h + 1) / float(world_size() * q.dim(0)));
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale -
               (row_index<64, 64>(m) - col_index<64, 64>(n)) * slope;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}
// Context parallel after an all-gather of K/V: this rank's S queries are positions [r S, (r + 1) S) of the
// gathered keys; causal by global position (key col visible when col <= r S + row), a score map with rank().
PK_KERNEL void a_cp_causal_rank(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)) * (col_index<64, 64>(n) <= row_index<64, 64>(m) + float(rank() * q.dim(1))), s, -1e30f);
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
// Packed sequences over heads: one segment-id tensor seg [S] read as a column (queries) and a row (keys).
PK_KERNEL void a_segments_one_tensor_heads(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<i32, 1> seg, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)) * (cast<f32>(load<64, 1>(seg, m) == load<1, 64>(seg, n))), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// ========================================================================================== Batched GEMMs with a shared weight; epilogues with rank and min / max

// x [B, M, K] @ W [K, N] (one weight for every batch), f16 in, f32 out.
PK_KERNEL void bg_sw_kn_f32(Tensor<f16, 3> x, Tensor<f16, 2> w, Tensor<f32, 3> y) {
  for (auto [z, m, n] : tiles(x.dim(0), x.dim(1), w.cols(), {1, 128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, x.dim(2), 64))
      acc = mma(load<128, 64>(x, z, m, k), load<64, 128>(w, k, n), acc);
    store(y, acc, z, m, n);
  }
}
// x [B, M, K] @ W^T, W [N, K]: a bias table [W, N] read at this rank's row (load<1, 256>(bias, rank(), n)).
PK_KERNEL void bg_sw_rank_bias(Tensor<bf16, 3> x, Tensor<bf16, 2> w, Tensor<f32, 2> bias, Tensor<bf16, 3> y) {
  for (auto [z, m, n] : tiles(x.dim(0), x.dim(1), w.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.dim(2), 64))
      acc = mma_t(load<128, 64>(x, z, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc + load<1, 256>(bias, rank(), n)), z, m, n);
  }
}
// Vocabulary-parallel logits per batch: this rank's vocabulary columns start at rank() N; padding columns past
// vocab get -1e4 (the mask compares the global column).
PK_KERNEL void bg_sw_vocab_rank_mask(Tensor<bf16, 3> x, Tensor<bf16, 2> w, Tensor<f32, 3> logits, index vocab) {
  for (auto [z, m, n] : tiles(x.dim(0), x.dim(1), w.rows(), {1, 128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, x.dim(2), 64))
      acc = mma_t(load<128, 64>(x, z, m, k), load<128, 64>(w, n, k), acc);
    store(logits, where(col_index<128, 128>(n) + float(rank() * w.rows()) < float(vocab), acc, -1e4f), z, m, n);
  }
}
// Shared weight [N, K] with a per-batch scale s.at(z) and a per-batch residual, 128 x 128 tiles.
PK_KERNEL void bg_sw_scale_residual(Tensor<bf16, 3> x, Tensor<bf16, 2> w, Tensor<f32, 1> s, Tensor<bf16, 3> r,
                                    Tensor<bf16, 3> y) {
  for (auto [z, m, n] : tiles(x.dim(0), x.dim(1), w.rows(), {1, 128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, x.dim(2), 64))
      acc = mma_t(load<128, 64>(x, z, m, k), load<128, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc * s.at(z) + cast<f32>(load<128, 128>(r, z, m, n))), z, m, n);
  }
}
// Not a shared weight: w [B N, K] holds one [N, K] block per batch, read at z N + n (the general path).
PK_KERNEL void bg_w_rows_by_batch(Tensor<bf16, 3> a, Tensor<bf16, 2> w, Tensor<bf16, 3> c, index N) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), N, {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(w, z * N + n, k), acc);
    store(c, cast<bf16>(acc), z, m, n);
  }
}
// D^-1/2 (A B^T) D^-1/2 on a square output: one 1-D tensor d read as a column (rows) and a row (columns).
PK_KERNEL void g_sym_scale(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> d, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * load<128, 1>(d, m) * load<1, 256>(d, n)), m, n);
  }
}
// Rows at or past min(valid, M - rank()) zeroed: an integer min with the rank in an epilogue mask.
PK_KERNEL void g_rows_valid_min(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index valid) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(where(row_index<128, 256>(m) < float(min(valid, a.rows() - rank())), acc, 0.0f)), m, n);
  }
}
// A scale read at s.at(max(rank() - 1, 0)).
PK_KERNEL void g_rank_scale_at(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> s, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * s.at(max(rank() - 1, 0))), m, n);
  }
}

// ========================================================================================== Stores the write-overlap check must accept

// Each 64-column tile into the even 64-column blocks of y [M, 2N] (store at 2 n): gaps, no overlap.
PK_KERNEL void s_store_2n(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, n), m, 2 * n);
}
// gate and up interleaved in 64-column blocks: y[:, 2n .. 2n + 64) = gate, y[:, 2n + 64 .. 2n + 128) = up.
PK_KERNEL void s_gate_up_interleave(Tensor<f32, 2> g, Tensor<f32, 2> u, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 64})) {
    store(y, load<16, 64>(g, m, n), m, 2 * n);
    store(y, load<16, 64>(u, m, n), m, 2 * n + 64);
  }
}
// Rows of a and b interleaved in 16-row blocks (stores at 2 m and 2 m + 16).
PK_KERNEL void s_rows_2m(Tensor<f32, 2> a, Tensor<f32, 2> b, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 128})) {
    store(y, load<16, 128>(a, m, n), 2 * m, n);
    store(y, load<16, 128>(b, m, n), 2 * m + 16, n);
  }
}
// Two stores per tile, each half of the step (n and n + 64 with a 128 step): together exactly the tile.
PK_KERNEL void s_two_halves(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    store(y, load<16, 64>(x, m, n), m, n);
    store(y, load<16, 64>(x, m, n + 64) * 2.0f, m, n + 64);
  }
}
// A second store 64 columns on, but into another tensor (z), whose own stores do not overlap.
PK_KERNEL void s_diff_tensors(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    store(y, load<16, 128>(x, m, n), m, n);
    store(z, load<16, 128>(x, m, n) * 2.0f, m, n + 64);
  }
}
// A 1-D tile loop over rows with a range loop over columns inside.
PK_KERNEL void s_nested_range(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto n : range(0, x.cols(), 256))
      store(y, load<16, 256>(x, m, n), m, n);
}
// Inside one tile, a range loop whose 256-column stores overlap the next trip's (step 128): one block, in
// program order, so the later store wins (deterministic); tiles of other rows do not overlap.
PK_KERNEL void s_nested_range_overlap_seq(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto n : range(0, x.cols(), 128))
      store(y, load<16, 256>(x, m, n), m, n);
}
// 1-D: 256 elements stored at 2 i (every other block of 256).
PK_KERNEL void s_1d_2i(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256}))
    store(y, load<256>(x, i) * 3.0f, 2 * i);
}
// 1-D: two 128-element stores per 256 step.
PK_KERNEL void s_1d_halves(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    store(y, load<128>(x, i), i);
    store(y, load<128>(x, i + 128) + 1.0f, i + 128);
  }
}
// 3-D: batch b into y[2 b] and its negation into y[2 b + 1].
PK_KERNEL void s_3d_2b(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [b, m, n] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 64})) {
    store(y, load<1, 16, 64>(x, b, m, n), 2 * b, m, n);
    store(y, load<1, 16, 64>(x, b, m, n) * -1.0f, 2 * b + 1, m, n);
  }
}
// 4-D [B, H, S, 64] tensors, a 3-D loop with two heads per tile (the step along heads is 2).
PK_KERNEL void s_4d_two_heads(Tensor<f32, 4> x, Tensor<f32, 4> y) {
  for (auto [b, h, s] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 2, 32}))
    store(y, load<1, 2, 32, 64>(x, b, h, s, 0), b, h, s, 0);
}
// Peer stores into two tensors: y of the next rank at [m, n], z of the previous rank 64 columns on.
PK_KERNEL void s_peer_two_tensors(Tensor<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    store(y.on(next_rank()), load<16, 128>(x, m, n), m, n);
    store(z.on(prev_rank()), load<16, 128>(x, m, n) * 2.0f, m, n + 64);
  }
}
// A transposed tile stored at (n, m): the store's extents swap with the loop's steps.
PK_KERNEL void s_transpose_store(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, transpose(load<16, 128>(x, m, n)), n, m);
}

// ========================================================================================== Zero fills before a GEMM + reduce-scatter

// The zero fill in 32 x 512 tiles at steps of 32 x 512: covers c, so the template's memset (zero=2).
PK_KERNEL void z_fill_32x512_gemm_rs(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {32, 512})) store(c, zeros<bf16, 32, 512>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, o * rows + m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(o), cast<bf16>(acc), m, n);
  }
}
// Only the first 32 of every 64 rows zeroed (the rest keep c's values and get the sums added): the general path.
PK_KERNEL void z_fill_rows_gap_gemm_rs(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256})) store(c, zeros<bf16, 32, 256>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, o * rows + m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(o), cast<bf16>(acc), m, n);
  }
}
// A zero fill written as a cast of f32 zeros (general path; speed only).
PK_KERNEL void z_fill_cast_gemm_rs(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256})) store(c, cast<bf16>(zeros<f32, 64, 256>()), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, o * rows + m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(o), cast<bf16>(acc), m, n);
  }
}

// ========================================================================================== Norms, softmax, rotary, collectives, phases, MoE, fp8

// LayerNorm in f16 with weight and bias rows, 4096 columns at most per row (one tile across).
PK_KERNEL void o_layer_norm_f16(Tensor<f16, 2> x, Tensor<f16, 1> w, Tensor<f16, 1> b, Tensor<f16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 4096>(x, m, 0));
    float inv_n = 1.0f / float(x.cols());
    auto mu = row_sum(t) * inv_n;
    auto dx = where(col_index<8, 4096>(0) < x.cols(), t - mu, 0.0f);
    auto r = rsqrt(row_sum(dx * dx) * inv_n + eps);
    store(y, cast<f16>(dx * r * cast<f32>(load<1, 4096>(w, 0)) + cast<f32>(load<1, 4096>(b, 0))), m, 0);
  }
}
// Sequence-parallel causal softmax of scores [S/W rows, S cols]: this rank's rows start at rank() S/W.
PK_KERNEL void o_sp_causal_softmax(Tensor<f32, 2> s, Tensor<f32, 2> p) {
  for (auto m : tiles(s.rows(), {16})) {
    auto x = where(col_index<16, 2048>(0) <= row_index<16, 2048>(m) + float(rank() * s.rows()), load<16, 2048>(s, m, 0), -1e30f);
    auto e = exp(x - row_max(x));
    store(p, e / row_sum(e), m, 0);
  }
}
// Rotary embedding (half rotation) with positions offset by this rank's sequence shard (rank() S + row).
PK_KERNEL void o_rotary_sp(Tensor<bf16, 2> x, Tensor<f32, 1> inv_freq, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto pos = row_index<16, 64>(m) + float(rank() * x.rows());
    auto ang = pos * load<1, 64>(inv_freq, 0);
    auto c = cos(ang), sn = sin(ang);
    auto x1 = cast<f32>(load<16, 64>(x, m, 0)), x2 = cast<f32>(load<16, 64>(x, m, 64));
    store(y, cast<bf16>(x1 * c - x2 * sn), m, 0);
    store(y, cast<bf16>(x2 * c + x1 * sn), m, 64);
  }
}
// Column-parallel layer output: all-gather the column shards along dimension 1, then GELU into y.
PK_KERNEL void o_ag_cols_gelu(Sym<f32, 2> x, Sym<f32, 2> g, Tensor<f32, 2> y) {
  all_gather(x, g, 1);
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 256})) store(y, gelu(load<16, 256>(g, m, n)), m, n);
}
// Reduce-scatter along columns, then RMSNorm of each row of this rank's column block (at most 2048 columns).
PK_KERNEL void o_rs_cols_rmsnorm(Sym<f32, 2> x, Sym<f32, 2> r, Tensor<f32, 2> y, float eps) {
  reduce_scatter(Sum, x, r, 1);
  for (auto m : tiles(r.rows(), {8})) {
    auto t = load<8, 2048>(r, m, 0);
    store(y, t * rsqrt(row_sum(t * t) * (1.0f / float(r.cols())) + eps), m, 0);
  }
}
// In-place all-reduce, then a softmax of x in place (each tile read and written at its own place).
PK_KERNEL void o_ar_inplace_softmax_inplace(Sym<f32, 2> x) {
  all_reduce(Sum, x, x);
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 1024>(x, m, 0);
    auto e = exp(t - row_max(t));
    store(x, e / row_sum(e), m, 0);
  }
}
// Top-1 MoE combine: gather each token's expert output row by its slot and scale by the router weight.
PK_KERNEL void o_moe_top1_gather(Tensor<bf16, 2> expert_out, Tensor<i32, 1> slot, Tensor<f32, 1> wt, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(slot.size(), expert_out.cols(), {16, 256})) {
    auto rows = load_rows<16, 256>(expert_out, load<16>(slot, m), n);
    store(y, cast<bf16>(cast<f32>(rows) * load<16, 1>(wt, m)), m, n);
  }
}
// fp8 e4m3 quantisation with one f32 scale per row and 128-column block (scales [M, N / 128]).
PK_KERNEL void o_fp8_block_quant(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> q, Tensor<f32, 2> sc) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto t = cast<f32>(load<32, 128>(x, m, n));
    auto amax = max(row_max(abs(t)), 1e-12f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(sc, amax * (1.0f / 448.0f), m, n / 128);
  }
}
// Row sums of a prefix of the columns only: a range loop bounded by min(a.cols(), keep).
PK_KERNEL void o_keep_prefix_rowsum(Tensor<f32, 2> a, Tensor<f32, 2> b, index keep) {
  for (auto m : tiles(a.rows(), {16})) {
    auto acc = zeros<f32, 16, 1>();
    for (auto n : range(0, min(a.cols(), keep), 64)) acc = acc + row_sum(load<16, 64>(a, m, n));
    store(b, acc, m, 0);
  }
}
// A host loop of all-reduce steps whose trips are the world size minus one (at least one).
PK_KERNEL void o_host_loop_world(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto s : range(0, world_size() - 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.size(), {256})) store(x, load<256>(y, i) * (1.0f / float(world_size())), i);
  }
}
// All-to-all in place within dimension 1 (column blocks), then a bias row into another tensor.
PK_KERNEL void o_a2a_cols_inplace_bias(Sym<bf16, 2> x, Tensor<bf16, 1> bias, Tensor<bf16, 2> y) {
  all_to_all(x, x, 1, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y, cast<bf16>(cast<f32>(load<16, 256>(x, m, n)) + cast<f32>(load<1, 256>(bias, n))), m, n);
}
// Integer ids clamped into this rank's vocabulary shard with integer-tile min / max, then a gather.
PK_KERNEL void o_vocab_shard_clamp(Tensor<i64, 1> ids, Tensor<bf16, 2> table, Tensor<bf16, 2> out) {
  for (auto [m, n] : tiles(ids.size(), table.cols(), {16, 256})) {
    auto local = load<16, 1>(ids, m) - rank() * table.rows();
    auto idx = min(max(local, 0), table.rows() - 1);
    auto keep = cast<f32>((local >= 0) * (local < table.rows()));
    store(out, cast<bf16>(cast<f32>(load_rows<16, 256>(table, idx, n)) * keep), m, n);
  }
}
