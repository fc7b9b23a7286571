// Integer tiles and rows moved by index (test/specs/int_tiles.pk.cpp) on one GPU, on sizes with
// edge tiles, against host references of what the spec says: exact integers, float to integer
// casts rounding toward zero and saturating, out-of-range row indices reading zeros and being
// dropped on writes, scatter-adds with duplicate slots. Outputs are poisoned first (or hold a
// known pattern where a scatter leaves rows untouched); inputs are random.
#include PK_INT_TILES_CU
#include "tile_test_util.h"

#include <climits>

namespace {

using pk::bf16;
using pkt::Dev;
using pkt::DevTensor;
using pkt::expect;
using pkt::poisoned;
using pkt::random_ints;

constexpr int kGrid = 132;

void sync() { PKT_CUDA(cudaDeviceSynchronize()); }

// Every element of got against want(i), exactly.
template <class T, class F>
void expect_exact(const char* what, const std::vector<T>& got, F want) {
  long long bad = 0, first = -1;
  for (long long i = 0; i < static_cast<long long>(got.size()); ++i)
    if (got[i] != want(i)) bad++, first = first < 0 ? i : first;
  PKT_CHECK(bad == 0, std::string(what) + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) +
                          " wrong, first at " + std::to_string(first) +
                          (first >= 0 ? " got " + std::to_string(got[first]) + " want " + std::to_string(want(first))
                                      : std::string()));
}

void int_arith_test() {
  const long long M = 70, N = 300, lo = 5;
  Dev<int> a(random_ints<int>(M * N, -1000, 1000, 1), {M, N});
  Dev<int> b(random_ints<int>(M * N, -9, 9, 2), {M, N});  // zeros among them: x % 0 gives 0
  Dev<int> c({M, N}, poisoned);
  Dev<float> f({M, N}, poisoned);
  PKT_LAUNCH(int_arith, kGrid)(pk::LaunchContext{}, a.view(), b.view(), c.view(), f.view(), lo);
  sync();
  auto want = [&](long long i) -> long long {
    const long long x = a.host[i], y = b.host[i];
    if (x < lo) return (y == 0 ? 0 : x % y) + 1;
    return std::max(x - lo, y) / 3 - std::llabs(y);
  };
  expect_exact("int_arith", c.download(), want);
  const auto fg = f.download();
  expect_exact("int_arith f32", fg, [&](long long i) { return static_cast<float>(want(i)) * 0.5f; });
}

// C++'s truncating division and remainder; 0 for a zero divisor (the tile maps' definition).
long long divided(long long x, long long d) { return d == 0 ? 0 : x / d; }
long long remainder_of(long long x, long long d) { return d == 0 ? 0 : x % d; }

void int_divide_test() {
  const long long n = 3000, R = 50, H = 100;  // tails of the 1024 and 32 x 64 tiles
  std::vector<int> values = random_ints<int>(n, -2000000000, 2000000000, 20);
  values[0] = INT_MAX, values[1] = INT_MIN + 1, values[2] = 0, values[3] = -1, values[4] = 7;
  for (long long i = 5; i < R; ++i) values[i] = static_cast<int>(values[i] % 97);  // gather rows, some negative
  std::vector<float> xs(R * H);
  std::mt19937 g(21);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : xs) v = u(g);
  Dev<int> a(values, {n});
  Dev<float> x(xs, {R, H});
  for (long long d : {1LL, 3LL, 7LL, -7LL, 64LL, 97LL, 1000003LL, 2147483647LL, -2147483648LL, 0LL}) {
    Dev<int> q({n}, poisoned), r({n}, poisoned);
    Dev<float> out({R, H}, poisoned);
    PKT_LAUNCH(int_divide, kGrid)(pk::LaunchContext{}, a.view(), q.view(), r.view(), x.view(), out.view(), d);
    sync();
    const std::string what = "int_divide by " + std::to_string(d);
    expect_exact((what + " /").c_str(), q.download(), [&](long long i) { return divided(a.host[i], d); });
    expect_exact((what + " %").c_str(), r.download(), [&](long long i) { return remainder_of(a.host[i], d); });
    expect_exact((what + " gather").c_str(), out.download(), [&](long long i) {
      const long long row = remainder_of(a.host[i / H], d);  // rows outside [0, R) read zeros
      return row >= 0 && row < R ? x.host[row * H + i % H] : 0.f;
    });
  }
}

