// The GEMM template's variants from user-written specs (test/specs/gemm_variants.pk.cpp): each
// kernel compiled through the JIT (pkc at run time, launched from its launch description) on one
// GPU, against a float64 reference with tails in M, N and K and the output poisoned first:
// B stored [K, N] and [N, K], f16, bf16 and fp8 (e4m3 times e5m2), bf16, f16 and f32 output,
// spec tiles other than the template's, and fused
// epilogues (bias row, residual tile, row scales, a float argument, GELU, SiLU, masks by row and
// column index against an integer argument or an extent). Sizes whose
// rows are not whole 16-byte pitches run the kernel's general-path twin, checked the same way.
#include <pk/jit/compile.h>
#include <pk/runtime/context.h>

#include <optional>

#include "tile_test_util.h"

namespace {

using pk::bf16;
using pk::f16;
using pkt::DevTensor;
using pkt::expect;

double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608 * (x + 0.044715 * x * x * x))); }
double silu(double x) { return x / (1 + std::exp(-x)); }

std::optional<pk::jit::Kernel> compile(const char* name) {
  auto text = pk::jit::read_spec(PK_VARIANTS_SPEC);
  pk::jit::Options options;
  options.kernel = name;
  auto k = text.is_ok() ? pk::jit::compile_spec(PK_VARIANTS_SPEC, *text, options, pk::jit::pkc_frontend(PK_PKC))
                        : pk::Result<pk::jit::Kernel>(text.status());
  if (!k.is_ok()) return pkt::fail(std::string("compile ") + name + ": " + k.status().message()), std::nullopt;
  PKT_CHECK(!k->info().tmpl.kernel.empty(), std::string(name) + " did not take the GEMM template");
  return std::move(*k);
}

// sum over k of A[r, k] * B (B[k, col] when stored [K, N], B[col, k] when [N, K]).
template <class TA, class TB>
double dot(const DevTensor<TA>& a, const DevTensor<TB>& b, bool b_kn, long long r, long long col,
           long long N, long long K) {
  double sum = 0;
  for (long long k = 0; k < K; ++k) sum += a.at(r * K + k) * (b_kn ? b.at(k * N + col) : b.at(col * K + k));
  return sum;
}

constexpr long long M = 300, N = 264, K = 200;  // tails past 128, 256 and 64
constexpr double kRel = 1.0 / 128;              // bf16 / f16 output rounding, and then some

