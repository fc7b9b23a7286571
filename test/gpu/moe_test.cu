// The shipped MoE dispatch and combine (templates/specs/moe_{dispatch,combine}.pk.cpp, compiled
// by pkc at build time) at world size 1 and at 2, 3 and 4 ranks sharing one GPU (or 2 GPUs).
// Routing is random with skew toward low expert ids (distinct per token), some choices dropped
// (-1) and the last expert never chosen (it receives nothing); tokens often go to experts on
// their own rank. A last case overflows a block (every choice of every token to expert 0):
// exactly T choices per sender get places, the rest slot -1, and counts stop at T.
// Each rank checks what it can see: the counts and rows it received from every sender (rebuilt
// on the host from the senders' seeds; the order of rows inside a block is free, so rows are
// compared as multisets), the slots it was given, and then the combine, run twice: on the
// received rows as they are (out = x * sum of weights) and on rows scaled by the local expert
// (out = sum of weights x (l + 1) x): a row fetched from a wrong place or weighted by a wrong
// choice shows. Outputs are poisoned first; the dispatch runs 3 times back to back.
// moe_dispatch_fp8 gets the same routing: every received row must be the sender's token
// quantised on the host (fp8_model.h: e4m3 values and the per-128-column scales) bit for bit.
#include PK_MOE_DISPATCH_CU
#include PK_MOE_COMBINE_CU
#include PK_MOE_DISPATCH_FP8_CU
#include "fp8_model.h"
#include "sym_test_util.h"

#include <cstring>

#include <algorithm>
#include <random>

namespace {

using pk::bf16;

struct Routing {
  std::vector<int> ids;        // [T, K] expert ids, -1 for a dropped choice
  std::vector<float> weights;  // [T, K]
  std::vector<bf16> x;         // [T, H]
};

Routing routing(int rank, long long T, long long K, long long H, int experts_total) {
  Routing r;
  std::mt19937 g(1000u + 31u * unsigned(rank) + unsigned(T));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  r.ids.resize(T * K);
  r.weights.resize(T * K);
  for (long long t = 0; t < T; ++t)
    for (long long k = 0; k < K; ++k) {
      // Distinct experts per token (as top-k gives), skewed toward expert 0; the last expert
      // (experts_total - 1) is never chosen.
      int e = -1;
      for (bool fresh = false; !fresh;) {
        const double v = u(g);
        e = std::min(int(v * v * v * (experts_total - 1)), experts_total - 2);
        fresh = std::find(r.ids.begin() + t * K, r.ids.begin() + t * K + k, e) == r.ids.begin() + t * K + k;
      }
      r.ids[t * K + k] = u(g) < 0.05 ? -1 : e;
      r.weights[t * K + k] = float(0.1 + u(g));
    }
  r.x = pkt::random_data<bf16>(T * H, 7u + 13u * unsigned(rank) + unsigned(T));
  return r;
}

std::vector<unsigned short> row_bits(const std::vector<bf16>& v, long long row, long long H) {
  std::vector<unsigned short> bits(H);
  for (long long h = 0; h < H; ++h) bits[h] = v[row * H + h].bits;
  return bits;
}

void moe_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long K = 3, H = 1000, El = 5, E = El * W;  // hidden size: a column tail of 512
  for (long long T : {1LL, 300LL}) {
    std::vector<Routing> all;
    for (int r = 0; r < W; ++r) all.push_back(routing(r, T, K, H, int(E)));
    const Routing& mine = all[me];
    pkt::DevLocal<bf16> x({T, H}, mine.x);
    pkt::DevLocal<int> ids({T, K}, mine.ids), slot({T, K}, {});
    pkt::DevLocal<float> weights({T, K}, mine.weights);
    pkt::DevLocal<bf16> out({T, H}, {});
    pkt::SymArg<int> fill(ctx, {E}, nullptr), counts(ctx, {W * El}, nullptr);
    pkt::SymArg<bf16> recv(ctx, {W * El * T, H}, nullptr), scaled(ctx, {W * El * T, H}, nullptr);
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    for (int l = 0; l < 3; ++l)
      pkt::launch(ctx, "moe_dispatch", moe_dispatch, pk_moe_dispatch::kBlocks, pk_moe_dispatch::kThreads,
                  x.view(), ids.view(), fill.view, slot.view(), recv.view, counts.view);
    PKT_OK(ctx.check_errors());

    // What this rank received from each sender s, for each of its local experts l.
    const auto got_counts = counts.download();
    const auto got_recv = recv.download();
    for (int s = 0; s < W; ++s)
      for (long long l = 0; l < El; ++l) {
        const long long b = s * El + l, e = me * El + l;
        std::vector<std::vector<unsigned short>> want, got;
        for (long long i = 0; i < T * K; ++i)
          if (all[s].ids[i] == e) want.push_back(row_bits(all[s].x, i / K, H));
        if (got_counts[b] != static_cast<int>(want.size())) {
          pkt::fail("moe_dispatch counts rank " + std::to_string(me) + " block " + std::to_string(b) +
                    ": got " + std::to_string(got_counts[b]) + ", want " + std::to_string(want.size()));
          continue;
        }
        for (long long i = 0; i < static_cast<long long>(want.size()); ++i)
          got.push_back(row_bits(got_recv, b * T + i, H));
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.end());
        if (got != want)
          pkt::fail("moe_dispatch rows rank " + std::to_string(me) + " block " + std::to_string(b) +
                    ": the received rows are not the sent tokens");
      }
    // This rank's slots: distinct places inside the right block, -1 for dropped choices.
    const auto got_slot = slot.download();
    std::vector<std::vector<int>> places(E);
    for (long long i = 0; i < T * K; ++i) {
      const int e = mine.ids[i];
      if (e < 0) {
        if (got_slot[i] != -1) pkt::fail("moe_dispatch: a dropped choice got slot " + std::to_string(got_slot[i]));
        continue;
      }
      places[e].push_back(got_slot[i]);
    }
    for (long long e = 0; e < E; ++e) {
      const long long base = (me * El + e % El) * T;
      std::sort(places[e].begin(), places[e].end());
      for (size_t j = 0; j < places[e].size(); ++j)
        if (places[e][j] != base + static_cast<long long>(j))
          pkt::fail("moe_dispatch slots rank " + std::to_string(me) + " expert " + std::to_string(e) +
                    ": not the places [b T, b T + count) once each");
    }

