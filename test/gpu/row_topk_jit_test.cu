// row_topk / row_topk_index (test/specs/row_topk.pk.cpp) through the JIT at W = 1, against a
// host reference of the documented order: each row's elements by value descending, ties by the
// lower column, NaN and padding never chosen, -inf and -1 past a row's last candidate. Values
// with many ties and some NaN; rows and columns that leave partial tiles (columns past the
// tensor's end are padding, and every value negative, so a padding zero chosen would show);
// the router's softmax weights of its top 2 against float64. Outputs poisoned first.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pkt::DevLocal;
using namespace pkt::cases;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"router_top2", false}, {"top8", false}, {"top4_bf16", false}, {"sort_rows", false}, {"top1_wide", false},
    {"top3_1d", false}, {"top2_3d", false}};

KernelSet g_kernels;

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "row_topk", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}

// The columns of row `at` (n elements, value(j)) in the documented order, the first k (or fewer).
std::vector<LL> order(LL n, LL k, const std::function<double(LL)>& value) {
  std::vector<LL> cols;
  for (LL j = 0; j < n; ++j)
    if (!std::isnan(value(j))) cols.push_back(j);
  std::stable_sort(cols.begin(), cols.end(), [&](LL a, LL b) { return value(a) > value(b); });
  if (LL(cols.size()) > k) cols.resize(k);
  return cols;
}

// Values from a small set (many ties), all negative, some NaN.
std::vector<float> tied(LL n, unsigned seed) {
  const auto pick = ints<int>(n, 0, 40, seed);
  std::vector<float> x(n);
  for (LL i = 0; i < n; ++i) x[i] = pick[i] == 39 ? NAN : -0.25f * float(pick[i] % 13) - 0.5f;
  return x;
}

// Checks v [M, k] and i [M, k] (i minus `base`) for rows of n values (of `width` in the tensor).
template <class V>
void check_topk(const Run& r, const std::string& what, const std::vector<V>& v, const std::vector<int>& i, LL M,
                LL n, LL k, int base, const std::function<double(LL, LL)>& value) {
  std::vector<double> want_v(M * k), want_i(M * k);
  for (LL m = 0; m < M; ++m) {
    const auto cols = order(n, k, [&](LL j) { return value(m, j); });
    for (LL p = 0; p < k; ++p) {
      const bool some = p < LL(cols.size());
      want_v[m * k + p] = some ? value(m, cols[p]) : -INFINITY;
      want_i[m * k + p] = some ? double(cols[p] + base) : double(base - 1);
    }
  }
  LL bad = 0;
  for (LL e = 0; e < M * k; ++e) {
    const double gv = val(v[e]);
    const bool ok = (gv == want_v[e] || (std::isinf(gv) && std::isinf(want_v[e]) && gv == want_v[e])) &&
                    double(i[e]) == want_i[e];
    if (!ok && bad++ < 3)
      pkt::fail(what + " element " + std::to_string(e) + ": got (" + std::to_string(gv) + ", " + std::to_string(i[e]) +
                "), want (" + std::to_string(want_v[e]) + ", " + std::to_string(want_i[e]) + ")");
  }
  if (bad > 3) pkt::fail(what + ": " + std::to_string(bad) + " of " + std::to_string(M * k) + " wrong");
}

void top8(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = tied(M * N, seed);
  DevLocal<float> xd({M, N}, x), v({M, 8}, {});
  DevLocal<int> i({M, 8}, {});
  const int before = begin_case(r);
  if (run(r, "top8", 1, xd.view(), v.view(), i.view()))
    check_topk(r, "top8", v.download(), i.download(), M, N, 8, 0, [&](LL m, LL j) { return x[m * N + j]; });
  end_case(r, "top8 " + dims({M, N}), before);
}

void top4_bf16(const Run& r, LL M, LL N, unsigned seed) {
  const auto f = tied(M * N, seed);
  std::vector<bf16> x(M * N);
  for (LL e = 0; e < M * N; ++e) x[e] = pkt::from_host<bf16>(f[e]);
  DevLocal<bf16> xd({M, N}, x), v({M, 4}, {});
  DevLocal<int> i({M, 4}, {});
  const int before = begin_case(r);
  if (run(r, "top4_bf16", 1, xd.view(), v.view(), i.view()))
    check_topk(r, "top4_bf16", v.download(), i.download(), M, N, 4, 1000, [&](LL m, LL j) { return val(x[m * N + j]); });
  end_case(r, "top4_bf16 " + dims({M, N}), before);
}

void sort_rows(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = tied(M * N, seed);
  DevLocal<float> xd({M, N}, x), v({M, 32}, {});
  DevLocal<int> i({M, 32}, {});
  const int before = begin_case(r);
  if (run(r, "sort_rows", 1, xd.view(), v.view(), i.view()))
    check_topk(r, "sort_rows", v.download(), i.download(), M, N, 32, 0, [&](LL m, LL j) { return x[m * N + j]; });
  end_case(r, "sort_rows " + dims({M, N}), before);
}

