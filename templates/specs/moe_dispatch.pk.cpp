// MoE dispatch: every rank sends each of its tokens to the experts its router chose. There are
// E = W El experts; expert e lives on rank e / El as that rank's local expert e % El. Each
// rank's `recv` [W El T, H] is laid out by source rank and expert: block b = s El + l holds, in
// rows [b T, b T + counts[b]), the tokens rank s sent to local expert l (T = tokens per rank:
// a token's K expert ids are distinct, as top-k gives them, so a block holds at most T rows;
// choices past that are dropped with slot -1, and counts stop at T). `slot` [T, K] records
// where each (token, choice) landed on its expert's rank: what moe_combine reads. An expert id
// outside [0, E) (-1: a dropped choice) sends nothing and gets slot -1. The order of rows
// inside a block is unspecified; `fill` [E] is the workspace that hands out the places.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void moe_dispatch(Tensor<bf16, 2> x, Tensor<i32, 2> ids, Scratch<i32, 1> fill,
                            Tensor<i32, 2> slot, Sym<bf16, 2> recv, Sym<i32, 1> counts) {
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
  // The rows, pushed into the experts' ranks by NVLink stores. They are only moved, so pkc holds
  // them packed as loaded: four runs a thread fit where two fp32 ones did, and 32 x 1024 tiles ran
  // 2 % faster than 32 x 512 (docs/benchmarks/moe-1xH200.md, run 22).
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 1024})) {
    auto rows = load<32, 1024>(x, t, n);
    for (auto k : range(0, ids.cols())) {
      auto owner = load<32, 1>(ids, t, k) / experts;
      auto place = load<32, 1>(slot, t, k);
      for (auto p : range(0, world_size()))
        store_rows(recv.on(p), rows, where(owner == p, place, -1), n);
    }
  }
  // The counts, into every expert rank's row of senders.
  for (auto [p, l] : tiles(world_size(), experts, {1, 1}))
    store(counts.on(p), min(load<1>(fill, p * experts + l), x.rows()), rank() * experts + l);
}
