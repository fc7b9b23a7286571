// pk-bench-tiles: memory-bound kernels written as specs (tools/bench-tiles/specs.pk.cpp: copy,
// add, silu(g) * u, rms_norm, layer_norm, softmax), JIT-compiled onto the general tile path, on a
// 16384 x 8192 bf16 tensor, one GPU, against the device-to-device copy (cudaMemcpyAsync) measured
// in the same run. GB/s counts each tensor read or written once. Each pair alternates batches of
// 20 launches (median of 7 each, after 5 warm-ups). Every kernel's output is first checked on
// sampled rows against a float64 host reference. Writes a Markdown table to argv[1] (and stdout).
// Each kernel runs as pkc compiles it; argv[2], a comma list of settings, runs each instead:
// "0" pkc's choice, "bN" (or plain N) --tile-batch=N, "tN" --tile-threads=N, "sN" --tile-stages=N,
// e.g. "0,t1024,b1,s3".
#include <pk/jit/compile.h>
#include "bf16_host.h"
#include "one_gpu.h"
#include "paired_timing.h"
#include "roofline_bound.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr long long kRows = 16384, kCols = 8192, kElems = kRows * kCols;

using pk_bench::from_bf16;
using pk_bench::to_bf16;


// The reference of one output row (float64 from the bf16 inputs).
using Inputs = std::array<const std::vector<unsigned short>*, 3>;  // the host inputs, not copies
using RowRef = std::function<double(const Inputs&, long long row, long long col)>;

double row_sum(const std::vector<unsigned short>& x, long long row, const std::function<double(double)>& f) {
  double s = 0;
  for (long long c = 0; c < kCols; ++c) s += f(from_bf16(x[row * kCols + c]));
  return s;
}

