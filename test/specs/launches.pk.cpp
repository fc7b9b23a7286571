// Kernels pkc runs as several launches in one call (pk-split-launches): a phase a Hopper template
// takes on its own, beside collectives that feed it or take its result. Compiled by pkc and run
// by gpu/launches_test.cu at W = 1-4 against float64 references.
#include <pk/spec.h>
using namespace pk;

// Context parallelism by all-gather: every rank holds a chunk of the keys and values; they are
// gathered into k and v, then this rank's queries attend to the whole sequence (head dim 128).
PK_KERNEL void gathered_attention(Tensor<bf16, 2> q, Sym<bf16, 2> k_chunk, Sym<bf16, 2> v_chunk, Sym<bf16, 2> k,
                                  Sym<bf16, 2> v, Tensor<bf16, 2> o, Tensor<f32, 2> lse, float scale) {
  all_gather(k_chunk, k);
  all_gather(v_chunk, v);
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
    store(lse, mx + log(l), m, 0);
  }
}

// An all-reduce feeding a GEMM, whose product is all-gathered along its columns: three
// launches (no fused template takes an all-reduce ahead of the loop or a column gather of C).
PK_KERNEL void reduce_gemm_gather(Sym<bf16, 2> x, Sym<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c,
                                  Sym<bf16, 2> y) {
  all_reduce(Sum, x, a);
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
  all_gather(c, y, 1);
}

// A range loop holding a collective and a phase that depends on it: pkc runs it as a host loop
// of launches, each given the trip's index (x = scale * sum over ranks of x, plus the trip).
PK_KERNEL void iterate(Sym<f32, 1> x, Sym<f32, 1> y, index steps, float scale) {
  for (auto s : range(0, steps, 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.dim(0), {256})) store(x, load<256>(y, i) * scale + zeros<f32, 256>() + s, i);
  }
}

// Host loops nest: the inner loop's launches get both trips' indices (outer first). Each inner
// trip x = scale * sum over ranks of x + 10 * outer + inner.
PK_KERNEL void iterate_nested(Sym<f32, 1> x, Sym<f32, 1> y, index outer, index inner, float scale) {
  for (auto s : range(0, outer, 1))
    for (auto t : range(0, inner, 1)) {
      all_reduce(Sum, x, y);
      for (auto i : tiles(y.dim(0), {256}))
        store(x, load<256>(y, i) * scale + zeros<f32, 256>() + (s * 10 + t), i);
    }
}
