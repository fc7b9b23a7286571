// The twelfth user-written spec set (test/specs/user_specs12.pk.cpp: hand-written protocols with
// pk::prim flags, peer tiles and collectives, the protocol checker's correct set) through the JIT,
// each kernel against a float64 host reference on fresh random inputs, with every output poisoned
// (NaN, or all-ones integers) first. All 33 kernels communicate (rank(), .on(p), collectives,
// world_size()), none takes a Hopper template (pkc --explain names none), so every case runs at
// W = 1, 2 and 3 (ranks sharing one GPU; PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others),
// each rank checking its own outputs. Shapes leave partial tiles in both dimensions (37-row
// blocks in 16-row tiles, 300 columns in 128- and 256-column tiles, 1000-element vectors in
// 256- and 512-element tiles). Most kernels launch twice (a kernel's flags and buffers reused by
// the next launch); where a launch changes its own inputs the reference follows both launches.
// Where a store's tile has padding rows that land inside a larger destination (the tile-aligned
// row blocks of ring_pipeline_steps, double_buffer_free_flags, owners_store_then_read) the
// reference follows docs/language.md ("a partial tile's zero rows land in a larger destination
// too": padding loads as zero, then the tile's arithmetic applies to it). Elements a kernel must
// not write (a gather's non-root ranks, columns past W * (C / W)) must still hold the poison.
// Skipped: none (the racy kernels of user_specs12_racy.pk.cpp are refused or racy by design and
// are not run). One PASS or FAIL line per case.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

// Kernels, and whether one of their launches takes a template (none does).
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"ring_shift_block_flag", false},      {"ring_per_tile_flags", false},
    {"ring_pipeline_steps", false},        {"double_buffer_free_flags", false},
    {"per_row_block_flags", false},        {"pull_after_signal", false},
    {"signal_all_gather_pull", false},     {"owners_store_then_read", false},
    {"push_all_then_grid_barrier", false}, {"gather_to_root_prim", false},
    {"prim_reduce_to_root", false},        {"two_shot_by_hand", false},
    {"prim_all_reduce_cols", false},       {"halo_exchange_prim", false},
    {"grid_flag_count_tiles", false},      {"tree_reduce_level", false},
    {"rank_dependent_trips_local", false}, {"scatter_rows_to_owners", false},
    {"rs_adds_into_owners", false},        {"ar_then_peer_tiles", false},
    {"ag_then_prim_pull", false},          {"ar_then_pull_block_barrier", false},
    {"ar_input_refilled", false},          {"peer_read_then_in_place_ar", false},
    {"ag_in_place_then_tiles", false},     {"ag_in_place_then_prim_push", false},
    {"in_place_scale_then_ar", false},     {"rs_then_ag_phases", false},
    {"a2a_then_ring", false},              {"rooted_then_tiles", false},
    {"count_as_value_then_ring", false},   {"host_loop_ar_steps", false},
    {"host_loop_ring_gather", false},
};
// No template kernel: nothing also runs with templates = false.
const std::vector<const char*> kGeneralToo = {};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS12_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs12", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host data ----

using Vf = std::vector<float>;


// Every rank's values of one tensor (rank q from seed + q), reproducible on every rank.
std::vector<Vf> per_rank(int W, LL n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::vector<Vf> v(W);
  for (int q = 0; q < W; ++q) v[q] = rnd<float>(n, seed + q, lo, hi);
  return v;
}

// Rows rounded up to whole 16-row tiles (the specs' tile-aligned row blocks).
LL tile_rows(LL R) { return (R + 15) / 16 * 16; }

// Like check(), but where want(i) is NaN the element must still hold the poison (never written).
void check_or_poison(const Run& r, const std::string& what, const Vf& got, const std::function<double(LL)>& want,
                     const std::function<double(LL)>& tol) {
  LL bad = 0;
  for (LL i = 0; i < LL(got.size()); ++i) {
    const double w = want(i), g = got[i];
    const bool ok = std::isnan(w) ? std::isnan(g) : std::fabs(g - w) <= tol(i);
    if (!ok) {
      if (bad < 3)
        pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + " element " +
                  std::to_string(i) + ": got " + std::to_string(g) + ", want " +
                  (std::isnan(w) ? std::string("unwritten (poison)") : std::to_string(w)));
      ++bad;
    }
  }
  if (bad > 3) pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + ": " +
                         std::to_string(bad) + " of " + std::to_string(got.size()) + " elements wrong");
}

