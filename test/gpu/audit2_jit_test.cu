// The second audit's reproducers (test/specs/audit2_probes.pk.cpp, findings in
// test/specs/audit2_findings.md, fixed in a7ec19e) through the JIT, each kernel against an exact
// integer or float64 host reference on fresh random inputs, every output poisoned (all-ones bytes:
// NaN floats, -1 integers) first, at sizes with partial last tiles and with whole ones. The
// reduced histogram (prim::reduce over symmetric tensors) runs at W = 1, 2 and 3 (ranks sharing
// one GPU; PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others), the rest at W = 1. What each case
// asserts is what docs/language.md states:
//   - a gather by a partial index tile (load_rows of load_rows, prim::reduce) marks the padding:
//     no padding row lands in row 0, no padding is counted in bin 0 (findings 1);
//   - a scatter of row statistics skips the values' padding rows (finding 2);
//   - claim skips padding in any dimension: counters equal the true counts (finding 3);
//   - a unit-extent row / column index in a GEMM epilogue or score map is the tile's origin,
//     taken on the general path (no template) (finding 4);
//   - a tile past a tensor's end in any dimension, or a one-element operand from there, holds no
//     data: nothing is written (finding 5);
//   - i32 to bf16 rounds once, to the nearest bf16 (finding 6);
//   - division by a one-element or 3-D broadcast divisor is correctly rounded fp32 (finding 7).
// The token-shift reproducers of the first audit run in user_specs11_jit_test (cases 35-37).
// One PASS or FAIL line per case.
#include <pk/jit/compile.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

// Every probe kernel; none may take a template. For gemm_epilogue_tile_origin and
// attention_tile_origin_window that is the fix of finding 4 (the templates refuse a unit-extent
// row index: it is the tile's origin, which their own tiling would change); pkc --explain says
// "... must span the output tile's rows (columns) ...".
const std::vector<const char*> kKernels = {
    "gather_then_scatter",       "gathered_histogram",           "reduced_histogram",
    "scatter_row_stats",         "claim_padded_columns",         "gemm_epilogue_tile_origin",
    "attention_tile_origin_window", "transposed_row_past_end",   "offset_by_past_end_base",
    "int_to_bf16",               "divide_by_broadcast",          "divide_by_one_element",
};

KernelSet g_kernels;


bool compile_all() {
  std::vector<std::pair<const char*, bool>> general;
  for (const char* name : kKernels) general.push_back({name, false});
  return compile_set(PK_AUDIT2_SPEC, general, {}, PK_PKC, g_kernels);
}

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "audit2", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host data ----

// A random permutation of [0, n).
std::vector<int> perm(LL n, unsigned seed) {
  std::vector<int> p(n);
  std::iota(p.begin(), p.end(), 0);
  std::mt19937 g(seed * 69069u + 1u);
  std::shuffle(p.begin(), p.end(), g);
  return p;
}


// The poison DevLocal leaves in an output it was not given data for: every byte 0xff.
template <class T>
bool poisoned(const T& x) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &x, sizeof(T));
  for (unsigned char c : b)
    if (c != 0xff) return false;
  return true;
}
template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
template <class T>
std::string show(const T& x) {
  return poisoned(x) ? std::string("poison") : std::to_string(val(x));
}


// Every element of `got` against want(i, w), bit for bit: want sets w and returns true, or returns
// false where the element was never to be written (it must still hold the poison). Names the
// first three wrong elements.
template <class T>
void check_exact(const Run& r, const std::string& what, const std::vector<T>& got,
                 const std::function<bool(LL, T&)>& want) {
  LL bad = 0;
  for (LL i = 0; i < LL(got.size()); ++i) {
    T w{};
    const bool written = want(i, w);
    const bool ok = written ? same_bits(got[i], w) : poisoned(got[i]);
    if (!ok) {
      if (bad < 3)
        pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + " element " +
                  std::to_string(i) + ": got " + show(got[i]) + ", want " +
                  (written ? show(w) : std::string("poison (never written)")));
      ++bad;
    }
  }
  if (bad > 3) pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + ": " +
                         std::to_string(bad) + " of " + std::to_string(got.size()) + " elements wrong");
}


