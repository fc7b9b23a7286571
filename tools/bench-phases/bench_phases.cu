// pk-bench-phases: the speed targets of issue 25 on W ranks (default 2; ranks share GPU 0 when
// there are fewer GPUs than ranks, else a GPU each):
//  1. all_reduce(Sum, x, x) in place against all_reduce(Sum, x, y) out of place;
//  2. all_reduce then all_gather of its result in one kernel (two dependent phases) against
//     the two kernels launched back to back.
// bf16, per-rank input sizes of the collectives benchmark (4 KiB to 1 GiB; --max-bytes caps).
// Kernels: tools/bench-phases/specs.pk.cpp through the JIT. Timing: every rank alternates
// batches of 20 launches of the two paths (median of 7 each after 5 warm-ups); rank 0's
// medians are reported. Before timing, every output (poisoned first) is compared at 4096
// sampled elements with the float64 sum of the ranks' inputs, which are multiples of 1/8 so
// that bf16 holds every partial sum exactly.
//   pk-bench-phases <table.md> [--world W] [--max-bytes N]
#include <pk/jit/compile.h>
#include <pk/runtime/context.h>
#include <pk/runtime/shared_gpu.h>
#include "paired_timing.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

constexpr int kSamples = 4096;

// Rank r's input element i: +-(2..15)/8, exact in bf16, from a hash (no host-side gigabytes).
__host__ __device__ float input_value(int rank, long long i) {
  unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull + (rank + 1) * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  const float mag = float(2 + h % 14) / 8.f;
  return (h >> 40) & 1 ? mag : -mag;
}

__global__ void fill_inputs(pk::bf16* p, long long n, int rank) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    p[i] = pk::from_float<pk::bf16>(input_value(rank, i));
}

// out[k] = p[idx[k]] as float.
__global__ void gather_samples(const pk::bf16* p, const long long* idx, float* out, int k) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < k; i += gridDim.x * blockDim.x) out[i] = pk::to_float(p[idx[i]]);
}

struct Kernels {
  pk::jit::Kernel out, in_place, gather, phased;
};

struct Row {
  long long bytes = 0;
  double out_us = 0, in_us = 0, phased_us = 0, two_us = 0;
  long long wrong = 0;
};

std::string size_name(long long b) {
  if (b >= (1ll << 30)) return std::to_string(b >> 30) + " GiB";
  if (b >= (1ll << 20)) return std::to_string(b >> 20) + " MiB";
  return std::to_string(b >> 10) + " KiB";
}

// Elements of `p` (n of them) at the sampled indices that differ from `want(i)`.
long long count_wrong(const pk::bf16* p, long long n, cudaStream_t s, long long* idx_dev, float* got_dev,
                      const std::function<double(long long)>& want) {
  std::vector<long long> idx(kSamples);
  for (int k = 0; k < kSamples; ++k) idx[k] = k < 2 ? (k ? n - 1 : 0) : (long long)((k * 2654435761ull) % n);
  cudaMemcpyAsync(idx_dev, idx.data(), kSamples * sizeof(long long), cudaMemcpyHostToDevice, s);
  gather_samples<<<16, 256, 0, s>>>(p, idx_dev, got_dev, kSamples);
  std::vector<float> got(kSamples);
  cudaMemcpyAsync(got.data(), got_dev, kSamples * sizeof(float), cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s);
  long long wrong = 0;
  for (int k = 0; k < kSamples; ++k) wrong += !(double(got[k]) == want(idx[k]));
  return wrong;
}

void fail(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::exit(1);
}

void ok(const pk::Status& s, const char* what) {
  if (!s.is_ok()) fail(std::string(what) + ": " + s.message());
}

