// Masks by && || !, dim_index on tiles of rank 3, and uniform() random numbers
// (test/specs/masks_random.pk.cpp) through the JIT at W = 1, against host references: the truth
// tables of arbitrary values (0 false; any other value, NaN too, true), a band mask, coordinates,
// and the random numbers compared bit for bit with the hash docs/language.md gives (reproduced
// here), on tiles of ranks 1, 2 and 4, with a seed past 2^32 and a negative one; then dropout on
// the general path and in the GEMM template's epilogue (and its general twin) against float64
// with the same mask; and cumsum of a 3-D tile. Outputs are poisoned first; shapes leave partial
// tiles everywhere.
#include <pk/jit/compile.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pkt::DevLocal;
using namespace pkt::cases;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"truth_table_f32", false}, {"truth_table_i32", false}, {"truth_table_mixed", false}, {"band_mask", false},
    {"coords_3d", false},       {"uniform_1d", false},      {"uniform_2d", false},
    {"uniform_4d", false},      {"dropout_bf16", false},    {"gemm_dropout", true},
    {"cumsum_3d_i32", false},   {"uniform_trailing", false}, {"positions_past_2p24", false},
    {"positions_past_2p24_1d", false},
    {"bits_i32", false},        {"unpack_int4", false},
};
const std::vector<const char*> kGeneralToo = {"gemm_dropout"};

KernelSet g_kernels;

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "masks_random", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}

// Values with many exact zeros and some NaN, so every truth-table row shows.
std::vector<float> mixed(LL n, unsigned seed) {
  const auto pick = ints<int>(n, 0, 6, seed);
  const auto v = rnd<float>(n, seed + 1, -3.f, 3.f);
  std::vector<float> out(n);
  for (LL i = 0; i < n; ++i) out[i] = pick[i] < 3 ? 0.f : pick[i] == 5 ? NAN : v[i];
  return out;
}
template <class T>
double table(T x, T y) {
  const bool a = x != 0, b = y != 0;  // NaN != 0 is true, as where() takes it
  return double(a && b) + 2 * double(a || b) + 4 * double(!a);
}

void truth_table_f32(const Run& r, LL M, LL N, unsigned seed) {
  const auto a = mixed(M * N, seed), b = mixed(M * N, seed + 7);
  DevLocal<float> ad({M, N}, a), bd({M, N}, b), out({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "truth_table_f32", 1, ad.view(), bd.view(), out.view()))
    check(r, "truth_table_f32", out.download(), [&](LL i) { return table(a[i], b[i]); }, exact());
  end_case(r, "truth_table_f32 " + dims({M, N}), before);
}

void truth_table_i32(const Run& r, LL M, LL N, unsigned seed) {
  const auto a = ints<int>(M * N, -2, 3, seed), b = ints<int>(M * N, -2, 3, seed + 3);
  DevLocal<int> ad({M, N}, a), bd({M, N}, b), out({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "truth_table_i32", 1, ad.view(), bd.view(), out.view()))
    check(r, "truth_table_i32", out.download(), [&](LL i) { return table(a[i], b[i]); }, exact());
  end_case(r, "truth_table_i32 " + dims({M, N}), before);
}

// x f32 [M, N] and y i32 [N] (a row broadcast): the junctions of the two types as f32 masks.
void truth_table_mixed(const Run& r, LL M, LL N, unsigned seed) {
  const auto a = mixed(M * N, seed);
  const auto b = ints<int>(N, -2, 3, seed + 5);
  DevLocal<float> ad({M, N}, a), out({M, N}, {});
  DevLocal<int> bd({N}, b);
  const int before = begin_case(r);
  if (run(r, "truth_table_mixed", 1, ad.view(), bd.view(), out.view()))
    check(r, "truth_table_mixed", out.download(), [&](LL i) {
      const float x = a[i];
      const int y = b[i % N];
      const bool xa = x != 0, ya = y != 0;  // NaN is true, as where() takes it
      return double(xa && ya) + 2 * double(ya || xa) + 4 * double(x > 0.5f && y >= 1);
    }, exact());
  end_case(r, "truth_table_mixed " + dims({M, N}), before);
}

