// Kernels pkc runs as several launches in one call (pk-split-launches), JIT-compiled by a pkc
// executable: the shipped Ulysses attention (all-to-alls around the attention template, head
// dims 64 and 128, causal and not), the shipped ring attention (K/V passed round the ring in a host
// loop of launches, partials merged by log-sum-exp; the causal kernels on the striped layout) and test/specs/launches.pk.cpp (an all-gather feeding the
// attention template; an all-reduce feeding the GEMM template, whose product is gathered along
// its columns; a range loop holding an all-reduce and a phase that depends on it, run as a host
// loop of launches; nested host loops). At W = 1, then 2-4 ranks sharing one GPU (or 2 GPUs); inputs random and
// different per rank, lengths that are not multiples of the tiles, outputs poisoned, every
// element against a float64 reference.
#include <pk/jit/compile.h>

#include <map>

#include "attention_reference.h"
#include "sym_test_util.h"

namespace {

using pk::bf16;
using pkt::SymArg;

std::map<std::string, pk::jit::Kernel> g_kernels;

bool compile(const std::string& spec, const std::vector<std::string>& names) {
  auto text = pk::jit::read_spec(spec);
  if (!text.is_ok()) return pkt::fail("read " + spec + ": " + text.status().message()), false;
  for (const std::string& name : names) {
    pk::jit::Options options;
    options.kernel = name;
    auto k = pk::jit::compile_spec(spec, *text, options, pk::jit::pkc_frontend(PK_PKC));
    if (!k.is_ok()) return pkt::fail("compile " + name + ": " + k.status().message()), false;
    PKT_CHECK(!k->parts().empty(), name + " is not several launches");
    g_kernels.emplace(name, std::move(*k));
  }
  return true;
}

std::vector<double> to_double(const std::vector<bf16>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = pkt::to_f(v[i]);
  return out;
}

// Ulysses: q, k, v, o [H, S/W, D] per rank; the whole sequence's attention per head.
void ulysses(pk::Context& ctx, long long d, bool causal, long long rows) {
  const int W = ctx.world(), me = ctx.rank();
  const long long H = 2 * W, Hw = 2, S = W * rows;
  const std::string name = std::string("ulysses_attention_") + (causal ? "causal_" : "") + "d" + std::to_string(d);
  const unsigned seed = unsigned(d + (causal ? 7 : 0) + rows);
  auto qs = pkt::inputs<bf16>(W, H * rows * d, seed), ks = pkt::inputs<bf16>(W, H * rows * d, seed + 1),
       vs = pkt::inputs<bf16>(W, H * rows * d, seed + 2);
  SymArg<bf16> q(ctx, {H, rows, d}, &qs[me]), k(ctx, {H, rows, d}, &ks[me]), v(ctx, {H, rows, d}, &vs[me]),
      o(ctx, {H, rows, d}, nullptr), qh(ctx, {Hw, S, d}, nullptr), kh(ctx, {Hw, S, d}, nullptr),
      vh(ctx, {Hw, S, d}, nullptr), oh(ctx, {Hw, S, d}, nullptr);
  pkt::DevLocal<float> lse({Hw, S, 1}, {});
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  const float scale = 1.f / std::sqrt(float(d));
  PKT_OK(g_kernels.at(name).launch(ctx, ctx.stream(), q.view, k.view, v.view, o.view, qh.view, kh.view, vh.view,
                                   oh.view, lse.view(), scale));
  PKT_CUDA(cudaStreamSynchronize(ctx.stream()));
  PKT_OK(ctx.check_errors());
  // The reference: every head over the whole sequence (rank r holds rows [r*rows, (r+1)*rows)).
  std::vector<double> want_o(H * S * d), want_lse(H * S), qf(S * d), kf(S * d), vf(S * d);
  for (long long h = 0; h < H; ++h) {
    for (long long s = 0; s < S; ++s)
      for (long long j = 0; j < d; ++j) {
        const long long src = (h * rows + s % rows) * d + j;
        qf[s * d + j] = pkt::to_f(qs[s / rows][src]);
        kf[s * d + j] = pkt::to_f(ks[s / rows][src]);
        vf[s * d + j] = pkt::to_f(vs[s / rows][src]);
      }
    pkt::reference_head(qf.data(), kf.data(), vf.data(), S, S, d, causal, scale, want_o.data() + h * S * d,
                        want_lse.data() + h * S);
  }
  auto want = [&](long long i) {  // o[h, r, j] is the whole sequence's row me*rows + r
    const long long h = i / (rows * d), s = me * rows + (i / d) % rows, j = i % d;
    return want_o[(h * S + s) * d + j];
  };
  pkt::expect(ctx, (name + " o").c_str(), o.download(), want,
              [&](long long i) { return 2e-2 + 2e-2 * std::fabs(want(i)); });
  pkt::expect(ctx, (name + " lse").c_str(), lse.download(), [&](long long i) {
    return want_lse[(me * Hw + i / S) * S + i % S];
  }, [](long long) { return 1e-3; });
  PKT_OK(ctx.exchange().barrier());
}

// Ring attention: rank r holds the tokens at positions i W + r (the striped layout; any layout
// for the non-causal kernels) of every head: q, o [H, rows, D], K and V in slot 0 of kr, vr [2H,
// rows, D] (slot 1 random: overwritten before it is read); the whole sequence's attention.
void ring(pk::Context& ctx, long long d, bool causal, long long rows) {
  const int W = ctx.world(), me = ctx.rank();
  const long long H = 2, S = W * rows, n = H * rows * d;
  const std::string name = std::string("ring_attention_") + (causal ? "causal_" : "") + "d" + std::to_string(d);
  const unsigned seed = unsigned(3 * d + (causal ? 5 : 0) + rows);
  auto qs = pkt::inputs<bf16>(W, n, seed), ks = pkt::inputs<bf16>(W, 2 * n, seed + 1),
       vs = pkt::inputs<bf16>(W, 2 * n, seed + 2);
  SymArg<bf16> kr(ctx, {2 * H, rows, d}, &ks[me]), vr(ctx, {2 * H, rows, d}, &vs[me]);
  pkt::DevLocal<bf16> q({H, rows, d}, qs[me]), o({H, rows, d}, {}), op({H, rows, d}, {});
  pkt::DevLocal<float> lse({H, rows, 1}, {}), lp({H, rows, 1}, {});
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  const float scale = 1.f / std::sqrt(float(d));
  PKT_OK(g_kernels.at(name).launch(ctx, ctx.stream(), q.view(), kr.view, vr.view, o.view(), lse.view(), op.view(),
                                   lp.view(), scale));
  PKT_CUDA(cudaStreamSynchronize(ctx.stream()));
  PKT_OK(ctx.check_errors());
  // The reference: every head over the whole sequence, position g = i W + r from rank r's row i.
  std::vector<double> want_o(H * S * d), want_lse(H * S), qf(S * d), kf(S * d), vf(S * d);
  for (long long h = 0; h < H; ++h) {
    for (long long g = 0; g < S; ++g)
      for (long long j = 0; j < d; ++j) {
        const long long src = (h * rows + g / W) * d + j;  // slot 0 of kr, vr
        qf[g * d + j] = pkt::to_f(qs[g % W][src]);
        kf[g * d + j] = pkt::to_f(ks[g % W][src]);
        vf[g * d + j] = pkt::to_f(vs[g % W][src]);
      }
    pkt::reference_head(qf.data(), kf.data(), vf.data(), S, S, d, causal, scale, want_o.data() + h * S * d,
                        want_lse.data() + h * S);
  }
  auto global = [&](long long h, long long i) { return h * S + i * W + me; };
  auto want = [&](long long i) { return want_o[global(i / (rows * d), (i / d) % rows) * d + i % d]; };
  const std::string at = name + " rows=" + std::to_string(rows);
  pkt::expect(ctx, (at + " o").c_str(), o.download(), want, [&](long long i) { return 2e-2 + 2e-2 * std::fabs(want(i)); });
  pkt::expect(ctx, (at + " lse").c_str(), lse.download(),
              [&](long long i) { return want_lse[global(i / rows, i % rows)]; }, [](long long) { return 1e-3; });
  PKT_OK(ctx.exchange().barrier());
}

// gathered_attention: rank r holds keys and values [r*chunk, (r+1)*chunk); its own queries.
void gathered(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long d = 128, sq = 200, chunk = 150, sk = W * chunk;
  auto qs = pkt::inputs<bf16>(W, sq * d, 31), ks = pkt::inputs<bf16>(W, chunk * d, 32),
       vs = pkt::inputs<bf16>(W, chunk * d, 33);
  pkt::DevLocal<bf16> q({sq, d}, qs[me]), o({sq, d}, {});
  pkt::DevLocal<float> lse({sq, 1}, {});
  SymArg<bf16> kc(ctx, {chunk, d}, &ks[me]), vc(ctx, {chunk, d}, &vs[me]), k(ctx, {sk, d}, nullptr),
      v(ctx, {sk, d}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  const float scale = 0.0883f;
  PKT_OK(g_kernels.at("gathered_attention")
             .launch(ctx, ctx.stream(), q.view(), kc.view, vc.view, k.view, v.view, o.view(), lse.view(), scale));
  PKT_CUDA(cudaStreamSynchronize(ctx.stream()));
  PKT_OK(ctx.check_errors());
  std::vector<double> qf = to_double(qs[me]), kf, vf, want_o(sq * d), want_lse(sq);
  for (int r = 0; r < W; ++r) {
    auto kr = to_double(ks[r]), vr = to_double(vs[r]);
    kf.insert(kf.end(), kr.begin(), kr.end());
    vf.insert(vf.end(), vr.begin(), vr.end());
  }
  pkt::reference_head(qf.data(), kf.data(), vf.data(), sq, sk, d, false, scale, want_o.data(), want_lse.data());
  pkt::expect(ctx, "gathered_attention o", o.download(), [&](long long i) { return want_o[i]; },
              [&](long long i) { return 2e-2 + 2e-2 * std::fabs(want_o[i]); });
  pkt::expect(ctx, "gathered_attention lse", lse.download(), [&](long long i) { return want_lse[i]; },
              [](long long) { return 1e-3; });
  PKT_OK(ctx.exchange().barrier());
}

// reduce_gemm_gather: a = sum over ranks of x; c = a b^T with this rank's b; y = [c_0 .. c_W-1].
void reduce_gemm_gather(pk::Context& ctx) {
  const int W = ctx.world(), me = ctx.rank();
  const long long M = 300, N = 264, K = 192;
  auto xs = pkt::inputs<bf16>(W, M * K, 41), bs = pkt::inputs<bf16>(W, N * K, 42);
  SymArg<bf16> x(ctx, {M, K}, &xs[me]), a(ctx, {M, K}, nullptr), c(ctx, {M, N}, nullptr),
      y(ctx, {M, W * N}, nullptr);
  pkt::DevLocal<bf16> b({N, K}, bs[me]);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  PKT_OK(g_kernels.at("reduce_gemm_gather").launch(ctx, ctx.stream(), x.view, a.view, b.view(), c.view, y.view));
  PKT_CUDA(cudaStreamSynchronize(ctx.stream()));
  PKT_OK(ctx.check_errors());
  // a in bf16 (the sum rounded once); the products from the a every rank computed alike.
  const std::vector<bf16> got_a = a.download();
  pkt::expect(ctx, "reduce_gemm_gather a", got_a, [&](long long i) {
    double s = 0;
    for (int r = 0; r < W; ++r) s += pkt::to_f(xs[r][i]);
    return s;
  }, [&](long long i) {
    double s = 0;
    for (int r = 0; r < W; ++r) s += std::fabs(pkt::to_f(xs[r][i]));
    return 1e-2 * s;
  });
  auto product = [&](int r, long long m, long long n) {
    double s = 0;
    for (long long kk = 0; kk < K; ++kk) s += double(pkt::to_f(got_a[m * K + kk])) * pkt::to_f(bs[r][n * K + kk]);
    return s;
  };
  const auto tol = [&](double want) { return 1e-2 * std::fabs(want) + 0.5; };
  pkt::expect(ctx, "reduce_gemm_gather c", c.download(), [&](long long i) { return product(me, i / N, i % N); },
              [&](long long i) { return tol(product(me, i / N, i % N)); });
  pkt::expect(ctx, "reduce_gemm_gather y", y.download(), [&](long long i) {
    const long long m = i / (W * N), r = (i % (W * N)) / N, n = i % N;
    return product(int(r), m, n);
  }, [&](long long i) {
    const long long m = i / (W * N), r = (i % (W * N)) / N, n = i % N;
    return tol(product(int(r), m, n));
  });
  PKT_OK(ctx.exchange().barrier());
}

// iterate: a host loop of launches; each trip x = scale * (sum over ranks of x) + trip.
void iterate(pk::Context& ctx, long long n, long long steps) {
  const int W = ctx.world(), me = ctx.rank();
  auto xs = pkt::inputs<float>(W, n, 51);
  SymArg<float> x(ctx, {n}, &xs[me]), y(ctx, {n}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  const float scale = 0.5f;
  PKT_OK(g_kernels.at("iterate").launch(ctx, ctx.stream(), x.view, y.view, steps, scale));
  PKT_CUDA(cudaStreamSynchronize(ctx.stream()));
  PKT_OK(ctx.check_errors());
  std::vector<double> want_x(n), want_y(n);
  for (long long i = 0; i < n; ++i) {
    std::vector<double> v(W);
    for (int r = 0; r < W; ++r) v[r] = xs[r][i];
    for (long long s = 0; s < steps; ++s) {
      double sum = 0;
      for (int r = 0; r < W; ++r) sum += v[r];
      want_y[i] = sum;
      for (int r = 0; r < W; ++r) v[r] = sum * scale + double(s);
    }
    want_x[i] = v[me];
  }
  const std::string at = " n=" + std::to_string(n) + " steps=" + std::to_string(steps);
  pkt::expect(ctx, ("iterate x" + at).c_str(), x.download(), [&](long long i) { return want_x[i]; },
              [&](long long i) { return 1e-5 * (1 + std::fabs(want_x[i])); });
  if (steps > 0)
    pkt::expect(ctx, ("iterate y" + at).c_str(), y.download(), [&](long long i) { return want_y[i]; },
                [&](long long i) { return 1e-5 * (1 + std::fabs(want_y[i])); });
  PKT_OK(ctx.exchange().barrier());
}

// iterate_nested: nested host loops; each inner trip x = scale * (sum over ranks of x) +
// 10 * outer + inner.
void iterate_nested(pk::Context& ctx, long long n, long long outer, long long inner) {
  const int W = ctx.world(), me = ctx.rank();
  auto xs = pkt::inputs<float>(W, n, 53);
  SymArg<float> x(ctx, {n}, &xs[me]), y(ctx, {n}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  const float scale = 0.25f;
  PKT_OK(g_kernels.at("iterate_nested").launch(ctx, ctx.stream(), x.view, y.view, outer, inner, scale));
  PKT_CUDA(cudaStreamSynchronize(ctx.stream()));
  PKT_OK(ctx.check_errors());
  std::vector<double> want_x(n);
  for (long long i = 0; i < n; ++i) {
    std::vector<double> v(W);
    for (int r = 0; r < W; ++r) v[r] = xs[r][i];
    for (long long s = 0; s < outer; ++s)
      for (long long t = 0; t < inner; ++t) {
        double sum = 0;
        for (int r = 0; r < W; ++r) sum += v[r];
        for (int r = 0; r < W; ++r) v[r] = sum * scale + double(s * 10 + t);
      }
    want_x[i] = v[me];
  }
  const std::string at = " n=" + std::to_string(n) + " " + std::to_string(outer) + "x" + std::to_string(inner);
  pkt::expect(ctx, ("iterate_nested x" + at).c_str(), x.download(), [&](long long i) { return want_x[i]; },
              [&](long long i) { return 1e-5 * (1 + std::fabs(want_x[i])); });
  PKT_OK(ctx.exchange().barrier());
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  const std::vector<std::string> ulysses_kernels = {"ulysses_attention_d64", "ulysses_attention_d128",
                                                    "ulysses_attention_causal_d64", "ulysses_attention_causal_d128"};
  const std::vector<std::string> ring_kernels = {"ring_attention_d64", "ring_attention_d128",
                                                 "ring_attention_causal_d64", "ring_attention_causal_d128"};
  if (!compile(PK_SPECS "/ulysses_attention.pk.cpp", ulysses_kernels) ||
      !compile(PK_SPECS "/ring_attention.pk.cpp", ring_kernels) ||
      !compile(PK_LAUNCHES_SPEC, {"gathered_attention", "reduce_gemm_gather", "iterate", "iterate_nested"}))
    return pkt::finish("launches_test");
  for (int world : pkt::test_worlds(/*with_one=*/true)) {
    pkt::announce_world("launches_test", world);
    pkt::run_ranks(world, [](pk::Context& ctx) {
      for (auto& [name, k] : g_kernels) PKT_OK(k.load(ctx));
      PKT_OK(ctx.exchange().barrier());
      ulysses(ctx, 128, false, 100);
      ulysses(ctx, 128, true, 100);
      ulysses(ctx, 64, false, 64);
      ulysses(ctx, 64, true, 130);
      ring(ctx, 128, false, 100);
      ring(ctx, 128, true, 130);
      ring(ctx, 64, false, 64);
      ring(ctx, 64, true, 200);
      ring(ctx, 128, true, 1000);  // several query tiles: later tiles see earlier ones' keys
      gathered(ctx);
      reduce_gemm_gather(ctx);
      iterate(ctx, 1000, 3);
      iterate(ctx, 100003, 2);
      iterate(ctx, 5, 0);  // no trip: x keeps its values, y stays poisoned (not checked)
      iterate_nested(ctx, 1000, 2, 3);
      iterate_nested(ctx, 777, 3, 0);  // no inner trip: x keeps its values
    });
  }
  return pkt::finish("launches_test");
}
