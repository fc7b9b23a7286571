// RUN: pkc %s --explain -o - 2>&1 | FileCheck %s
// Tests that an attention loop storing its log-sum-exp into a 1-D [S] tensor (the rows x 1 column
// reshaped, as the docs allow for any store) takes the attention template, the lse written with
// a pitch of 1 (the [S, 1] layout's memory); specs7_findings.md, finding 4.
#include <pk/spec.h>
using namespace pk;

// CHECK: template: {{.*}}attention: the loop is an online-softmax attention, head dim 128;
// CHECK: // pk-param lse_1d {{[0-9]+}} lse_pitch i32 1
// CHECK: // pk-host-check lse_1d {{.*}} attention template: lse must have q's rows
PK_KERNEL void lse_1d(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                      Tensor<f32, 1> lse, float scale) {
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
      acc = mma(cast<bf16>(p), load<64, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
    store(lse, mx + log(l), m);
  }
}
