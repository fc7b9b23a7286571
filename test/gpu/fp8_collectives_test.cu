// The shipped fp8 collectives (templates/specs/fp8_all_gather.pk.cpp and
// fp8_reduce_scatter.pk.cpp, compiled by pkc at build time) at world size 1 and at 2, 3 and 4
// ranks sharing one GPU (or several GPUs), on bf16 rows with outliers, a row count that is not
// a multiple of the 16-row tiles and a last column block of 8 of 128 columns. The host
// quantises every rank's rows as the specs say (fp8_model.h): the all-gather's output must
// equal the dequantised rows bit for bit; the reduce-scatter's, the f32 sum of the dequantised
// terms within one bf16 rounding (the device may fuse the multiply into the add). Each kernel
// runs twice back to back; outputs are poisoned first.
#include PK_FP8_ALL_GATHER_CU
#include PK_FP8_REDUCE_SCATTER_CU
#include "fp8_model.h"
#include "sym_test_util.h"

namespace {

using pk::bf16;

constexpr long long kCols = 264;  // two full 128-column blocks and one of 8

// Rank r's rows as floats, with every 97th element scaled up (an outlier per block).
std::vector<bf16> rows_of(int rank, long long rows) {
  auto v = pkt::random_data<bf16>(rows * kCols, 900u + 31u * unsigned(rank));
  for (long long i = 0; i < rows * kCols; i += 97) v[i] = pkt::from_f<bf16>(pkt::to_f(v[i]) * 300.f);
  return v;
}
std::vector<float> floats(const std::vector<bf16>& v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = pkt::to_f(v[i]);
  return f;
}

void all_gather_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long M = 37, B = (kCols + 127) / 128;
  pkt::DevLocal<bf16> x({M, kCols}, rows_of(me, M));
  pkt::SymArg<pk::f8e4m3> q(ctx, {M, kCols}, nullptr), gq(ctx, {W * M, kCols}, nullptr);
  pkt::SymArg<float> s(ctx, {M, B}, nullptr), gs(ctx, {W * M, B}, nullptr);
  pkt::DevLocal<bf16> y({W * M, kCols}, {});
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 2; ++l)
    pkt::launch(ctx, "fp8_all_gather", fp8_all_gather, pk_fp8_all_gather::kBlocks, pk_fp8_all_gather::kThreads,
                x.view(), q.view, s.view, gq.view, gs.view, y.view());
  PKT_OK(ctx.check_errors());
  std::vector<pkt::Quantised> want;
  for (int r = 0; r < W; ++r) want.push_back(pkt::quantise_blocks(floats(rows_of(r, M)), M, kCols));
  const auto got = y.download();
  pkt::expect(ctx, "fp8_all_gather", got, [&](long long i) {
    const long long r = i / (M * kCols);
    return double(pkt::to_f(pkt::from_f<bf16>(want[r].value(i % (M * kCols)))));
  }, [](long long) { return 0.0; });
  PKT_OK(ctx.exchange().barrier());
}

void reduce_scatter_test(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long Mr = 37, M = W * Mr, B = (kCols + 127) / 128;  // Mr rows per rank of the result
  pkt::DevLocal<bf16> x({M, kCols}, rows_of(me, M));
  pkt::SymArg<pk::f8e4m3> q(ctx, {M, kCols}, nullptr);
  pkt::SymArg<float> s(ctx, {M, B}, nullptr);
  pkt::DevLocal<bf16> y({Mr, kCols}, {});
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 2; ++l)
    pkt::launch(ctx, "fp8_reduce_scatter", fp8_reduce_scatter, pk_fp8_reduce_scatter::kBlocks,
                pk_fp8_reduce_scatter::kThreads, x.view(), q.view, s.view, y.view());
  PKT_OK(ctx.check_errors());
  std::vector<pkt::Quantised> want;
  std::vector<std::vector<float>> xs;
  for (int r = 0; r < W; ++r) {
    xs.push_back(floats(rows_of(r, M)));
    want.push_back(pkt::quantise_blocks(xs.back(), M, kCols));
  }
  const auto got = y.download();
  const long long first = me * Mr * kCols;  // this rank's rows of the M
  pkt::expect(ctx, "fp8_reduce_scatter", got, [&](long long i) {
    float acc = 0.f;
    for (int r = 0; r < W; ++r) acc += want[r].value(first + i);
    return double(acc);
  }, [&](long long i) {
    // One bf16 rounding, and f32 rounding of each add, which a fused multiply-add changes.
    double acc = 0, mag = 0;
    for (int r = 0; r < W; ++r) acc += want[r].value(first + i), mag += std::fabs(want[r].value(first + i));
    return std::fabs(acc) * 0x1p-8 + mag * 0x1p-21;
  });
  // And within e4m3's error of the exact sum of the inputs (as fp8_test's round trip).
  pkt::expect(ctx, "fp8_reduce_scatter against the inputs", got, [&](long long i) {
    double sum = 0;
    for (int r = 0; r < W; ++r) sum += xs[r][first + i];
    return sum;
  }, [&](long long i) {
    double tol = 0;
    for (int r = 0; r < W; ++r)
      tol += 0.0645 * std::fabs(xs[r][first + i]) + 0x1p-10 * want[r].scale(first + i) * 1.01;
    return tol + 0x1p-8 * std::fabs(got[i].bits ? pkt::to_f(got[i]) : 0.f);
  });
  PKT_OK(ctx.exchange().barrier());
}

void fp8_collectives_test(pk::Context& ctx) {
  all_gather_test(ctx);
  reduce_scatter_test(ctx);
}

}  // namespace

int main() {
  return pkt::run_worlds("fp8_collectives_test", fp8_collectives_test, fp8_all_gather, fp8_reduce_scatter);
}