void index_division_test() {
  const long long n = 2000;  // 8 tiles of 256, the last one partial
  Dev<long long> x(random_ints<long long>(n, -(1ll << 40), 1ll << 40, 23), {n});
  for (long long d : {7LL, -3LL, -1LL, 300LL, 0LL}) {
    Dev<long long> y({n}, poisoned);
    PKT_LAUNCH(index_division, kGrid)(pk::LaunchContext{}, x.view(), y.view(), d);
    sync();
    expect_exact(("index_division by " + std::to_string(d)).c_str(), y.download(), [&](long long i) {
      const long long origin = i / 256 * 256;
      return x.host[i] + divided(origin, d) * 1000 + remainder_of(origin, d);
    });
  }
}

void int64_test() {
  const long long n = 5000;
  Dev<long long> a(random_ints<long long>(n, -(1ll << 40), 1ll << 40, 3), {n});
  std::vector<float> xs(n);
  std::mt19937 g(4);
  std::uniform_real_distribution<float> u(-3e7f, 3e7f);
  for (long long i = 0; i < n; ++i) xs[i] = u(g);
  xs[0] = NAN, xs[1] = 1e30f, xs[2] = -1e30f, xs[3] = -2.75f, xs[4] = 2.75f;  // saturation, NaN -> 0
  Dev<float> x(xs, {n});
  Dev<long long> out({n}, poisoned);
  Dev<int> q({n}, poisoned);
  PKT_LAUNCH(int64_mix, kGrid)(pk::LaunchContext{}, a.view(), x.view(), out.view(), q.view());
  sync();
  auto to_int = [](double v, double lo, double hi) -> long long {
    if (std::isnan(v)) return 0;
    return static_cast<long long>(std::trunc(std::min(std::max(v, lo), hi)));
  };
  expect_exact("int64_mix", out.download(), [&](long long i) {
    return a.host[i] * 3 - to_int(xs[i], -9.2233720368547758e18, 9.2233720368547758e18);
  });
  expect_exact("int64_mix cast", q.download(), [&](long long i) {
    return static_cast<int>(to_int(static_cast<double>(xs[i] * 100.0f), INT_MIN, INT_MAX));
  });
}

void embedding_test() {
  const long long T = 50, V = 37, H = 300, first = 10;
  Dev<int> ids(random_ints<int>(T, -5, 60, 5), {T});  // about half outside [first, first + V)
  DevTensor<bf16> table({V, H}, 6), out({T, H}, 0, true);
  PKT_LAUNCH(embedding_lookup, kGrid)(pk::LaunchContext{}, ids.view(), table.view(),
                                                             out.view(), first);
  sync();
  expect("embedding_lookup", out, [&](long long i) {
    const long long r = ids.host[i / H] - first;
    return r >= 0 && r < V ? table.at(r * H + i % H) : 0.0;
  }, 0, 0);
}

void scatter_test() {
  const long long T = 70, H = 300, R = 80;
  std::vector<long long> slots(T);
  std::vector<long long> perm(R);
  for (long long i = 0; i < R; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), std::mt19937(7));
  for (long long t = 0; t < T; ++t) slots[t] = perm[t];
  slots[3] = -1, slots[9] = R + 5;  // dropped
  Dev<long long> slot(slots, {T, 1});
  DevTensor<float> x({T, H}, 8), y({R, H}, 9);  // y keeps its pattern where no row lands
  PKT_LAUNCH(scatter_rows, kGrid)(pk::LaunchContext{}, x.view(), slot.view(), y.view());
  sync();
  std::vector<long long> from(R, -1);
  for (long long t = 0; t < T; ++t)
    if (slots[t] >= 0 && slots[t] < R) from[slots[t]] = t;
  expect("scatter_rows", y, [&](long long i) {
    const long long r = i / H, t = from[r];
    return t >= 0 ? x.at(t * H + i % H) : y.at(i);
  }, 0, 0);
  // Slots as a [1, T] row, none of them row 0: T = 70 leaves 26 padding rows in the last tile.
  std::vector<int> row_slots(R - 1);
  for (long long i = 0; i < R - 1; ++i) row_slots[i] = static_cast<int>(i + 1);
  std::shuffle(row_slots.begin(), row_slots.end(), std::mt19937(11));
  row_slots.resize(T);
  row_slots[5] = -1;
  Dev<int> slot_row(row_slots, {1, T});
  DevTensor<float> y2({R, H}, 10);
  PKT_LAUNCH(scatter_rows_by_id_row, kGrid)(pk::LaunchContext{}, x.view(), slot_row.view(), y2.view());
  sync();
  std::vector<long long> from2(R, -1);
  for (long long t = 0; t < T; ++t)
    if (row_slots[t] >= 0) from2[row_slots[t]] = t;
  expect("scatter_rows_by_id_row", y2, [&](long long i) {
    const long long r = i / H, t = from2[r];
    return t >= 0 ? x.at(t * H + i % H) : y2.at(i);
  }, 0, 0);
}

