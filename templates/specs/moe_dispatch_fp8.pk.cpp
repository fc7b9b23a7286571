// MoE dispatch sending fp8: moe_dispatch (see moe_dispatch.pk.cpp: the same places, slots and
// counts) with each token's row sent as e4m3 with one f32 scale per block of 128 columns, half
// the bytes of bf16 on the links. A row's block is quantised once, on its home rank, as
// fp8_all_gather does (scale = the block's largest magnitude / 448, so nothing saturates):
// `recv` [W El T, H] receives the e4m3 values and `recv_scale` [W El T, H / 128] (rounded up)
// the scales, row for row; an expert dequantises recv * recv_scale. The error is e4m3's: at most
// 2^-4 of each value (plus 2^-10 of its block's scale below e4m3's normals).
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void moe_dispatch_fp8(Tensor<bf16, 2> x, Tensor<i32, 2> ids, Scratch<i32, 1> fill,
                                Tensor<i32, 2> slot, Sym<f8e4m3, 2> recv, Sym<f32, 2> recv_scale,
                                Sym<i32, 1> counts) {
  index experts = counts.size() / world_size();  // El, experts per rank
  // This rank's rows per expert start at zero.
  for (auto e : tiles(fill.size(), {1024})) store(fill, zeros<i32, 1024>(), e);
  // A place for each (token, choice): block (rank, local expert) on the expert's rank.
  for (auto [t, k] : tiles(ids.rows(), ids.cols(), {256, 1})) {
    auto e = load<256, 1>(ids, t, k);
    auto place = claim(fill, e);
    auto fits = (place >= 0) * (place < x.rows());
    store(slot, where(fits, (e % experts + rank() * experts) * x.rows() + place, -1), t, k);
  }
  // Each 128-column block of the rows quantised once, then pushed with its scale into the
  // experts' ranks by NVLink stores. 128 rows a tile: each trip's routing reads then serve 16
  // KB of stores (32-row tiles measured 15% slower: docs/benchmarks/moe-1xH200.md, run 11).
  for (auto [t, n] : tiles(x.rows(), x.cols(), {128, 128})) {
    auto v = cast<f32>(load<128, 128>(x, t, n));
    auto amax = max(row_max(abs(v)), 1e-30f);
    auto q = cast<f8e4m3>(v * (448.0f / amax));
    auto scale = amax * 0.002232142857f;
    for (auto k : range(0, ids.cols())) {
      auto owner = load<128, 1>(ids, t, k) / experts;
      auto place = load<128, 1>(slot, t, k);
      for (auto p : range(0, world_size())) {
        store_rows(recv.on(p), q, where(owner == p, place, -1), n);
        store_rows(recv_scale.on(p), scale, where(owner == p, place, -1), n / 128);
      }
    }
  }
  // The counts, into every expert rank's row of senders.
  for (auto [p, l] : tiles(world_size(), experts, {1, 1}))
    store(counts.on(p), min(load<1>(fill, p * experts + l), x.rows()), rank() * experts + l);
}