// Rows of a [rows, C] output: the row of `src` ([*, C]) that lands in row d (src_of(d)), or none
// (src_of(d) < 0: the row must still hold the poison).
template <class T>
void check_rows(const Run& r, const std::string& what, const std::vector<T>& got, LL C, const std::vector<T>& src,
                const std::function<LL(LL)>& src_of) {
  check_exact<T>(r, what, got, [&](LL i, T& w) {
    const LL s = src_of(i / C);
    if (s < 0) return false;
    w = src[s * C + i % C];
    return true;
  });
}




// ================================================================ finding 1 ==

// 1. y[dst_of[src[t]]] = x[src[t]] for t < T: src holds T distinct rows of x, dst_of is a
// permutation of x's rows, so every row of y has at most one writer. Row 0 of y is written by a
// real token in the last (partial) tile (row0_written), or by nobody: then it stays poisoned (the
// bug sent the partial tile's padding rows there as zeros).
void gather_then_scatter(const Run& r, LL T, LL X, bool row0_written, unsigned seed) {
  const LL C = 256;
  const auto pr = perm(X, seed);
  const auto dst = perm(X, seed + 1);  // dst_of: x row -> y row
  std::vector<int> src(pr.begin(), pr.begin() + T);
  const int p0 = int(std::find(dst.begin(), dst.end(), 0) - dst.begin());  // the x row bound for y row 0
  const auto at = std::find(src.begin(), src.end(), p0);
  if (row0_written) {
    if (at != src.end()) std::swap(*at, src[T - 1]);
    else src[T - 1] = p0;
  } else if (at != src.end()) {
    *at = pr[T];  // not in src, and not p0 (p0 is in src)
  }
  const auto x = rnd<bf16>(X * C, seed + 2);
  DevLocal<int> sd({T}, src), dd({X, 1}, dst);
  DevLocal<bf16> xd({X, C}, x), y({X, C}, {});
  const int before = begin_case(r);
  if (run(r, "gather_then_scatter", 2, sd.view(), dd.view(), xd.view(), y.view())) {
    std::vector<LL> from(X, -1);  // y row -> x row
    for (LL t = 0; t < T; ++t) from[dst[src[t]]] = src[t];
    PKT_CHECK((from[0] >= 0) == row0_written, "gather_then_scatter: the test's row 0 set-up");
    check_rows<bf16>(r, "gather_then_scatter.y", y.download(), C, x, [&](LL d) { return from[d]; });
  }
  end_case(r, "gather_then_scatter " + dims({T, X}) + (row0_written ? " (row 0 written)" : " (row 0 unwritten)"),
           before);
}

// 2. counts[tile, e] = how many of the tile's tokens t have expert_of[tok[t]] == e (0..7; the
// values -1, 8 and 9 are not counted). The partial last tile's padding is not counted in bin 0.
void gathered_histogram(const Run& r, LL T, LL V, unsigned seed) {
  const LL NT = (T + 15) / 16;
  const auto tok = ints<int>(T, 0, V - 1, seed);
  const auto eo = ints<int>(V, -1, 9, seed + 1);
  DevLocal<int> td({T}, tok), ed({V, 1}, eo), counts({NT, 8}, {});
  const int before = begin_case(r);
  if (run(r, "gathered_histogram", 2, td.view(), ed.view(), counts.view())) {
    std::vector<int> want(NT * 8, 0);
    for (LL t = 0; t < T; ++t) {
      const int e = eo[tok[t]];
      if (e >= 0 && e < 8) ++want[(t / 16) * 8 + e];
    }
    check_exact<int>(r, "gathered_histogram.counts", counts.download(), [&](LL i, int& w) { return w = want[i], true; });
  }
  end_case(r, "gathered_histogram " + dims({T, V}), before);
}

// 3. counts[i / 256 * 64 + v] = how many elements of tile i of the ranks' sum of ids equal v
// (0..63). Each rank's ids lie in [-1, 70 / W], so the sums fall mostly in 0..63, some outside.
// The partial last tile's padding is not counted in bin 0.
void reduced_histogram(const Run& r, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL NT = (N + 255) / 256;
  std::vector<std::vector<int>> ids(W);
  for (int q = 0; q < W; ++q) ids[q] = ints<int>(N, -1, 70 / W, seed + 31 * q);
  SymArg<int> id(r.ctx, {N}, &ids[me]);
  DevLocal<int> counts({NT * 64}, {});
  const int before = begin_case(r);
  if (run(r, "reduced_histogram", 2, id.view, counts.view())) {
    std::vector<int> want(NT * 64, 0);
    for (LL i = 0; i < N; ++i) {
      LL s = 0;
      for (int q = 0; q < W; ++q) s += ids[q][i];
      if (s >= 0 && s < 64) ++want[(i / 256) * 64 + s];
    }
    check_exact<int>(r, "reduced_histogram.counts", counts.download(), [&](LL i, int& w) { return w = want[i], true; });
  }
  end_case(r, "reduced_histogram N=" + std::to_string(N), before);
}