void combine_test() {
  const long long T = 90, H = 200, R = 20;
  Dev<int> slot(random_ints<int>(T, -2, R + 1, 10), {T});  // duplicates, and some outside
  DevTensor<float> x({T, H}, 11), w({T, 1}, 12), y({R, H}, 13);
  PKT_LAUNCH(combine_rows, kGrid)(pk::LaunchContext{}, x.view(), w.view(), slot.view(), y.view());
  sync();
  std::vector<double> want(R * H);
  for (long long i = 0; i < R * H; ++i) want[i] = y.at(i);
  for (long long t = 0; t < T; ++t) {
    const long long s = slot.host[t];
    if (s < 0 || s >= R) continue;
    for (long long h = 0; h < H; ++h)
      want[s * H + h] += static_cast<double>(static_cast<float>(x.at(t * H + h) * w.at(t)));
  }
  expect("combine_rows", y, [&](long long i) { return want[i]; }, 1e-4, 1e-5);

  const long long C = 8, TC = 300, RC = 13;
  Dev<int> cslot(random_ints<int>(TC, -1, RC, 14), {TC});
  Dev<int> c(random_ints<int>(TC * C, -50, 50, 15), {TC, C});
  Dev<int> counts(random_ints<int>(RC * C, 0, 9, 16), {RC, C});
  PKT_LAUNCH(count_rows, kGrid)(pk::LaunchContext{}, c.view(), cslot.view(), counts.view());
  sync();
  std::vector<long long> cw(counts.host.begin(), counts.host.end());
  for (long long t = 0; t < TC; ++t)
    if (cslot.host[t] >= 0 && cslot.host[t] < RC)
      for (long long k = 0; k < C; ++k) cw[cslot.host[t] * C + k] += c.host[t * C + k];
  expect_exact("count_rows", counts.download(), [&](long long i) { return cw[i]; });
}

void int64_transpose_test() {
  const long long M = 40, N = 100;  // tails of the 16 x 48 tiles
  Dev<long long> x(random_ints<long long>(M * N, -(1ll << 50), 1ll << 50, 17), {M, N});
  Dev<long long> y({N, M}, poisoned);
  PKT_LAUNCH(int64_transpose, kGrid)(pk::LaunchContext{}, x.view(), y.view());
  sync();
  expect_exact("int64_transpose", y.download(), [&](long long i) { return x.host[(i % M) * N + i / M] + 1; });
}

void expert_offsets_test() {
  const long long n = 2500, tiles = (n + 1023) / 1024, E = 64;  // a partial last tile: its padding is no expert 0
  Dev<int> expert(random_ints<int>(n, -2, E + 1, 18), {n});
  std::vector<float> xs(n);
  std::mt19937 g(19);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : xs) v = u(g);
  Dev<float> x(xs, {n});
  Dev<int> counts({tiles * E}, poisoned), offsets({tiles * E}, poisoned);
  Dev<float> sums({n}, poisoned);
  PKT_LAUNCH(expert_offsets, kGrid)(pk::LaunchContext{}, expert.view(), counts.view(),
                                                         offsets.view(), x.view(), sums.view());
  sync();
  std::vector<long long> want_counts(tiles * E, 0);
  for (long long i = 0; i < n; ++i)
    if (expert.host[i] >= 0 && expert.host[i] < E) ++want_counts[(i / 1024) * E + expert.host[i]];
  expect_exact("expert_offsets counts", counts.download(), [&](long long i) { return want_counts[i]; });
  expect_exact("expert_offsets offsets", offsets.download(), [&](long long i) {
    long long s = 0;
    for (long long e = (i / E) * E; e < i; ++e) s += want_counts[e];
    return s;
  });
  const auto got = sums.download();
  long long bad = 0;
  double run = 0;
  for (long long i = 0; i < n; ++i) {
    run = i % 1024 == 0 ? xs[i] : run + xs[i];
    bad += !(std::fabs(got[i] - run) <= 1e-4 * (1 + std::fabs(run)));
  }
  PKT_CHECK(bad == 0, "expert_offsets sums: " + std::to_string(bad) + " of " + std::to_string(n) + " wrong");
}

