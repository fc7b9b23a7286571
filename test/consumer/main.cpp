// Launches pkc's all-reduce through its generated launcher on 2 GPUs (one thread per rank) and
// checks every element against the host sum; also checks that the launcher's host-side shape
// check rejects a mismatched output and that an empty all-reduce is a no-op; then a scatter through the launcher's copy-engine route
// (forced from 4 KiB per message by the context) and, for a tiny size, its kernel; then the
// GEMM + reduce-scatter template kernel through its launcher, against a float64 reference; then
// Ulysses attention, which pkc runs as three launches, through its launcher (a shape the
// all-to-all cannot take is refused first), against a float64 reference.
// On one GPU the two ranks share it (PK_SHARED_GPU_RANKS=2, pk/runtime/shared_gpu.h);
// exits 77 without a GPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <pk/runtime/runtime.h>
#include <pk_kernels/all_reduce.h>
#include <pk_kernels/gemm_rs.h>
#include <pk_kernels/scatter.h>
#include <pk_kernels/ulysses_attention.h>

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

void check_gemm_rs(pk::Exchange& ex, pk::Context& ctx);
void check_ulysses(pk::Exchange& ex, pk::Context& ctx);

void rank_main(pk::Exchange& ex) {
  const int rank = ex.rank();
  cudaSetDevice(ex.device());
  pk::ContextOptions options;
  options.copy_engine_min_bytes = 4096;  // the scatter below takes the copy-engine route
  auto ctx = pk::Context::create(ex, options);
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

  // Empty tensors: a no-op on every rank (no launch, so the next launch's epochs still pair).
  auto eb = (*ctx)->allocate(0);
  if (!eb.is_ok()) return fail(rank, eb.status().message());
  auto empty = eb->sym_tensor<pk::bf16>({0});
  if (!empty.is_ok()) return fail(rank, empty.status().message());
  pk::Status none = pk_kernels::all_reduce(**ctx, *empty, *empty);
  if (!none.is_ok()) fail(rank, "an empty all-reduce failed: " + none.message());

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
  (void)eb->free();
  (void)yb->free();
  (void)xb->free();

  // Scatter from root 1: rank r gets block r of the root's x. 100003 elements per block take
  // the copy-engine route, 3 the kernel.
  const int W = ex.world();
  for (long long m : {100003LL, 3LL}) {
    auto sx = (*ctx)->allocate(W * m * sizeof(pk::bf16));
    if (!sx.is_ok()) return fail(rank, sx.status().message());
    std::vector<pk::bf16> in(W * m), out(m);
    for (long long i = 0; i < W * m; ++i) in[i] = to_bf16(value(rank + 5, i));
    cudaMemcpy(sx->local(), in.data(), W * m * 2, cudaMemcpyHostToDevice);
    pk::bf16* sy = nullptr;
    cudaMalloc(reinterpret_cast<void**>(&sy), m * 2);
    cudaMemset(sy, 0xff, m * 2);
    cudaDeviceSynchronize();
    (void)ex.barrier();
    auto xs = sx->sym_tensor<pk::bf16>({W * m});
    auto ys = pk::make_tensor<pk::bf16>(sy, m * 2, {m});
    s = pk_kernels::scatter(**ctx, *xs, *ys, 1);
    if (s.is_ok()) s = (*ctx)->check_errors();
    if (!s.is_ok()) return fail(rank, "scatter: " + s.message());
    cudaMemcpy(out.data(), sy, m * 2, cudaMemcpyDeviceToHost);
    for (long long i = 0, shown = 0; i < m; ++i)
      if (to_float(out[i]) != value(1 + 5, rank * m + i) && shown++ < 5)
        fail(rank, "scatter m=" + std::to_string(m) + ": y[" + std::to_string(i) + "] = " +
                       std::to_string(to_float(out[i])));
    (void)ex.barrier();  // the root's x is read until every rank is done
    cudaFree(sy);
    (void)sx->free();
  }
  check_gemm_rs(ex, **ctx);
  check_ulysses(ex, **ctx);
}

