// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s
// RUN: pkc %s --emit=device-mlir -o - | FileCheck %s --check-prefix=IR
// RUN: pkc %s --templates=false --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: pkc %s --emit=cubin -o %t.cubin
// RUN: pkc %s --kernel=constant_scale -o - | FileCheck %s --check-prefix=CUDA
// Tests that pk-lower-attention recognises an online-softmax attention loop by its data flow
// (here over heads of [H, S, D] tensors, without the log-sum-exp) and instantiates the Hopper
// template, and that loops differing in one step keep the general tile path with the step
// named; --templates=false keeps every loop on the general path.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: decisions for kernel 'heads'
// CHECK: template: pk.tile.foreach at {{.*}}lower-attention.cpp:[[@LINE+6]]:3: attention: the loop is an online-softmax attention, head dim 128
// IR-LABEL: pk.kernel @heads
// IR-SAME: pk.attention = {causal = false, d = 128 : i64, heads = true, k = 1 : i64, kv_group = "1", lse = -1 : i64, o = 3 : i64, q = 0 : i64, scale = 4 : i64, v = 2 : i64}
// OFF-LABEL: decisions for kernel 'heads'
// OFF: template: pk.tile.foreach {{.*}}general tile path (register tiles, pk/tile/mma.cuh): templates are off
PK_KERNEL void heads(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
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

// Tests that scores left unmasked (keys past the end would count as zeros) are not attention.
// CHECK-LABEL: decisions for kernel 'unmasked'
// CHECK: template: pk.tile.foreach {{.*}}not the attention template: the scores are not masked to a very negative value
PK_KERNEL void unmasked(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = s;
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

// Tests that a rescale by exp(m_new - m) (the wrong way round) is not attention.
// CHECK-LABEL: decisions for kernel 'wrong_rescale'
// CHECK: template: pk.tile.foreach {{.*}}not the attention template: the output is not rescaled by exp(m - m_new)
PK_KERNEL void wrong_rescale(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mnew - mx);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// Tests that a head dim the template lacks keeps the general path.
// CHECK-LABEL: decisions for kernel 'head_dim_96'
// CHECK: template: pk.tile.foreach {{.*}}not the attention template: the head dim is 96; the template takes 64 and 128
PK_KERNEL void head_dim_96(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 96>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 96>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 96>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 96>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// Tests that a constant group is one the host knows: G = 2, checked at launch (G >= 1, and k and
// v hold the heads read), not the exact heads ratio.
// CHECK-LABEL: decisions for kernel 'gqa_constant_group'
// CHECK: template: pk.tile.foreach {{.*}}attention: the loop is an online-softmax attention, head dim 64, grouped-query (K and V at head h / G, G = 2, checked at launch: G >= 1 and k and v hold the heads read)
PK_KERNEL void gqa_constant_group(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h / 2, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h / 2, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// Tests that grouped-query K/V heads must divide h by a group the host can compute once for every
// rank: one from the rank is not (each rank would read other heads).
// CHECK-LABEL: decisions for kernel 'gqa_rank_group'
// CHECK: template: pk.tile.foreach {{.*}}not the attention template: k must be loaded at head h, or at h / G for grouped-query attention (G an integer the host knows: an argument, q.dim(0) / k.dim(0))
PK_KERNEL void gqa_rank_group(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h / (rank() + 1), n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h / (rank() + 1), n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// Tests that V must be read at K's head: K at h / G with V at h is not attention over one head.
// CHECK-LABEL: decisions for kernel 'gqa_v_at_h'
// CHECK: template: pk.tile.foreach {{.*}}not the attention template: v must be loaded at k's head (h, or h / G with k's G), plus an offset the host knows
PK_KERNEL void gqa_v_at_h(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h / (q.dim(0) / k.dim(0)), n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
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

// Tests that K and V stacked among other heads take the template at head c + h, c an integer the
// host knows (here from an argument, the rank and the world size), and that V may be read at its
// own offset (packed heads), 0 here.
// CHECK-LABEL: decisions for kernel 'kv_slot_offset'
// CHECK: template: pk.tile.foreach {{.*}}attention: the loop is an online-softmax attention, head dim 64, K and V at head h offset by mul(rem(add(arg(5),rank),world),dim(0,0)) heads
// CHECK-LABEL: decisions for kernel 'kv_slot_v_elsewhere'
// CHECK: template: pk.tile.foreach {{.*}}attention: the loop is an online-softmax attention, head dim 64, K offset by mul(rem(add(arg(5),rank),world),dim(0,0)) heads and V by 0 (packed heads
#define PK_KV_SLOT_KERNEL(NAME, VHEAD)                                                                       \
  PK_KERNEL void NAME(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale, \
                      index s) {                                                                             \
    index slot = (s + rank()) % world_size() * q.dim(0);                                                     \
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {                                                 \
      auto qt = load<64, 64>(q, h, m, 0);                                                                    \
      auto mx = zeros<f32, 64, 1>() - 1e30f;                                                                 \
      auto l = zeros<f32, 64, 1>();                                                                          \
      auto acc = zeros<f32, 64, 64>();                                                                       \
      for (auto n : range(0, k.dim(1), 64)) {                                                                \
        auto sc = mma_t(qt, load<64, 64>(k, slot + h, n, 0), zeros<f32, 64, 64>()) * scale;                  \
        sc = where(col_index<64, 64>(n) < k.dim(1), sc, -1e30f);                                             \
        auto mnew = max(mx, row_max(sc));                                                                    \
        auto p = exp(sc - mnew);                                                                             \
        auto corr = exp(mx - mnew);                                                                          \
        l = l * corr + row_sum(p);                                                                           \
        acc = mma(cast<bf16>(p), load<64, 64>(v, VHEAD, n, 0), acc * corr);                                  \
        mx = mnew;                                                                                           \
      }                                                                                                      \
      store(o, cast<bf16>(acc / l), h, m, 0);                                                                \
    }                                                                                                        \
  }
PK_KV_SLOT_KERNEL(kv_slot_offset, slot + h)
PK_KV_SLOT_KERNEL(kv_slot_v_elsewhere, h)

// Tests that a constant scale is passed to the template as a literal (no parameter for it),
// with the causal mask and the log-sum-exp of [S, D] tensors.
// CHECK-LABEL: decisions for kernel 'constant_scale'
// CHECK: template: pk.tile.foreach {{.*}}attention: the loop is an online-softmax attention with a causal mask, head dim 64
// CUDA-NOT: scale f32
// CUDA: pk-param constant_scale {{[0-9]+}} lse ptr arg=4
// CUDA: pk::attention::run<pk_constant_scale::kHeadDim, pk_constant_scale::kCausal>(p, 0.125f);
PK_KERNEL void constant_scale(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                              Tensor<f32, 2> lse) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * 0.125f;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
    store(lse, mx + log(l), m, 0);
  }
}
