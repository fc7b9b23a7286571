// Launches pkc's all-reduce through its generated launcher on 2 GPUs (one thread per rank) and
// checks every element against the host sum; also checks that the launcher's host-side shape
// check rejects a mismatched output. Exits 77 without 2 GPUs.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <pk/runtime/runtime.h>
#include <pk_kernels/all_reduce.h>

namespace {

pk::bf16 to_bf16(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  return pk::bf16{static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}
float to_float(pk::bf16 b) {
  unsigned u = unsigned(b.bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
float value(int rank, long long i) { return float((i * 7 + rank * 3) % 17) - 8.0f; }

int failures = 0;
void fail(int rank, const std::string& what) {
  std::fprintf(stderr, "rank %d: FAIL: %s\n", rank, what.c_str());
  __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
}

void rank_main(pk::Exchange& ex) {
  const int rank = ex.rank();
  cudaSetDevice(ex.device());
  auto ctx = pk::Context::create(ex);
  if (!ctx.is_ok()) return fail(rank, ctx.status().message());
  const long long n = 100003;  // not a multiple of the tile
  auto xb = (*ctx)->allocate(n * sizeof(pk::bf16));
  if (!xb.is_ok()) return fail(rank, xb.status().message());
  std::vector<pk::bf16> host(n);
  for (long long i = 0; i < n; ++i) host[i] = to_bf16(value(rank, i));
  cudaMemcpy(xb->local(), host.data(), n * 2, cudaMemcpyHostToDevice);
  // The spec's output is symmetric too (so pkc may pick two-shot on more ranks).
  auto yb = (*ctx)->allocate(n * sizeof(pk::bf16));
  if (!yb.is_ok()) return fail(rank, yb.status().message());
  void* yp = yb->local();
  cudaMemset(yp, 0xff, n * 2);  // NaN: unwritten outputs show
  auto x = xb->sym_tensor<pk::bf16>({n});
  auto y = yb->sym_tensor<pk::bf16>({n});
  auto short_y = yb->sym_tensor<pk::bf16>({n - 1});
  cudaDeviceSynchronize();
  (void)ex.barrier();

  // The launcher's host check: y must have x's shape. Nothing is launched, on either rank.
  pk::Status bad = pk_kernels::all_reduce(**ctx, *x, *short_y);
  if (bad.is_ok() || bad.message().find("shape") == std::string::npos)
    fail(rank, "a mismatched output was not rejected: " + bad.message());

  pk::Status s = pk_kernels::all_reduce(**ctx, *x, *y, (*ctx)->stream());
  if (!s.is_ok()) return fail(rank, s.message());
  s = (*ctx)->check_errors();
  if (!s.is_ok()) return fail(rank, s.message());
  cudaMemcpy(host.data(), yp, n * 2, cudaMemcpyDeviceToHost);
  int bad_elems = 0;
  for (long long i = 0; i < n; ++i) {
    float want = 0;
    for (int r = 0; r < ex.world(); ++r) want += value(r, i);
    if (to_float(host[i]) != want && bad_elems++ < 5)
      fail(rank, "y[" + std::to_string(i) + "] = " + std::to_string(to_float(host[i])) +
                     ", want " + std::to_string(want));
  }
  (void)yb->free();
  (void)xb->free();
}

}  // namespace

int main() {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 2) {
    std::printf("skipped: no GPU (needs 2)\n");
    return 77;
  }
  auto ex = pk::NcclExchange::create_single_process(2);
  if (!ex.is_ok()) {
    std::fprintf(stderr, "FAIL: %s\n", ex.status().message().c_str());
    return 1;
  }
  std::vector<std::thread> threads;
  for (auto& e : *ex) threads.emplace_back(rank_main, std::ref(*e));
  for (auto& t : threads) t.join();
  std::printf(failures ? "consumer: FAILED\n" : "consumer: passed\n");
  return failures ? 1 : 0;
}
