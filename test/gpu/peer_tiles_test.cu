// Tiles written into peers from general tile loops (test/specs/peer_tiles.pk.cpp, compiled by
// pkc at build time): a ring shift, adds into one owner, adds into every rank and tiles pulled
// from the neighbours, at world size 1 and at 2, 3 and 4 ranks sharing one GPU (or 2 GPUs).
// Inputs are random and differ per rank, outputs are poisoned first (or hold random values the
// adds must keep), and every element is checked against a float64 host reference; then 200
// back-to-back launches of each.
#include PK_PEER_TILES_CU
#include "sym_test_util.h"

namespace {

using pk::bf16;
using pkt::expect;
using pkt::inputs;
using pkt::launch;
using pkt::SymArg;

void ring(pk::Context& ctx) {
  const long long R = 100, C = 170;  // tails of 48 x 80 tiles in both dimensions
  const int W = ctx.world(), me = ctx.rank();
  auto all = inputs<bf16>(W, R * C, 11);
  SymArg<bf16> x(ctx, {R, C}, &all[me]), y(ctx, {R, C}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 200; ++l)
    launch(ctx, "ring_shift", ring_shift, pk_ring_shift::kBlocks, pk_ring_shift::kThreads,
           x.view, y.view);
  PKT_OK(ctx.check_errors());
  const int from = (me + W - 1) % W;
  expect(ctx, "ring_shift", y.download(),
         [&](long long i) { return double(pkt::to_f(all[from][i])); },
         [](long long) { return 0.0; });  // a copy: exact
  PKT_OK(ctx.exchange().barrier());  // no rank frees while a peer may still write
}

void owner(pk::Context& ctx) {
  const long long R = 77, C = 130;  // tails of 32 x 64 tiles
  const int W = ctx.world(), me = ctx.rank();
  auto all = inputs<float>(W, R * C, 23);
  auto start = pkt::random_data<float>(R * C, 5);  // y's values before the adds, every rank
  SymArg<float> x(ctx, {R, C}, &all[me]), y(ctx, {R, C}, &start);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  constexpr int kLaunches = 200;
  for (int l = 0; l < kLaunches; ++l)
    launch(ctx, "add_to_owner", add_to_owner, pk_add_to_owner::kBlocks,
           pk_add_to_owner::kThreads, x.view, y.view);
  PKT_OK(ctx.check_errors());
  PKT_OK(ctx.exchange().barrier());  // every rank's adds into rank 0 are complete
  expect(ctx, "add_to_owner", y.download(),
         [&](long long i) {
           if (me != 0) return double(start[i]);  // no rank adds into the others
           double sum = 0;
           for (int r = 0; r < W; ++r) sum += 2.0 * all[r][i];
           return start[i] + kLaunches * sum;
         },
         // f32 adds, one rounding each (about 2^-24 of the running sum); a missing launch
         // would be off by a whole 2 * sum.
         [&](long long) { return 1e-2 + 1e-4 * (std::fabs(start[0]) + 16.0 * kLaunches); });
  PKT_OK(ctx.exchange().barrier());
}

void everyone(pk::Context& ctx) {
  const long long n = 5000;  // a tail of the 2048-element tiles
  const int W = ctx.world(), me = ctx.rank();
  auto all = inputs<bf16>(W, n, 31);
  std::vector<bf16> zero(n, pkt::from_f<bf16>(0.f));
  SymArg<bf16> x(ctx, {n}, &all[me]), y(ctx, {n}, &zero);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  launch(ctx, "add_to_all", add_to_all, pk_add_to_all::kBlocks, pk_add_to_all::kThreads, x.view,
         y.view);
  PKT_OK(ctx.check_errors());
  PKT_OK(ctx.exchange().barrier());
  // W bf16 adds in some order, each rounded to bf16 (half an ulp, 2^-8 of a partial sum, and
  // no partial sum exceeds the sum of magnitudes).
  expect(ctx, "add_to_all", y.download(),
         [&](long long i) {
           double sum = 0;
           for (int r = 0; r < W; ++r) sum += pkt::to_f(all[r][i]);
           return sum;
         },
         [&](long long i) {
           double mag = 0;
           for (int r = 0; r < W; ++r) mag += std::fabs(pkt::to_f(all[r][i]));
           return W * mag * std::ldexp(1.0, -8);
         });
  PKT_OK(ctx.exchange().barrier());
}

// Tiles pulled from the previous and the next rank: y = x[r - 1] + 2 x[r + 1].
void pull(pk::Context& ctx) {
  const long long R = 83, C = 150;  // tails of 40 x 72 tiles
  const int W = ctx.world(), me = ctx.rank();
  auto all = inputs<float>(W, R * C, 31);
  SymArg<float> x(ctx, {R, C}, &all[me]), y(ctx, {R, C}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 200; ++l)
    launch(ctx, "pull_neighbours", pull_neighbours, pk_pull_neighbours::kBlocks,
           pk_pull_neighbours::kThreads, x.view, y.view);
  PKT_OK(ctx.check_errors());
  const int prev = (me + W - 1) % W, next = (me + 1) % W;
  expect(ctx, "pull_neighbours", y.download(),
         [&](long long i) { return double(all[prev][i]) + 2.0 * double(all[next][i]); },
         [](long long) { return 1e-5; });
  PKT_OK(ctx.exchange().barrier());
}

// add_to_rank at a rank past the world: an error from the launch, y untouched everywhere; then
// at the last rank: the adds of every rank arrive there.
void bad_peer(pk::Context& ctx) {
  const long long R = 40, C = 70;
  const int W = ctx.world(), me = ctx.rank();
  auto all = inputs<float>(W, R * C, 29);
  auto start = pkt::random_data<float>(R * C, 6);
  SymArg<float> x(ctx, {R, C}, &all[me]), y(ctx, {R, C}, &start);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (long long p : {static_cast<long long>(W), -1LL}) {
    launch(ctx, "add_to_rank", add_to_rank, pk_add_to_rank::kBlocks, pk_add_to_rank::kThreads, x.view,
           y.view, p);
    pk::Status st = ctx.check_errors();
    PKT_CHECK(!st.is_ok() && st.message().find("outside ranks") != std::string::npos,
              "add_to_rank to rank " + std::to_string(p) + ": " + (st.is_ok() ? std::string("no error") : st.message()));
  }
  launch(ctx, "add_to_rank", add_to_rank, pk_add_to_rank::kBlocks, pk_add_to_rank::kThreads, x.view, y.view,
         static_cast<long long>(W - 1));
  PKT_OK(ctx.check_errors());
  PKT_OK(ctx.exchange().barrier());
  expect(ctx, "add_to_rank", y.download(), [&](long long i) {
    if (me != W - 1) return double(start[i]);
    double sum = start[i];
    for (int r = 0; r < W; ++r) sum += all[r][i];
    return sum;
  }, [](long long) { return 1e-5; });
  PKT_OK(ctx.exchange().barrier());
}


// tile_flag_ring: a flag per tile (run-time slots). 4 x 3 tiles fit the flag region at every
// world size; 30 x 3 do not (at most 2048 / 33 slots), and the launch reports the slot. Waits
// count signals per launch, so every launch of a flag region must use the same slots: the
// oversized launch takes a region (a launch name) of its own.
void tile_flags(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const int prev = (me + W - 1) % W;
  for (long long R : {50LL, 480LL}) {
    const long long C = 300;
    auto all = inputs<float>(W, R * C, 37);
    SymArg<float> x(ctx, {R, C}, &all[me]), y(ctx, {R, C}, nullptr);
    pkt::DevLocal<float> out({R, C}, {});
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    const int launches = R == 50 ? 200 : 1;
    for (int l = 0; l < launches; ++l)
      launch(ctx, R == 50 ? "tile_flag_ring" : "tile_flag_ring_oversized", tile_flag_ring,
             pk_tile_flag_ring::kBlocks, pk_tile_flag_ring::kThreads, x.view, y.view, out.view());
    pk::Status st = ctx.check_errors();
    if (R == 50) {
      PKT_OK(st);
      expect(ctx, "tile_flag_ring", out.download(),
             [&](long long i) { return double(all[prev][i] + all[me][i]); },  // an f32 add
             [](long long) { return 0.0; });
    } else {
      PKT_CHECK(!st.is_ok() && st.message().find("run-time flag slot") != std::string::npos,
                "tile_flag_ring with 90 tiles: " + (st.is_ok() ? std::string("no error") : st.message()));
    }
    PKT_OK(ctx.exchange().barrier());
  }
}

}  // namespace

int main() {
  return pkt::run_worlds("peer_tiles_test", [](pk::Context& ctx) {
    ring(ctx);
    owner(ctx);
    everyone(ctx);
    pull(ctx);
    bad_peer(ctx);
    tile_flags(ctx);
  }, ring_shift, add_to_owner, add_to_all, pull_neighbours, add_to_rank, tile_flag_ring);
}