// C_r = rows [r * M / W, (r + 1) * M / W) of sum over ranks of A_q * B_q^T, with tails in M, N
// and K; small integer inputs, so the f32 partials are exact and only the bf16 adds round.
void check_gemm_rs(pk::Exchange& ex, pk::Context& ctx) {
  const int rank = ex.rank(), W = ex.world();
  const long long rows = 136, M = W * rows, N = 264, K = 72;
  auto a_of = [](int r, long long i, long long k) { return float((i * 3 + k * 5 + r) % 5 - 2); };
  auto b_of = [](int r, long long j, long long k) { return float((j * 7 + k + 2 * r) % 5 - 2); };
  std::vector<pk::bf16> a(M * K), b(N * K), c(rows * N);
  for (long long i = 0; i < M * K; ++i) a[i] = to_bf16(a_of(rank, i / K, i % K));
  for (long long i = 0; i < N * K; ++i) b[i] = to_bf16(b_of(rank, i / K, i % K));
  pk::bf16 *da = nullptr, *db = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&da), M * K * 2);
  cudaMalloc(reinterpret_cast<void**>(&db), N * K * 2);
  cudaMemcpy(da, a.data(), M * K * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), N * K * 2, cudaMemcpyHostToDevice);
  auto cb = ctx.allocate(rows * N * 2);
  if (!cb.is_ok()) return fail(rank, cb.status().message());
  cudaMemset(cb->local(), 0xff, rows * N * 2);
  cudaDeviceSynchronize();
  (void)ex.barrier();
  auto ta = pk::make_tensor<pk::bf16>(da, M * K * 2, {M, K});
  auto tb = pk::make_tensor<pk::bf16>(db, N * K * 2, {N, K});
  auto tc = cb->sym_tensor<pk::bf16>({rows, N});
  pk::Status s = pk_kernels::gemm_rs(ctx, *ta, *tb, *tc);
  if (s.is_ok()) s = ctx.check_errors();
  if (!s.is_ok()) return fail(rank, "gemm_rs: " + s.message());
  (void)ex.barrier();  // every rank's adds have landed
  cudaMemcpy(c.data(), cb->local(), rows * N * 2, cudaMemcpyDeviceToHost);
  for (long long i = 0, shown = 0; i < rows * N; ++i) {
    double want = 0, magnitude = 0;
    for (int q = 0; q < W; ++q) {
      double partial = 0;
      for (long long k = 0; k < K; ++k)
        partial += double(a_of(q, rank * rows + i / N, k)) * b_of(q, i % N, k);
      want += partial;
      magnitude += std::fabs(partial);
    }
    // Each rank's partial is rounded to bf16 and each add into the bf16 output rounds again.
    if (std::fabs(to_float(c[i]) - want) > W * magnitude / 256 && shown++ < 5)
      fail(rank, "gemm_rs c[" + std::to_string(i) + "] = " + std::to_string(to_float(c[i])) +
                     ", want " + std::to_string(want));
  }
  (void)ex.barrier();
  (void)cb->free();
  cudaFree(da);
  cudaFree(db);
}

