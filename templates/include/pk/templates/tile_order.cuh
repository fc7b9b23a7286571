// The order in which persistent blocks visit output tiles: rows are split into segments (the
// owners of a reduce-scatter, the shards of an all-gather, or one segment), each segment is
// walked in groups of `group_m` row tiles so that blocks running at the same time share A rows
// and B columns in L2, and the walk starts at a rank-dependent segment so that ranks begin on
// different peers.
#pragma once

namespace pk {

struct TileCoord {
  int seg;  // segment (owner / shard)
  int mi;   // row tile inside the segment
  int ni;   // column tile
};

struct TileOrder {
  int segments;
  int seg_tiles_m;  // row tiles per segment
  int tiles_n;
  int group_m;      // L2 group height, in row tiles
  int first_seg;    // segment visited first
  int interleave;   // 1: alternate segments tile by tile (spreads traffic over the whole run);
                    // 0: finish a segment before the next (all-gather: local shard first)
  int rotate;       // offset of the walk inside each segment (ranks start on different tiles)

  __host__ __device__ int per_segment() const { return seg_tiles_m * tiles_n; }
  __host__ __device__ int count() const { return segments * per_segment(); }

  __host__ __device__ TileCoord at(int t) const {
    const int per = per_segment();
    int k, u;
    if (interleave) {
      k = t % segments;
      u = t / segments;
    } else {
      k = t / per;
      u = t % per;
    }
    u = (u + rotate) % per;
    TileCoord c;
    c.seg = (first_seg + k) % segments;
    const int group = group_m * tiles_n;
    const int first_m = (u / group) * group_m;
    const int rows = seg_tiles_m - first_m < group_m ? seg_tiles_m - first_m : group_m;
    const int r = u % group;
    c.mi = first_m + r % rows;
    c.ni = r / rows;
    return c;
  }
};

}  // namespace pk