    // Expert outputs: the received rows as they are, and scaled by (l + 1) in block s El + l.
    std::vector<bf16> y(got_recv.size());
    for (long long row = 0; row < W * El * T; ++row) {
      const long long l = (row / T) % El;
      for (long long h = 0; h < H; ++h)
        y[row * H + h] = pkt::from_f<bf16>(pkt::to_f(got_recv[row * H + h]) * float(l + 1));
    }
    PKT_CUDA(cudaMemcpy(scaled.buf.local(), y.data(), y.size() * sizeof(bf16), cudaMemcpyHostToDevice));
    PKT_OK(ctx.exchange().barrier());
    for (int pass = 0; pass < 2; ++pass) {
      PKT_CUDA(pkt::poison(out.dev, T * H * sizeof(bf16)));
      PKT_CUDA(cudaDeviceSynchronize());
      PKT_OK(ctx.exchange().barrier());
      pkt::launch(ctx, "moe_combine", moe_combine, pk_moe_combine::kBlocks, pk_moe_combine::kThreads,
                  pass == 0 ? recv.view : scaled.view, ids.view(), weights.view(), slot.view(), out.view(),
                  static_cast<long long>(El));
      PKT_OK(ctx.check_errors());
      pkt::expect(ctx, pass == 0 ? "moe_combine" : "moe_combine scaled", out.download(), [&](long long i) {
        const long long t = i / H;
        const double xv = pkt::to_f(mine.x[i]);
        double sum = 0;
        for (long long k = 0; k < K; ++k) {
          const int e = mine.ids[t * K + k];
          if (e < 0) continue;
          const double yv = pass == 0 ? xv : pkt::to_f(pkt::from_f<bf16>(float(xv) * float(e % El + 1)));
          sum += double(mine.weights[t * K + k]) * yv;
        }
        return sum;
      }, [&](long long i) { return 1e-2 * (1.0 + std::fabs(pkt::to_f(mine.x[i]))) * K * El; });
      PKT_OK(ctx.exchange().barrier());
    }
  }
}

// One received row as bytes: its e4m3 values, then its scales' bits.
std::vector<unsigned char> fp8_row(const unsigned char* q, const float* scales, long long H, long long B) {
  std::vector<unsigned char> row(q, q + H);
  row.resize(H + B * sizeof(float));
  std::memcpy(row.data() + H, scales, B * sizeof(float));
  return row;
}