void router_top2(const Run& r, LL T, unsigned seed) {
  const LL E = 64;
  const auto x = rnd<float>(T * E, seed, -4.f, 4.f);
  DevLocal<float> xd({T, E}, x), w({T, 2}, {});
  DevLocal<int> ids({T, 2}, {});
  const int before = begin_case(r);
  if (run(r, "router_top2", 1, xd.view(), ids.view(), w.view())) {
    const auto got = ids.download();
    std::vector<double> want_w(T * 2), want_i(T * 2);
    for (LL t = 0; t < T; ++t) {
      const auto cols = order(E, 2, [&](LL j) { return x[t * E + j]; });
      const double a = x[t * E + cols[0]], b = x[t * E + cols[1]];
      want_i[t * 2] = double(cols[0]), want_i[t * 2 + 1] = double(cols[1]);
      want_w[t * 2] = 1 / (1 + std::exp(b - a)), want_w[t * 2 + 1] = std::exp(b - a) / (1 + std::exp(b - a));
    }
    check(r, "router_top2.ids", got, [&](LL e) { return want_i[e]; }, exact());
    check(r, "router_top2.w", w.download(), [&](LL e) { return want_w[e]; }, abs_tol(1e-5));
  }
  end_case(r, "router_top2 " + dims({T, E}), before);
}

// The largest of each 2048-column chunk and its global column.
void top1_wide(const Run& r, LL M, LL V, unsigned seed) {
  const LL C = (V + 2047) / 2048;
  auto x = rnd<float>(M * V, seed, -5.f, 5.f);
  x[100] = 9.f;
  DevLocal<float> xd({M, V}, x), v({M, C}, {});
  DevLocal<int> i({M, C}, {});
  const int before = begin_case(r);
  if (run(r, "top1_wide", 1, xd.view(), v.view(), i.view())) {
    std::vector<float> cv(M * C);
    std::vector<int> ci(M * C);
    const auto gv = v.download();
    const auto gi = i.download();
    for (LL e = 0; e < M * C; ++e) {
      const LL m = e / C, c = e % C;
      const auto cols = order(std::min<LL>(2048, V - c * 2048), 1, [&](LL j) { return x[m * V + c * 2048 + j]; });
      const LL want = c * 2048 + cols[0];
      if (gi[e] != want || gv[e] != x[m * V + want]) {
        pkt::fail("top1_wide element " + std::to_string(e) + ": got (" + std::to_string(gv[e]) + ", " +
                  std::to_string(gi[e]) + "), want (" + std::to_string(x[m * V + want]) + ", " + std::to_string(want) + ")");
        break;
      }
    }
  }
  end_case(r, "top1_wide " + dims({M, V}), before);
}

// The top 3 of each 256-wide chunk of a 1-D tensor (the last chunk partial), global columns.
void top3_1d(const Run& r, LL N, unsigned seed) {
  const LL C = (N + 255) / 256;
  const auto x = tied(N, seed);
  DevLocal<float> xd({N}, x), v({C * 3}, {});
  DevLocal<int> i({C * 3}, {});
  const int before = begin_case(r);
  if (run(r, "top3_1d", 1, xd.view(), v.view(), i.view())) {
    auto gi = i.download();
    for (LL e = 0; e < C * 3; ++e) gi[e] -= int(e / 3 * 256);  // chunk columns, as check_topk takes them
    check_topk(r, "top3_1d", v.download(), gi, C, 256, 3, 0, [&](LL c, LL j) {
      return c * 256 + j < N ? double(x[c * 256 + j]) : NAN;
    });
  }
  end_case(r, "top3_1d " + dims({N}), before);
}

// Per-token top 2 of [B, S, V] bf16 logits (tiles [2, 16, 64]: padding in every dimension).
void top2_3d(const Run& r, LL B, LL S, LL V, unsigned seed) {
  const auto f = tied(B * S * V, seed);
  std::vector<bf16> x(B * S * V);
  for (LL e = 0; e < B * S * V; ++e) x[e] = pkt::from_host<bf16>(f[e]);
  DevLocal<bf16> xd({B, S, V}, x), v({B, S, 2}, {});
  DevLocal<int> i({B, S, 2}, {});
  const int before = begin_case(r);
  if (run(r, "top2_3d", 1, xd.view(), v.view(), i.view()))
    check_topk(r, "top2_3d", v.download(), i.download(), B * S, V, 2, 0, [&](LL m, LL j) { return val(x[m * V + j]); });
  end_case(r, "top2_3d " + dims({B, S, V}), before);
}

void cases(const Run& r) {
  router_top2(r, 150, 11);
  top8(r, 70, 64, 21);
  top8(r, 70, 50, 22);  // 14 padding columns, every value negative
  top8(r, 33, 5, 23);   // 5 columns: 3 empty results per row
  top4_bf16(r, 37, 256, 31);
  top4_bf16(r, 37, 200, 32);
  sort_rows(r, 21, 32, 41);
  sort_rows(r, 21, 20, 42);
  top1_wide(r, 13, 5000, 51);
  top1_wide(r, 8, 2048, 52);
  top3_1d(r, 1000, 61);
  top3_1d(r, 512, 62);
  top2_3d(r, 3, 37, 50, 71);
  top2_3d(r, 2, 16, 64, 72);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_ROW_TOPK_SPEC, kKernels, {}, PK_PKC, g_kernels)) return pkt::finish("row_topk_jit_test");
  // Every kernel is single-GPU: the cases run at W = 1 only.
  return run_worlds("row_topk_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) cases(r);
  });
}