// ================================================================ finding 2 ==

// 4. amax_cache[slots[t], 0] = max |x[t, :]| and cache[slots[t], :] = x[t, :] for t < T. slots
// has S >= T entries (a padded slot map, injective into [0, C), every seventh real token -1:
// skipped); slots[T] (the partial tile's first padding row) is 0, and no real token's slot is 0.
// Rows whose slot came only from padding rows stay poisoned in both outputs.
void scatter_row_stats(const Run& r, LL T, LL S, LL C, unsigned seed) {
  const LL D = 64;
  const auto pc = perm(C, seed);
  std::vector<int> slots(pc.begin(), pc.begin() + S);
  if (S > T) {
    const auto at = std::find(slots.begin(), slots.end(), 0);
    if (at != slots.end()) std::swap(*at, slots[T]);
    else slots[T] = 0;
  }
  for (LL t = 3; t < T; t += 7) slots[t] = -1;
  const auto x = rnd<float>(T * D, seed + 1);
  DevLocal<float> xd({T, D}, x), amax({C, 1}, {}), cache({C, D}, {});
  DevLocal<int> sd({S}, slots);
  const int before = begin_case(r);
  if (run(r, "scatter_row_stats", 2, xd.view(), sd.view(), amax.view(), cache.view())) {
    std::vector<LL> from(C, -1);
    for (LL t = 0; t < T; ++t)
      if (slots[t] >= 0) from[slots[t]] = t;
    if (S > T) PKT_CHECK(from[0] < 0, "scatter_row_stats: the test's row 0 set-up");
    check_exact<float>(r, "scatter_row_stats.amax_cache", amax.download(), [&](LL d, float& w) {
      if (from[d] < 0) return false;
      w = 0.f;
      for (LL c = 0; c < D; ++c) w = std::max(w, std::fabs(x[from[d] * D + c]));
      return true;
    });
    check_rows<float>(r, "scatter_row_stats.cache", cache.download(), D, x, [&](LL d) { return from[d]; });
  }
  end_case(r, "scatter_row_stats " + dims({T, S, C}), before);
}

// ================================================================ finding 3 ==

// 5. claim(fill, experts) on [T, 6] experts read as 16 x 8 tiles (columns 6, 7 padding). fill
// starts at random bases b[e]; after one launch fill[e] = b[e] + the number of real elements of
// expert e, and those elements hold the slots b[e] .. fill[e] - 1, each once. Experts -1 and E
// are outside the counter: -1.
void claim_padded_columns(const Run& r, LL T, LL E, unsigned seed) {
  const auto ex = ints<int>(T * 6, -1, E, seed);
  const auto base = ints<int>(E, 1, 1000, seed + 1);
  DevLocal<int> ed({T, 6}, ex), fill({E}, base), place({T, 6}, {});
  const int before = begin_case(r);
  if (run(r, "claim_padded_columns", 1, ed.view(), fill.view(), place.view())) {
    std::vector<int> count(E, 0);
    for (int e : ex)
      if (e >= 0 && e < E) ++count[e];
    check_exact<int>(r, "claim_padded_columns.fill", fill.download(),
                     [&](LL e, int& w) { return w = base[e] + count[e], true; });
    const auto got = place.download();
    std::vector<std::set<int>> seen(E);
    LL bad = 0;
    for (LL i = 0; i < T * 6; ++i) {
      const int e = ex[i], g = got[i];
      const bool ok = e < 0 || e >= E ? g == -1 : g >= base[e] && g < base[e] + count[e] && seen[e].insert(g).second;
      if (!ok && bad++ < 3)
        pkt::fail("claim_padded_columns.place element " + std::to_string(i) + ": expert " + std::to_string(e) +
                  " got slot " + std::to_string(g));
    }
    PKT_CHECK(bad == 0, "claim_padded_columns.place: " + std::to_string(bad) + " slots wrong");
  }
  end_case(r, "claim_padded_columns " + dims({T, E}), before);
}

// ================================================================ finding 4 ==