void moe_fp8_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long K = 3, H = 1000, El = 5, E = El * W, B = (H + 127) / 128;  // a 104-column tail block
  for (long long T : {1LL, 300LL}) {
    std::vector<Routing> all;
    for (int r = 0; r < W; ++r) all.push_back(routing(r, T, K, H, int(E)));
    pkt::DevLocal<bf16> x({T, H}, all[me].x);
    pkt::DevLocal<int> ids({T, K}, all[me].ids), slot({T, K}, {});
    pkt::SymArg<int> fill(ctx, {E}, nullptr), counts(ctx, {W * El}, nullptr);
    pkt::SymArg<pk::f8e4m3> recv(ctx, {W * El * T, H}, nullptr);
    pkt::SymArg<float> recv_scale(ctx, {W * El * T, B}, nullptr);
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    for (int l = 0; l < 3; ++l)
      pkt::launch(ctx, "moe_dispatch_fp8", moe_dispatch_fp8, pk_moe_dispatch_fp8::kBlocks,
                  pk_moe_dispatch_fp8::kThreads, x.view(), ids.view(), fill.view, slot.view(), recv.view,
                  recv_scale.view, counts.view);
    PKT_OK(ctx.check_errors());
    const auto got_counts = counts.download();
    const auto got_q = recv.download();
    const auto got_s = recv_scale.download();
    for (int s = 0; s < W; ++s) {
      std::vector<float> xs(T * H);
      for (long long i = 0; i < T * H; ++i) xs[i] = pkt::to_f(all[s].x[i]);
      const pkt::Quantised want_q = pkt::quantise_blocks(xs, T, H);
      std::vector<float> scales(T * B);
      for (long long i = 0; i < T * B; ++i) scales[i] = want_q.amax[i] * 0.002232142857f;
      for (long long l = 0; l < El; ++l) {
        const long long b = s * El + l, e = me * El + l;
        std::vector<std::vector<unsigned char>> want, got;
        for (long long i = 0; i < T * K; ++i)
          if (all[s].ids[i] == e) want.push_back(fp8_row(&want_q.q[(i / K) * H], &scales[(i / K) * B], H, B));
        if (got_counts[b] != static_cast<int>(want.size())) {
          pkt::fail("moe_dispatch_fp8 counts rank " + std::to_string(me) + " block " + std::to_string(b));
          continue;
        }
        for (long long i = 0; i < static_cast<long long>(want.size()); ++i)
          got.push_back(fp8_row(reinterpret_cast<const unsigned char*>(got_q.data()) + (b * T + i) * H,
                                &got_s[(b * T + i) * B], H, B));
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.end());
        if (got != want)
          pkt::fail("moe_dispatch_fp8 rows rank " + std::to_string(me) + " block " + std::to_string(b) +
                    ": the received rows are not the sent tokens quantised");
      }
    }
    PKT_OK(ctx.exchange().barrier());
  }
}

// Every choice to expert 0 (on rank 0): T places per sender, the other choices dropped.
void moe_overflow_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long T = 2, K = 3, H = 64, El = 2, E = El * W;
  const auto xs = pkt::random_data<bf16>(T * H, 71u + unsigned(me));
  pkt::DevLocal<bf16> x({T, H}, xs);
  pkt::DevLocal<int> ids({T, K}, std::vector<int>(T * K, 0)), slot({T, K}, {});
  pkt::SymArg<int> fill(ctx, {E}, nullptr), counts(ctx, {W * El}, nullptr);
  pkt::SymArg<bf16> recv(ctx, {W * El * T, H}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  pkt::launch(ctx, "moe_dispatch", moe_dispatch, pk_moe_dispatch::kBlocks, pk_moe_dispatch::kThreads,
              x.view(), ids.view(), fill.view, slot.view(), recv.view, counts.view);
  PKT_OK(ctx.check_errors());
  std::vector<int> places;
  for (int v : slot.download())
    if (v != -1) places.push_back(v);
  std::sort(places.begin(), places.end());
  const long long base = me * El * T;  // block (me, 0) on rank 0
  if (places.size() != size_t(T) || places.front() != base || places.back() != base + T - 1)
    pkt::fail("moe_dispatch overflow rank " + std::to_string(me) + ": want exactly places [b T, b T + T)");
  if (me == 0) {
    const auto c = counts.download();
    for (int s = 0; s < W; ++s)
      if (c[s * El] != T || c[s * El + 1] != 0)
        pkt::fail("moe_dispatch overflow: counts of sender " + std::to_string(s) + " are not T and 0");
  }
  PKT_OK(ctx.exchange().barrier());
}

}  // namespace

int main() {
  return pkt::run_worlds("moe_test", [](pk::Context& ctx) {
    moe_test(ctx);
    moe_overflow_test(ctx);
    moe_fp8_test(ctx);
  }, moe_dispatch, moe_combine, moe_dispatch_fp8);
}
