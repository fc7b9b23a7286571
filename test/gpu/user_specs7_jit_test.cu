// The kernels of the seventh user-written spec set (test/specs/user_specs7.pk.cpp) that take a
// template the static test cannot launch by hand, run through the JIT against float64:
// attention_odd_lse_d128 (the Hopper attention template, one head at head dim 128, query and key
// lengths that are multiples of nothing: odd, one key, one query) and gqa_attention_causal_d64
// (grouped-query, on the template since the twenty-fifth session) at world size 1, and
// row_linear_rs_fused (the fused gemm_rs template: tiles reduce-added into their owners by TMA)
// at W = 1-4. Each must report its template. One PASS or FAIL line per case.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "attention_reference.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

// Each launch adds h_q w2_q^T of every rank q into y [R, N] as the spec writes it: the 128-row
// tile at row t (a multiple of 128) goes to owner t / R at its row t % R, each rank's tile
// rounded to bf16 and added in bf16, rows past the owner's R dropped. With R a multiple of 128
// no tile crosses owners and that is the reduce-scatter of rows [me R, (me + 1) R) (the
// template runs); with R = 150 tiles cross, and the launch runs the general-path twin, which
// drops those rows as written. store_add adds into what y holds (no zero fill in the spec): y
// starts at a large random y0 and must end at y0 + 2 x the adds after two launches.
void row_linear_rs_fused(pk::Context& ctx, cudaStream_t s, const pk::jit::Kernel& k, long long R) {
  const int W = ctx.world(), me = ctx.rank();
  const long long M = W * R, F = 136, N = 264;
  std::vector<std::vector<pk::bf16>> hs(W), ws(W);
  for (int q = 0; q < W; ++q) {
    hs[q].resize(M * F), ws[q].resize(N * F);
    auto a = pkt::random_data<float>(M * F, 960 + q), b = pkt::random_data<float>(N * F, 970 + q);
    for (long long i = 0; i < M * F; ++i) hs[q][i] = pkt::from_host<pk::bf16>(0.25f * a[i]);
    for (long long i = 0; i < N * F; ++i) ws[q][i] = pkt::from_host<pk::bf16>(0.25f * b[i]);
  }
  pkt::DevLocal<pk::bf16> h({M, F}, hs[me]), w2({N, F}, ws[me]);
  std::vector<pk::bf16> y0(R * N);
  const auto y0f = pkt::random_data<float>(R * N, 980 + me);
  for (long long i = 0; i < R * N; ++i) y0[i] = pkt::from_host<pk::bf16>(64.f * y0f[i]);
  pkt::SymArg<pk::bf16> y(ctx, {R, N}, &y0);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 2; ++l) PKT_OK(k.launch(ctx, s, h.view(), w2.view(), y.view));
  PKT_CUDA(cudaStreamSynchronize(s));
  PKT_OK(ctx.check_errors());
  PKT_OK(ctx.exchange().barrier());  // every rank's adds have landed
  std::vector<double> want(R * N, 0), mag(R * N, 0);
  for (long long i = 0; i < R * N; ++i) want[i] = pkt::to_host(y0[i]), mag[i] = std::fabs(want[i]);
  for (int q = 0; q < W; ++q)
    for (long long t = 0; t < M; t += 128)  // the spec's tiles over A's rows
      for (long long i = 0; i < 128 && t + i < M; ++i) {
        const long long row = t % R + i;  // in owner t / R, clipped at its R rows
        if (t / R != me || row >= R) continue;
        for (long long n = 0; n < N; ++n) {
          double a = 0;
          for (long long f = 0; f < F; ++f) a += pkt::to_host(hs[q][(t + i) * F + f]) * pkt::to_host(ws[q][n * F + f]);
          want[row * N + n] += 2 * a, mag[row * N + n] += 2 * std::fabs(a);
        }
      }
  auto got = y.download();
  long long bad = 0, first = -1;
  double max_err = 0;
  for (long long i = 0; i < R * N; ++i) {
    const double g = pkt::to_host(got[i]), e = std::fabs(g - want[i]);
    max_err = std::isnan(e) ? INFINITY : std::max(max_err, e);
    // 2W bf16 adds and the tiles' roundings, each within 2^-9 of at most mag; twice that. y0
    // (|y0| up to 64) lost by a zeroing launch is far outside it.
    if (!(e <= 1e-3 + (2.0 * W + 1) / 256 * mag[i])) bad += 1, first = first < 0 ? i : first;
  }
  if (bad)
    pkt::fail("FAIL user_specs7 row_linear_rs_fused R=" + std::to_string(R) + " W=" + std::to_string(W) + " rank=" + std::to_string(me) + ": " +
              std::to_string(bad) + " wrong, max_err " + std::to_string(max_err) + ", first at " + std::to_string(first) +
              " got " + std::to_string(pkt::to_host(got[first])) + " want " + std::to_string(want[first]));
  else if (me == 0)
    std::printf("PASS user_specs7 row_linear_rs_fused R=%lld W=%d max_err=%.3g\n", R, W, max_err);
  PKT_OK(ctx.exchange().barrier());
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  auto text = pk::jit::read_spec(PK_USER_SPECS7_SPEC);
  if (!text.is_ok()) {
    pkt::fail(std::string("read the spec: ") + text.status().message());
    return pkt::finish("user_specs7_jit_test");
  }
  pk::jit::Options options;
  options.kernel = "attention_odd_lse_d128";
  auto att = pk::jit::compile_spec(PK_USER_SPECS7_SPEC, *text, options, pk::jit::pkc_frontend(PK_PKC));
  options.kernel = "row_linear_rs_fused";
  auto rs = pk::jit::compile_spec(PK_USER_SPECS7_SPEC, *text, options, pk::jit::pkc_frontend(PK_PKC));
  options.kernel = "gqa_attention_causal_d64";
  auto gqa = pk::jit::compile_spec(PK_USER_SPECS7_SPEC, *text, options, pk::jit::pkc_frontend(PK_PKC));
  if (!att.is_ok() || !rs.is_ok() || !gqa.is_ok()) {
    pkt::fail("compile: " + (!att.is_ok() ? att.status().message() : !rs.is_ok() ? rs.status().message()
                                                                                : gqa.status().message()));
    return pkt::finish("user_specs7_jit_test");
  }
  PKT_CHECK(att->info().tmpl.kernel == "attention_odd_lse_d128", "attention_odd_lse_d128 did not take the attention template");
  PKT_CHECK(gqa->info().tmpl.kernel == "gqa_attention_causal_d64", "gqa_attention_causal_d64 did not take the attention template");
  PKT_CHECK(!rs->info().tmpl.kernel.empty(), "row_linear_rs_fused did not take the gemm_rs template");
  pkt::run_ranks(1, [&](pk::Context& ctx) {
    cudaStream_t s;
    PKT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    PKT_OK(att->load(ctx));
    unsigned seed = 950;
    for (auto [sq, sk] : {std::pair{1001LL, 999LL}, std::pair{77LL, 131LL}, std::pair{129LL, 1LL}, std::pair{1LL, 77LL}}) {
      const int before = pkt::failure_count();
      pkt::check_attention(
          "attention_odd_lse_d128",
          [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse, float scale) {
            PKT_OK(att->launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), scale));
            PKT_CUDA(cudaStreamSynchronize(s));
          },
          128, sq, sk, false, seed += 3);
      std::printf("%s user_specs7 attention_odd_lse_d128 %lldx%lld (template; tolerance 2e-2, see attention_reference.h)\n",
                  pkt::failure_count() == before ? "PASS" : "FAIL", sq, sk);
    }
    // Kernel 7, grouped-query causal attention (K and V at head h / (q.dim(0) / k.dim(0))).
    PKT_OK(gqa->load(ctx));
    for (auto [hq, hkv, n] : {std::tuple{4LL, 2LL, 100LL}, std::tuple{8LL, 1LL, 257LL}, std::tuple{6LL, 3LL, 64LL}}) {
      const int before = pkt::failure_count();
      pkt::check_attention(
          "gqa_attention_causal_d64",
          [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse, float scale) {
            PKT_OK(gqa->launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), scale));
            PKT_CUDA(cudaStreamSynchronize(s));
          },
          64, n, n, true, seed += 3, hq, 1.f, hkv);
      std::printf("%s user_specs7 gqa_attention_causal_d64 %lld heads over %lld, S=%lld (template)\n",
                  pkt::failure_count() == before ? "PASS" : "FAIL", hq, hkv, n);
    }
    PKT_CUDA(cudaStreamDestroy(s));
  });
  for (int world : pkt::test_worlds(/*with_one=*/true)) {
    pkt::announce_world("user_specs7_jit_test", world);
    pkt::run_ranks(world, [&](pk::Context& ctx) {
      cudaStream_t s;
      PKT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      PKT_OK(rs->load(ctx));
      PKT_OK(ctx.exchange().barrier());
      row_linear_rs_fused(ctx, s, *rs, 256);  // the template
      row_linear_rs_fused(ctx, s, *rs, 150);  // tiles cross owners: the general-path twin
      PKT_CUDA(cudaStreamDestroy(s));
    });
  }
  return pkt::finish("user_specs7_jit_test");
}
