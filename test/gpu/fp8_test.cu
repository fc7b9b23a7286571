// fp8 tiles (test/specs/fp8.pk.cpp) on one GPU against a float64 host model of OCP E4M3 / E5M2
// (tile_test_util.h): conversions bit for bit, including ties, subnormals, saturation and NaN,
// on shapes whose rows are whole 8-byte runs and shapes whose rows are not; a per-block
// quantisation of bf16 and its inverse; and fp8 operands of mma and mma_t. Outputs are poisoned first (0xff is an fp8 NaN).
#include PK_FP8_CU
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pkt::DevTensor;

constexpr int kGrid = 132;

void sync() { PKT_CUDA(cudaDeviceSynchronize()); }

// Bits of every element of `got` against `want` (NaNs of any payload match each other).
template <class T>
void expect_fp8(const char* what, const DevTensor<T>& out, const std::vector<unsigned char>& want,
                pkt::Fp8Format f) {
  const auto got = out.download();
  long long bad = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool nan = std::isnan(pkt::fp8_decode(got[i].bits, f)) && std::isnan(pkt::fp8_decode(want[i], f));
    if (got[i].bits != want[i] && !nan) bad++, first = first < 0 ? static_cast<long long>(i) : first;
  }
  PKT_CHECK(bad == 0, std::string(what) + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) +
                          " wrong, first at " + std::to_string(first) +
                          (first >= 0 ? " got 0x" + std::to_string(got[first].bits) + " want 0x" +
                                            std::to_string(want[first])
                                      : std::string()));
}

void round_trip_test(long long M, long long N) {
  DevTensor<float> x({M, N}, 1);
  std::mt19937 g(2);
  std::uniform_real_distribution<float> mag(-14.f, 17.f), unit(1.f, 2.f);
  for (auto& v : x.host) v = (g() & 1 ? -1.f : 1.f) * std::ldexp(unit(g), static_cast<int>(mag(g)));
  const float special[] = {0.f, -0.f, 448.f, 449.f, 464.f, 480.f, 1e6f, -1e6f, NAN, INFINITY, -INFINITY,
                           0x1p-9f, 0x1p-10f, 0x3p-11f, 1.0625f, 1.1875f, 57344.f, 61440.f, 1e-8f, 0x1p-16f,
                           0x1p-17f, 0x3p-18f, 1.125f, 1.375f};
  for (size_t i = 0; i < sizeof special / sizeof *special; ++i) x.host[(i * 37) % x.host.size()] = special[i];
  x.upload();
  DevTensor<pk::f8e4m3> q({M, N}, 0, true);
  DevTensor<pk::f8e5m2> r({M, N}, 0, true);
  DevTensor<float> y({M, N}, 0, true);
  PKT_LAUNCH(fp8_round_trip, kGrid)(pk::LaunchContext{}, x.view(), q.view(), r.view(), y.view());
  sync();
  std::vector<unsigned char> wq(x.host.size()), wr(x.host.size());
  for (size_t i = 0; i < x.host.size(); ++i)
    wq[i] = pkt::fp8_encode(x.host[i], pkt::kE4M3), wr[i] = pkt::fp8_encode(x.host[i], pkt::kE5M2);
  const std::string at = " " + std::to_string(M) + "x" + std::to_string(N);
  expect_fp8(("fp8_round_trip e4m3" + at).c_str(), q, wq, pkt::kE4M3);
  expect_fp8(("fp8_round_trip e5m2" + at).c_str(), r, wr, pkt::kE5M2);
  const auto got = y.download();
  long long bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const float want = static_cast<float>(pkt::fp8_decode(wq[i], pkt::kE4M3)) - static_cast<float>(pkt::fp8_decode(wr[i], pkt::kE5M2));
    bad += !(got[i] == want || (std::isnan(got[i]) && std::isnan(want)));
  }
  PKT_CHECK(bad == 0, "fp8_round_trip y" + at + ": " + std::to_string(bad) + " wrong");
}