// Sums over ranks of element i, and the sums of magnitudes (for the tolerance of fp32 adds).
struct RankSum {
  std::vector<double> s, mag;
  RankSum(const std::vector<Vf>& x, LL n) : s(n, 0.0), mag(n, 0.0) {
    for (const auto& v : x)
      for (LL i = 0; i < n; ++i) s[i] += v[i], mag[i] += std::fabs(v[i]);
  }
};

// ================================================================ rings by hand (pk::prim) ==

// 1. y = prev's x (Block flag), out = y + x.
void ring_shift_block_flag(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), y(r.ctx, {R, C}, nullptr);
  DevLocal<float> out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "ring_shift_block_flag", 2, xd.view, y.view, out.view())) {
    check(r, "ring_shift_block_flag.y", y.download(), [&](LL i) { return double(x[prev][i]); }, exact());
    check(r, "ring_shift_block_flag.out", out.download(), [&](LL i) { return double(x[prev][i] + x[me][i]); }, exact());
  }
  end_case(r, "ring_shift_block_flag " + dims({R, C}), before);
}

// 2. A flag per tile: y = prev's x, out = y * x.
void ring_per_tile_flags(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), y(r.ctx, {R, C}, nullptr);
  DevLocal<float> out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "ring_per_tile_flags", 2, xd.view, y.view, out.view())) {
    check(r, "ring_per_tile_flags.y", y.download(), [&](LL i) { return double(x[prev][i]); }, exact());
    check(r, "ring_per_tile_flags.out", out.download(), [&](LL i) { return double(x[prev][i] * x[me][i]); }, exact());
  }
  end_case(r, "ring_per_tile_flags " + dims({R, C}), before);
}

// 3. Three steps into three tile-aligned row blocks of buf ([3 rp, C]); acc = their sum = 6 prev's x.
//    buf's padding rows (R..rp of each block) get the padding zeros times (s + 1).
void ring_pipeline_steps(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const LL rp = tile_rows(R);
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), buf(r.ctx, {3 * rp, C}, nullptr);
  DevLocal<float> acc({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "ring_pipeline_steps", 2, xd.view, buf.view, acc.view())) {
    check(r, "ring_pipeline_steps.buf", buf.download(), [&](LL i) {
      const LL row = i / C, s = row / rp, m = row % rp;
      return m < R ? double(x[prev][m * C + i % C] * float(s + 1)) : 0.0;
    }, exact());
    check(r, "ring_pipeline_steps.acc", acc.download(), [&](LL i) { return 6.0 * x[prev][i]; },
          [&](LL i) { return 1e-6 * 6 * std::fabs(x[prev][i]); });
  }
  end_case(r, "ring_pipeline_steps " + dims({R, C}), before);
}

// 4. Four steps over two landing slots with 'free' flags: out block s (rows s rp ..) = prev's x + s;
//    its padding rows (R..rp) hold the padding zeros + s, as do buf's.
void double_buffer_free_flags(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const LL rp = tile_rows(R);
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), buf(r.ctx, {2 * rp, C}, nullptr);
  DevLocal<float> out({4 * rp, C}, {});
  const int before = begin_case(r);
  if (run(r, "double_buffer_free_flags", 2, xd.view, buf.view, out.view())) {
    auto at = [&](LL row, LL col, LL s) {  // block row `row`, step s
      return row < R ? double(x[prev][row * C + col] + float(s)) : double(s);
    };
    check(r, "double_buffer_free_flags.out", out.download(),
          [&](LL i) { const LL row = i / C; return at(row % rp, i % C, row / rp); }, exact());
    // The last steps into the slots: 2 into slot 0, 3 into slot 1.
    check(r, "double_buffer_free_flags.buf", buf.download(),
          [&](LL i) { const LL row = i / C; return at(row % rp, i % C, 2 + row / rp); }, exact());
  }
  end_case(r, "double_buffer_free_flags " + dims({R, C}), before);
}

// 5. A flag per row of tiles: y = out = prev's x.
void per_row_block_flags(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), y(r.ctx, {R, C}, nullptr);
  DevLocal<float> out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "per_row_block_flags", 2, xd.view, y.view, out.view())) {
    check(r, "per_row_block_flags.y", y.download(), [&](LL i) { return double(x[prev][i]); }, exact());
    check(r, "per_row_block_flags.out", out.download(), [&](LL i) { return double(x[prev][i]); }, exact());
  }
  end_case(r, "per_row_block_flags " + dims({R, C}), before);
}