void counts_2d_test() {
  const long long R = 10, C = 70, tm = (R + 3) / 4, tn = (C + 63) / 64, E = 8;  // clipped both ways
  Dev<int> ids(random_ints<int>(R * C, 0, E + 1, 24), {R, C});  // mostly 0..7, some 8 (not counted)
  Dev<int> counts({tm * tn * E}, poisoned);
  const long long nx = 300, ns = 600;  // sums run past x's end
  std::vector<float> xs(nx);
  std::mt19937 g(25);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : xs) v = u(g);
  Dev<float> x(xs, {nx});
  Dev<float> sums({ns}, poisoned);
  PKT_LAUNCH(counts_2d, kGrid)(pk::LaunchContext{}, ids.view(), counts.view(), x.view(), sums.view());
  sync();
  std::vector<long long> want(tm * tn * E, 0);
  for (long long r = 0; r < R; ++r)
    for (long long c = 0; c < C; ++c)
      if (ids.host[r * C + c] < E) ++want[((r / 4) * tn + c / 64) * E + ids.host[r * C + c]];
  expect_exact("counts_2d counts", counts.download(), [&](long long i) { return want[i]; });
  const auto got = sums.download();
  long long bad = 0;
  double run = 0;
  for (long long i = 0; i < ns; ++i) {
    const double v = i < nx ? xs[i] + 1.0 : 1.0;  // padding loads 0; the + 1 computed from it counts
    run = i % 256 == 0 ? v : run + v;
    bad += !(std::fabs(got[i] - run) <= 1e-4 * (1 + std::fabs(run)));
  }
  PKT_CHECK(bad == 0, "counts_2d sums: " + std::to_string(bad) + " of " + std::to_string(ns) + " wrong");
}

void long_cumsum_test() {
  const long long nx = 20000, na = 12345;  // partial last tiles
  std::vector<float> xs(nx);
  std::mt19937 g(26);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : xs) v = u(g);
  Dev<float> x(xs, {nx});
  Dev<float> y({nx}, poisoned);
  Dev<long long> a(random_ints<long long>(na, -(1ll << 40), 1ll << 40, 27), {na});
  Dev<long long> b({na}, poisoned);
  PKT_LAUNCH(long_cumsum, kGrid)(pk::LaunchContext{}, x.view(), y.view(), a.view(), b.view());
  sync();
  const auto got = y.download();
  long long bad = 0;
  double run = 0;
  for (long long i = 0; i < nx; ++i) {
    run = i % 8192 == 0 ? xs[i] : run + xs[i];
    bad += !(std::fabs(got[i] - run) <= 1e-3 * (1 + std::fabs(run)));
  }
  PKT_CHECK(bad == 0, "long_cumsum f32: " + std::to_string(bad) + " of " + std::to_string(nx) + " wrong");
  long long irun = 0;
  std::vector<long long> want(na);
  for (long long i = 0; i < na; ++i) want[i] = irun = (i % 5000 == 0 ? 0 : irun) + a.host[i];
  expect_exact("long_cumsum i64", b.download(), [&](long long i) { return want[i]; });
}

void expert_rows_test() {
  const long long R = 90, H = 200;
  Dev<int> counts(std::vector<int>{40, 77, 0, 1000}, {4});  // 1000: past x's rows, clipped by x
  Dev<float> scale(std::vector<float>{0.5f, -2.f, 3.f, 1.5f}, {4});
  DevTensor<float> x({R, H}, 20);
  for (long long e : {1LL, 2LL, 3LL, 7LL}) {  // 7: outside counts, reads 0 rows
    DevTensor<float> y({R, H}, 21);  // rows past the count keep this pattern
    PKT_LAUNCH(expert_rows, kGrid)(pk::LaunchContext{}, counts.view(), scale.view(), x.view(),
                                                     y.view(), e);
    sync();
    // The loop visits whole 16-row tiles up to the count; stores clip at y's edge only.
    const long long count = e < 4 ? counts.host[e] : 0, rows = (count + 15) / 16 * 16;
    const float s = e < 4 ? scale.host[e] : 0.f;
    expect("expert_rows", y, [&](long long i) {
      return i / H < rows ? double(static_cast<float>(x.at(i)) * s) : y.at(i);
    }, 0, 0);
  }
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  int_arith_test();
  int_divide_test();
  index_division_test();
  int64_test();
  embedding_test();
  scatter_test();
  combine_test();
  int64_transpose_test();
  expert_offsets_test();
  counts_2d_test();
  long_cumsum_test();
  expert_rows_test();
  if (cudaGetLastError() != cudaSuccess) pkt::fail("a launch failed");
  return pkt::finish("int_tiles_test");
}