void run(pk::Context& ctx, cudaStream_t s) {
  {
    auto k = compile("gemm_bias_gelu");
    if (!k) return;
    DevTensor<bf16> a({M, K}, 1), b({K, N}, 2), bias({1, N}, 3), c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), bias.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_bias_gelu", c, [&](long long i) {
      return gelu_tanh(dot(a, b, true, i / N, i % N, N, K) + bias.at(i % N));
    }, 1e-3 * std::sqrt(double(K)), kRel);
    // B [K, N] with N % 8 != 0: its rows are not whole TMA pitches, so the launch runs the
    // general-path twin.
    const long long N2 = N - 4;
    DevTensor<bf16> odd({K, N2}, 4), c2({M, N2}, 0, true), bias2({1, N2}, 5);
    PKT_OK(k->launch(ctx, s, a.view(), odd.view(), bias2.view(), c2.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_bias_gelu N = 260 (general-path twin)", c2, [&](long long i) {
      return gelu_tanh(dot(a, odd, true, i / N2, i % N2, N2, K) + bias2.at(i % N2));
    }, 1e-3 * std::sqrt(double(K)), kRel);
  }
  {
    auto k = compile("gemm_vectors_1d");
    if (!k) return;
    DevTensor<bf16> a({M, K}, 21), b({K, N}, 22), bias({N}, 23), c({M, N}, 0, true);
    DevTensor<float> scale({M}, 24);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), bias.view(), scale.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_vectors_1d", c, [&](long long i) {
      return (dot(a, b, true, i / N, i % N, N, K) + bias.at(i % N)) * scale.at(i / N);
    }, 1e-3 * std::sqrt(double(K)), kRel);
  }
  {
    // f32 output with N = 260: an f32 row of 260 is a whole 16-byte pitch (a bf16 one is not).
    auto k = compile("gemm_f32_out");
    if (!k) return;
    constexpr long long N4 = N - 4;
    DevTensor<bf16> a({M, K}, 25), b({N4, K}, 26);
    DevTensor<float> c({M, N4}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_f32_out", c, [&](long long i) { return dot(a, b, false, i / N4, i % N4, N4, K); },
           1e-4 * std::sqrt(double(K)), 1e-5);
    // N = 258 and K = 45: f32 rows and bf16 rows that are not whole 16-byte pitches; the
    // general-path twin runs.
    const long long N5 = N4 - 2, K5 = 45;
    DevTensor<bf16> a5({M, K5}, 27), b5({N5, K5}, 28);
    DevTensor<float> c5({M, N5}, 0, true);
    PKT_OK(k->launch(ctx, s, a5.view(), b5.view(), c5.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_f32_out N = 258, K = 45 (general-path twin)", c5,
           [&](long long i) { return dot(a5, b5, false, i / N5, i % N5, N5, K5); }, 1e-4 * std::sqrt(double(K5)), 1e-5);
  }
  {
    auto k = compile("gemm_f32_ab_bias_relu");
    if (!k) return;
    DevTensor<f16> a({M, K}, 28), b({K, N}, 29);
    DevTensor<float> bias({N}, 30), c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), bias.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_f32_ab_bias_relu", c, [&](long long i) {
      return std::max(dot(a, b, true, i / N, i % N, N, K) + bias.at(i % N), 0.0);
    }, 1e-4 * std::sqrt(double(K)), 1e-5);
  }
  {  // masked logits past an integer argument (the template's epilogue reads it as a field)
    auto k = compile("gemm_t_vocab_mask");
    if (!k) return;
    const long long vocab = N - 20;
    DevTensor<bf16> a({M, K}, 31), b({N, K}, 32), c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), c.view(), vocab));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_t_vocab_mask", c, [&](long long i) {
      return i % N < vocab ? dot(a, b, false, i / N, i % N, N, K) : -1e4;
    }, 1e-3 * std::sqrt(double(K)), kRel);
  }
  {  // masks by row and column index, and by an extent the host computes (b.cols() - 3)
    auto k = compile("gemm_ab_tril_f32");
    if (!k) return;
    DevTensor<bf16> a({M, K}, 33), b({K, N}, 34);
    DevTensor<float> c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_ab_tril_f32", c, [&](long long i) {
      const long long r = i / N, col = i % N;
      return col <= r && col < N - 3 ? dot(a, b, true, r, col, N, K) : 0.0;
    }, 1e-4 * std::sqrt(double(K)), 1e-5);
  }
  {
    auto k = compile("gemm_residual");
    if (!k) return;
    DevTensor<bf16> a({M, K}, 6), b({N, K}, 7), r({M, N}, 8), c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), r.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_residual", c, [&](long long i) { return dot(a, b, false, i / N, i % N, N, K) + r.at(i); },
           1e-3 * std::sqrt(double(K)), kRel);
  }
  {
    auto k = compile("gemm_ab");
    if (!k) return;
    DevTensor<bf16> a({M, K}, 9), b({K, N}, 10), c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_ab", c, [&](long long i) { return dot(a, b, true, i / N, i % N, N, K); },
           1e-3 * std::sqrt(double(K)), kRel);
  }
  {
    auto k = compile("gemm_f16");
    if (!k) return;
    DevTensor<f16> a({M, K}, 11), b({N, K}, 12), c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_f16", c, [&](long long i) { return dot(a, b, false, i / N, i % N, N, K); },
           1e-3 * std::sqrt(double(K)), 1.0 / 1024);
  }
  {
    auto k = compile("gemm_relu_consts");
    if (!k) return;
    DevTensor<bf16> a({M, K}, 21), b({K, N}, 22), c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_relu_consts", c, [&](long long i) {
      return std::max(2.0 * dot(a, b, true, i / N, i % N, N, K) - 1.0, 0.0);
    }, 2e-3 * std::sqrt(double(K)), kRel);
  }
  {
    auto k = compile("gemm_f16_ab");
    if (!k) return;
    DevTensor<f16> a({M, K}, 13), b({K, N}, 14), c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_f16_ab", c, [&](long long i) { return dot(a, b, true, i / N, i % N, N, K); },
           1e-3 * std::sqrt(double(K)), 1.0 / 1024);
  }
  {
    auto k = compile("gemm_f16_ab_scaled_silu");
    if (!k) return;
    const float alpha = 0.375f;
    DevTensor<f16> a({M, K}, 15), b({K, N}, 16);
    DevTensor<float> sc({M, 1}, 17);
    DevTensor<bf16> c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), sc.view(), c.view(), alpha));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_f16_ab_scaled_silu", c, [&](long long i) {
      return silu(dot(a, b, true, i / N, i % N, N, K) * alpha * sc.at(i / N));
    }, 1e-3 * std::sqrt(double(K)), kRel);
  }
  {
    auto k = compile("gemm_t_bias_gelu");
    if (!k) return;
    DevTensor<bf16> a({M, K}, 18), b({N, K}, 19), bias({1, N}, 20), c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), bias.view(), c.view()));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_t_bias_gelu", c, [&](long long i) {
      return gelu_tanh(dot(a, b, false, i / N, i % N, N, K) + bias.at(i % N));
    }, 1e-3 * std::sqrt(double(K)), kRel);
  }
  {
    // fp8 wgmma: K = 208 is a tail past the 128-element step; products of fp8 are exact in f32.
    auto k = compile("gemm_fp8_scaled");
    if (!k) return;
    const long long K8 = 208;
    DevTensor<pk::f8e4m3> a({M, K8}, 21);
    DevTensor<pk::f8e5m2> b({N, K8}, 22);
    DevTensor<bf16> c({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a.view(), b.view(), c.view(), 0.5f));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_fp8_scaled", c, [&](long long i) { return 0.5 * dot(a, b, false, i / N, i % N, N, K8); },
           1e-3 * std::sqrt(double(K8)), kRel);
    // fp8 rows of K % 16 != 0 elements are not whole 16-byte TMA pitches: the twin runs.
    const long long K9 = K8 - 8;
    DevTensor<pk::f8e4m3> a2({M, K9}, 23);
    DevTensor<pk::f8e5m2> b2({N, K9}, 24);
    DevTensor<bf16> c9({M, N}, 0, true);
    PKT_OK(k->launch(ctx, s, a2.view(), b2.view(), c9.view(), 0.5f));
    PKT_CUDA(cudaStreamSynchronize(s));
    expect("gemm_fp8_scaled K = 200 (general-path twin)", c9,
           [&](long long i) { return 0.5 * dot(a2, b2, false, i / N, i % N, N, K9); }, 1e-3 * std::sqrt(double(K9)), kRel);
  }
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  auto ex = pk::create_single_process_exchanges(1);
  PKT_OK(ex.is_ok() ? pk::Status::ok() : ex.status());
  auto ctx = pk::Context::create(*(*ex)[0]);
  PKT_OK(ctx.is_ok() ? pk::Status::ok() : ctx.status());
  if (ctx.is_ok()) run(**ctx, (*ctx)->stream());
  return pkt::finish("gemm_variants_test");
}