// 6. s = 3 x, pulled by next_rank after a signal: out = prev's s.
void pull_after_signal(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), s(r.ctx, {R, C}, nullptr);
  DevLocal<float> out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "pull_after_signal", 2, xd.view, s.view, out.view())) {
    check(r, "pull_after_signal.s", s.download(), [&](LL i) { return double(x[me][i] * 3.0f); }, exact());
    check(r, "pull_after_signal.out", out.download(), [&](LL i) { return double(x[prev][i] * 3.0f); }, exact());
  }
  end_case(r, "pull_after_signal " + dims({R, C}), before);
}

// 7. signal_all arrival, pulls of every rank's x into out [W, R, C].
void signal_all_gather_pull(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]);
  DevLocal<float> out({W, R, C}, {});
  const int before = begin_case(r);
  if (run(r, "signal_all_gather_pull", 2, xd.view, out.view()))
    check(r, "signal_all_gather_pull.out", out.download(), [&](LL i) { return double(x[i / (R * C)][i % (R * C)]); },
          exact());
  end_case(r, "signal_all_gather_pull " + dims({R, C}), before);
}

// ================================================================ gathers and reductions by hand ==

// 8. Pushes into every rank's tile-aligned row block p rp of y [W rp, C] (padding rows zero), out = y / 2.
void owners_store_then_read(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL rp = tile_rows(R);
  const auto x = per_rank(W, R * C, seed);
  DevLocal<float> xd({R, C}, x[me]), out({W * rp, C}, {});
  SymArg<float> y(r.ctx, {W * rp, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "owners_store_then_read", 2, xd.view(), y.view, out.view())) {
    auto yw = [&](LL i) {
      const LL row = i / C, p = row / rp, m = row % rp;
      return m < R ? double(x[p][m * C + i % C]) : 0.0;
    };
    check(r, "owners_store_then_read.y", y.download(), yw, exact());
    check(r, "owners_store_then_read.out", out.download(), [&](LL i) { return 0.5 * yw(i); }, exact());
  }
  end_case(r, "owners_store_then_read " + dims({R, C}), before);
}

// 9. One-row pushes at rank() R + m into every rank's y [W R, C], Grid barriers: out = y.
void push_all_then_grid_barrier(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  DevLocal<float> xd({R, C}, x[me]), out({W * R, C}, {});
  SymArg<float> y(r.ctx, {W * R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "push_all_then_grid_barrier", 2, xd.view(), y.view, out.view())) {
    auto yw = [&](LL i) { return double(x[i / (R * C)][i % (R * C)]); };
    check(r, "push_all_then_grid_barrier.y", y.download(), yw, exact());
    check(r, "push_all_then_grid_barrier.out", out.download(), yw, exact());
  }
  end_case(r, "push_all_then_grid_barrier " + dims({R, C}), before);
}

// 10. Gather to a run-time root by one-row pushes: the root's y [W R, C] holds every rank's x,
//     the other ranks' y is never written.
void gather_to_root_prim(const Run& r, LL R, LL C, int root, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  DevLocal<float> xd({R, C}, x[me]);
  SymArg<float> y(r.ctx, {W * R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "gather_to_root_prim", 2, xd.view(), y.view, LL(root)))
    check_or_poison(r, "gather_to_root_prim.y", y.download(),
                    [&](LL i) { return me == root ? double(x[i / (R * C)][i % (R * C)]) : std::nan(""); }, exact());
  end_case(r, "gather_to_root_prim " + dims({R, C}) + " root=" + std::to_string(root), before);
}

// 11. Every rank zeroes its y, then adds its x into the root's: the root's y = the sum, the others 0.
void prim_reduce_to_root(const Run& r, LL R, LL C, int root, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  const RankSum sum(x, R * C);
  DevLocal<float> xd({R, C}, x[me]);
  SymArg<float> y(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "prim_reduce_to_root", 2, xd.view(), y.view, LL(root)))
    check(r, "prim_reduce_to_root.y", y.download(), [&](LL i) { return me == root ? sum.s[i] : 0.0; },
          [&](LL i) { return 1e-6 * sum.mag[i] + 1e-7; });
  end_case(r, "prim_reduce_to_root " + dims({R, C}) + " root=" + std::to_string(root), before);
}

// 12. Two-shot all-reduce by hand (each rank ceil(R / W) rows): y = the sum on every rank.
void two_shot_by_hand(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  const RankSum sum(x, R * C);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), y(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "two_shot_by_hand", 2, xd.view, y.view))
    check(r, "two_shot_by_hand.y", y.download(), [&](LL i) { return sum.s[i]; },
          [&](LL i) { return 1e-6 * sum.mag[i] + 1e-7; });
  end_case(r, "two_shot_by_hand " + dims({R, C}), before);
}

