// Kernels of the sixth user-written spec set (test/specs/user_specs6.pk.cpp) that are run through
// the JIT rather than from the emitted CUDA: the causal attention whose two masks are nested
// selects (it must take the Hopper attention template, specs6_findings.md finding 3; lengths that
// are not multiples of the template's 192 query rows, one head and several), and the Jacobi
// smoothing loop as the host loop of launches the JIT issues from its `// pk-sequence` line
// (user_specs6_test drives that loop by hand). Against float64 references.
#include <pk/jit/compile.h>

#include <map>

#include "attention_reference.h"
#include "sym_test_util.h"

namespace {

std::map<std::string, pk::jit::Kernel> g_kernels;

bool compile(const std::vector<std::string>& names) {
  auto text = pk::jit::read_spec(PK_USER_SPECS6_SPEC);
  if (!text.is_ok()) return pkt::fail(std::string("read the spec: ") + text.status().message()), false;
  for (const std::string& name : names) {
    pk::jit::Options options;
    options.kernel = name;
    auto k = pk::jit::compile_spec(PK_USER_SPECS6_SPEC, *text, options, pk::jit::pkc_frontend(PK_PKC));
    if (!k.is_ok()) return pkt::fail("compile " + name + ": " + k.status().message()), false;
    g_kernels.emplace(name, std::move(*k));
  }
  return true;
}

void jacobi(pk::Context& ctx, cudaStream_t s, long long M, long long N, long long steps) {
  auto xs = pkt::random_data<float>(M * N, 900 + unsigned(M));
  pkt::DevLocal<float> x({M, N}, xs), y({M, N}, {});
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(g_kernels.at("jacobi_steps").launch(ctx, s, x.view(), y.view(), steps));
  PKT_CUDA(cudaStreamSynchronize(s));
  PKT_OK(ctx.check_errors());
  std::vector<double> cur(xs.begin(), xs.end()), nxt(M * N);
  auto at = [&](long long m, long long n) { return m < 0 || m >= M || n < 0 || n >= N ? 0.0 : cur[m * N + n]; };
  for (long long t = 0; t < steps; ++t) {
    for (long long m = 0; m < M; ++m)
      for (long long n = 0; n < N; ++n) nxt[m * N + n] = (at(m, n - 1) + at(m, n + 1) + at(m - 1, n) + at(m + 1, n)) * 0.25;
    cur = nxt;
  }
  const std::string what = "jacobi_steps x " + std::to_string(M) + "x" + std::to_string(N) + " steps " + std::to_string(steps);
  pkt::expect(ctx, what.c_str(), x.download(), [&](long long i) { return cur[i]; }, [](long long) { return 1e-5; });
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile({"attention_heads_causal_nested_d64", "jacobi_steps"})) return pkt::finish("user_specs6_jit_test");
  PKT_CHECK(g_kernels.at("attention_heads_causal_nested_d64").info().tmpl.kernel == "attention_heads_causal_nested_d64",
            "attention_heads_causal_nested_d64 did not take the attention template");
  PKT_CHECK(!g_kernels.at("jacobi_steps").parts().empty(), "jacobi_steps is not a host loop of launches");
  pkt::run_ranks(1, [](pk::Context& ctx) {
    cudaStream_t s;
    PKT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (auto& [name, k] : g_kernels) PKT_OK(k.load(ctx));
    const pk::jit::Kernel& att = g_kernels.at("attention_heads_causal_nested_d64");
    unsigned seed = 910;
    for (auto [heads, n] : {std::pair{3LL, 300LL}, std::pair{1LL, 129LL}, std::pair{5LL, 64LL}, std::pair{2LL, 1000LL}})
      pkt::check_attention(
          "attention_heads_causal_nested_d64",
          [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse, float scale) {
            PKT_OK(att.launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), scale));
            PKT_CUDA(cudaStreamSynchronize(s));
          },
          64, n, n, true, seed += 3, heads);
    jacobi(ctx, s, 37, 100, 3);
    jacobi(ctx, s, 64, 64, 0);
    jacobi(ctx, s, 17, 200, 5);
    PKT_CUDA(cudaStreamDestroy(s));
  });
  return pkt::finish("user_specs6_jit_test");
}
