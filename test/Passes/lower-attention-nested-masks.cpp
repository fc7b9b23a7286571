// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s
// RUN: pkc %s --emit=device-mlir -o - | FileCheck %s --check-prefix=IR
// Tests that pk-lower-attention takes the two masks of a causal attention written as nested
// selects, where(col <= row, where(col < k.rows(), s, -huge), -huge) in either order (one select
// of their product), as the template, and that a nested pair that is not those two masks keeps
// the general path with the step named (before, any nested select was reported as "the scores
// are not scaled q k^T").
#include <pk/spec.h>
using namespace pk;

#define ATTENTION(NAME, MASKED)                                                                           \
  PK_KERNEL void NAME(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,           \
                      Tensor<f32, 3> lse, float scale) {                                                    \
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {                                                \
      auto qt = load<64, 64>(q, h, m, 0);                                                                   \
      auto mx = zeros<f32, 64, 1>() - 1e30f;                                                                \
      auto l = zeros<f32, 64, 1>();                                                                         \
      auto acc = zeros<f32, 64, 64>();                                                                      \
      for (auto n : range(0, k.dim(1), 64)) {                                                               \
        auto c = col_index<64, 64>(n);                                                                      \
        auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;                         \
        s = MASKED;                                                                                         \
        auto mnew = max(mx, row_max(s));                                                                    \
        auto p = exp(s - mnew);                                                                             \
        auto corr = exp(mx - mnew);                                                                         \
        l = l * corr + row_sum(p);                                                                          \
        acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);                                     \
        mx = mnew;                                                                                          \
      }                                                                                                     \
      store(o, cast<bf16>(acc / l), h, m, 0);                                                               \
      store(lse, mx + log(l), h, m, 0);                                                                     \
    }                                                                                                       \
  }

// CHECK-LABEL: decisions for kernel 'causal_outside'
// CHECK: attention: the loop is an online-softmax attention with a causal mask, head dim 64
// IR-LABEL: pk.kernel @causal_outside
// IR-SAME: pk.attention = {causal = true
ATTENTION(causal_outside, where(c <= row_index<64, 64>(m), where(c < k.dim(1), s, -1e30f), -1e30f))

// CHECK-LABEL: decisions for kernel 'causal_inside'
// CHECK: attention: the loop is an online-softmax attention with a causal mask, head dim 64
// IR-LABEL: pk.kernel @causal_inside
// IR-SAME: pk.attention = {causal = true
ATTENTION(causal_inside, where(c < k.dim(1), where(c <= row_index<64, 64>(m), s, -1e30f), -1e30f))

// A repeated mask is one more factor: the template applies it through a score map.
// CHECK-LABEL: decisions for kernel 'two_key_masks'
// CHECK: attention: the loop is an online-softmax attention, head dim 64, with a score map of
ATTENTION(two_key_masks, where(c < k.dim(1), where(c < k.dim(1), s, -1e30f), -1e30f))