// 13. Max all-reduce of column shares (16 x 1 tiles): y = the max over ranks in the first
//     W (C / W) columns; the columns past them (C % W of them) are never written.
void prim_all_reduce_cols(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL covered = C / W * W;
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), y(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "prim_all_reduce_cols", 2, xd.view, y.view))
    check_or_poison(r, "prim_all_reduce_cols.y", y.download(), [&](LL i) {
      if (i % C >= covered) return std::nan("");
      double m = -1e300;
      for (int q = 0; q < W; ++q) m = std::max(m, double(x[q][i]));
      return m;
    }, exact());
  end_case(r, "prim_all_reduce_cols " + dims({R, C}), before);
}

// 14. Halo exchange: halo [2, C] = (prev's last row, next's first row), out [1, C] their sum.
void halo_exchange_prim(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W, next = (me + 1) % W;
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), halo(r.ctx, {2, C}, nullptr);
  DevLocal<float> out({1, C}, {});
  const int before = begin_case(r);
  if (run(r, "halo_exchange_prim", 2, xd.view, halo.view, out.view())) {
    auto hw = [&](LL i) { return i < C ? double(x[prev][(R - 1) * C + i]) : double(x[next][i - C]); };
    check(r, "halo_exchange_prim.halo", halo.download(), hw, exact());
    check(r, "halo_exchange_prim.out", out.download(),
          [&](LL j) { return double(x[prev][(R - 1) * C + j] + x[next][j]); }, exact());
  }
  end_case(r, "halo_exchange_prim " + dims({R, C}), before);
}

// 15. A Grid flag counting every 256-element tile's signal, read in 512-element tiles: y = prev's x,
//     out = 2 y.
void grid_flag_count_tiles(const Run& r, LL N, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const auto x = per_rank(W, N, seed);
  SymArg<float> xd(r.ctx, {N}, &x[me]), y(r.ctx, {N}, nullptr);
  DevLocal<float> out({N}, {});
  const int before = begin_case(r);
  if (run(r, "grid_flag_count_tiles", 2, xd.view, y.view, out.view())) {
    check(r, "grid_flag_count_tiles.y", y.download(), [&](LL i) { return double(x[prev][i]); }, exact());
    check(r, "grid_flag_count_tiles.out", out.download(), [&](LL i) { return 2.0 * x[prev][i]; }, exact());
  }
  end_case(r, "grid_flag_count_tiles N=" + std::to_string(N), before);
}

// 16. One tree level: acc = x, then odd ranks add x into their even neighbour's acc (even ranks
//     add x * 0 into their own).
void tree_reduce_level(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), acc(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "tree_reduce_level", 2, xd.view, acc.view)) {
    const bool gets = me % 2 == 0 && me + 1 < W;
    check(r, "tree_reduce_level.acc", acc.download(),
          [&](LL i) { return gets ? double(x[me][i]) + x[me + 1][i] : double(x[me][i]); },
          [&](LL i) { return gets ? 1e-6 * (std::fabs(x[me][i]) + std::fabs(x[me + 1][i])) : 0.0; });
  }
  end_case(r, "tree_reduce_level " + dims({R, C}), before);
}

// 17. x halved rank() + 1 times, pushed to next_rank: y = out = prev's x / 2^(prev + 1).
void rank_dependent_trips_local(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), y(r.ctx, {R, C}, nullptr);
  DevLocal<float> out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "rank_dependent_trips_local", 2, xd.view, y.view, out.view())) {
    const double f = std::ldexp(1.0, -(prev + 1));
    check(r, "rank_dependent_trips_local.y", y.download(), [&](LL i) { return x[prev][i] * f; }, exact());
    check(r, "rank_dependent_trips_local.out", out.download(), [&](LL i) { return x[prev][i] * f; }, exact());
  }
  end_case(r, "rank_dependent_trips_local " + dims({R, C}), before);
}

// 18. Rows scattered by store_rows into every rank's y [W R, C] at rank() R + row (dest unused).
void scatter_rows_to_owners(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  DevLocal<float> xd({R, C}, x[me]);
  DevLocal<int> dest({R}, ints<int>(R, 0, 7, seed + 50));
  SymArg<float> y(r.ctx, {W * R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "scatter_rows_to_owners", 2, xd.view(), dest.view(), y.view))
    check(r, "scatter_rows_to_owners.y", y.download(), [&](LL i) { return double(x[i / (R * C)][i % (R * C)]); },
          exact());
  end_case(r, "scatter_rows_to_owners " + dims({R, C}), before);
}

