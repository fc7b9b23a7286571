// Tiles written into peers from general tile loops (pk-lower-peer-tiles): a ring shift, tiles
// added into one owner, and an all-reduce written by hand as adds into every rank. The compile
// tier turns them into sm_90a cubins; test/gpu/peer_tiles_test.cu runs them at W = 1-4.
#include <pk/spec.h>
using namespace pk;

// y on rank (r + 1) % W = x on rank r: a ring shift of 48 x 80 tiles (edge tiles both ways).
PK_KERNEL void ring_shift(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {48, 80}))
    store(y.on(next_rank()), load<48, 80>(x, m, n), m, n);
}

// y on rank 0 += 2 x on every rank (adds from all ranks land in one owner).
PK_KERNEL void add_to_owner(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64}))
    store_add(y.on(0), load<32, 64>(x, m, n) * 2.0f, m, n);
}

// y on rank p += x, p a run-time argument: a p outside the world is reported by the launch
// (pk::peer_in_range), never an access past the peer table.
PK_KERNEL void add_to_rank(Sym<f32, 2> x, Sym<f32, 2> y, index p) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64})) store_add(y.on(p), load<32, 64>(x, m, n), m, n);
}

// y on every rank += the sum over ranks of x: each rank adds its tile into every rank's copy.
PK_KERNEL void add_to_all(Sym<bf16, 1> x, Sym<bf16, 1> y) {
  for (auto i : tiles(x.size(), {2048}))
    for (auto p : range(0, world_size()))
      store_add(y.on(p), load<2048>(x, i), i);
}

// y on rank r = x of rank r - 1 + 2 x of rank r + 1: tiles pulled from two peers by NVLink
// loads (`load(x.on(p), ...)`), 40 x 72 tiles (edge tiles both ways).
PK_KERNEL void pull_neighbours(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {40, 72}))
    store(y, load<40, 72>(x.on(prev_rank()), m, n) + load<40, 72>(x.on(next_rank()), m, n) * 2.0f, m, n);
}

// out on rank r = x of rank r - 1 + x of rank r, with a flag per tile instead of a barrier
// after the pushes: each tile goes to the next rank's y and bumps that rank's flag for the
// tile (a run-time slot, `prim::flag(1 + tile)`); the next rank waits on it, then reads the
// tile. The barrier first keeps a rank from writing y while its neighbour still reads the
// last launch's.
PK_KERNEL void tile_flag_ring(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto ready = prim::flag(1 + m / 16 * ((x.cols() + 127) / 128) + n / 128);
    auto t = load<16, 128>(x, m, n);
    prim::store_async(Ldst, y.on(next_rank()), t, m, n);
    prim::signal(ready, next_rank());
    prim::wait(ready, 1);
    store(out, load<16, 128>(y, m, n) + t, m, n);
  }
}
