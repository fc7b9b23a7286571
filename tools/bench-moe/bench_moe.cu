// pk-bench-moe: the shipped MoE dispatch and combine specs (templates/specs/moe_*.pk.cpp),
// JIT-compiled, at world size 1 on one GPU: the local work of each (placing, copying and
// summing rows) against the device-to-device copy (cudaMemcpyAsync) measured in the same run.
// Tokens [T, H] bf16 with K distinct random experts each out of E. GB/s counts the bytes each
// kernel must move once: dispatch reads the tokens and writes T K rows; combine reads T K rows
// and writes the tokens (index and weight bytes are counted too). Each pair alternates batches
// of 20 launches (median of 7 each, after 5 warm-ups); the fraction of pkc's roofline bound is
// printed too (`pkc --roofline`; rows moved by index count no compulsory bytes, so it is
// loose). Before timing, dispatch's rows are checked at every 7th choice's slot and combine's
// output on sampled tokens against a float64 reference. Writes a Markdown table to argv[1]
// (and stdout); argv[2] and argv[3] may name variant specs and argv[4] a block size
// (--tile-threads). Two GPUs: the same kernels, as the two-GPU round runs them, move the rows
// over NVLink instead.
#include <pk/jit/compile.h>
#include "bf16_host.h"
#include "one_gpu.h"
#include "paired_timing.h"
#include "roofline_bound.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using pk_bench::from_bf16;
using pk_bench::to_bf16;

template <class T> T* device(const std::vector<T>& host) {
  T* p = nullptr;
  cudaMalloc(&p, host.size() * sizeof(T));
  cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}

template <class T> pk::Tensor<T> tensor(void* p, long long rows, long long cols) {
  return pk::Tensor<T>{static_cast<T*>(p), {rows, cols, 1, 1}, rows * cols};
}

}  // namespace

