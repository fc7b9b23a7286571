// Instantiates every pk device primitive for every element type. Compiled by NVRTC (through the
// embedded headers, nvrtc_test.cpp) and by nvcc (a ctest command); never run.
#include <pk/device/all.cuh>

namespace {

template <class T>
__device__ void use_all(const pk::LaunchContext& c, const pk::SymTensor<T>& a, T* d,
                        const pk::TensorMap* map, long long n) {
  __shared__ alignas(128) unsigned char smem[8192];
  __shared__ pk::Mbarrier bar;
  T* sm = reinterpret_cast<T*>(smem);
  pk::reduce_tile<pk::ReduceOp::sum>(c, a, 3, n, d);
  pk::reduce_tile<pk::ReduceOp::max>(c, a, 0, n, d);
  pk::reduce_tile<pk::ReduceOp::min>(c, a, 0, n, d);
  pk::all_reduce_tile<pk::ReduceOp::sum>(c, a, a, 5, n);
  pk::copy_elems(a.peer[1] + 3, d, n);
  T* const one[1] = {d};
  pk::reduce_into<pk::ReduceOp::sum>(c, a, 3, n, one, 1, 0);
  pk::reduce_into<pk::ReduceOp::max>(c, a, 0, n, a.peer, c.world, 5);
  pk::reduce_into<pk::ReduceOp::min>(c, a, 0, n, one, 1, 1);
  {
    using pk::SmallCollective;
    const T* x = a.peer[c.rank];
    int r = 0;
    unsigned long long e = 0;
    r += pk::push_small<SmallCollective::all_reduce, pk::ReduceOp::sum>(c, x, n, d, n, 0, 0, 1, 2, 512, 1 << 20, 64 << 10, e);
    r += pk::push_small<SmallCollective::all_gather, pk::ReduceOp::sum>(c, x, n, d, n, 0, 0, 1, 2, 512, 1 << 20, 64 << 10, e);
    r += pk::push_small<SmallCollective::reduce_scatter, pk::ReduceOp::max>(c, x, n, d, n, 0, 0, 1, 2, 512, 1 << 20, 64 << 10, e);
    r += pk::push_small<SmallCollective::all_to_all, pk::ReduceOp::sum>(c, x, n, d, n, 0, 0, 1, 2, 512, 1 << 20, 64 << 10, e);
    r += pk::push_small<SmallCollective::broadcast, pk::ReduceOp::sum>(c, x, n, d, n, 1, 0, 1, 2, 512, 1 << 20, 64 << 10, e);
    r += pk::push_small<SmallCollective::reduce, pk::ReduceOp::min>(c, x, n, d, n, 1, 0, 1, 2, 512, 1 << 20, 64 << 10, e);
    r += pk::push_small<SmallCollective::gather, pk::ReduceOp::sum>(c, x, n, d, n, 1, 0, 1, 2, 512, 1 << 20, 64 << 10, e);
    r += pk::push_small<SmallCollective::scatter, pk::ReduceOp::sum>(c, x, n, d, n, 1, 0, 1, 2, 512, 1 << 20, 64 << 10, e);
    if (r == 42 || e == 7) d[0] = T{};
  }
  pk::store_tile(c, a, 1, 5, d, n);
  pk::store_add_tile(c, a, 1, 5, d, n);
  pk::load_tile(c, a, 1, 5, sm, n);
  if (threadIdx.x == 0) {
    pk::mbarrier_init(&bar, 1);
    pk::mbarrier_arrive_expect_tx(&bar, 4096);
    pk::load_async_bulk(sm, a.peer[1], 4096, &bar);
    pk::mbarrier_wait_parity(&bar, 0);
    pk::fence_proxy_async_smem();
    pk::store_async_bulk(a.peer[1], sm, 4096);
    pk::store_add_async_bulk(a.peer[1], sm, 4096);
    pk::store_async_tensor_2d(map, sm, 0, 0);
    pk::store_add_async_tensor_2d(map, sm, 0, 0);
    pk::bulk_commit();
    pk::bulk_wait_read();
    pk::bulk_wait_complete();
    pk::signal(c, 1, 0);
    pk::signal_all(c, 1, 2);
    if (pk::wait_ge(c, 0, c.epoch)) pk::proxy_fence_after_wait();
    pk::mbarrier_arrive(&bar);
    pk::load_async_tensor_2d(sm, map, 0, 0, &bar);
    (void)pk::mbarrier_try_wait_parity(&bar, 1);
  }
  pk::barrier_block(c, 2);
}

}  // namespace

extern "C" __global__ void instantiate_all(pk::LaunchContext c, pk::SymTensor<float> f,
                                           pk::SymTensor<pk::bf16> b, pk::SymTensor<pk::f16> h,
                                           float* df, pk::bf16* db, pk::f16* dh,
                                           const __grid_constant__ pk::TensorMap map,
                                           long long n) {
  use_all(c, f, df, &map, n);
  use_all(c, b, db, &map, n);
  use_all(c, h, dh, &map, n);
  if (pk::barrier(c, 7)) return;
}

// The multicast lowering: compiled here, never executed anywhere in pk's tests.
extern "C" __global__ void instantiate_multimem(float* mf, pk::bf16* mb, pk::f16* mh, long long n) {
  pk::all_reduce_tile_multimem<pk::ReduceOp::sum>(mf, mf, 0, n);
  pk::all_reduce_tile_multimem<pk::ReduceOp::sum>(mb, mb, 0, n);
  pk::all_reduce_tile_multimem<pk::ReduceOp::max>(mb, mb, 0, n);
  pk::all_reduce_tile_multimem<pk::ReduceOp::min>(mh, mh, 0, n);
}
