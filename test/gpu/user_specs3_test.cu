// The third user-written spec set (test/specs/user_specs3.pk.cpp) on one GPU: every kernel, on
// sizes with tails in every dimension, against a float64 reference of what the spec says (tile
// semantics: elements outside the tensor load as zero and go through the tile's arithmetic, so
// a reduction over a partial tile counts what they become; stores are clipped; cumsum and
// histogram ignore the padding). Outputs are poisoned first (or, where a kernel must leave some
// elements alone, filled with random values that are checked to survive); inputs are random
// and never all zero.
#include PK_USER_SPECS3_CU
#include "tile_test_util.h"

#include <climits>
#include <cstdint>

namespace {

using pk::bf16;
using pk::f16;
using pkt::Dev;
using pkt::DevTensor;
using pkt::expect;
using pkt::gelu_tanh;
using pkt::f16_round;
using pkt::expect_int;
using pkt::poisoned;
using pkt::random_ints;

constexpr int kGrid = 132;
constexpr double kBf16 = 1.0 / 128, kF16 = 1.0 / 1024;  // one ulp, relative

void sync() { PKT_CUDA(cudaDeviceSynchronize()); }

// Host data made negative (-(|x| + 0.5)) or positive (|x| + 0.5), then uploaded.
template <class T>
void make_sign(DevTensor<T>& x, double sign) {
  for (auto& v : x.host) v = pkt::from_host<T>(static_cast<float>(sign * (std::fabs(pkt::to_host(v)) + 0.5)));
  x.upload();
}

// ---- row reductions over partial tiles ----

void reductions() {
  {
    const long long M = 1000, N = 77, TN = 32, NT = 3;  // the third column tile holds 13 columns
    DevTensor<float> x({M, N}, 1), hi({M, NT}, 0, true), him({M, NT}, 0, true);
    make_sign(x, -1);
    PKT_LAUNCH(tile_row_max_unmasked, kGrid)(pk::LaunchContext{}, x.view(), hi.view());
    PKT_LAUNCH(tile_row_max_masked, kGrid)(pk::LaunchContext{}, x.view(), him.view());
    sync();
    auto mx = [&](long long i, bool pad) {
      const long long r = i / NT, c0 = i % NT * TN;
      double m = -INFINITY;
      for (long long j = c0; j < c0 + TN; ++j) {
        if (j < N) m = std::max(m, x.at(r * N + j));
        else if (pad) m = std::max(m, 0.0);  // a clipped load's zero counts (documented)
      }
      return m;
    };
    expect("tile_row_max_unmasked", hi, [&](long long i) { return mx(i, true); }, 0, 0);
    expect("tile_row_max_masked", him, [&](long long i) { return mx(i, false); }, 0, 0);
  }
  {
    const long long M = 21, N = 77;
    DevTensor<float> x({M, N}, 2), lm({M, 1}, 0, true), lr({M, 1}, 0, true);
    make_sign(x, 1);
    PKT_LAUNCH(row_min_pos, kGrid)(pk::LaunchContext{}, x.view(), lm.view(), lr.view());
    sync();
    expect("row_min_pos.masked", lm, [&](long long r) {
      double m = INFINITY;
      for (long long j = 0; j < N; ++j) m = std::min(m, x.at(r * N + j));
      return m;
    }, 0, 0);
    expect("row_min_pos.raw", lr, [&](long long) { return 0.0; }, 0, 0);  // the padding's zeros
  }
  {
    const long long M = 10, N = 150;  // 64-column blocks: the third holds 22 columns
    DevTensor<bf16> x({M, N}, 3), y({M, N}, 0, true);
    make_sign(x, -1);
    PKT_LAUNCH(softmax_neg_bf16, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("softmax_neg_bf16", y, [&](long long i) {
      const long long r = i / N;
      double m = -INFINITY, s = 0;
      for (long long j = 0; j < N; ++j) m = std::max(m, x.at(r * N + j));
      for (long long j = 0; j < N; ++j) s += std::exp(x.at(r * N + j) - m);
      return std::exp(x.at(i) - m) / s;
    }, 1e-5, 2 * kBf16);
  }
  {
    const long long M = 5, N = 300, TN = 256;
    DevTensor<float> x({M, N}, 4), y({M, N}, 0, true);
    PKT_LAUNCH(one_row_tiles, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("one_row_tiles", y, [&](long long i) {
      const long long r = i / N, c0 = i % N / TN * TN;
      double s = 0;
      for (long long j = c0; j < std::min(c0 + TN, N); ++j) s += std::fabs(x.at(r * N + j));
      return x.at(i) / s;
    }, 1e-7, 1e-5);
  }
  {
    const long long M = 37, N = 77;  // one 96-column tile per row, 19 columns of padding
    DevTensor<f16> x({M, N}, 5), y({M, N}, 0, true);
    make_sign(x, 1);  // all positive: the unmasked padding would win row_min
    PKT_LAUNCH(minmax_scale_f16, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("minmax_scale_f16", y, [&](long long i) {
      const long long r = i / N;
      double lo = INFINITY, hi = -INFINITY;
      for (long long j = 0; j < N; ++j) lo = std::min(lo, x.at(r * N + j)), hi = std::max(hi, x.at(r * N + j));
      return (x.at(i) - lo) / (hi - lo);
    }, 2e-3, 2 * kF16);
  }
}

// ---- element-wise with tails, offsets, in place ----

void elementwise() {
  {
    const long long n = 777;
    DevTensor<float> y({n}, 7);
    PKT_LAUNCH(square_inplace_1d, kGrid)(pk::LaunchContext{}, y.view());
    sync();
    expect("square_inplace_1d", y, [&](long long i) { return y.at(i) * y.at(i) - 0.5; }, 1e-6, 1e-6);
  }
  {
    const long long M = 70, N = 100;
    const float alpha = -0.75f;
    DevTensor<bf16> x({M, N}, 8), y({M, N}, 9);
    PKT_LAUNCH(axpy_inplace_bf16, kGrid)(pk::LaunchContext{}, x.view(), y.view(), alpha);
    sync();
    expect("axpy_inplace_bf16", y, [&](long long i) { return y.at(i) + alpha * x.at(i); }, 1e-2, kBf16);
  }
  {
    const long long M = 45, N = 77;
    DevTensor<float> x({M, N}, 10), y({M - 3, N - 5}, 0, true);
    PKT_LAUNCH(shifted_diff, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("shifted_diff", y, [&](long long i) {
      const long long r = i / (N - 5), c = i % (N - 5);
      return x.at((r + 3) * N + c + 5) - x.at(r * N + c);
    }, 1e-6, 1e-6);
  }
  {
    const long long M = 45, N = 77, YN = N + 1;
    DevTensor<float> x({M, N}, 11), y({M + 2, YN}, 12);  // y keeps its values in rows 0..1, column 0
    PKT_LAUNCH(store_shifted, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("store_shifted", y, [&](long long i) {
      const long long r = i / YN, c = i % YN;
      return r >= 2 && c >= 1 ? 2 * x.at((r - 2) * N + c - 1) : y.at(i);
    }, 0, 1e-7);
  }
  {
    const long long M = 30, N = 130;
    DevTensor<float> x({M, N}, 13), y({M, N}, 0, true), z({M, N}, 0, true);
    PKT_LAUNCH(restore_twice, kGrid)(pk::LaunchContext{}, x.view(), y.view(), z.view());
    sync();
    expect("restore_twice.y", y, [&](long long i) { return 3 * x.at(i); }, 1e-6, 1e-6);
    expect("restore_twice.z", z, [&](long long i) { return x.at(i) + 1; }, 1e-6, 1e-6);
  }
  {
    const long long M = 100, N = 7;
    DevTensor<float> x({M, N}, 14), y({M, N}, 0, true);
    PKT_LAUNCH(column_tiles, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("column_tiles", y, [&](long long i) { return x.at(i) * (i % N + 1); }, 1e-6, 1e-6);
  }
  {
    const long long M = 50, N = 70;
    DevTensor<float> x({M, N}, 15), up({M, N}, 0, true), dg({M, N}, 0, true);
    PKT_LAUNCH(triangles, kGrid)(pk::LaunchContext{}, x.view(), up.view(), dg.view());
    sync();
    expect("triangles.upper", up, [&](long long i) { return i % N >= i / N ? x.at(i) : 0.0; }, 0, 0);
    expect("triangles.diag", dg, [&](long long i) { return i % N == i / N ? 1.0 : -1.0; }, 0, 0);
  }
  {
    const long long M = 40, N = 100;
    const float lo = -1.0f, hi = 1.5f;
    DevTensor<float> x({M, N}, 16), mu({M, 1}, 17), g({1, N}, 18), y({M, N}, 0, true);
    PKT_LAUNCH(center_clamp, kGrid)(pk::LaunchContext{}, x.view(), mu.view(), g.view(), y.view(), lo, hi);
    sync();
    expect("center_clamp", y, [&](long long i) {
      const double t = (x.at(i) - mu.at(i / N)) * g.at(i % N);
      return std::min(std::max(t, double(lo)), double(hi));
    }, 1e-6, 1e-6);
  }
}

// ---- mixed dtypes and integers ----

void types_ints() {
  {
    const long long M = 37, N = 90;
    DevTensor<bf16> a({M, N}, 19);
    DevTensor<f16> b({M, N}, 20);
    DevTensor<float> p({M, N}, 0, true);
    Dev<int> q({M, N}, poisoned);
    PKT_LAUNCH(mixed_mul, kGrid)(pk::LaunchContext{}, a.view(), b.view(), p.view(), q.view());
    sync();
    auto prod = [&](long long i) { return static_cast<float>(a.at(i)) * static_cast<float>(b.at(i)); };
    expect("mixed_mul.p", p, [&](long long i) { return prod(i); }, 0, 0);
    expect_int("mixed_mul.q", q, [&](long long i) { return static_cast<long long>(std::trunc(prod(i) * 10.0f)); });
  }
  {
    const long long n = 300;
    std::vector<long long> v = random_ints<long long>(n, -(1LL << 35), 1LL << 35, 21);
    Dev<long long> in(v, {n}), back({n}, poisoned);
    DevTensor<float> f({n}, 0, true);
    DevTensor<f16> h({n}, 0, true);
    PKT_LAUNCH(i64_roundtrip, kGrid)(pk::LaunchContext{}, in.view(), f.view(), back.view(), h.view());
    sync();
    expect("i64_roundtrip.f", f, [&](long long i) { return static_cast<double>(static_cast<float>(v[i])); }, 0, 0);
    expect_int("i64_roundtrip.back", back, [&](long long i) {
      return static_cast<long long>(std::trunc(static_cast<float>(v[i]) * 0.25f));
    });
    expect("i64_roundtrip.h", h, [&](long long i) {
      return static_cast<double>(f16_round(static_cast<float>(v[i]) * (1.0f / 1048576.0f)));
    }, 0, 0);
  }
  {
    const long long M = 20, N = 50;
    const long long d = -7;
    std::vector<long long> av = random_ints<long long>(M * N, -1000000000000LL, 1000000000000LL, 22);
    std::vector<long long> bv = random_ints<long long>(M * N, -50, 50, 23);
    av[0] = -13, bv[0] = 0;  // division and remainder by a zero tile element give 0
    av[1] = -13, bv[1] = 4;
    Dev<long long> a(av, {M, N}), b(bv, {M, N}), q({M, N}, poisoned), r({M, N}, poisoned);
    PKT_LAUNCH(i64_divmod, kGrid)(pk::LaunchContext{}, a.view(), b.view(), q.view(), r.view(), d);
    sync();
    auto dv = [](long long x, long long y) { return y == 0 ? 0 : x / y; };
    auto md = [](long long x, long long y) { return y == 0 ? 0 : x % y; };
    expect_int("i64_divmod.q", q, [&](long long i) { return av[i] / d + dv(av[i], bv[i]); });
    expect_int("i64_divmod.r", r, [&](long long i) { return av[i] % d - md(av[i], bv[i]); });
  }
  {
    const long long n = 1000;
    const long long lo = -500000, hi = 500000;
    std::vector<int> av = random_ints<int>(n, -1000000, 1000000, 24);
    Dev<int> a(av, {n}), y({n}, poisoned);
    PKT_LAUNCH(collatz_i32, kGrid)(pk::LaunchContext{}, a.view(), y.view(), lo, hi);
    sync();
    expect_int("collatz_i32", y, [&](long long i) {
      const long long x = av[i], s = x % 2 == 0 ? x / 2 : 3 * x + 1;
      return std::min(std::max(s, lo), hi);
    });
  }
  {
    const long long n = 1000, T = 256;
    std::vector<int> vv = random_ints<int>(n, -100, 100, 25);
    Dev<int> v(vv, {n}), s({n}, poisoned);
    PKT_LAUNCH(cumsum_tiles_i32, kGrid)(pk::LaunchContext{}, v.view(), s.view());
    sync();
    expect_int("cumsum_tiles_i32", s, [&](long long i) {
      long long sum = 0;
      for (long long j = i / T * T; j <= i; ++j) sum += vv[j];
      return sum;
    });
  }
  {
    const long long n = 1000, T = 256, NT = 4, E = 16;
    std::vector<int> iv = random_ints<int>(n, -2, 19, 26);  // -2, -1, 16..19 are not counted
    Dev<int> ids(iv, {n}), h({NT, E}, poisoned);
    PKT_LAUNCH(histogram_tiles, kGrid)(pk::LaunchContext{}, ids.view(), h.view());
    sync();
    expect_int("histogram_tiles", h, [&](long long i) {
      const long long t = i / E, e = i % E;
      long long c = 0;
      for (long long j = t * T; j < std::min((t + 1) * T, n); ++j) c += iv[j] == e;
      return c;
    });
  }
  {
    const long long n = 1300, T = 512;
    DevTensor<float> x({n}, 27), s({n}, 0, true);
    PKT_LAUNCH(cumsum_plus_one, kGrid)(pk::LaunchContext{}, x.view(), s.view());
    sync();
    expect("cumsum_plus_one", s, [&](long long i) {
      double sum = 0;
      for (long long j = i / T * T; j <= i; ++j) sum += x.at(j) + 1;
      return sum;
    }, 1e-2, 1e-5);  // fp32 sums of up to 512 terms near 500
  }
}

// ---- 3-D / 4-D ----

void shapes() {
  {
    const long long A = 2, B = 3, C = 13, D = 50;
    DevTensor<float> x({A, B, C, D}, 28), w({1, 1, 1, D}, 29), y({A, B, C, D}, 0, true), mx({A, B, C, 1}, 0, true);
    PKT_LAUNCH(planes_4d, kGrid)(pk::LaunchContext{}, x.view(), w.view(), y.view(), mx.view());
    sync();
    expect("planes_4d.y", y, [&](long long i) { return x.at(i) * w.at(i % D); }, 1e-6, 1e-6);
    expect("planes_4d.mx", mx, [&](long long i) {
      double m = -INFINITY;
      for (long long d = 0; d < D; ++d) m = std::max(m, x.at(i * D + d));
      return m;
    }, 0, 0);
  }
  {
    const long long B = 3, S = 5, D = 70;
    DevTensor<float> x({B, S, D}, 30), y({B, S, D}, 0, true);
    PKT_LAUNCH(tiles_3d_thin, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("tiles_3d_thin", y, [&](long long i) { return 2 * x.at(i) - 1; }, 1e-6, 1e-6);
  }
}

// ---- loops ----

void loops() {
  {
    const long long M = 37, N = 100, T = 32;
    DevTensor<float> x({M, N}, 31), y({M, N}, 0, true);
    PKT_LAUNCH(blockwise_prefix, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("blockwise_prefix", y, [&](long long i) {
      const long long r = i / N, c0 = i % N / T * T;
      double s = 0;
      for (long long j = 0; j < c0; ++j) s += x.at(r * N + j);
      return x.at(i) + s;
    }, 1e-4, 1e-5);
  }
  {
    const long long M = 20, N = 100;
    DevTensor<float> x({M, N}, 32), y({M, N}, 0, true);
    PKT_LAUNCH(nested_ranges, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("nested_ranges", y, [&](long long i) { return 9 * x.at(i); }, 1e-5, 1e-6);  // (1 + 2 + 3) * 1.5
  }
  {
    const long long M = 33, N = 50, steps = 5;
    DevTensor<float> x({M, N}, 33), y({M, N}, 0, true);
    PKT_LAUNCH(repeat_steps, kGrid)(pk::LaunchContext{}, x.view(), y.view(), steps);
    sync();
    expect("repeat_steps", y, [&](long long i) {
      double t = x.at(i);
      for (long long s = 0; s < steps; ++s) t = t * 0.9f + 1;
      return t;
    }, 1e-5, 1e-5);
  }
}

// ---- transpose, mma ----

void matrices() {
  {
    const long long M = 70, N = 45;
    DevTensor<float> x({M, N}, 34), y({N, M}, 0, true);
    PKT_LAUNCH(transpose_tail, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("transpose_tail", y, [&](long long i) { return 2 * x.at(i % M * N + i / M); }, 0, 0);
  }
  {
    const long long M = 37, K = 45, N = 29;
    DevTensor<bf16> a({M, K}, 35), b({K, N}, 36);
    DevTensor<float> c({M, N}, 0, true);
    // mma_small_odd takes the Hopper template; these sizes break its 16-byte TMA rows, so a
    // launch runs its general-path twin, launched here directly.
    PKT_LAUNCH(mma_small_odd__general, kGrid)(pk::LaunchContext{}, a.view(), b.view(), c.view());
    sync();
    expect("mma_small_odd", c, [&](long long i) {
      double s = 0;
      for (long long k = 0; k < K; ++k) s += a.at(i / N * K + k) * b.at(k * N + i % N);
      return s;
    }, 1e-4, 1e-5);
  }
  {
    const long long M = 50, K = 23, N = 33;
    DevTensor<f16> a({M, K}, 37), b({N, K}, 38);
    DevTensor<float> bias({1, N}, 39), c({M, N}, 0, true);
    // mma_t_bias_relu takes the Hopper template; these sizes break its 16-byte TMA rows, so a
    // launch runs its general-path twin, launched here directly.
    PKT_LAUNCH(mma_t_bias_relu__general, kGrid)(pk::LaunchContext{}, a.view(), b.view(), bias.view(), c.view());
    sync();
    expect("mma_t_bias_relu", c, [&](long long i) {
      double s = 0;
      for (long long k = 0; k < K; ++k) s += a.at(i / N * K + k) * b.at(i % N * K + k);
      return std::max(s + bias.at(i % N), 0.0);
    }, 1e-4, 1e-5);
  }
  {
    const long long M = 100, K = 70, N = 90;
    DevTensor<bf16> a({M, K}, 40), b({K, N}, 41), bias({1, N}, 42);
    DevTensor<float> c({M, N}, 0, true);
    // gemm_bias_gelu_f32 takes the Hopper template; these sizes break its 16-byte TMA rows, so a
    // launch runs its general-path twin, launched here directly.
    PKT_LAUNCH(gemm_bias_gelu_f32__general, kGrid)(pk::LaunchContext{}, a.view(), b.view(), bias.view(), c.view());
    sync();
    expect("gemm_bias_gelu_f32", c, [&](long long i) {
      double s = 0;
      for (long long k = 0; k < K; ++k) s += a.at(i / N * K + k) * b.at(k * N + i % N);
      return gelu_tanh(s + bias.at(i % N));
    }, 1e-3, 1e-4);
  }
}


// ---- padding of trailing-dimension tiles as indices ----
// The docs say a clipped load's padding, in any dimension, is not counted by histogram and is
// never scattered by store_rows. Tiles once tracked padding along dimensions 0 and 1 only, so a
// reshape of [1, R, C] -> [R, C] or [1, 1, N] -> [N] lost the trailing dimension's padding
// (histogram_trailing, histogram_3d_tile, scatter_by_3d_slots); the two [B, T, 1] column cases
// keep the row padding through the reshape either way.

void trailing_indices() {
  {
    const long long B = 3, S = 10, D = 50, SB = 3, E = 16;  // 14 columns of padding, 2 rows in the last block
    std::vector<int> iv = random_ints<int>(B * S * D, -2, 19, 43);
    Dev<int> ids(iv, {B, S, D}), h1({B, SB, E}, poisoned), h2({B, SB, E}, poisoned);
    PKT_LAUNCH(histogram_trailing, kGrid)(pk::LaunchContext{}, ids.view(), h1.view());
    PKT_LAUNCH(histogram_3d_tile, kGrid)(pk::LaunchContext{}, ids.view(), h2.view());
    sync();
    auto want = [&](long long i) {
      const long long b = i / (SB * E), sb = i / E % SB, e = i % E;
      long long c = 0;
      for (long long s = sb * 4; s < std::min(sb * 4 + 4, S); ++s)
        for (long long d = 0; d < D; ++d) c += iv[(b * S + s) * D + d] == e;
      return c;
    };
    expect_int("histogram_trailing", h1, want);
    expect_int("histogram_3d_tile", h2, want);
  }
  {
    const long long B = 2, T = 20, C = 32, R = B * T + 1;  // slots are 1..40: row 0 of y is never a target
    std::vector<int> sv(B * T);
    for (long long i = 0; i < B * T; ++i) sv[i] = static_cast<int>((i * 7) % (B * T) + 1);  // a permutation
    Dev<int> slots(sv, {B, 1, T});
    DevTensor<float> src({B, T, C}, 44), y({R, C}, 45);
    PKT_LAUNCH(scatter_by_3d_slots, kGrid)(pk::LaunchContext{}, slots.view(), src.view(), y.view());
    sync();
    std::vector<long long> from(R, -1);  // the source row landing in each row of y
    for (long long i = 0; i < B * T; ++i) from[sv[i]] = i;
    expect("scatter_by_3d_slots", y, [&](long long i) {
      const long long r = i / C, c = i % C;
      return from[r] >= 0 ? src.at(from[r] * C + c) : y.at(i);  // row 0 keeps its values
    }, 0, 0);
  }
  {
    const long long B = 2, T = 20, C = 32, R = B * T + 1;  // as above, slots as a [B, T, 1] column
    std::vector<int> sv(B * T);
    for (long long i = 0; i < B * T; ++i) sv[i] = static_cast<int>((i * 11) % (B * T) + 1);
    Dev<int> slots(sv, {B, T, 1});
    DevTensor<float> src({B, T, C}, 46), y({R, C}, 47);
    PKT_LAUNCH(scatter_by_3d_column, kGrid)(pk::LaunchContext{}, slots.view(), src.view(), y.view());
    sync();
    std::vector<long long> from(R, -1);
    for (long long i = 0; i < B * T; ++i) from[sv[i]] = i;
    expect("scatter_by_3d_column", y, [&](long long i) {
      const long long r = i / C, c = i % C;
      return from[r] >= 0 ? src.at(from[r] * C + c) : y.at(i);
    }, 0, 0);
  }
  {
    const long long B = 3, T = 21, C = 32, R = 50;
    std::vector<int> iv = random_ints<int>(B * T, -5, 60, 48);  // some outside the table: zero rows
    Dev<int> ids(iv, {B, T, 1});
    DevTensor<float> table({R, C}, 49), out({B, T, C}, 0, true);
    PKT_LAUNCH(gather_by_3d_column, kGrid)(pk::LaunchContext{}, ids.view(), table.view(), out.view());
    sync();
    expect("gather_by_3d_column", out, [&](long long i) {
      const long long row = iv[i / C];
      return row >= 0 && row < R ? 2 * table.at(row * C + i % C) : 0.0;
    }, 0, 0);
  }
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  reductions();
  elementwise();
  types_ints();
  shapes();
  loops();
  matrices();
  trailing_indices();
  if (cudaGetLastError() != cudaSuccess) pkt::fail("a launch failed");
  return pkt::finish("user_specs3_test");
}