struct Case {
  const char* kernel;
  int tensors;  // inputs of [kRows, kCols]; the output is one more
  bool weights, bias, norm_args;
  RowRef ref;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> settings = {"0"};
  if (argc > 2) {
    settings.clear();
    std::string item;
    for (std::istringstream list(argv[2]); std::getline(list, item, ',');) settings.push_back(item);
  }
  pk_bench::OneGpu gpu = pk_bench::one_gpu();
  pk::Context* ctx = gpu.ctx.get();  // launches take *ctx
  cudaStream_t s = ctx->stream();
  const float inv_n = 1.f / kCols, eps = 1e-5f;
  const Case cases[] = {
      {"copy", 1, false, false, false, [](auto& in, long long r, long long c) { return from_bf16((*in[0])[r * kCols + c]); }},
      {"copy_3d", 1, false, false, false, [](auto& in, long long r, long long c) { return from_bf16((*in[0])[r * kCols + c]); }},
      // The same bytes through i8 and i32 tiles: every bit copied, so the bf16 check holds.
      {"copy_i8", 1, false, false, false, [](auto& in, long long r, long long c) { return from_bf16((*in[0])[r * kCols + c]); }},
      {"copy_i32", 1, false, false, false, [](auto& in, long long r, long long c) { return from_bf16((*in[0])[r * kCols + c]); }},
      {"add", 2, false, false, false,
       [](auto& in, long long r, long long c) { return from_bf16((*in[0])[r * kCols + c]) + from_bf16((*in[1])[r * kCols + c]); }},
      {"silu_mul", 2, false, false, false, [](auto& in, long long r, long long c) {
         const double g = from_bf16((*in[0])[r * kCols + c]);
         return g / (1 + std::exp(-g)) * from_bf16((*in[1])[r * kCols + c]);
       }},
      {"rms_norm", 1, true, false, true, [&](auto& in, long long r, long long c) {
         const double ms = row_sum(*in[0], r, [](double v) { return v * v; }) / kCols;
         return from_bf16((*in[0])[r * kCols + c]) / std::sqrt(ms + eps) * from_bf16((*in[1])[c]);
       }},
      {"layer_norm", 1, true, true, true, [&](auto& in, long long r, long long c) {
         const double mean = row_sum(*in[0], r, [](double v) { return v; }) / kCols;
         const double var = row_sum(*in[0], r, [&](double v) { return (v - mean) * (v - mean); }) / kCols;
         return (from_bf16((*in[0])[r * kCols + c]) - mean) / std::sqrt(var + eps) * from_bf16((*in[1])[c]) +
                from_bf16((*in[2])[c]);
       }},
      {"softmax", 1, false, false, false, [&](auto& in, long long r, long long c) {
         double mx = -1e300;
         for (long long k = 0; k < kCols; ++k) mx = std::max(mx, from_bf16((*in[0])[r * kCols + k]));
         return std::exp(from_bf16((*in[0])[r * kCols + c]) - mx) /
                row_sum(*in[0], r, [&](double v) { return std::exp(v - mx); });
       }},
  };
  // Inputs: two full tensors, a weight row and a bias row, random in [-2, 2); one output.
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  std::vector<std::vector<unsigned short>> host(4);
  for (int i = 0; i < 4; ++i) {
    host[i].resize(i < 2 ? kElems : kCols);
    for (auto& v : host[i]) v = to_bf16(u(gen));
  }
  unsigned short *x0, *x1, *w, *b, *out;
  cudaMalloc(&x0, kElems * 2);
  cudaMalloc(&x1, kElems * 2);
  cudaMalloc(&w, kCols * 2);
  cudaMalloc(&b, kCols * 2);
  cudaMalloc(&out, kElems * 2);
  cudaMemcpy(x0, host[0].data(), kElems * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(x1, host[1].data(), kElems * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(w, host[2].data(), kCols * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(b, host[3].data(), kCols * 2, cudaMemcpyHostToDevice);
  auto tensor = [](unsigned short* p, long long rows, long long cols) {
    return pk::Tensor<pk::bf16>{reinterpret_cast<pk::bf16*>(p), {rows, cols, 1, 1}, rows * cols};
  };
  // The rank-3 view [rows, 8, cols / 8] of copy_3d.
  const pk::Tensor<pk::bf16> X3{reinterpret_cast<pk::bf16*>(x0), {kRows, 8, kCols / 8, 1}, kElems},
      Y3{reinterpret_cast<pk::bf16*>(out), {kRows, 8, kCols / 8, 1}, kElems};
  // The byte views of copy_i8 and copy_i32.
  const pk::Tensor<signed char> X8{reinterpret_cast<signed char*>(x0), {kRows, 2 * kCols, 1, 1}, 2 * kElems},
      Y8{reinterpret_cast<signed char*>(out), {kRows, 2 * kCols, 1, 1}, 2 * kElems};
  const pk::Tensor<int> X32{reinterpret_cast<int*>(x0), {kRows, kCols / 2, 1, 1}, kElems / 2},
      Y32{reinterpret_cast<int*>(out), {kRows, kCols / 2, 1, 1}, kElems / 2};
  const auto X0 = tensor(x0, kRows, kCols), X1 = tensor(x1, kRows, kCols), W = tensor(w, 1, kCols),
             B = tensor(b, 1, kCols), Y = tensor(out, kRows, kCols);
  std::string table =
      "| kernel | setting | pkc us | GB/s | copy (cudaMemcpyAsync) GB/s | pkc / copy | pkc of roofline bound | sampled rows wrong |\n"
      "|---|---|---|---|---|---|---|---|\n";
  int failures = 0, beaten = 0;
  const auto text = pk::jit::read_spec(PK_BENCH_TILES_SPEC);
  if (!text.is_ok()) return std::fprintf(stderr, "%s\n", text.status().message().c_str()), 1;
  for (const Case& cs : cases)
  for (const std::string& setting : settings) {
    pk::jit::Options o;
    o.kernel = cs.kernel;
    const char knob = setting.empty() || std::isdigit(setting[0]) ? 'b' : setting[0];
    const int value = std::atoi(setting.c_str() + (knob != 'b' || !std::isdigit(setting[0])));
    (knob == 't' ? o.tile_threads : knob == 's' ? o.tile_stages : o.tile_batch) = value;
    auto k = pk::jit::compile_spec(PK_BENCH_TILES_SPEC, *text, o, pk::jit::pkc_frontend(PK_PKC));
    if (!k.is_ok()) {
      std::fprintf(stderr, "compile %s: %s\n", cs.kernel, k.status().message().c_str());
      ++failures;
      continue;
    }
    pk::Status st;
    std::function<void()> run;
    const std::string name = cs.kernel;
    if (name == "copy") run = [&] { (void)(st = k->launch(*ctx, s, X0, Y)); };
    else if (name == "copy_3d") run = [&] { (void)(st = k->launch(*ctx, s, X3, Y3)); };
    else if (name == "copy_i8") run = [&] { (void)(st = k->launch(*ctx, s, X8, Y8)); };
    else if (name == "copy_i32") run = [&] { (void)(st = k->launch(*ctx, s, X32, Y32)); };
    else if (cs.tensors == 2) run = [&] { (void)(st = k->launch(*ctx, s, X0, X1, Y)); };
    else if (name == "rms_norm") run = [&] { (void)(st = k->launch(*ctx, s, X0, W, Y, inv_n, eps)); };
    else if (name == "layer_norm") run = [&] { (void)(st = k->launch(*ctx, s, X0, W, B, Y, inv_n, eps)); };
    else run = [&] { (void)(st = k->launch(*ctx, s, X0, Y)); };
    cudaMemsetAsync(out, 0xff, kElems * 2, s);  // poisoned first
    run();
    cudaStreamSynchronize(s);
    // Check 6 sampled rows in full (the first, the last and four in between).
    std::vector<unsigned short> got(kElems);
    cudaMemcpy(got.data(), out, kElems * 2, cudaMemcpyDeviceToHost);
    const Inputs in{&host[0], cs.weights ? &host[2] : &host[1], &host[3]};
    int wrong_rows = 0;
    for (long long r : {0LL, 1LL, 4097LL, 8190LL, 12345LL, kRows - 1}) {
      bool bad = false;
      for (long long c = 0; c < kCols && !bad; ++c) {
        const double want = cs.ref(in, r, c), g = from_bf16(got[r * kCols + c]);
        bad = !(std::fabs(g - want) <= 1e-2 + std::fabs(want) / 64);
      }
      wrong_rows += bad;
    }
    failures += wrong_rows > 0 || !st.is_ok();
    const double bytes = 2.0 * kElems * (cs.tensors + 1) + 2.0 * kCols * (cs.weights + cs.bias);
    const auto [pk_us, copy_us] =
        pk_bench::paired_median_us(run, [&] { cudaMemcpyAsync(out, x0, kElems * 2, cudaMemcpyDeviceToDevice, s); }, s);
    const double pk_gbs = bytes / (pk_us * 1e3), copy_gbs = 2.0 * 2 * kElems / (copy_us * 1e3);
    // The arguments' sizes in the spec's order: the row tensors, then a weight and a bias row.
    const std::string full = name == "copy_3d"    ? std::to_string(kRows) + "x8x" + std::to_string(kCols / 8)
                             : name == "copy_i8"  ? std::to_string(kRows) + "x" + std::to_string(2 * kCols)
                             : name == "copy_i32" ? std::to_string(kRows) + "x" + std::to_string(kCols / 2)
                                                  : std::to_string(kRows) + "x" + std::to_string(kCols),
                      row1 = "1x" + std::to_string(kCols);
    std::string shapes = "0:" + full;
    int arg = 1;
    for (int t = 1; t < cs.tensors; ++t) shapes += "," + std::to_string(arg++) + ":" + full;
    if (cs.weights) shapes += "," + std::to_string(arg++) + ":" + row1;
    if (cs.bias) shapes += "," + std::to_string(arg++) + ":" + row1;
    shapes += "," + std::to_string(arg) + ":" + full;  // the output
    const std::string bound = pk_bench::fraction_of_bound(
        pk_bench::roofline_us(PK_PKC, PK_BENCH_TILES_SPEC, cs.kernel, shapes), pk_us, &beaten);
    char row[320];
    const std::string batch_name = value == 0 ? "pkc's choice"
                                   : knob == 't' ? std::to_string(value) + " threads"
                                   : knob == 's' ? std::to_string(value) + " ring stages"
                                   : value == 1 ? "batch off" : "batch " + std::to_string(value);
    std::snprintf(row, sizeof row, "| %s | %s | %.1f | %.0f | %.0f | %.3f | %s | %d of 6 |\n", cs.kernel,
                  batch_name.c_str(), pk_us, pk_gbs, copy_gbs, pk_gbs / copy_gbs, bound.c_str(), wrong_rows);
    table += row;
    std::fputs(row, stdout);
  }
  if (argc > 1)
    if (FILE* f = std::fopen(argv[1], "w")) std::fputs(table.c_str(), f), std::fclose(f);
  return failures || beaten ? 1 : 0;
}
