// Each data-moving primitive against a host reference, sizes on and off the tile: 2 ranks on
// 2 GPUs, or 2, 3 and 4 ranks sharing one GPU.
#include <pk/device/all.cuh>

#include "harness.h"

namespace {

using namespace pkt;

constexpr long long kTile = 4096;  // elements per block-tile
constexpr int kThreads = 256;

__device__ long long tile_count(long long count, long long b) {
  const long long off = b * kTile;
  return off >= count ? 0 : (count - off < kTile ? count - off : kTile);
}

template <class T>
__global__ void k_reduce(pk::LaunchContext c, pk::SymTensor<T> src, long long count, T* dst) {
  for (long long b = blockIdx.x; b * kTile < count; b += gridDim.x)
    pk::reduce_tile<pk::ReduceOp::sum>(c, src, b * kTile, tile_count(count, b), dst + b * kTile);
}

template <class T>
__global__ void k_reduce_max(pk::LaunchContext c, pk::SymTensor<T> src, long long count, T* dst) {
  for (long long b = blockIdx.x; b * kTile < count; b += gridDim.x)
    pk::reduce_tile<pk::ReduceOp::max>(c, src, b * kTile, tile_count(count, b), dst + b * kTile);
}

// Two-shot: rank r reduces the tiles b with b % world == r and writes them everywhere.
template <class T>
__global__ void k_all_reduce(pk::LaunchContext c, pk::SymTensor<T> src, pk::SymTensor<T> dst,
                             long long count) {
  for (long long b = blockIdx.x; b * kTile < count; b += gridDim.x)
    if (b % c.world == c.rank)
      pk::all_reduce_tile<pk::ReduceOp::sum>(c, src, dst, b * kTile, tile_count(count, b));
}

template <class T>
__global__ void k_store(pk::LaunchContext c, pk::SymTensor<T> dst, const T* src, long long count,
                        long long shift) {
  const int peer = (c.rank + 1) % c.world;
  for (long long b = blockIdx.x; b * kTile < count; b += gridDim.x)
    pk::store_tile(c, dst, peer, b * kTile + shift, src + b * kTile, tile_count(count, b));
}

template <class T>
__global__ void k_store_add(pk::LaunchContext c, pk::SymTensor<T> dst, const T* src,
                            long long count) {
  for (int peer = 0; peer < c.world; ++peer)
    for (long long b = blockIdx.x; b * kTile < count; b += gridDim.x)
      pk::store_add_tile(c, dst, peer, b * kTile, src + b * kTile, tile_count(count, b));
}

template <class T>
__global__ void k_load(pk::LaunchContext c, pk::SymTensor<T> src, T* dst, long long count) {
  const int peer = (c.rank + 1) % c.world;
  for (long long b = blockIdx.x; b * kTile < count; b += gridDim.x)
    pk::load_tile(c, src, peer, b * kTile, dst + b * kTile, tile_count(count, b));
}

// TMA push: stage a chunk in shared memory, bulk-store (or bulk-add) it into the next rank,
// wait for completion, then publish with a signal; the receiver waits and copies it out.
constexpr unsigned kChunkBytes = 8192;

template <class T, bool Add>
__global__ void k_tma_push(pk::LaunchContext c, pk::SymTensor<T> landing, const T* src,
                           long long count, T* out, unsigned long long target) {
  __shared__ alignas(128) unsigned char smem[kChunkBytes];
  const int peer = (c.rank + 1) % c.world;
  const long long per = kChunkBytes / sizeof(T);
  for (long long off = blockIdx.x * per; off < count; off += gridDim.x * per) {
    const long long n = count - off < per ? count - off : per;
    T* s = reinterpret_cast<T*>(smem);
    for (long long i = threadIdx.x; i < n; i += blockDim.x) s[i] = src[off + i];
    pk::fence_proxy_async_smem();
    __syncthreads();
    if (threadIdx.x == 0) {
      const unsigned bytes = static_cast<unsigned>(n * sizeof(T));
      if (Add) pk::store_add_async_bulk(landing.peer[peer] + off, s, bytes);
      else pk::store_async_bulk(landing.peer[peer] + off, s, bytes);
      pk::bulk_commit();
      pk::bulk_wait_complete();
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    pk::signal(c, peer, 0);
    pk::wait_ge(c, 0, target);  // every block of the sender signalled
  }
  __syncthreads();
  for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    out[i] = pk::from_float<T>(pk::to_float(landing.peer[c.rank][i]));
}

// TMA pull: bulk-load chunks of the next rank's buffer through an mbarrier, copy them out.
template <class T>
__global__ void k_tma_pull(pk::LaunchContext c, pk::SymTensor<T> src, T* out, long long count) {
  __shared__ alignas(128) unsigned char smem[kChunkBytes];
  __shared__ pk::Mbarrier bar;
  const int peer = (c.rank + 1) % c.world;
  const long long per = kChunkBytes / sizeof(T);
  if (threadIdx.x == 0) pk::mbarrier_init(&bar, 1);
  __syncthreads();
  unsigned phase = 0;
  for (long long off = blockIdx.x * per; off < count; off += gridDim.x * per) {
    const long long n = count - off < per ? count - off : per;
    const unsigned bytes = static_cast<unsigned>(n * sizeof(T));
    if (threadIdx.x == 0) {
      pk::mbarrier_arrive_expect_tx(&bar, bytes);
      pk::load_async_bulk(smem, src.peer[peer] + off, bytes, &bar);
    }
    pk::mbarrier_wait_parity(&bar, phase);
    phase ^= 1;
    const T* s = reinterpret_cast<const T*>(smem);
    for (long long i = threadIdx.x; i < n; i += blockDim.x) out[off + i] = s[i];
    __syncthreads();  // smem is reused by the next chunk
  }
}

template <class T>
struct Case {
  pk::Context& ctx;
  long long count;
  const char* type;
  unsigned long long& pushes;  // signals slot 0 has received so far (the TMA push tests)

  std::string tag(const char* what) const {
    return std::string(what) + "<" + type + "> count=" + std::to_string(count) + " rank=" +
           std::to_string(ctx.rank());
  }

  void run() {
    const int world = ctx.world(), rank = ctx.rank();
    const std::size_t bytes = (count + 64) * sizeof(T);
    auto a = ctx.allocate(bytes);
    auto d = ctx.allocate(bytes);
    PKT_OK(a.status().is_ok() ? pk::Status::ok() : a.status());
    PKT_OK(d.status().is_ok() ? pk::Status::ok() : d.status());
    auto src = a->sym_tensor<T>({count});
    auto dst = d->sym_tensor<T>({count});
    PKT_OK(src.status().is_ok() ? pk::Status::ok() : src.status());
    std::vector<std::vector<T>> data;
    for (int r = 0; r < world; ++r) data.push_back(pkt::random_data<T>(count, 100 + r));
    T* local = nullptr;
    T* out = nullptr;
    PKT_CUDA(cudaMalloc(&local, bytes));
    PKT_CUDA(cudaMalloc(&out, bytes));
    PKT_CUDA(cudaMemcpy(a->local(), data[rank].data(), count * sizeof(T), cudaMemcpyHostToDevice));
    PKT_CUDA(cudaMemcpy(local, data[rank].data(), count * sizeof(T), cudaMemcpyHostToDevice));
    const int grid = static_cast<int>(std::min<long long>(64, (count + kTile - 1) / kTile));
    std::vector<T> got(count);
    auto fetch = [&](const void* p) {
      return pk::cuda_status(cudaMemcpy(got.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost),
                             "fetch");
    };
    auto sync_all = [&]() -> pk::Status {
      PK_RETURN_IF_ERROR(ctx.check_errors());
      PK_RETURN_IF_ERROR(pk::cuda_status(pkt::sync_uploads(), "sync"));
      return ctx.exchange().barrier();
    };
    auto expect = [&](const char* what, const std::function<float(long long)>& want, float rel) {
      int bad = 0;
      for (long long i = 0; i < count && bad < 5; ++i)
        if (!close(to_f(got[i]), want(i), rel)) {
          fail(tag(what) + ": element " + std::to_string(i) + " = " + std::to_string(to_f(got[i])) +
               ", want " + std::to_string(want(i)));
          ++bad;
        }
    };
    const float rel = sizeof(T) == 2 ? 1e-2f : 1e-5f;
    auto sum = [&](long long i) {
      float s = 0;
      for (int r = 0; r < world; ++r) s += to_f(data[r][i]);
      return sum_round(s);
    };
    PKT_OK(sync_all());

    // reduce (sum, max)
    PKT_CUDA(poison(out, bytes));
    PKT_CUDA(pkt::sync_uploads());  // the poison lands before the kernel writes
    k_reduce<T><<<grid, kThreads, 0, ctx.stream()>>>(ctx.make_launch_context(), *src, count, out);
    PKT_OK(sync_all());
    PKT_OK(fetch(out));
    expect("reduce_tile sum", sum, rel);
    PKT_CUDA(poison(out, bytes));
    PKT_CUDA(pkt::sync_uploads());  // the poison lands before the kernel writes
    k_reduce_max<T><<<grid, kThreads, 0, ctx.stream()>>>(ctx.make_launch_context(), *src, count, out);
    PKT_OK(sync_all());
    PKT_OK(fetch(out));
    expect("reduce_tile max", [&](long long i) {
      float m = -INFINITY;
      for (int r = 0; r < world; ++r) m = std::fmax(m, to_f(data[r][i]));
      return m;
    }, 0);

    // all_reduce
    PKT_CUDA(poison(d->local(), bytes));
    PKT_OK(sync_all());
    k_all_reduce<T><<<grid, kThreads, 0, ctx.stream()>>>(ctx.make_launch_context(), *src, *dst, count);
    PKT_OK(sync_all());
    PKT_OK(fetch(d->local()));
    expect("all_reduce_tile", sum, rel);

    // store into the next rank, at an offset that breaks 16-byte alignment when shift is odd
    for (long long shift : {0ll, 1ll}) {
      PKT_CUDA(poison(d->local(), bytes));
      PKT_OK(sync_all());
      k_store<T><<<grid, kThreads, 0, ctx.stream()>>>(ctx.make_launch_context(), *dst, local, count, shift);
      PKT_OK(sync_all());
      PKT_CUDA(cudaMemcpy(got.data(), static_cast<T*>(d->local()) + shift, count * sizeof(T),
                          cudaMemcpyDeviceToHost));
      const int from = (rank + world - 1) % world;
      expect(shift ? "store_tile (unaligned)" : "store_tile",
             [&](long long i) { return to_f(data[from][i]); }, 0);
    }

    // store_add from every rank into every rank, onto a known base
    auto base = pkt::random_data<T>(count, 999);
    PKT_CUDA(cudaMemcpy(d->local(), base.data(), count * sizeof(T), cudaMemcpyHostToDevice));
    PKT_OK(sync_all());
    k_store_add<T><<<grid, kThreads, 0, ctx.stream()>>>(ctx.make_launch_context(), *dst, local, count);
    PKT_OK(sync_all());
    PKT_OK(fetch(d->local()));
    // W adds into the base, each rounded to T: the error grows with the world size.
    expect("store_add_tile", [&](long long i) { return to_f(base[i]) + sum(i); },
           std::max(2, world) * rel);

    // load (pull) from the next rank
    PKT_CUDA(poison(out, bytes));
    PKT_CUDA(pkt::sync_uploads());  // the poison lands before the kernel writes
    k_load<T><<<grid, kThreads, 0, ctx.stream()>>>(ctx.make_launch_context(), *src, out, count);
    PKT_OK(sync_all());
    PKT_OK(fetch(out));
    expect("load_tile", [&](long long i) { return to_f(data[(rank + 1) % world][i]); }, 0);

    // TMA paths need 16-byte multiples.
    if ((count * sizeof(T)) % 16 == 0) {
      const int tgrid = static_cast<int>(std::min<long long>(32, (count * sizeof(T) + kChunkBytes - 1) / kChunkBytes));
      const int from = (rank + world - 1) % world;
      PKT_CUDA(poison(d->local(), bytes));
      PKT_CUDA(poison(out, bytes));
      PKT_OK(sync_all());
      pushes += tgrid;
      k_tma_push<T, false><<<tgrid, kThreads, 0, ctx.stream()>>>(ctx.make_launch_context(), *dst, local, count, out, pushes);
      PKT_OK(sync_all());
      PKT_OK(fetch(out));
      expect("store_async_bulk + signal/wait", [&](long long i) { return to_f(data[from][i]); }, 0);

      PKT_CUDA(cudaMemcpy(d->local(), base.data(), count * sizeof(T), cudaMemcpyHostToDevice));
      PKT_OK(sync_all());
      pushes += tgrid;
      k_tma_push<T, true><<<tgrid, kThreads, 0, ctx.stream()>>>(ctx.make_launch_context(), *dst, local, count, out, pushes);
      PKT_OK(sync_all());
      PKT_OK(fetch(out));
      expect("store_add_async_bulk + signal/wait",
             [&](long long i) { return to_f(base[i]) + to_f(data[from][i]); }, 2 * rel);

      PKT_CUDA(poison(out, bytes));
      PKT_CUDA(pkt::sync_uploads());  // the poison lands before the kernel writes
      k_tma_pull<T><<<tgrid, kThreads, 0, ctx.stream()>>>(ctx.make_launch_context(), *src, out, count);
      PKT_OK(sync_all());
      PKT_OK(fetch(out));
      expect("load_async_bulk", [&](long long i) { return to_f(data[(rank + 1) % world][i]); }, 0);
    }
    cudaFree(local);
    cudaFree(out);
    PKT_OK(d->free());
    PKT_OK(a->free());
  }

  // The device reduces in fp32 and rounds once to T.
  static float sum_round(float s) { return to_f(from_f<T>(s)); }
};

}  // namespace

int main() {
  // 1 element, under a tile, exactly a tile, a tile + 1, many tiles with an odd tail.
  const long long counts[] = {1, 1000, kTile, kTile + 1, 64 * kTile, 300 * kTile + 8, 1000003};
  for (int world : pkt::test_worlds()) {
    pkt::announce_world("primitives_test", world);
    pkt::run_ranks(world, [&](pk::Context& ctx) {
      unsigned long long pushes = 0;
      for (long long n : counts) {
        Case<float>{ctx, n, "f32", pushes}.run();
        Case<pk::bf16>{ctx, n, "bf16", pushes}.run();
      }
    });
  }
  return pkt::finish("primitives_test");
}