void band_mask(const Run& r, LL M, LL N, LL w, LL always, unsigned seed) {
  const auto s = rnd<float>(M * N, seed);
  DevLocal<float> sd({M, N}, s), out({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "band_mask", 1, sd.view(), out.view(), w, always))
    check(r, "band_mask", out.download(), [&](LL i) {
      const LL m = i / N, n = i % N;
      const bool keep = (n <= m && n > m - w) || n < always;
      return keep ? double(s[i]) : double(-1e30f);
    }, exact());
  end_case(r, "band_mask " + dims({M, N, w, always}), before);
}

void coords_3d(const Run& r, LL B, LL S, LL H) {
  DevLocal<int> out({B, S, H}, {});
  const int before = begin_case(r);
  if (run(r, "coords_3d", 1, out.view()))
    check(r, "coords_3d", out.download(), [&](LL i) {
      const LL b = i / (S * H), s = i / H % S, h = i % H;
      return double(s * 1000 + b * 10 + h % 10);
    }, exact());
  end_case(r, "coords_3d " + dims({B, S, H}), before);
}

// The numbers bit for bit, and their mean near 1/2.
void check_uniform(const Run& r, const std::string& what, const std::vector<float>& got,
                   const std::function<double(LL)>& want) {
  check(r, what, got, want, exact());
  double sum = 0;
  for (float x : got) sum += x;
  const double mean = sum / double(got.size());
  if (!(std::fabs(mean - 0.5) < 0.03)) pkt::fail(what + ": mean " + std::to_string(mean));
}

void uniform_1d(const Run& r, LL N, LL seed) {
  DevLocal<float> out({N}, {});
  const int before = begin_case(r);
  if (run(r, "uniform_1d", 1, out.view(), seed))
    check_uniform(r, "uniform_1d", out.download(), [&](LL i) { return uniform_at(seed, {i}); });
  end_case(r, "uniform_1d " + dims({N}) + " seed " + std::to_string(seed), before);
}

void uniform_2d(const Run& r, LL M, LL N, LL seed) {
  DevLocal<float> out({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "uniform_2d", 1, out.view(), seed))
    check_uniform(r, "uniform_2d", out.download(), [&](LL i) { return uniform_at(seed, {i / N, i % N}); });
  end_case(r, "uniform_2d " + dims({M, N}) + " seed " + std::to_string(seed), before);
}

void uniform_4d(const Run& r, LL A, LL B, LL C, LL D, LL seed) {
  DevLocal<float> out({A, B, C, D}, {});
  const int before = begin_case(r);
  if (run(r, "uniform_4d", 1, out.view(), seed))
    check_uniform(r, "uniform_4d", out.download(), [&](LL i) {
      return uniform_at(seed, {i / (B * C * D), i / (C * D) % B, i / D % C, i % D});
    });
  end_case(r, "uniform_4d " + dims({A, B, C, D}), before);
}

// A 2-D tile of a 3-D tensor: the same numbers as a 3-D tile would draw (coordinates (b, m, n)).
void uniform_trailing(const Run& r, LL B, LL M, LL N, LL seed) {
  DevLocal<float> out({B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, "uniform_trailing", 1, out.view(), seed))
    check_uniform(r, "uniform_trailing", out.download(), [&](LL i) {
      return uniform_at(seed, {i / (M * N), i / N % M, i % N});
    });
  end_case(r, "uniform_trailing " + dims({B, M, N}), before);
}

// Dropped where uniform < p (exactly 0), else x / (1 - p) rounded to bf16; the dropped share
// near p.
void check_dropout(const Run& r, const std::string& what, const std::vector<bf16>& got, LL M, LL N, LL seed,
                   float p, const std::function<double(LL)>& kept, const std::function<double(LL)>& mag) {
  LL dropped = 0;
  check(r, what, got, [&](LL i) {
    const bool drop = uniform_at(seed, {i / N, i % N}) < p;
    dropped += drop;
    return drop ? 0.0 : kept(i) * double(1.f / (1.f - p));
  }, [&](LL i) {
    return uniform_at(seed, {i / N, i % N}) < p ? 0.0 : kBf * std::fabs(kept(i) * double(1.f / (1.f - p))) + mag(i);
  });
  const double share = double(dropped) / double(M * N);
  if (!(std::fabs(share - p) < 0.03)) pkt::fail(what + ": dropped " + std::to_string(share) + " of the elements");
}

