// Integer collectives (test/specs/int_collectives.pk.cpp), JIT-compiled by a pkc executable: i32
// and i64 reductions combine exactly in their own type (values near 2^28 and 2^50, which an fp32
// accumulator would round), i64 moves as 8-byte elements. Sizes that take the one-round paths
// (7 and 1000 elements) and the direct path (100003), tails everywhere; at W = 1, then 2-4 ranks
// sharing one GPU (or 2 GPUs); outputs poisoned (or, for adds into peers, random); every element
// exact.
#include <pk/jit/compile.h>

#include <map>
#include <random>

#include "sym_test_util.h"

namespace {

using pkt::SymArg;

std::map<std::string, pk::jit::Kernel> g_kernels;

bool compile_all() {
  auto text = pk::jit::read_spec(PK_INT_COLLECTIVES_SPEC);
  if (!text.is_ok()) return pkt::fail("read: " + text.status().message()), false;
  for (const char* name : {"ar_sum_i32", "ar_max_i64", "ar_min_i32_rows", "rs_sum_i64", "ag_i64", "reduce_sum_i32",
                           "ar_then_scale_i32", "add_to_next_i32", "add_to_first_i64"}) {
    pk::jit::Options options;
    options.kernel = name;
    auto k = pk::jit::compile_spec(PK_INT_COLLECTIVES_SPEC, *text, options, pk::jit::pkc_frontend(PK_PKC));
    if (!k.is_ok()) return pkt::fail(std::string("compile ") + name + ": " + k.status().message()), false;
    g_kernels.emplace(name, std::move(*k));
  }
  return true;
}

// Every rank's values, reproducible on every rank: magnitudes near 2^bits, either sign.
template <class T>
std::vector<std::vector<T>> int_inputs(int world, long long n, unsigned seed, int bits) {
  std::vector<std::vector<T>> all(world, std::vector<T>(n));
  for (int r = 0; r < world; ++r) {
    std::mt19937_64 g(seed * 1000003ull + r);
    for (auto& x : all[r]) {
      const T m = T((1ll << bits) + (long long)(g() % (1ull << (bits - 4))));
      x = (g() & 1) ? m : T(-m);
    }
  }
  return all;
}

template <class T>
void expect_exact(const pk::Context& ctx, const std::string& what, const std::vector<T>& got,
                  const std::function<T(long long)>& want) {
  long long bad = 0;
  for (long long i = 0; i < (long long)got.size(); ++i)
    if (got[i] != want(i) && bad++ < 3)
      pkt::fail(what + " rank " + std::to_string(ctx.rank()) + " element " + std::to_string(i) + ": got " +
                std::to_string(got[i]) + ", want " + std::to_string(want(i)));
  if (bad > 3) pkt::fail(what + ": " + std::to_string(bad) + " elements wrong");
}

template <class... A>
void run(pk::Context& ctx, const std::string& name, const A&... args) {
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  PKT_OK(g_kernels.at(name).launch(ctx, ctx.stream(), args...));
  PKT_CUDA(cudaStreamSynchronize(ctx.stream()));
  PKT_OK(ctx.check_errors());
}

void reductions(pk::Context& ctx, long long n) {
  const int W = ctx.world(), me = ctx.rank();
  const std::string at = " n=" + std::to_string(n);
  auto xs = int_inputs<int>(W, n, 1, 27);  // |sum| < 2^30: exact in i32, not in fp32
  SymArg<int> x(ctx, {n}, &xs[me]), y(ctx, {n}, nullptr);
  run(ctx, "ar_sum_i32", x.view, y.view);
  expect_exact<int>(ctx, "ar_sum_i32" + at, y.download(), [&](long long i) {
    int s = 0;
    for (int r = 0; r < W; ++r) s += xs[r][i];
    return s;
  });
  auto ls = int_inputs<long long>(W, n, 2, 50);
  SymArg<long long> lx(ctx, {n}, &ls[me]), ly(ctx, {n}, nullptr);
  run(ctx, "ar_max_i64", lx.view, ly.view);
  expect_exact<long long>(ctx, "ar_max_i64" + at, ly.download(), [&](long long i) {
    long long m = ls[0][i];
    for (int r = 1; r < W; ++r) m = std::max(m, ls[r][i]);
    return m;
  });
  // Rank r's block r of W*n elements, summed over ranks.
  auto ws = int_inputs<long long>(W, W * n, 3, 50);
  SymArg<long long> wx(ctx, {W * n}, &ws[me]), wy(ctx, {n}, nullptr);
  run(ctx, "rs_sum_i64", wx.view, wy.view);
  expect_exact<long long>(ctx, "rs_sum_i64" + at, wy.download(), [&](long long i) {
    long long s = 0;
    for (int r = 0; r < W; ++r) s += ws[r][me * n + i];
    return s;
  });
  SymArg<long long> gy(ctx, {W * n}, nullptr);
  run(ctx, "ag_i64", lx.view, gy.view);
  expect_exact<long long>(ctx, "ag_i64" + at, gy.download(), [&](long long i) { return ls[i / n][i % n]; });
  const long long root = W - 1;
  pkt::DevLocal<int> ry({n}, {});
  run(ctx, "reduce_sum_i32", x.view, ry.view(), root);
  if (me == root)
    expect_exact<int>(ctx, "reduce_sum_i32" + at, ry.download(), [&](long long i) {
      int s = 0;
      for (int r = 0; r < W; ++r) s += xs[r][i];
      return s;
    });
  auto small = int_inputs<int>(W, n, 4, 20);
  SymArg<int> sx(ctx, {n}, &small[me]), total(ctx, {n}, nullptr);
  pkt::DevLocal<int> z({n}, {});
  run(ctx, "ar_then_scale_i32", sx.view, total.view, z.view());
  expect_exact<int>(ctx, "ar_then_scale_i32" + at, z.download(), [&](long long i) {
    int s = 0;
    for (int r = 0; r < W; ++r) s += small[r][i];
    return 3 * s;
  });
  // Adds into peers: y starts random, every rank's copy must end as its start plus what the
  // ranks added (read only after every rank's kernel is done).
  auto ys = int_inputs<int>(W, n, 6, 27);
  pkt::DevLocal<int> ax({n}, small[me]);
  SymArg<int> ay(ctx, {n}, &ys[me]);
  run(ctx, "add_to_next_i32", ax.view(), ay.view);
  PKT_OK(ctx.exchange().barrier());
  expect_exact<int>(ctx, "add_to_next_i32" + at, ay.download(),
                    [&](long long i) { return ys[me][i] + small[(me + W - 1) % W][i]; });
  auto ly0 = int_inputs<long long>(W, n, 7, 50);
  pkt::DevLocal<long long> lax({n}, ls[me]);
  SymArg<long long> lay(ctx, {n}, &ly0[me]);
  run(ctx, "add_to_first_i64", lax.view(), lay.view);
  PKT_OK(ctx.exchange().barrier());
  expect_exact<long long>(ctx, "add_to_first_i64" + at, lay.download(), [&](long long i) {
    long long s = ly0[me][i];
    if (me == 0)
      for (int r = 0; r < W; ++r) s += ls[r][i];
    return s;
  });
  PKT_OK(ctx.exchange().barrier());
}

void rows(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long R = 37, C = 129;
  auto xs = int_inputs<int>(W, R * C, 5, 28);
  SymArg<int> x(ctx, {R, C}, &xs[me]), y(ctx, {R, C}, nullptr);
  run(ctx, "ar_min_i32_rows", x.view, y.view);
  expect_exact<int>(ctx, "ar_min_i32_rows", y.download(), [&](long long i) {
    int m = xs[0][i];
    for (int r = 1; r < W; ++r) m = std::min(m, xs[r][i]);
    return m;
  });
  PKT_OK(ctx.exchange().barrier());
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("int_collectives_test");
  for (int world : pkt::test_worlds(/*with_one=*/true)) {
    pkt::announce_world("int_collectives_test", world);
    pkt::run_ranks(world, [](pk::Context& ctx) {
      for (auto& [name, k] : g_kernels) PKT_OK(k.load(ctx));
      PKT_OK(ctx.exchange().barrier());
      for (long long n : {7LL, 1000LL, 100003LL}) reductions(ctx, n);
      rows(ctx);
    });
  }
  return pkt::finish("int_collectives_test");
}
