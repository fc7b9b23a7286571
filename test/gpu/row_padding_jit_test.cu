// A clipped load's padding loads as zero and is computed on like any value
// (test/specs/row_padding.pk.cpp): row reductions on their three routes (in warps, block-wide,
// through the stage) and cumsum count it as the tile holds it, and masks over it work. Through the
// JIT at W = 1, against float64 host references: a masked softmax of short rows of negative values,
// an unmasked sum of exp(x - 1) (each padding column adds exp(-1)), the accepted prefix of
// speculative decoding with the padding marked as misses, masked row maxima / minima of wide rows,
// an unmasked row minimum (0 where the row is partial) and mean. Outputs are poisoned first;
// every shape leaves partial tiles.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pkt::DevLocal;
using namespace pkt::cases;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"softmax_short_rows", false}, {"sum_exp_short_rows", false}, {"accepted_prefix", false},
    {"max_min_wide_rows", false},  {"min_mean_one_row", false},
};

KernelSet g_kernels;

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "row_padding", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}
auto rel(double t, const std::function<double(LL)>& want) {
  return [t, want](LL i) { return t * std::max(1.0, std::fabs(want(i))); };
}

void softmax_short_rows(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed, -6.f, -1.f);  // all negative: a padding 0 would be the maximum
  DevLocal<float> xd({M, N}, x), p({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "softmax_short_rows", 1, xd.view(), p.view())) {
    std::vector<double> want(M * N);
    for (LL m = 0; m < M; ++m) {
      double mx = -INFINITY, sum = 0;
      for (LL n = 0; n < N; ++n) mx = std::max(mx, double(x[m * N + n]));
      for (LL n = 0; n < N; ++n) sum += std::exp(x[m * N + n] - mx);
      for (LL n = 0; n < N; ++n) want[m * N + n] = std::exp(x[m * N + n] - mx) / sum;
    }
    auto w = [&](LL i) { return want[i]; };
    check(r, "softmax_short_rows", p.download(), w, rel(1e-5, w));
  }
  end_case(r, "softmax_short_rows " + dims({M, N}), before);
}

void sum_exp_short_rows(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed);
  DevLocal<float> xd({M, N}, x), s({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, "sum_exp_short_rows", 1, xd.view(), s.view())) {
    auto w = [&](LL m) {
      double sum = 0;
      for (LL n = 0; n < N; ++n) sum += std::exp(double(x[m * N + n]) - 1);
      return sum + double(64 - N) * std::exp(-1.0);  // the padding columns' exp(0 - 1)
    };
    check(r, "sum_exp_short_rows", s.download(), w, rel(1e-5, w));
  }
  end_case(r, "sum_exp_short_rows " + dims({M, N}), before);
}

// Rows planted fully accepted, missing at column 0, and at random.
void accepted_prefix(const Run& r, LL B, LL K, unsigned seed) {
  auto draft = ints<int>(B * K, 0, 50, seed), target = draft;
  const auto pick = ints<int>(B * K, 0, 4, seed + 1);
  for (LL b = 0; b < B; ++b)
    for (LL k = 0; k < K; ++k) {
      const bool miss = b % 3 == 1 ? k == 0 : b % 3 == 2 ? pick[b * K + k] == 0 : false;
      if (miss) target[b * K + k] = draft[b * K + k] + 1;
    }
  DevLocal<int> dd({B, K}, draft), td({B, K}, target), count({B}, {});
  const int before = begin_case(r);
  if (run(r, "accepted_prefix", 1, dd.view(), td.view(), count.view()))
    check(r, "accepted_prefix", count.download(), [&](LL b) {
      LL n = 0;
      while (n < K && draft[b * K + n] == target[b * K + n]) ++n;
      return double(n);
    }, exact());
  end_case(r, "accepted_prefix " + dims({B, K}), before);
}

void max_min_wide_rows(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed, 1.f, 9.f);  // positive: a padding 0 would be the minimum
  auto y = x;
  for (auto& v : y) v = -v;  // and negative rows for the maximum
  std::vector<float> both(M * N);
  for (LL i = 0; i < M * N; ++i) both[i] = (i / N) % 2 ? x[i] : y[i];
  DevLocal<float> xd({M, N}, both), mx({M, 1}, {}), mn({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, "max_min_wide_rows", 1, xd.view(), mx.view(), mn.view())) {
    auto row = [&](LL m, bool take_max) {
      double v = both[m * N];
      for (LL n = 1; n < N; ++n) v = take_max ? std::max(v, double(both[m * N + n])) : std::min(v, double(both[m * N + n]));
      return v;
    };
    check(r, "max_min_wide_rows.max", mx.download(), [&](LL m) { return row(m, true); }, exact());
    check(r, "max_min_wide_rows.min", mn.download(), [&](LL m) { return row(m, false); }, exact());
  }
  end_case(r, "max_min_wide_rows " + dims({M, N}), before);
}

void min_mean_one_row(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed, 0.5f, 2.f);
  DevLocal<float> xd({M, N}, x), out({M, 2}, {});
  const int before = begin_case(r);
  if (run(r, "min_mean_one_row", 1, xd.view(), out.view())) {
    auto w = [&](LL i) {
      const LL m = i / 2;
      double mn = INFINITY, sum = 0;
      for (LL n = 0; n < N; ++n) mn = std::min(mn, double(x[m * N + n])), sum += x[m * N + n];
      if (N % 8192) mn = std::min(mn, 0.0);  // a partial row's padding zeros
      return i % 2 ? sum / double(N) : mn;
    };
    check(r, "min_mean_one_row", out.download(), w, rel(1e-5, w));
  }
  end_case(r, "min_mean_one_row " + dims({M, N}), before);
}

void cases(const Run& r) {
  softmax_short_rows(r, 37, 40, 11);
  softmax_short_rows(r, 5, 64, 12);  // whole rows: the unchecked route
  sum_exp_short_rows(r, 37, 23, 13);
  accepted_prefix(r, 37, 5, 14);
  accepted_prefix(r, 20, 16, 15);
  max_min_wide_rows(r, 6, 3000, 16);
  max_min_wide_rows(r, 4, 4096, 17);
  min_mean_one_row(r, 3, 5000, 18);
  min_mean_one_row(r, 2, 8192, 19);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_ROW_PADDING_SPEC, kKernels, {}, PK_PKC, g_kernels)) return pkt::finish("row_padding_jit_test");
  // Every kernel is single-GPU: the cases run at W = 1 only.
  return run_worlds("row_padding_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) cases(r);
  });
}
