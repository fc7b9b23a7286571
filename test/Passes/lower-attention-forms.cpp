// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s
// RUN: pkc %s --emit=device-mlir -o - | FileCheck %s --check-prefix=IR
// Tests that pk-lower-attention takes two more spellings of the online softmax (set 36, finding
// 11) as the template's own: the output normalised as acc * (1 / l) (the template's reciprocal
// and product), and the running max written where(rm > mx, rm, mx) (or rm < mx with the sides
// swapped). Each takes the same template instance as the canonical loop (the same pk.attention
// attribute), so the GPU tests of that loop cover them. A where() that keeps the smaller side is
// not a running max, and keeps the general path with the step named.
#include <pk/spec.h>
using namespace pk;

#define ATTENTION(NAME, NEW_MAX, OUT)                                                              \
  PK_KERNEL void NAME(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, \
                      float scale) {                                                               \
    for (auto m : tiles(q.rows(), {64})) {                                                         \
      auto qt = load<64, 64>(q, m, 0);                                                             \
      auto mx = zeros<f32, 64, 1>() - 1e30f;                                                       \
      auto l = zeros<f32, 64, 1>();                                                                \
      auto acc = zeros<f32, 64, 64>();                                                             \
      for (auto n : range(0, k.rows(), 64)) {                                                      \
        auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;                   \
        s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);                                     \
        auto rm = row_max(s);                                                                      \
        auto mnew = NEW_MAX;                                                                       \
        auto p = exp(s - mnew);                                                                    \
        auto corr = exp(mx - mnew);                                                                \
        l = l * corr + row_sum(p);                                                                 \
        acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);                               \
        mx = mnew;                                                                                 \
      }                                                                                            \
      store(o, cast<bf16>(OUT), m, 0);                                                             \
    }                                                                                              \
  }

// CHECK-LABEL: decisions for kernel 'canonical'
// CHECK: attention: the loop is an online-softmax attention, head dim 64
// IR-LABEL: pk.kernel @canonical
// IR-SAME: pk.attention = [[ATTR:\{[^}]*\}]]
ATTENTION(canonical, max(mx, rm), acc / l)

// CHECK-LABEL: decisions for kernel 'reciprocal_norm'
// CHECK: attention: the loop is an online-softmax attention, head dim 64
// IR-LABEL: pk.kernel @reciprocal_norm
// IR-SAME: pk.attention = [[ATTR]]
ATTENTION(reciprocal_norm, max(mx, rm), acc * (1.0f / l))

// CHECK-LABEL: decisions for kernel 'reciprocal_first'
// CHECK: attention: the loop is an online-softmax attention, head dim 64
// IR-LABEL: pk.kernel @reciprocal_first
// IR-SAME: pk.attention = [[ATTR]]
ATTENTION(reciprocal_first, max(rm, mx), (1.0f / l) * acc)

// CHECK-LABEL: decisions for kernel 'where_max'
// CHECK: attention: the loop is an online-softmax attention, head dim 64
// IR-LABEL: pk.kernel @where_max
// IR-SAME: pk.attention = [[ATTR]]
ATTENTION(where_max, where(rm > mx, rm, mx), acc / l)

// CHECK-LABEL: decisions for kernel 'where_max_swapped'
// CHECK: attention: the loop is an online-softmax attention, head dim 64
// IR-LABEL: pk.kernel @where_max_swapped
// IR-SAME: pk.attention = [[ATTR]]
ATTENTION(where_max_swapped, where(mx < rm, rm, mx), acc / l)

// The smaller side, and a scale other than one over l: the general path, the step named.
// CHECK-LABEL: decisions for kernel 'where_min'
// CHECK: not the attention template: the key loop must yield an mma, a running max and a running sum
ATTENTION(where_min, where(rm < mx, rm, mx), acc / l)

// CHECK-LABEL: decisions for kernel 'half_over_l'
// CHECK: not the attention template: the output must be stored once as cast<T>(acc / l) or cast<T>(acc * (1 / l))
ATTENTION(half_over_l, max(mx, rm), acc * (0.5f / l))