// 19. Reduce-scatter by adds into the owners: y [R, C] of rank o = the sum of row block o of every x.
void rs_adds_into_owners(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, W * R * C, seed);
  const RankSum sum(x, W * R * C);
  DevLocal<float> xd({W * R, C}, x[me]);
  SymArg<float> y(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "rs_adds_into_owners", 2, xd.view(), y.view))
    check(r, "rs_adds_into_owners.y", y.download(), [&](LL i) { return sum.s[me * R * C + i]; },
          [&](LL i) { return 1e-6 * sum.mag[me * R * C + i] + 1e-7; });
  end_case(r, "rs_adds_into_owners " + dims({R, C}), before);
}

// ================================================================ collectives beside peer tiles ==

// 20. s = the all-reduced x, y = prev's s / 2, out = y + s (= 1.5 s).
void ar_then_peer_tiles(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  const RankSum sum(x, R * C);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), s(r.ctx, {R, C}, nullptr), y(r.ctx, {R, C}, nullptr);
  DevLocal<float> out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "ar_then_peer_tiles", 2, xd.view, s.view, y.view, out.view())) {
    auto tol = [&](LL i) { return 2e-6 * sum.mag[i] + 1e-7; };
    check(r, "ar_then_peer_tiles.s", s.download(), [&](LL i) { return sum.s[i]; }, tol);
    check(r, "ar_then_peer_tiles.y", y.download(), [&](LL i) { return 0.5 * sum.s[i]; }, tol);
    check(r, "ar_then_peer_tiles.out", out.download(), [&](LL i) { return 1.5 * sum.s[i]; }, tol);
  }
  end_case(r, "ar_then_peer_tiles " + dims({R, C}), before);
}

// 21. g = the all-gathered x [W R, C]; out = prev's g - g = 0 (every rank's copy is the same).
void ag_then_prim_pull(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), g(r.ctx, {W * R, C}, nullptr);
  DevLocal<float> out({W * R, C}, {});
  const int before = begin_case(r);
  if (run(r, "ag_then_prim_pull", 2, xd.view, g.view, out.view())) {
    check(r, "ag_then_prim_pull.g", g.download(), [&](LL i) { return double(x[i / (R * C)][i % (R * C)]); }, exact());
    check(r, "ag_then_prim_pull.out", out.download(), [](LL) { return 0.0; }, exact());
  }
  end_case(r, "ag_then_prim_pull " + dims({R, C}), before);
}

// 22. b = the all-reduced a; out = next's b.
void ar_then_pull_block_barrier(const Run& r, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto a = per_rank(W, N, seed);
  const RankSum sum(a, N);
  SymArg<float> ad(r.ctx, {N}, &a[me]), b(r.ctx, {N}, nullptr);
  DevLocal<float> out({N}, {});
  const int before = begin_case(r);
  if (run(r, "ar_then_pull_block_barrier", 2, ad.view, b.view, out.view())) {
    auto tol = [&](LL i) { return 1e-6 * sum.mag[i] + 1e-7; };
    check(r, "ar_then_pull_block_barrier.b", b.download(), [&](LL i) { return sum.s[i]; }, tol);
    check(r, "ar_then_pull_block_barrier.out", out.download(), [&](LL i) { return sum.s[i]; }, tol);
  }
  end_case(r, "ar_then_pull_block_barrier N=" + std::to_string(N), before);
}

// 23. b = the all-reduced a, then x pushed into next's a. Two launches: the second reduces the
//     pushed x's, so b = the sum of every rank's x, and a = prev's x.
void ar_input_refilled(const Run& r, LL N, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const auto a = per_rank(W, N, seed), x = per_rank(W, N, seed + 20);
  const RankSum sum(x, N);
  SymArg<float> ad(r.ctx, {N}, &a[me]), b(r.ctx, {N}, nullptr);
  DevLocal<float> xd({N}, x[me]);
  const int before = begin_case(r);
  if (run(r, "ar_input_refilled", 2, ad.view, b.view, xd.view())) {
    check(r, "ar_input_refilled.b", b.download(), [&](LL i) { return sum.s[i]; },
          [&](LL i) { return 1e-6 * sum.mag[i] + 1e-7; });
    check(r, "ar_input_refilled.a", ad.download(), [&](LL i) { return double(x[prev][i]); }, exact());
  }
  end_case(r, "ar_input_refilled N=" + std::to_string(N), before);
}