void dropout_bf16(const Run& r, LL M, LL N, LL seed, float p, unsigned s) {
  const auto x = rnd<bf16>(M * N, s, -2.f, 2.f);
  DevLocal<bf16> xd({M, N}, x), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "dropout_bf16", 1, xd.view(), y.view(), seed, p))
    check_dropout(r, "dropout_bf16", y.download(), M, N, seed, p, [&](LL i) { return val(x[i]); },
                  [](LL) { return 1e-6; });
  end_case(r, "dropout_bf16 " + dims({M, N}), before);
}

void gemm_dropout(const Run& r, const std::string& kernel, LL M, LL N, LL K, LL seed, float p, unsigned s) {
  const auto a = rnd<bf16>(M * K, s), b = rnd<bf16>(N * K, s + 1);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kernel, 1, ad.view(), bd.view(), c.view(), seed, p)) {
    std::vector<double> acc(M * N), mag(M * N);
    for (LL m = 0; m < M; ++m)
      for (LL n = 0; n < N; ++n) {
        double sum = 0, abs = 0;
        for (LL k = 0; k < K; ++k) {
          const double t = val(a[m * K + k]) * val(b[n * K + k]);
          sum += t, abs += std::fabs(t);
        }
        acc[m * N + n] = sum, mag[m * N + n] = abs;
      }
    check_dropout(r, kernel, c.download(), M, N, seed, p, [&](LL i) { return acc[i]; },
                  [&](LL i) { return 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, kernel + " " + dims({M, N, K}), before);
}

// Sums along the last dimension of each 2 x 8 x 64 tile (they restart at each tile's first column).
void cumsum_3d_i32(const Run& r, LL B, LL S, LL H, unsigned seed) {
  const auto x = ints<int>(B * S * H, -1000, 1000, seed);
  DevLocal<int> xd({B, S, H}, x), y({B, S, H}, {});
  const int before = begin_case(r);
  if (run(r, "cumsum_3d_i32", 1, xd.view(), y.view()))
    check(r, "cumsum_3d_i32", y.download(), [&](LL i) {
      const LL h = i % H, row = i - h;
      double sum = 0;
      for (LL j = h / 64 * 64; j <= h; ++j) sum += x[row + j];
      return sum;
    }, exact());
  end_case(r, "cumsum_3d_i32 " + dims({B, S, H}), before);
}

// R rows past 2^24, scattered to positions computed by row_index and bounded by it: every row
// lands on its own (f32 positions would merge odd rows there and misplace the bound hi).
void positions_past_2p24(const Run& r, LL R, LL hi, unsigned seed) {
  const auto x = rnd<float>(R, seed);
  DevLocal<float> xd({R, 1}, x), y({R, 1}, {});
  const int before = begin_case(r);
  if (run(r, "positions_past_2p24", 1, xd.view(), y.view(), hi))
    check(r, "positions_past_2p24", y.download(), [&](LL i) { return i < hi ? double(x[i]) : -1.0; }, exact());
  end_case(r, "positions_past_2p24 " + dims({R, 1}) + " hi " + std::to_string(hi), before);
}

void positions_past_2p24_1d(const Run& r, LL R, LL hi, unsigned seed) {
  const auto x = rnd<float>(R, seed);
  DevLocal<float> xd({R}, x), y({R, 1}, {});
  const int before = begin_case(r);
  if (run(r, "positions_past_2p24_1d", 1, xd.view(), y.view(), hi))
    check(r, "positions_past_2p24_1d", y.download(), [&](LL i) { return i < hi ? double(x[i]) : -1.0; }, exact());
  end_case(r, "positions_past_2p24_1d " + dims({R}) + " hi " + std::to_string(hi), before);
}

// The shifts as the language defines them (pk/tile/int_math.cuh): counts outside 0..31 give 0
// (<<) or the sign fill (>>); << through unsigned, so no overflow.
int shl(int x, int y) { return y < 0 || y > 31 ? 0 : int(unsigned(x) << y); }
int shr(int x, int y) { return y < 0 || y > 31 ? (x < 0 ? -1 : 0) : x >> y; }

void bits_i32(const Run& r, LL M, LL N, unsigned seed) {
  const auto a = ints<int>(M * N, -100000, 100000, seed), b = ints<int>(M * N, -3, 40, seed + 1);
  DevLocal<int> ad({M, N}, a), bd({M, N}, b), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "bits_i32", 2, ad.view(), bd.view(), y.view()))
    check(r, "bits_i32", y.download(), [&](LL i) {
      const int x = a[i], z = b[i];
      // i32 arithmetic wraps on the device: sum in uint32 and reinterpret.
      const unsigned v = unsigned(x & z) + 3u * unsigned(x | z) - unsigned(x ^ z) + unsigned(shl(x, z)) +
                         unsigned(shr(x, z)) + unsigned(shl(7, z & 7)) + unsigned(1 ^ x);
      return double(int(v));
    }, exact());
  end_case(r, "bits_i32 " + dims({M, N}), before);
}