// Causal attention over the whole sequence, head dim 64: rank r holds rows [r*rows, (r+1)*rows)
// of every head; values are a smooth function of (rank, head, row, column).
void check_ulysses(pk::Exchange& ex, pk::Context& ctx) {
  const int rank = ex.rank(), W = ex.world();
  const long long H = 2 * W, Hw = 2, rows = 96, S = W * rows, D = 64;
  auto val = [](int which, long long h, long long s, long long j) {
    return float(std::sin(0.37 * double(which * 131 + h * 17 + s * 3 + j) + 0.11 * double(j)));
  };
  std::vector<pk::SymmetricBuffer> bufs;
  auto sym = [&](long long a, long long b) -> pk::SymTensor<pk::bf16> {
    auto buf = ctx.allocate(a * b * D * 2);
    if (!buf.is_ok()) return fail(rank, buf.status().message()), pk::SymTensor<pk::bf16>{};
    cudaMemset(buf->local(), 0xff, a * b * D * 2);
    auto t = buf->sym_tensor<pk::bf16>({a, b, D});
    bufs.push_back(std::move(*buf));
    return t.is_ok() ? *t : pk::SymTensor<pk::bf16>{};
  };
  pk::SymTensor<pk::bf16> in[3], o = sym(H, rows), qh = sym(Hw, S), kh = sym(Hw, S), vh = sym(Hw, S),
                                 oh = sym(Hw, S), wrong = sym(H, S);
  for (int w = 0; w < 3; ++w) {
    in[w] = sym(H, rows);
    std::vector<pk::bf16> host(H * rows * D);
    for (long long i = 0; i < H * rows * D; ++i)
      host[i] = to_bf16(val(w, i / (rows * D), rank * rows + (i / D) % rows, i % D));
    cudaMemcpy(in[w].peer[rank], host.data(), host.size() * 2, cudaMemcpyHostToDevice);
  }
  float* lse = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&lse), Hw * S * 4);
  auto tl = pk::make_tensor<float>(lse, Hw * S * 4, {Hw, S, 1});
  cudaDeviceSynchronize();
  (void)ex.barrier();
  const float scale = 0.125f;
  pk::Status bad = pk_kernels::ulysses_attention_causal_d64(ctx, in[0], in[1], in[2], o, wrong, kh, vh, oh, *tl, scale);
  if (bad.is_ok() || bad.message().find("world size times") == std::string::npos)
    fail(rank, "ulysses: a head-sharded buffer with every head was not refused: " + bad.message());
  pk::Status s = pk_kernels::ulysses_attention_causal_d64(ctx, in[0], in[1], in[2], o, qh, kh, vh, oh, *tl, scale);
  if (s.is_ok()) s = ctx.check_errors();
  if (!s.is_ok()) return fail(rank, "ulysses: " + s.message());
  std::vector<pk::bf16> got(H * rows * D);
  cudaMemcpy(got.data(), o.peer[rank], got.size() * 2, cudaMemcpyDeviceToHost);
  auto rounded = [&](int w, long long h, long long t, long long j) { return double(to_float(to_bf16(val(w, h, t, j)))); };
  long long shown = 0;
  for (long long h = 0; h < H; ++h)
    for (long long r = 0; r < rows; ++r) {
      const long long t = rank * rows + r;  // this row's place in the whole sequence
      std::vector<double> p(t + 1), want(D, 0.0);
      double mx = -1e300, sum = 0;
      for (long long c = 0; c <= t; ++c) {
        double dot = 0;
        for (long long j = 0; j < D; ++j) dot += rounded(0, h, t, j) * rounded(1, h, c, j);
        p[c] = dot * scale;
        mx = std::max(mx, p[c]);
      }
      for (long long c = 0; c <= t; ++c) sum += (p[c] = std::exp(p[c] - mx));
      for (long long c = 0; c <= t; ++c)
        for (long long j = 0; j < D; ++j) want[j] += p[c] / sum * rounded(2, h, c, j);
      for (long long j = 0; j < D; ++j) {
        const double g = to_float(got[(h * rows + r) * D + j]);
        if (!(std::fabs(g - want[j]) <= 2e-2 + 2e-2 * std::fabs(want[j])) && shown++ < 5)
          fail(rank, "ulysses o[" + std::to_string(h) + ", " + std::to_string(r) + ", " + std::to_string(j) +
                         "] = " + std::to_string(g) + ", want " + std::to_string(want[j]));
      }
    }
  (void)ex.barrier();
  for (auto& b : bufs) (void)b.free();
  cudaFree(lse);
}

}  // namespace

int main() {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    std::printf("skipped: no GPU\n");
    return 77;
  }
  // One GPU: both ranks share it, the way a user asks for that mode.
  if (devices == 1) setenv("PK_SHARED_GPU_RANKS", "2", 0);
  auto ex = pk::create_single_process_exchanges(2);
  if (!ex.is_ok()) {
    std::fprintf(stderr, "FAIL: %s\n", ex.status().message().c_str());
    return 1;
  }
  std::vector<std::thread> threads;
  for (auto& e : *ex) threads.emplace_back(rank_main, std::ref(*e));
  for (auto& t : threads) t.join();
  if (std::getenv("PK_SHARED_GPU_RANKS")) std::printf("consumer: 2 ranks sharing GPU 0 (not NVLink)\n");
  std::printf(failures ? "consumer: FAILED\n" : "consumer: passed\n");
  return failures ? 1 : 0;
}
