// Ulysses sequence parallelism for attention (DeepSpeed-Ulysses), one spec per head dim and
// mask: each rank holds its S/W rows of every head, q, k, v and o [H, S/W, D] bf16 (W the
// world size, H a multiple of W). An all-to-all turns them into all S rows of H/W heads (qh,
// kh, vh [H/W, S, D], symmetric scratch), the attention runs on those heads (oh [H/W, S, D],
// lse [H/W, S, 1] f32, the row log-sum-exp of this rank's heads), and an all-to-all brings
// the output back to this rank's rows of every head in o.
//
// pkc runs each kernel as three launches in one call (pk-split-launches: the attention loop
// takes the Hopper attention template, which needs its own grid): the three all-to-alls in,
// the attention, the all-to-all out.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void ulysses_attention_d64(Sym<bf16, 3> q, Sym<bf16, 3> k, Sym<bf16, 3> v, Sym<bf16, 3> o, Sym<bf16, 3> qh,
                                     Sym<bf16, 3> kh, Sym<bf16, 3> vh, Sym<bf16, 3> oh, Tensor<f32, 3> lse, float scale) {
  all_to_all(q, qh, 0, 1);  // [H, S/W, D] -> [H/W, S, D]
  all_to_all(k, kh, 0, 1);
  all_to_all(v, vh, 0, 1);
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 64})) {
    auto qt = load<64, 64>(qh, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, kh.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(kh, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < kh.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(vh, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(oh, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
  all_to_all(oh, o, 1, 0);  // [H/W, S, D] -> [H, S/W, D]
}

PK_KERNEL void ulysses_attention_d128(Sym<bf16, 3> q, Sym<bf16, 3> k, Sym<bf16, 3> v, Sym<bf16, 3> o, Sym<bf16, 3> qh,
                                      Sym<bf16, 3> kh, Sym<bf16, 3> vh, Sym<bf16, 3> oh, Tensor<f32, 3> lse, float scale) {
  all_to_all(q, qh, 0, 1);  // [H, S/W, D] -> [H/W, S, D]
  all_to_all(k, kh, 0, 1);
  all_to_all(v, vh, 0, 1);
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 64})) {
    auto qt = load<64, 128>(qh, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, kh.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(kh, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < kh.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(vh, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(oh, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
  all_to_all(oh, o, 1, 0);  // [H/W, S, D] -> [H, S/W, D]
}

PK_KERNEL void ulysses_attention_causal_d64(Sym<bf16, 3> q, Sym<bf16, 3> k, Sym<bf16, 3> v, Sym<bf16, 3> o, Sym<bf16, 3> qh,
                                            Sym<bf16, 3> kh, Sym<bf16, 3> vh, Sym<bf16, 3> oh, Tensor<f32, 3> lse, float scale) {
  all_to_all(q, qh, 0, 1);  // [H, S/W, D] -> [H/W, S, D]
  all_to_all(k, kh, 0, 1);
  all_to_all(v, vh, 0, 1);
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 64})) {
    auto qt = load<64, 64>(qh, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(kh, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < kh.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(vh, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(oh, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
  all_to_all(oh, o, 1, 0);  // [H/W, S, D] -> [H, S/W, D]
}

PK_KERNEL void ulysses_attention_causal_d128(Sym<bf16, 3> q, Sym<bf16, 3> k, Sym<bf16, 3> v, Sym<bf16, 3> o, Sym<bf16, 3> qh,
                                             Sym<bf16, 3> kh, Sym<bf16, 3> vh, Sym<bf16, 3> oh, Tensor<f32, 3> lse, float scale) {
  all_to_all(q, qh, 0, 1);  // [H, S/W, D] -> [H/W, S, D]
  all_to_all(k, kh, 0, 1);
  all_to_all(v, vh, 0, 1);
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 64})) {
    auto qt = load<64, 128>(qh, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(kh, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < kh.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(vh, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(oh, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
  all_to_all(oh, o, 1, 0);  // [H/W, S, D] -> [H, S/W, D]
}