void unpack_int4(const Run& r, LL N, LL C, unsigned seed) {
  const auto w = ints<int>(N * C, std::numeric_limits<int>::min(), std::numeric_limits<int>::max(), seed);
  const auto s = rnd<float>(N, seed + 1, 0.01f, 0.1f);
  DevLocal<int> wd({N, C}, w);
  DevLocal<float> sd({N}, s), y({N, C, 8}, {});
  const int before = begin_case(r);
  if (run(r, "unpack_int4", 2, wd.view(), sd.view(), y.view()))
    check(r, "unpack_int4", y.download(), [&](LL i) {
      const LL n = i / (C * 8), c = i / 8 % C, j = i % 8;
      const int nib = int((unsigned(w[n * C + c]) >> (4 * j)) & 15u);
      return double(float(nib - 8) * s[n]);
    }, exact());
  end_case(r, "unpack_int4 " + dims({N, C, 8}), before);
}

void cases(const Run& r) {
  truth_table_f32(r, 70, 100, 11);
  truth_table_i32(r, 37, 50, 21);
  truth_table_mixed(r, 45, 70, 31);
  band_mask(r, 150, 170, 20, 3, 31);
  band_mask(r, 65, 64, 1, 0, 41);
  coords_3d(r, 3, 37, 50);
  uniform_1d(r, 1000, 12345);
  uniform_2d(r, 70, 100, (LL(1) << 40) + 7);
  uniform_2d(r, 33, 65, -5);
  uniform_4d(r, 3, 5, 17, 20, 99);
  dropout_bf16(r, 70, 300, 777, 0.3f, 51);
  gemm_dropout(r, "gemm_dropout", 300, 264, 200, 2024, 0.25f, 61);
  gemm_dropout(r, "gemm_dropout/general", 300, 264, 200, 2024, 0.25f, 61);
  gemm_dropout(r, "gemm_dropout", 1000, 1032, 512, (LL(3) << 33) + 1, 0.1f, 71);
  cumsum_3d_i32(r, 3, 13, 100, 81);
  uniform_trailing(r, 3, 37, 100, 91);
  positions_past_2p24(r, (LL(1) << 24) + 1000, (LL(1) << 24) + 501, 101);
  positions_past_2p24_1d(r, (LL(1) << 24) + 3000, (LL(1) << 24) + 1501, 103);
  bits_i32(r, 37, 150, 111);
  unpack_int4(r, 45, 70, 121);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_MASKS_RANDOM_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels))
    return pkt::finish("masks_random_jit_test");
  // Every kernel is single-GPU: the cases run at W = 1 only.
  return run_worlds("masks_random_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) cases(r);
  });
}
