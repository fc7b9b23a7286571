// pkc's GEMM templates on two GPUs against a float64 host reference, on small odd sizes (tails
// in M, N and K; more K steps than ring stages; more tiles than blocks, so every mbarrier phase
// wraps), each fused kernel launched twice with fresh data (epochs, landing-buffer reuse):
// GEMM alone, GEMM + reduce-scatter, GEMM + all-reduce, all-gather + GEMM. On one GPU it runs
// them all at world size 1 (the copy-engine gather needs a peer), then at 2, 3 and 4 ranks
// sharing the GPU, each plan on its 1/W share of the SMs.
#include <algorithm>

#include <pk/templates/host/fused_gemm.cuh>

#include "gemm_reference.h"

namespace {

using pk::bf16;
using pk::gemm::PlanOptions;
using pkt::as_float;
using pkt::download;
using pkt::expect_close;
using pkt::ref_gemm_add;
using pkt::seed_of;
using pkt::upload;

struct Case {
  long long m, n, k;  // m: rows per rank's A (GEMM, RS, AR) or per shard (AG)
  int max_blocks;     // 0: all SMs
  int comm_blocks;    // AG only; 0: automatic
  pk::gemm::Gather gather = pk::gemm::Gather::automatic;  // AG only
};

std::string name(const char* job, const Case& c, int round, int rank) {
  return std::string(job) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
         std::to_string(c.k) + " blocks " + std::to_string(c.max_blocks) + " round " +
         std::to_string(round) + " rank " + std::to_string(rank);
}

void gemm_alone(pk::Context& ctx, const Case& c) {
  const int r = ctx.rank();
  auto a = pkt::random_data<bf16>(c.m * c.k, seed_of(r, 1, 0));
  auto b = pkt::random_data<bf16>(c.n * c.k, seed_of(r, 2, 0));
  bf16 *da = upload(a), *db = upload(b);
  bf16* dc = nullptr;
  PKT_CUDA(cudaMalloc(&dc, c.m * c.n * 2));
  PKT_CUDA(pkt::poison(dc, c.m * c.n * 2));
  PlanOptions o;
  o.max_blocks = c.max_blocks;
  auto plan = pk::gemm::GemmPlan::create(da, db, dc, c.m, c.n, c.k, o);
  PKT_OK(plan.is_ok() ? pk::Status::ok() : plan.status());
  std::vector<double> want(c.m * c.n, 0.0);
  ref_gemm_add(as_float(a), 0, c.m, as_float(b), c.n, c.k, want);
  for (int round = 0; round < 2; ++round) {  // a second launch of the same plan
    PKT_OK(plan->launch(ctx.stream()));
    PKT_CUDA(cudaStreamSynchronize(ctx.stream()));
    expect_close(download(dc, c.m * c.n), want, c.k, name("gemm", c, round, r));
    PKT_CUDA(pkt::poison(dc, c.m * c.n * 2));
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
}

// GEMM + RS (all_reduce = false) or GEMM + AR (true): rank q holds A_q[M, K], B_q[N, K].
void gemm_reduce(pk::Context& ctx, Case c, bool all_reduce) {
  const int r = ctx.rank(), w = ctx.world();
  c.m = (c.m + w - 1) / w * w;  // every rank owns M / W rows (unchanged at W = 1, 2)
  const long long out_rows = all_reduce ? c.m : c.m / w;
  auto out = ctx.allocate(out_rows * c.n * 2);
  PKT_OK(out.is_ok() ? pk::Status::ok() : out.status());
  for (int round = 0; round < 2; ++round) {
    std::vector<std::vector<float>> as, bs;
    for (int q = 0; q < w; ++q) {
      as.push_back(as_float(pkt::random_data<bf16>(c.m * c.k, seed_of(q, 3, round))));
      bs.push_back(as_float(pkt::random_data<bf16>(c.n * c.k, seed_of(q, 4, round))));
    }
    bf16* da = upload(pkt::random_data<bf16>(c.m * c.k, seed_of(r, 3, round)));
    bf16* db = upload(pkt::random_data<bf16>(c.n * c.k, seed_of(r, 4, round)));
    PKT_CUDA(pkt::poison(out->local(), out_rows * c.n * 2));
    PKT_CUDA(pkt::sync_uploads());
    // Every rank's uploads are done before any rank launches: where ranks share a GPU,
    // an allocation or copy can wait for a kernel that spins for this rank.
    PKT_OK(ctx.exchange().barrier());
    PlanOptions o;
    o.max_blocks = c.max_blocks;
    if (all_reduce) {
      auto plan = pk::gemm::GemmArPlan::create(ctx, da, db, *out, c.m, c.n, c.k, o);
      PKT_OK(plan.is_ok() ? plan->launch(ctx) : plan.status());
    } else {
      auto plan = pk::gemm::GemmRsPlan::create(ctx, da, db, *out, c.m, c.n, c.k, o);
      PKT_OK(plan.is_ok() ? plan->launch(ctx) : plan.status());
    }
    PKT_OK(ctx.check_errors());
    std::vector<double> want(out_rows * c.n, 0.0), magnitude(out_rows * c.n, 0.0);
    const long long row0 = all_reduce ? 0 : r * out_rows;
    for (int q = 0; q < w; ++q) ref_gemm_add(as[q], row0, out_rows, bs[q], c.n, c.k, want, &magnitude);
    expect_close(download(out->local(), out_rows * c.n), want, c.k * w,
                 name(all_reduce ? "gemm_ar" : "gemm_rs", c, round, r), &magnitude, w);
    cudaFree(da);
    cudaFree(db);
    PKT_OK(ctx.exchange().barrier());  // peers finish reading before the next round's poison
  }
}

// AG + GEMM: rank q holds shard A_q[Ms, K]; every rank has its own B_r[N, K].
void ag_gemm(pk::Context& ctx, const Case& c) {
  const int r = ctx.rank(), w = ctx.world();
  const long long ms = c.m, m = ms * w;
  auto full = ctx.allocate(m * c.k * 2);
  PKT_OK(full.is_ok() ? pk::Status::ok() : full.status());
  bf16* dc = nullptr;
  PKT_CUDA(cudaMalloc(&dc, m * c.n * 2));
  for (int round = 0; round < 2; ++round) {
    std::vector<float> gathered;
    for (int q = 0; q < w; ++q) {
      auto s = as_float(pkt::random_data<bf16>(ms * c.k, seed_of(q, 5, round)));
      gathered.insert(gathered.end(), s.begin(), s.end());
    }
    auto b = pkt::random_data<bf16>(c.n * c.k, seed_of(r, 6, round));
    bf16* da = upload(pkt::random_data<bf16>(ms * c.k, seed_of(r, 5, round)));
    bf16* db = upload(b);
    PKT_CUDA(pkt::poison(dc, m * c.n * 2));
    PKT_CUDA(pkt::sync_uploads());
    // Every rank's uploads are done before any rank launches: where ranks share a GPU,
    // an allocation or copy can wait for a kernel that spins for this rank.
    PKT_OK(ctx.exchange().barrier());
    PlanOptions o;
    o.max_blocks = c.max_blocks;
    o.comm_blocks = c.comm_blocks;
    o.gather = c.gather;
    auto plan = pk::gemm::AgGemmPlan::create(ctx, da, *full, db, dc, ms, c.n, c.k, o);
    PKT_OK(plan.is_ok() ? pk::Status::ok() : plan.status());
    PKT_OK(plan->launch(ctx));
    PKT_OK(ctx.check_errors());
    std::vector<double> want(m * c.n, 0.0);
    ref_gemm_add(gathered, 0, m, as_float(b), c.n, c.k, want);
    const bool ce = plan->copy_engine();
    PKT_CHECK(ce == (c.gather == pk::gemm::Gather::copy_engine), "ag_gemm took the wrong gather");
    expect_close(download(dc, m * c.n), want, c.k, name(ce ? "ag_gemm (copy engine)" : "ag_gemm", c, round, r));
    PKT_OK(ctx.exchange().barrier());  // the next round's shard is a new allocation
    cudaFree(da);
    cudaFree(db);
  }
  cudaFree(dc);
}

// Shapes TMA cannot address are refused on the host with a message naming the dimension.
void rejects_misaligned() {
  auto plan = pk::gemm::GemmPlan::create(nullptr, nullptr, nullptr, 64, 64, 100);
  PKT_CHECK(!plan.is_ok() && plan.status().message().find("K = 100") != std::string::npos,
            "K = 100 must be rejected: " + (plan.is_ok() ? std::string("accepted") : plan.status().message()));
  auto plan2 = pk::gemm::GemmPlan::create(nullptr, nullptr, nullptr, 64, 36, 64);
  PKT_CHECK(!plan2.is_ok() && plan2.status().message().find("N = 36") != std::string::npos,
            "N = 36 must be rejected");
}

// The stmatrix epilogue puts every accumulator where the C tensor map's 128-byte swizzle
// expects it, and writes each bf16 of a pass's two boxes exactly once. Models: wgmma's
// accumulator layout (acc[i] of lane l in warp w is row 16 w + 8 ((i / 2) % 2) + l / 4, column
// 8 (i / 4) + 2 (l % 4) + i % 2), the kernel's register choice (acc[i] is register
// 2 ((i / 4) % 2) + (i / 2) % 2 of the stmatrix for groups i / 4 rounded down to even) and
// stmatrix.x4 (register j of lane l is row l / 4, columns 2 (l % 4) and + 1 of matrix j, whose
// row r lands at the address given by lane 8 j + r).
void epilogue_layout() {
  using namespace pk::gemm;
  for (int pass = 0; pass < kBN / kEpiCols; ++pass) {
    std::vector<int> written(2 * kBoxElems, 0);
    int wrong = 0;
    for (int warp = 0; warp < 4; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 128; ++i) {
          const int g = i / 4, h = (i / 2) % 2, e = i % 2;
          if (g / 16 != pass) continue;
          const int row = 16 * warp + 8 * h + lane / 4, col = 8 * g + 2 * (lane % 4) + e - pass * kEpiCols;
          const int j = 2 * (g % 2) + h, g0 = g - g % 2 - pass * 16;
          const unsigned int got = epilogue_row_offset(warp, 8 * j + lane / 4, g0) + (2 * (lane % 4) + e) * 2;
          const unsigned int want = (col / kBoxCols) * kBoxElems * 2 + row * 128 +
                                    (((col % kBoxCols) / 8) ^ (row % 8)) * 16 + (col % 8) * 2;
          if (got != want) ++wrong;
          if (got / 2 < written.size()) ++written[got / 2];
        }
    PKT_CHECK(wrong == 0, "pass " + std::to_string(pass) + ": " + std::to_string(wrong) +
                              " accumulators land off the swizzled box layout");
    const auto once = std::count(written.begin(), written.end(), 1);
    PKT_CHECK(once == static_cast<long>(written.size()),
              "pass " + std::to_string(pass) + ": " + std::to_string(written.size() - once) +
                  " box elements written other than once");
  }
}

// Grids are balanced: the fewest blocks that take as many waves as the cap allows.
void balanced_grids() {
  struct G { int tiles, avail, cap, want; };
  for (const G& g : {G{2048, 132, 0, 128}, G{512, 132, 0, 128}, G{128, 132, 0, 128}, G{133, 132, 0, 67},
                     G{12, 132, 5, 4}, G{32, 132, 3, 3}, G{2048, 128, 0, 128}, G{1, 132, 0, 1}}) {
    const int got = pk::gemm::detail::balanced_blocks(g.tiles, g.avail, g.cap);
    PKT_CHECK(got == g.want, std::to_string(g.tiles) + " tiles on " + std::to_string(g.avail) + " SMs (cap " +
                                 std::to_string(g.cap) + "): " + std::to_string(got) + " blocks, want " +
                                 std::to_string(g.want));
  }
}

// The communicator-count model on the shipped profile picks what the 2 x H200 sweep measured
// best (docs/benchmarks/gemm-2xH200.md): 16 at 2048^3, 4 at the larger sizes.
void comm_blocks_model() {
  struct Shape { long long m, n, k; int want; };
  for (const Shape& s : {Shape{2048, 2048, 2048, 16}, Shape{4096, 4096, 4096, 4},
                         Shape{8192, 8192, 8192, 4}, Shape{16384, 4096, 8192, 4}}) {
    const int tiles_per_rank = int((s.m / 2 + 127) / 128 * ((s.n + 255) / 256));
    const int got = pk::gemm::choose_comm_blocks(pk::builtin_profile(), 132, 2 * tiles_per_rank,
                                                 tiles_per_rank, s.k, s.m / 2 * s.k * 2);
    PKT_CHECK(got == s.want, "ag_gemm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                                 std::to_string(s.k) + ": " + std::to_string(got) +
                                 " communicator blocks, want " + std::to_string(s.want));
  }
}

}  // namespace

int main() {
  rejects_misaligned();  // host-only: runs without a GPU too
  comm_blocks_model();   // host-only too
  balanced_grids();      // host-only too
  epilogue_layout();     // host-only too
  if (pkt::failure_count()) return pkt::finish("fused_gemm_test");
  // 32 tiles on 3 blocks (11 waves), and 12 tiles with a cap of 5 blocks: 3 waves either way,
  // so the plan runs 4 blocks of 3 tiles.
  const Case gemm_cases[] = {{200, 264, 136, 0, 0}, {129, 8, 520, 0, 0}, {300, 520, 200, 3, 0},
                             {1000, 1000, 1000, 0, 0}, {1000, 1000, 1000, 3, 0},
                             {500, 600, 1032, 5, 0}};
  const Case reduce_cases[] = {{200, 264, 520, 0, 0}, {302, 520, 72, 3, 0}, {2, 8, 8, 0, 0},
                               {1400, 520, 1000, 5, 0}};
  constexpr auto kCopyEngine = pk::gemm::Gather::copy_engine;
  // The copy-engine gather: a tail row block, more tiles than blocks, and (4100 rows of
  // 2064 bytes) two pushes of 31 and 2 row blocks.
  const Case ag_cases[] = {{77, 264, 200, 0, 0},   {300, 520, 136, 3, 2},
                           {130, 24, 600, 2, 1},   {600, 520, 1000, 4, 2},
                           {77, 264, 200, 0, 0, kCopyEngine},
                           {300, 520, 136, 3, 0, kCopyEngine}, {4100, 72, 1032, 0, 0, kCopyEngine}};
  for (int world : pkt::test_worlds(/*with_one=*/true)) {
    pkt::announce_world("fused_gemm_test", world);
    pkt::run_ranks(world, [&](pk::Context& ctx) {
      for (const Case& c : gemm_cases) gemm_alone(ctx, c);
      for (const Case& c : reduce_cases) gemm_reduce(ctx, c, false);
      for (const Case& c : reduce_cases) gemm_reduce(ctx, c, true);
      for (const Case& c : ag_cases)
        if (world > 1 || c.gather != kCopyEngine) ag_gemm(ctx, c);
    });
  }
  return pkt::finish("fused_gemm_test");
}