// 24. out = next's x, then x all-reduced in place. Two launches: out = S (the first launch's sum,
//     read from next_rank), x = W S.
void peer_read_then_in_place_ar(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  const RankSum sum(x, R * C);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]);
  DevLocal<float> out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "peer_read_then_in_place_ar", 2, xd.view, out.view())) {
    check(r, "peer_read_then_in_place_ar.out", out.download(), [&](LL i) { return sum.s[i]; },
          [&](LL i) { return 1e-6 * sum.mag[i] + 1e-7; });
    check(r, "peer_read_then_in_place_ar.x", xd.download(), [&](LL i) { return W * sum.s[i]; },
          [&](LL i) { return 2e-6 * W * sum.mag[i] + 1e-7; });
  }
  end_case(r, "peer_read_then_in_place_ar " + dims({R, C}), before);
}

// 25. In-place all-gather of x [W R, C] (chunk r is rank r's input; the other chunks hold noise
//     first), out = 2 x.
void ag_in_place_then_tiles(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, W * R * C, seed);
  SymArg<float> xd(r.ctx, {W * R, C}, &x[me]);
  DevLocal<float> out({W * R, C}, {});
  const int before = begin_case(r);
  if (run(r, "ag_in_place_then_tiles", 2, xd.view, out.view())) {
    auto xw = [&](LL i) { return double(x[i / (R * C)][i]); };
    check(r, "ag_in_place_then_tiles.x", xd.download(), xw, exact());
    check(r, "ag_in_place_then_tiles.out", out.download(), [&](LL i) { return 2 * xw(i); }, exact());
  }
  end_case(r, "ag_in_place_then_tiles " + dims({R, C}), before);
}

// 26. In-place all-gather of x, then src pushed over the whole of next's x: x = prev's src (the
//     gather must be done before the pushes land).
void ag_in_place_then_prim_push(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const auto x = per_rank(W, W * R * C, seed), src = per_rank(W, W * R * C, seed + 20);
  SymArg<float> xd(r.ctx, {W * R, C}, &x[me]);
  DevLocal<float> sd({W * R, C}, src[me]);
  const int before = begin_case(r);
  if (run(r, "ag_in_place_then_prim_push", 2, xd.view, sd.view()))
    check(r, "ag_in_place_then_prim_push.x", xd.download(), [&](LL i) { return double(src[prev][i]); }, exact());
  end_case(r, "ag_in_place_then_prim_push " + dims({R, C}), before);
}

// 27. x /= 2, y = the all-reduced x, x = y - x; two launches followed on every rank's copy.
void in_place_scale_then_ar(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL n = R * C;
  const auto x0 = per_rank(W, n, seed);
  std::vector<std::vector<double>> x(W, std::vector<double>(n));
  for (int q = 0; q < W; ++q)
    for (LL i = 0; i < n; ++i) x[q][i] = x0[q][i];
  std::vector<double> y(n);
  for (int launch = 0; launch < 2; ++launch)
    for (LL i = 0; i < n; ++i) {
      y[i] = 0;
      for (int q = 0; q < W; ++q) x[q][i] *= 0.5, y[i] += x[q][i];
      for (int q = 0; q < W; ++q) x[q][i] = y[i] - x[q][i];
    }
  SymArg<float> xd(r.ctx, {R, C}, &x0[me]), yd(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "in_place_scale_then_ar", 2, xd.view, yd.view)) {
    // Values stay within W of zero: fp32 rounding of a few adds, relative to W.
    const double tol = 4e-6 * W;
    check(r, "in_place_scale_then_ar.y", yd.download(), [&](LL i) { return y[i]; }, abs_tol(tol));
    check(r, "in_place_scale_then_ar.x", xd.download(), [&](LL i) { return x[me][i]; }, abs_tol(tol));
  }
  end_case(r, "in_place_scale_then_ar " + dims({R, C}), before);
}

// 28. part = the reduce-scattered x (row block rank()) / 2 in place, full = the all-gathered parts.
void rs_then_ag_phases(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, W * R * C, seed);
  const RankSum sum(x, W * R * C);
  SymArg<float> xd(r.ctx, {W * R, C}, &x[me]), part(r.ctx, {R, C}, nullptr), full(r.ctx, {W * R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "rs_then_ag_phases", 2, xd.view, part.view, full.view)) {
    check(r, "rs_then_ag_phases.part", part.download(), [&](LL i) { return 0.5 * sum.s[me * R * C + i]; },
          [&](LL i) { return 1e-6 * sum.mag[me * R * C + i] + 1e-7; });
    check(r, "rs_then_ag_phases.full", full.download(), [&](LL i) { return 0.5 * sum.s[i]; },
          [&](LL i) { return 1e-6 * sum.mag[i] + 1e-7; });
  }
  end_case(r, "rs_then_ag_phases " + dims({R, C}), before);
}