// 6. c = a b + 1000 m + n, with m and n the 64 x 64 tile's first row and column (row_index<1,
// 64>(m) is one row holding m, broadcast), against float64 sums.
void gemm_epilogue_tile_origin(const Run& r, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(Kd * N, seed + 1);
  DevLocal<bf16> ad({M, Kd}, a), bd({Kd, N}, b);
  DevLocal<float> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "gemm_epilogue_tile_origin", 2, ad.view(), bd.view(), c.view())) {
    std::vector<double> want(M * N), mag(M * N);
    for (LL m = 0; m < M; ++m)
      for (LL n = 0; n < N; ++n) {
        double s = 0, g = 0;
        for (LL q = 0; q < Kd; ++q) s += val(a[m * Kd + q]) * val(b[q * N + n]), g += std::fabs(val(a[m * Kd + q]));
        want[m * N + n] = s + 1000.0 * (m / 64 * 64) + double(n / 64 * 64), mag[m * N + n] = g;
      }
    // fp32 rounding of the two adds (below 0.02 at 2e5); the element's own row or column instead
    // of the tile's would be off by 1 or more.
    check(r, "gemm_epilogue_tile_origin.c", c.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 1e-6 * std::fabs(want[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, "gemm_epilogue_tile_origin " + dims({M, Kd, N}), before);
}


// 7. Attention whose keys are those after the 64-row query tile's first row less the window:
// row i keeps key j when j > i / 64 * 64 - window (the same keys for every row of a tile).
void attention_tile_origin_window(const Run& r, LL H, LL S, LL window, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * S * D, seed), kk = rnd<bf16>(H * S * D, seed + 1), v = rnd<bf16>(H * S * D, seed + 2);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "attention_tile_origin_window", 2, qd.view(), kd.view(), vd.view(), o.view(), window, scale)) {
    std::vector<double> wo(H * S * D), oh, lse_unused;
    for (LL h = 0; h < H; ++h) {
      attend(S, S, D,
             [&](LL i, LL j) {
               double s = 0;
               for (LL d = 0; d < D; ++d) s += val(q[(h * S + i) * D + d]) * val(kk[(h * S + j) * D + d]);
               return s * scale;
             },
             [&](LL i, LL j) { return j > i / 64 * 64 - window; }, [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); },
             oh, lse_unused);
      std::copy(oh.begin(), oh.end(), wo.begin() + h * S * D);
    }
    check(r, "attention_tile_origin_window.o", o.download(), [&](LL i) { return wo[i]; },
          [&](LL i) { return 2 * kBf * std::fabs(wo[i]) + 4e-3; });
  }
  end_case(r, "attention_tile_origin_window " + dims({H, S, window}), before);
}

// ================================================================ finding 5 ==

// 8. For each (b, j-tile) of x.rows() x ids.cols(): the index column ids[b, j .. j + 16)
// (transposed) moves x rows b * 16 .. b * 16 + 16 into y. Where b >= R (ids has R rows) the index
// column is past ids' end: nothing moves (the bug moved the x rows there into y[0]); x rows past
// X are padding and move nowhere either. ids: distinct rows of y from 1 (every seventh -1), or
// one of them 0 (row0_written); y rows nobody writes stay poisoned.
void transposed_row_past_end(const Run& r, LL R, LL J, LL X, LL Y, bool row0_written, unsigned seed) {
  const LL C = 64;
  const auto py = perm(Y - 1, seed);
  std::vector<int> ids(R * J);
  for (LL i = 0; i < R * J; ++i) ids[i] = i % 7 == 5 ? -1 : py[i] + 1;
  if (row0_written) ids[5] = 0;  // b = 0, column 5: x row 5 (X > 5)
  const auto x = rnd<float>(X * C, seed + 1);
  DevLocal<int> id({R, J}, ids);
  DevLocal<float> xd({X, C}, x), y({Y, C}, {});
  const int before = begin_case(r);
  if (run(r, "transposed_row_past_end", 2, id.view(), xd.view(), y.view())) {
    std::vector<LL> from(Y, -1);
    for (LL b = 0; b < R; ++b)
      for (LL c = 0; c < J; ++c) {
        const LL d = ids[b * J + c], xr = b * 16 + c % 16;
        if (d >= 0 && d < Y && xr < X) from[d] = xr;
      }
    PKT_CHECK((from[0] >= 0) == row0_written, "transposed_row_past_end: the test's row 0 set-up");
    check_rows<float>(r, "transposed_row_past_end.y", y.download(), C, x, [&](LL d) { return from[d]; });
  }
  end_case(r, "transposed_row_past_end " + dims({R, J, X, Y}) + (row0_written ? " (row 0 written)" : ""), before);
}