// One rank's whole run: rank 0's times go into `rows`, every rank's wrong samples add up there.
void run_rank(pk::Context& ctx, const Kernels& k, const std::vector<long long>& sizes, std::vector<Row>& rows,
              std::mutex& rows_mutex) {
  const int W = ctx.world(), me = ctx.rank();
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (const pk::jit::Kernel* kernel : {&k.out, &k.in_place, &k.gather, &k.phased}) ok(kernel->load(ctx), "load");
  ok(ctx.exchange().barrier(), "barrier");
  long long* idx_dev;
  float* got_dev;
  cudaMalloc(&idx_dev, kSamples * sizeof(long long));
  cudaMalloc(&got_dev, kSamples * sizeof(float));
  for (size_t si = 0; si < sizes.size(); ++si) {
    const long long n = sizes[si] / 2;
    auto xb = ctx.allocate(n * 2), yb = ctx.allocate(n * 2), zb = ctx.allocate(W * n * 2);
    if (!xb.is_ok() || !yb.is_ok() || !zb.is_ok()) fail("allocate " + size_name(sizes[si]));
    auto x = *xb->sym_tensor<pk::bf16>({n}), y = *yb->sym_tensor<pk::bf16>({n}), z = *zb->sym_tensor<pk::bf16>({W * n});
    auto* xl = static_cast<pk::bf16*>(xb->local());
    auto* yl = static_cast<pk::bf16*>(yb->local());
    auto* zl = static_cast<pk::bf16*>(zb->local());
    auto sum = [&](long long i) {
      double t = 0;
      for (int r = 0; r < W; ++r) t += input_value(r, i);
      return t;
    };
    auto reset = [&] {  // fresh inputs, poisoned outputs, every rank ready
      fill_inputs<<<264, 512, 0, s>>>(xl, n, me);
      cudaMemsetAsync(yl, 0xff, n * 2, s);
      cudaMemsetAsync(zl, 0xff, W * n * 2, s);
      cudaStreamSynchronize(s);
      ok(ctx.exchange().barrier(), "barrier");
    };
    Row row;
    row.bytes = sizes[si];
    // Correctness of every path, then its timing against its pair.
    reset();
    ok(k.out.launch(ctx, s, x, y), "all_reduce_out");
    row.wrong += count_wrong(yl, n, s, idx_dev, got_dev, sum);
    reset();
    ok(k.in_place.launch(ctx, s, x), "all_reduce_in_place");
    row.wrong += count_wrong(xl, n, s, idx_dev, got_dev, sum);
    reset();
    ok(k.phased.launch(ctx, s, x, y, z), "all_reduce_then_gather");
    row.wrong += count_wrong(zl, W * n, s, idx_dev, got_dev, [&](long long i) { return sum(i % n); });
    reset();
    ok(k.out.launch(ctx, s, x, y), "all_reduce_out");
    ok(k.gather.launch(ctx, s, y, z), "all_gather_of");
    row.wrong += count_wrong(zl, W * n, s, idx_dev, got_dev, [&](long long i) { return sum(i % n); });
    ok(ctx.exchange().barrier(), "barrier");
    // In place, x grows by W per launch and overflows to inf and NaN; that does not change
    // the work, and no value is checked after this point.
    std::tie(row.out_us, row.in_us) = pk_bench::paired_median_us(
        [&] { ok(k.out.launch(ctx, s, x, y), "all_reduce_out"); },
        [&] { ok(k.in_place.launch(ctx, s, x), "all_reduce_in_place"); }, s);
    std::tie(row.phased_us, row.two_us) = pk_bench::paired_median_us(
        [&] { ok(k.phased.launch(ctx, s, x, y, z), "all_reduce_then_gather"); },
        [&] {
          ok(k.out.launch(ctx, s, x, y), "all_reduce_out");
          ok(k.gather.launch(ctx, s, y, z), "all_gather_of");
        }, s);
    ok(ctx.check_errors(), "device errors");
    ok(ctx.exchange().barrier(), "barrier");  // peers may still read this rank's buffers
    {
      std::lock_guard<std::mutex> lock(rows_mutex);
      const long long wrong = rows[si].wrong + row.wrong;
      if (me == 0) rows[si] = row;
      rows[si].wrong = wrong;
    }
    ok(zb->free(), "free");
    ok(yb->free(), "free");
    ok(xb->free(), "free");
    if (me == 0) std::printf("%s done\n", size_name(sizes[si]).c_str()), std::fflush(stdout);
  }
  cudaFree(idx_dev);
  cudaFree(got_dev);
  cudaStreamDestroy(s);
}

}  // namespace

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // never multicast on the test machines
  int world = 2;
  long long max_bytes = 1ll << 30;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--world")) world = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--max-bytes")) max_bytes = std::atoll(argv[i + 1]);
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) return std::puts("skipped: no GPU"), 77;
  const bool shared = devices < world;
  if (shared) setenv("PK_SHARED_GPU_RANKS", std::to_string(world).c_str(), 1);
  std::vector<long long> sizes;
  for (long long b = 4 << 10; b <= max_bytes; b *= 4) {
    sizes.push_back(b);
    if (b == (4ll << 20) && 2 * b <= max_bytes) sizes.push_back(2 * b);
  }
  const auto text = pk::jit::read_spec(PK_BENCH_PHASES_SPEC);
  if (!text.is_ok()) fail(text.status().message());
  auto compile = [&](const char* name) {
    pk::jit::Options o;
    o.kernel = name;
    auto k = pk::jit::compile_spec(PK_BENCH_PHASES_SPEC, *text, o, pk::jit::pkc_frontend(PK_PKC));
    if (!k.is_ok()) fail(std::string("compile ") + name + ": " + k.status().message());
    return *k;
  };
  const Kernels kernels{compile("all_reduce_out"), compile("all_reduce_in_place"), compile("all_gather_of"),
                        compile("all_reduce_then_gather")};
  auto ex = pk::create_single_process_exchanges(world);
  if (!ex.is_ok()) fail("bootstrap: " + ex.status().message());
  std::vector<Row> rows(sizes.size());
  std::mutex rows_mutex;
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      pk::Exchange& e = *(*ex)[r];
      cudaSetDevice(e.device());
      auto ctx = pk::Context::create(e);
      if (!ctx.is_ok()) fail("rank " + std::to_string(r) + ": " + ctx.status().message());
      run_rank(**ctx, kernels, sizes, rows, rows_mutex);
    });
  for (auto& t : threads) t.join();

  char head[200];
  std::snprintf(head, sizeof head, "W = %d ranks %s, bf16, sizes per rank\n\n", world,
                shared ? "sharing one GPU" : "on a GPU each");
  std::string table = head;
  table +=
      "| size | all_reduce out of place us | in place us | in place / out of place | all_reduce then all_gather, one kernel us | two kernels us | one / two | sampled outputs wrong |\n"
      "|---|---|---|---|---|---|---|---|\n";
  long long wrong = 0;
  for (const Row& r : rows) {
    char line[320];
    std::snprintf(line, sizeof line, "| %s | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f | %lld of %d |\n",
                  size_name(r.bytes).c_str(), r.out_us, r.in_us, r.in_us / r.out_us, r.phased_us, r.two_us,
                  r.phased_us / r.two_us, r.wrong, 4 * kSamples * world);
    table += line;
    wrong += r.wrong;
  }
  std::fputs(table.c_str(), stdout);
  if (argc > 1)
    if (FILE* f = std::fopen(argv[1], "w")) std::fputs(table.c_str(), f), std::fclose(f);
  return wrong ? 1 : 0;
}
