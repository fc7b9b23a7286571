// Ring attention (context parallelism): the sequence is split over the W ranks, each holding its
// S rows of every head, q, o [H, S, D] bf16 and lse [H, S, 1] f32 (the row log-sum-exp). K and V
// travel around the ring in kr, vr [2H, S, D] (symmetric; two slots of H heads, this rank's own
// K and V in slot 0 at entry): at step s each rank sends the block it holds to the next rank's
// other slot (except at the last step) and computes attention of its q against it, and the
// partial results merge by log-sum-exp (op, lp: scratch of o's and lse's shapes). Step 0 writes o
// and lse directly, so one rank runs a plain attention.
//
// The causal kernels take the striped layout (Striped Attention, Brandon et al. 2023): rank r
// holds the tokens at positions i W + r, so the block that started on rank j has key t before
// query i when t < i, or t == i and j <= r. Every step is then a causal attention (strict below
// the diagonal when j > r): all ranks do the same work, and none waits on a wholly masked block.
// (In a strict step a rank's first query row sees no key, so its partial has no defined softmax;
// its partial lse is about -1e30 on every path, so the merge gives it the weight 0.)
//
// pkc runs each step as launches in a host loop (pk-split-launches): the send, the attention on
// the Hopper attention template (K and V read at head slot H + h), and the merge.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void ring_attention_d64(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Sym<bf16, 3> vr, Tensor<bf16, 3> o,
                                  Tensor<f32, 3> lse, Tensor<bf16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = q.dim(1);
  {  // step 0: this rank's own block, in slot 0
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
        acc = mma(cast<bf16>(p), load<64, 64>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(o, cast<bf16>(acc / l), h, m, 0);
      store(lse, mx + log(l), h, m, 0);
    }
  }
  for (auto s : range(1, world_size())) {
    index cur = s % 2 * H, nxt = (s + 1) % 2 * H;
    index sends = min(world_size() - 1 - s, 1);  // 0 at the last step
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

PK_KERNEL void ring_attention_d128(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Sym<bf16, 3> vr, Tensor<bf16, 3> o,
                                   Tensor<f32, 3> lse, Tensor<bf16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = q.dim(1);
  {  // step 0: this rank's own block, in slot 0
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
      for (auto n : range(0, kr.dim(1), 64)) {
        auto sc = mma_t(qt, load<64, 128>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where(col_index<64, 64>(n) < kr.dim(1), sc, -1e30f);
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
    index sends = min(world_size() - 1 - s, 1);  // 0 at the last step
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
        sc = where(col_index<64, 64>(n) < kr.dim(1), sc, -1e30f);
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

PK_KERNEL void ring_attention_causal_d64(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Sym<bf16, 3> vr, Tensor<bf16, 3> o,
                                         Tensor<f32, 3> lse, Tensor<bf16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = q.dim(1);
  {  // step 0: this rank's own block, in slot 0
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
      for (auto n : range(0, m + 64, 64)) {
        auto sc = mma_t(qt, load<64, 64>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < kr.dim(1)), sc, -1e30f);
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
    index sends = min(world_size() - 1 - s, 1);  // 0 at the last step
    index j = (rank() + world_size() - s) % world_size();  // the block's first rank
    index strict = min(max(j - rank(), 0), 1);  // 1: keys strictly before the query
    for (auto [h, m] : tiles(H * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 64>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(H, S, {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, m + 64, 64)) {
        auto sc = mma_t(qt, load<64, 64>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        auto cols = col_index<64, 64>(n), rows = row_index<64, 64>(m);
        sc = where((cols <= rows) * (cols < rows + float(1 - strict)) * (cols < kr.dim(1)), sc, -1e30f);
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

PK_KERNEL void ring_attention_causal_d128(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Sym<bf16, 3> vr, Tensor<bf16, 3> o,
                                          Tensor<f32, 3> lse, Tensor<bf16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = q.dim(1);
  {  // step 0: this rank's own block, in slot 0
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
    index sends = min(world_size() - 1 - s, 1);  // 0 at the last step
    index j = (rank() + world_size() - s) % world_size();  // the block's first rank
    index strict = min(max(j - rank(), 0), 1);  // 1: keys strictly before the query
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
        auto cols = col_index<64, 64>(n), rows = row_index<64, 64>(m);
        sc = where((cols <= rows) * (cols < rows + float(1 - strict)) * (cols < kr.dim(1)), sc, -1e30f);
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