// 29. t = the all-to-all of x (block j of rank r lands on rank j as block r), then t added into
//     prev's y. Two launches: y = y0 + 2 next's t.
void a2a_then_ring(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, next = (me + 1) % W;
  const LL B = R * C;
  const auto x = per_rank(W, W * B, seed), y0 = per_rank(W, W * B, seed + 20);
  SymArg<float> xd(r.ctx, {W * R, C}, &x[me]), t(r.ctx, {W * R, C}, nullptr), y(r.ctx, {W * R, C}, &y0[me]);
  const int before = begin_case(r);
  if (run(r, "a2a_then_ring", 2, xd.view, t.view, y.view)) {
    auto tw = [&](int rank, LL i) { return double(x[i / B][rank * B + i % B]); };  // rank's t
    check(r, "a2a_then_ring.t", t.download(), [&](LL i) { return tw(me, i); }, exact());
    check(r, "a2a_then_ring.y", y.download(), [&](LL i) { return y0[me][i] + 2 * tw(next, i); },
          [&](LL i) { return 1e-6 * (std::fabs(y0[me][i]) + 2 * std::fabs(tw(next, i))); });
  }
  end_case(r, "a2a_then_ring " + dims({R, C}), before);
}

// 30. rr = the sum on the root, b = the root's rr broadcast, out = b / 4.
void rooted_then_tiles(const Run& r, LL R, LL C, int root, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = per_rank(W, R * C, seed);
  const RankSum sum(x, R * C);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), rr(r.ctx, {R, C}, nullptr), b(r.ctx, {R, C}, nullptr);
  DevLocal<float> out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "rooted_then_tiles", 2, xd.view, rr.view, b.view, out.view(), LL(root))) {
    auto tol = [&](LL i) { return 1e-6 * sum.mag[i] + 1e-7; };
    if (me == root) check(r, "rooted_then_tiles.r", rr.download(), [&](LL i) { return sum.s[i]; }, tol);
    check(r, "rooted_then_tiles.b", b.download(), [&](LL i) { return sum.s[i]; }, tol);
    check(r, "rooted_then_tiles.out", out.download(), [&](LL i) { return 0.25 * sum.s[i]; }, tol);
  }
  end_case(r, "rooted_then_tiles " + dims({R, C}) + " root=" + std::to_string(root), before);
}

// 31. tot = the all-reduced counts (i32), y = prev's x * (1 / (tot[0] + 1)).
void count_as_value_then_ring(const Run& r, LL n, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  std::vector<std::vector<int>> cnt(W);
  for (int q = 0; q < W; ++q) cnt[q] = ints<int>(n, 1, 50, seed + 30 + q);
  const auto x = per_rank(W, R * C, seed);
  std::vector<double> tot(n, 0.0);
  for (int q = 0; q < W; ++q)
    for (LL i = 0; i < n; ++i) tot[i] += cnt[q][i];
  const float scale = 1.0f / float(int(tot[0]) + 1);
  SymArg<int> cd(r.ctx, {n}, &cnt[me]);
  DevLocal<int> td({n}, {});
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), y(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "count_as_value_then_ring", 2, cd.view, td.view(), xd.view, y.view)) {
    check(r, "count_as_value_then_ring.tot", td.download(), [&](LL i) { return tot[i]; }, exact());
    // The device's 1 / float may be within an ulp of the rounded quotient.
    check(r, "count_as_value_then_ring.y", y.download(), [&](LL i) { return double(x[prev][i] * scale); },
          [&](LL i) { return 4e-7 * std::fabs(x[prev][i] * scale); });
  }
  end_case(r, "count_as_value_then_ring " + dims({n, R, C}), before);
}

// 32. A host loop of `steps` (all-reduce, x = y / 2) launches, one call.
void host_loop_ar_steps(const Run& r, LL N, LL steps, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x0 = per_rank(W, N, seed);
  std::vector<double> y(N), x(N);  // after the first step every rank's x is the same
  for (LL i = 0; i < N; ++i) {
    double s = 0;
    for (int q = 0; q < W; ++q) s += x0[q][i];
    y[i] = s, x[i] = 0.5 * s;
    for (LL t = 1; t < steps; ++t) y[i] = W * x[i], x[i] = 0.5 * y[i];
  }
  SymArg<float> xd(r.ctx, {N}, &x0[me]), yd(r.ctx, {N}, nullptr);
  const int before = begin_case(r);
  if (run(r, "host_loop_ar_steps", 1, xd.view, yd.view, steps)) {
    // fp32 adds of W values a step, on magnitudes up to W (W / 2)^steps.
    const double tol = 1e-6 * W * steps * (std::pow(0.5 * W, double(steps)) + 1);
    check(r, "host_loop_ar_steps.y", yd.download(), [&](LL i) { return y[i]; }, abs_tol(2 * tol));
    check(r, "host_loop_ar_steps.x", xd.download(), [&](LL i) { return x[i]; }, abs_tol(tol));
  }
  end_case(r, "host_loop_ar_steps N=" + std::to_string(N) + " steps=" + std::to_string(steps), before);
}