int main(int argc, char** argv) {
  pk_bench::OneGpu gpu = pk_bench::one_gpu();
  pk::Context* ctx = gpu.ctx.get();
  cudaStream_t s = ctx->stream();
  const long long T = 8192, H = 7168, K = 8, E = 64;  // DeepSeek-V3's hidden size and top-k
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  std::vector<unsigned short> x(T * H);
  for (auto& v : x) v = to_bf16(u(gen));
  std::vector<int> ids(T * K);
  std::vector<float> weights(T * K);
  for (long long t = 0; t < T; ++t) {
    std::vector<int> experts(E);
    for (int e = 0; e < E; ++e) experts[e] = e;
    std::shuffle(experts.begin(), experts.end(), gen);
    for (long long k = 0; k < K; ++k) ids[t * K + k] = experts[k], weights[t * K + k] = 0.5f + 0.1f * float(k);
  }
  auto* x_d = device(x);
  auto* ids_d = device(ids);
  auto* w_d = device(weights);
  int* slot_d = nullptr;
  unsigned short *out_d = nullptr, *copy_d = nullptr;
  cudaMalloc(&slot_d, T * K * sizeof(int));
  cudaMalloc(&out_d, T * H * 2);
  cudaMalloc(&copy_d, T * K * H * 2);
  auto fill = ctx->allocate(E * sizeof(int)), counts = ctx->allocate(E * sizeof(int)),
       recv = ctx->allocate(E * T * H * 2);
  if (!fill.is_ok() || !counts.is_ok() || !recv.is_ok()) return std::fprintf(stderr, "allocation failed\n"), 1;
  auto fill_v = fill->sym_tensor<int>({E});
  auto counts_v = counts->sym_tensor<int>({E});
  auto recv_v = recv->sym_tensor<pk::bf16>({E * T, H});
  const auto X = tensor<pk::bf16>(x_d, T, H), OUT = tensor<pk::bf16>(out_d, T, H);
  const auto IDS = tensor<int>(ids_d, T, K), SLOT = tensor<int>(slot_d, T, K);
  const auto WTS = tensor<float>(w_d, T, K);

  pk::jit::Options od, oc;
  od.kernel = "moe_dispatch";
  oc.kernel = "moe_combine";
  if (argc > 4) od.tile_threads = oc.tile_threads = std::atoi(argv[4]);  // --tile-threads for both
  // argv[2] and argv[3] may name other dispatch and combine specs (variants of the shipped ones).
  const std::string dpath = argc > 2 ? argv[2] : PK_MOE_DISPATCH_SPEC, cpath = argc > 3 ? argv[3] : PK_MOE_COMBINE_SPEC;
  auto dtext = pk::jit::read_spec(dpath), ctext = pk::jit::read_spec(cpath);
  if (!dtext.is_ok() || !ctext.is_ok()) return std::fprintf(stderr, "cannot read the specs\n"), 1;
  auto dispatch = pk::jit::compile_spec(dpath, *dtext, od, pk::jit::pkc_frontend(PK_PKC));
  auto combine = pk::jit::compile_spec(cpath, *ctext, oc, pk::jit::pkc_frontend(PK_PKC));
  if (!dispatch.is_ok() || !combine.is_ok())
    return std::fprintf(stderr, "compile: %s%s\n", dispatch.is_ok() ? "" : dispatch.status().message().c_str(),
                        combine.is_ok() ? "" : combine.status().message().c_str()),
           1;
  pk::Status st;
  std::function<void()> run_dispatch = [&] { (void)(st = dispatch->launch(*ctx, s, X, IDS, *fill_v, SLOT, *recv_v, *counts_v)); };
  std::function<void()> run_combine = [&] { (void)(st = combine->launch(*ctx, s, *recv_v, IDS, WTS, SLOT, OUT, E)); };

  // Correctness first: every (token, choice) row at its slot, then sampled combined tokens.
  cudaMemsetAsync(recv->local(), 0xff, E * T * H * 2, s);
  cudaMemsetAsync(out_d, 0xff, T * H * 2, s);
  run_dispatch();
  run_combine();
  cudaStreamSynchronize(s);
  int failures = !st.is_ok();
  std::vector<int> slot(T * K);
  std::vector<unsigned short> row(H), out(T * H);
  cudaMemcpy(slot.data(), slot_d, slot.size() * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(out.data(), out_d, out.size() * 2, cudaMemcpyDeviceToHost);
  long long bad_rows = 0, bad_tokens = 0;
  for (long long i = 0; i < T * K; i += 7) {  // every 7th choice, rows compared bit for bit
    cudaMemcpy(row.data(), static_cast<unsigned short*>(recv->local()) + slot[i] * H, H * 2, cudaMemcpyDeviceToHost);
    bad_rows += slot[i] < 0 || std::memcmp(row.data(), x.data() + (i / K) * H, H * 2) != 0;
  }
  for (long long t : {0LL, 1LL, 777LL, T / 2, T - 1}) {
    double wsum = 0;
    for (long long k = 0; k < K; ++k) wsum += weights[t * K + k];
    for (long long h = 0; h < H; ++h) {
      const double want = from_bf16(x[t * H + h]) * wsum, got = from_bf16(out[t * H + h]);
      if (!(std::fabs(got - want) <= 1e-2 + std::fabs(want) / 128)) {
        ++bad_tokens;
        break;
      }
    }
  }
  failures += bad_rows > 0 || bad_tokens > 0;

  const double row_bytes = 2.0 * H, index_bytes = 4.0 * T * K;
  const double dispatch_bytes = T * row_bytes + T * K * row_bytes + 2 * index_bytes;  // + ids, slot
  const double combine_bytes = T * K * row_bytes + T * row_bytes + 3 * index_bytes;    // + ids, slot, weights
  auto copy = [&] { cudaMemcpyAsync(copy_d, recv->local(), T * K * H * 2, cudaMemcpyDeviceToDevice, s); };
  std::string table =
      "| kernel | T x H, K of E | pkc us | GB/s | copy (cudaMemcpyAsync) GB/s | pkc / copy | pkc of roofline bound | checked wrong |\n"
      "|---|---|---|---|---|---|---|---|\n";
  // The sizes of each kernel's tensor arguments, in the specs' order, for pkc --roofline.
  auto dims = [](long long a, long long b) { return std::to_string(a) + "x" + std::to_string(b); };
  const std::string rows = dims(E * T, H), tokens = dims(T, H), choices = dims(T, K);
  const std::string shapes[2] = {
      "0:" + tokens + ",1:" + choices + ",2:" + std::to_string(E) + ",3:" + choices + ",4:" + rows + ",5:" +
          std::to_string(E),
      "0:" + rows + ",1:" + choices + ",2:" + choices + ",3:" + choices + ",4:" + tokens};
  int beaten = 0;
  const std::string shape = std::to_string(T) + " x " + std::to_string(H) + ", " + std::to_string(K) + " of " +
                            std::to_string(E);
  for (int which = 0; which < 2; ++which) {
    const auto [pk_us, copy_us] = pk_bench::paired_median_us(which == 0 ? run_dispatch : run_combine, copy, s);
    const double gbs = (which == 0 ? dispatch_bytes : combine_bytes) / (pk_us * 1e3);
    const double copy_gbs = 2.0 * T * K * H * 2 / (copy_us * 1e3);
    const std::string bound = pk_bench::fraction_of_bound(
        pk_bench::roofline_us(PK_PKC, which == 0 ? dpath : cpath, which == 0 ? "moe_dispatch" : "moe_combine",
                              shapes[which]),
        pk_us, &beaten);
    char line[360];
    std::snprintf(line, sizeof line, "| %s | %s | %.1f | %.0f | %.0f | %.3f | %s | %lld |\n",
                  which == 0 ? "moe_dispatch" : "moe_combine", shape.c_str(), pk_us, gbs, copy_gbs,
                  gbs / copy_gbs, bound.c_str(), which == 0 ? bad_rows : bad_tokens);
    table += line;
    std::fputs(line, stdout);
  }
  failures += !st.is_ok() || beaten > 0;
  if (argc > 1)
    if (FILE* f = std::fopen(argv[1], "w")) std::fputs(table.c_str(), f), std::fclose(f);
  return failures ? 1 : 0;
}