// 9. y[ids[t] + base[e]] = x[t] when e < base.size(); with e past base's end the one-element
// operand holds no data, so the indices are padding and nothing is written (y stays poisoned).
void offset_by_past_end_base(const Run& r, LL T, LL NB, LL e, unsigned seed) {
  const LL C = 64, Y = 100;
  const auto py = perm(Y - 21, seed);
  std::vector<int> ids(py.begin(), py.begin() + T);
  const auto base = ints<int>(NB, 1, 20, seed + 1);
  const auto x = rnd<float>(T * C, seed + 2);
  DevLocal<int> id({T}, ids), bd({NB}, base);
  DevLocal<float> xd({T, C}, x), y({Y, C}, {});
  const int before = begin_case(r);
  if (run(r, "offset_by_past_end_base", 2, id.view(), bd.view(), xd.view(), y.view(), e)) {
    std::vector<LL> from(Y, -1);
    if (e < NB)
      for (LL t = 0; t < T; ++t) from[ids[t] + base[e]] = t;
    check_rows<float>(r, "offset_by_past_end_base.y", y.download(), C, x, [&](LL d) { return from[d]; });
  }
  end_case(r, "offset_by_past_end_base " + dims({T, NB, e}) + (e < NB ? "" : " (e past the end)"), before);
}

// ================================================================ finding 6 ==

// The bf16 nearest to the integer v (round to nearest, ties to even), from v exactly.
unsigned short bf16_of_int(LL v) {
  const bool neg = v < 0;
  unsigned long long a = neg ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
  int e = 0;
  while (e < 63 && (a >> (e + 1)) != 0) ++e;  // a in [2^e, 2^(e+1))
  if (e >= 8) {  // keep 8 significant bits
    const int shift = e - 7;
    unsigned long long q = a >> shift;
    const unsigned long long rest = a & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rest > half || (rest == half && (q & 1))) ++q;
    a = q << shift;  // at most 8 significant bits (or a power of two): exact in a float
  }
  float f = static_cast<float>(a);
  if (neg) f = -f;
  unsigned int bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<unsigned short>(bits >> 16);  // the low 16 bits are zero
}

// 10. cast<bf16> of i32: the nearest bf16, bit for bit. Besides random values over the whole i32
// range and small ones: the values just above and below bf16 midpoints from 2^24 up, where
// rounding to fp32 first lands on the midpoint (16842753 = 2^24 + 2^16 + 1: nearest 16908288,
// the double rounding gave 16777216), and INT_MIN, INT_MAX.
void int_to_bf16(const Run& r, LL N, unsigned seed) {
  auto x = ints<int>(N, INT_MIN, INT_MAX, seed);
  const auto small = ints<int>(N, -70000, 70000, seed + 1);
  for (LL i = 0; i < N; i += 3) x[i] = small[i];
  std::vector<int> special = {16842753, -16842753, 16777217, 16777219, 16908287, 16908289, INT_MAX, INT_MIN,
                              INT_MIN + 1, 1, -1, 255, 257, -257, 65535, 65537};
  for (int e = 24; e <= 30; ++e) {
    const LL mid = (1LL << e) + (1LL << (e - 8));  // a bf16 midpoint (between 2^e and 2^e + 2^(e-7))
    for (LL d : {-1LL, 1LL, 3LL}) special.push_back(int(mid + d)), special.push_back(int(-(mid + d)));
    const LL mid3 = (1LL << e) + 3 * (1LL << (e - 8));  // the midpoint above an odd bf16
    special.push_back(int(mid3 - 1)), special.push_back(int(mid3 + 1)), special.push_back(int(-(mid3 + 1)));
  }
  for (size_t i = 0; i < special.size() && LL(7 * i + 1) < N; ++i) x[7 * i + 1] = special[i];
  if (N > 0) x[N - 1] = 16842753;  // in the partial last tile too
  DevLocal<int> xd({N}, x);
  DevLocal<bf16> y({N}, {});
  const int before = begin_case(r);
  if (run(r, "int_to_bf16", 2, xd.view(), y.view())) {
    PKT_CHECK(bf16_of_int(16842753) == bf16_of_int(16908288) && bf16_of_int(16908288) != bf16_of_int(16777216),
              "int_to_bf16: the host reference");
    check_exact<bf16>(r, "int_to_bf16.y", y.download(), [&](LL i, bf16& w) { return w.bits = bf16_of_int(x[i]), true; });
  }
  end_case(r, "int_to_bf16 N=" + std::to_string(N), before);
}