// 33. Ring all-gather as a host loop of W - 1 launches: chunk c of y [W chunk, C] ends as rank c's
//     chunk c on every rank (the other chunks hold noise first). One call.
void host_loop_ring_gather(const Run& r, LL chunk, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL B = chunk * C;
  const auto y = per_rank(W, W * B, seed);
  SymArg<float> yd(r.ctx, {W * chunk, C}, &y[me]);
  const int before = begin_case(r);
  if (run(r, "host_loop_ring_gather", 1, yd.view, chunk))
    check(r, "host_loop_ring_gather.y", yd.download(), [&](LL i) { return double(y[i / B][i]); }, exact());
  end_case(r, "host_loop_ring_gather " + dims({chunk, C}), before);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 12000;
  const LL R = 37, C = 300;
  ring_shift_block_flag(r, R, C, s += 100);
  ring_per_tile_flags(r, R, C, s += 100);
  ring_pipeline_steps(r, R, C, s += 100);
  double_buffer_free_flags(r, R, C, s += 100);
  per_row_block_flags(r, R, C, s += 100);
  pull_after_signal(r, R, C, s += 100);
  signal_all_gather_pull(r, R, C, s += 100);
  owners_store_then_read(r, R, C, s += 100);
  push_all_then_grid_barrier(r, R, C, s += 100);
  gather_to_root_prim(r, R, C, 0, s += 100);
  gather_to_root_prim(r, 13, C, r.W - 1, s += 100);
  prim_reduce_to_root(r, R, C, 0, s += 100);
  prim_reduce_to_root(r, R, C, r.W - 1, s += 100);
  two_shot_by_hand(r, R, C, s += 100);
  prim_all_reduce_cols(r, R, C, s += 100);
  halo_exchange_prim(r, R, C, s += 100);
  grid_flag_count_tiles(r, 1000, s += 100);
  tree_reduce_level(r, R, C, s += 100);
  rank_dependent_trips_local(r, R, C, s += 100);
  scatter_rows_to_owners(r, R, C, s += 100);
  rs_adds_into_owners(r, R, C, s += 100);
  ar_then_peer_tiles(r, R, C, s += 100);
  ag_then_prim_pull(r, R, C, s += 100);
  ar_then_pull_block_barrier(r, 1000, s += 100);
  ar_input_refilled(r, 1000, s += 100);
  peer_read_then_in_place_ar(r, R, C, s += 100);
  ag_in_place_then_tiles(r, R, C, s += 100);
  ag_in_place_then_prim_push(r, R, C, s += 100);
  in_place_scale_then_ar(r, R, C, s += 100);
  rs_then_ag_phases(r, R, C, s += 100);
  a2a_then_ring(r, R, C, s += 100);
  rooted_then_tiles(r, R, C, r.W / 2, s += 100);
  count_as_value_then_ring(r, 5, R, C, s += 100);
  host_loop_ar_steps(r, 1000, 3, s += 100);
  host_loop_ring_gather(r, R, C, s += 100);
  // Other shapes: one row, whole tiles, fewer rows than ranks' shares, less than one tile.
  ring_shift_block_flag(r, 1, 100, s += 100);
  per_row_block_flags(r, 32, 256, s += 100);
  ring_pipeline_steps(r, 32, 256, s += 100);
  double_buffer_free_flags(r, 17, 129, s += 100);
  owners_store_then_read(r, 32, 256, s += 100);
  two_shot_by_hand(r, 2, 300, s += 100);
  halo_exchange_prim(r, 1, 1000, s += 100);
  grid_flag_count_tiles(r, 768, s += 100);
  grid_flag_count_tiles(r, 100, s += 100);
  rs_then_ag_phases(r, 5, 1000, s += 100);
  a2a_then_ring(r, 1, 129, s += 100);
  host_loop_ring_gather(r, 1, 1000, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs12_jit_test");
  // Every kernel communicates: every case at every world size.
  return run_worlds("user_specs12_jit_test", g_kernels, [](const Run& r) { multi_rank_cases(r); });
}