void quantise_test(long long M, long long N) {
  const long long B = (N + 127) / 128;
  DevTensor<bf16> x({M, N}, 3);
  for (long long i = 0; i < M * N; i += 97) x.host[i] = pkt::from_f<bf16>(x.at(i) * 300.f);  // outliers per block
  x.upload();
  DevTensor<pk::f8e4m3> q({M, N}, 0, true);
  DevTensor<float> s({M, B}, 0, true);
  DevTensor<bf16> y({M, N}, 0, true);
  PKT_LAUNCH(fp8_quantise, kGrid)(pk::LaunchContext{}, x.view(), q.view(), s.view());
  sync();
  PKT_LAUNCH(fp8_dequantise, kGrid)(pk::LaunchContext{}, q.view(), s.view(), y.view());
  sync();
  std::vector<float> xf(M * N);
  for (long long i = 0; i < M * N; ++i) xf[i] = static_cast<float>(x.at(i));
  const pkt::Quantised want = pkt::quantise_blocks(xf, M, N);
  const std::string at = " " + std::to_string(M) + "x" + std::to_string(N);
  expect_fp8(("fp8_quantise q" + at).c_str(), q, want.q, pkt::kE4M3);
  pkt::expect(("fp8_quantise s" + at).c_str(), s, [&](long long i) { return double(want.amax[i] * 0.002232142857f); }, 0, 0);
  pkt::expect(("fp8_dequantise" + at).c_str(), y, [&](long long i) {
    return double(pkt::to_f(pkt::from_f<bf16>(want.value(i))));
  }, 0, 0);
  // And the round trip stays within e4m3's precision of the input: half a step (2^-4 relative)
  // and bf16's rounding (2^-9) for normal values; below e4m3's smallest normal (2^-6 of the
  // scaled block) half a subnormal step, 2^-10 scaled back by amax / 448.
  const auto got = y.download();
  long long bad = 0;
  for (long long i = 0; i < M * N; ++i) {
    const double a = want.amax[(i / N) * B + (i % N) / 128], err = std::fabs(pkt::to_f(got[i]) - x.at(i));
    bad += !(err <= 0.0645 * std::fabs(x.at(i)) + 0x1p-10 * a / 448 * 1.01);
  }
  PKT_CHECK(bad == 0, "fp8 quantise round trip" + at + ": " + std::to_string(bad) + " of " + std::to_string(M * N) + " too far from x");
}

// c = a b and ct = a bt^T with fp8 operands: every product of two fp8 values is exact in f32, so
// the float64 sum of the decoded operands is the reference within f32 summation's rounding.
void mma_test(long long M, long long N, long long K) {
  DevTensor<pk::f8e4m3> a({M, K}, 4);
  DevTensor<pk::f8e5m2> b({K, N}, 5), bt({N, K}, 6);
  DevTensor<float> c({M, N}, 0, true), ct({M, N}, 0, true);
  PKT_LAUNCH(fp8_mma, kGrid)(pk::LaunchContext{}, a.view(), b.view(), bt.view(), c.view(), ct.view());
  sync();
  const std::string at = " " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  for (bool transposed : {false, true}) {
    std::vector<double> want(M * N), mag(M * N);
    for (long long i = 0; i < M; ++i)
      for (long long j = 0; j < N; ++j)
        for (long long k = 0; k < K; ++k) {
          const double p = a.at(i * K + k) * (transposed ? bt.at(j * K + k) : b.at(k * N + j));
          want[i * N + j] += p, mag[i * N + j] += std::fabs(p);
        }
    const auto got = (transposed ? ct : c).download();
    long long bad = 0;
    for (long long i = 0; i < M * N; ++i) bad += !(std::fabs(got[i] - want[i]) <= mag[i] * 1e-6);
    PKT_CHECK(bad == 0, std::string(transposed ? "fp8 mma_t" : "fp8 mma") + at + ": " + std::to_string(bad) + " wrong");
  }
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  round_trip_test(70, 200);  // rows of whole runs; a clipped last column tile
  round_trip_test(33, 129);  // rows that are not whole runs: element by element
  quantise_test(50, 384);
  quantise_test(20, 200);
  mma_test(70, 50, 100);  // tails in every dimension of the 32 x 32 tiles and K chunks

  if (cudaGetLastError() != cudaSuccess) pkt::fail("a launch failed");
  return pkt::finish("fp8_test");
}