// ================================================================ finding 7 ==

// Random signs and magnitudes in [0.3, 3): normal quotients of normal operands.
std::vector<float> divisors(LL n, unsigned seed) {
  auto v = rnd<float>(n, seed, 0.3f, 3.f);
  const auto sg = ints<int>(n, 0, 1, seed + 1);
  for (LL i = 0; i < n; ++i)
    if (sg[i]) v[i] = -v[i];
  return v;
}

// 11. y = x / s[0, 0, d] for x [B, T, D] and s [1, 1, D]: fp32 division, correctly rounded (the
// host's division of the same fp32 operands), bit for bit.
void divide_by_broadcast(const Run& r, LL B, LL T, LL D, unsigned seed) {
  const auto x = rnd<float>(B * T * D, seed);
  const auto s = divisors(D, seed + 1);
  DevLocal<float> xd({B, T, D}, x), sd({1, 1, D}, s), y({B, T, D}, {});
  const int before = begin_case(r);
  if (run(r, "divide_by_broadcast", 2, xd.view(), sd.view(), y.view())) {
    check_exact<float>(r, "divide_by_broadcast.y", y.download(), [&](LL i, float& w) { return w = x[i] / s[i % D], true; });
  }
  end_case(r, "divide_by_broadcast " + dims({B, T, D}), before);
}

// 12. y = x / s[0, 0] for x [M, N] and s [2, 3] read as a one-element tile: as 11.
void divide_by_one_element(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed);
  const auto s = divisors(6, seed + 1);
  DevLocal<float> xd({M, N}, x), sd({2, 3}, s), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "divide_by_one_element", 2, xd.view(), sd.view(), y.view())) {
    check_exact<float>(r, "divide_by_one_element.y", y.download(), [&](LL i, float& w) { return w = x[i] / s[0], true; });
  }
  end_case(r, "divide_by_one_element " + dims({M, N}), before);
}

void single_gpu_cases(const Run& r) {
  unsigned s = 7000;
  gather_then_scatter(r, 37, 100, false, s += 100);  // 37 = 2 x 16 + 5: a partial last tile
  gather_then_scatter(r, 37, 100, true, s += 100);
  gather_then_scatter(r, 48, 100, true, s += 100);  // whole tiles
  gathered_histogram(r, 37, 50, s += 100);
  gathered_histogram(r, 48, 50, s += 100);
  scatter_row_stats(r, 37, 48, 64, s += 100);
  scatter_row_stats(r, 37, 40, 64, s += 100);
  scatter_row_stats(r, 48, 48, 64, s += 100);
  claim_padded_columns(r, 37, 8, s += 100);
  claim_padded_columns(r, 48, 8, s += 100);
  claim_padded_columns(r, 300, 5, s += 100);
  gemm_epilogue_tile_origin(r, 200, 72, 136, s += 100);
  gemm_epilogue_tile_origin(r, 128, 64, 128, s += 100);
  attention_tile_origin_window(r, 2, 150, 50, s += 100);
  attention_tile_origin_window(r, 2, 128, 100, s += 100);
  transposed_row_past_end(r, 3, 20, 70, 64, false, s += 100);  // b = 3, 4: past ids' end, x rows there
  transposed_row_past_end(r, 3, 20, 40, 64, true, s += 100);   // x rows 40 .. 47 of b = 2: padding
  transposed_row_past_end(r, 4, 16, 64, 80, false, s += 100);  // whole tiles
  offset_by_past_end_base(r, 37, 4, 2, s += 100);
  offset_by_past_end_base(r, 37, 4, 4, s += 100);
  offset_by_past_end_base(r, 48, 4, 9, s += 100);
  int_to_bf16(r, 1000, s += 100);
  int_to_bf16(r, 1024, s += 100);
  divide_by_broadcast(r, 5, 37, 100, s += 100);
  divide_by_broadcast(r, 8, 32, 128, s += 100);
  divide_by_one_element(r, 37, 100, s += 100);
  divide_by_one_element(r, 32, 128, s += 100);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  reduced_histogram(r, 1000, s += 100);  // 1000 = 3 x 256 + 232
  reduced_histogram(r, 1024, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("audit2_jit_test");
  // The single-GPU kernels at W = 1 only.
  return run_worlds("audit2_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}
