// The order in which persistent blocks visit output tiles: rows are split into segments (the
// owners of a reduce-scatter, the shards of an all-gather, or one segment), each segment is
// walked in groups of `group_m` row tiles so that blocks running at the same time share A rows
// and B columns in L2, and the walk starts at a rank-dependent segment so that ranks begin on
// different peers. The walk's unit is a cluster tile: `cluster_m` row tiles with one column
// tile, one per block of a cluster (the blocks share the B tile); a segment whose row tiles
// do not fill its last cluster tile gives the spare blocks a repeat of a real tile to compute
// and nothing to store (`valid` false), so both blocks keep the shared loads in step.
#pragma once

namespace pk {

struct TileCoord {
  int seg;     // segment (owner / shard)
  int mi;      // row tile inside the segment
  int ni;      // column tile
  bool valid;  // false: a repeat that keeps a cluster's loads in step; store nothing
};

struct TileOrder {
  int segments;
  int seg_tiles_m;  // row tiles per segment
  int tiles_n;
  int group_m;      // L2 group height, in row tiles
  int first_seg;    // segment visited first
  int interleave;   // 1: alternate segments tile by tile (spreads traffic over the whole run);
                    // 0: finish a segment before the next (all-gather: local shard first)
  int rotate;       // offset of the walk inside each segment, in cluster tiles
  int cluster_m;    // row tiles per cluster tile (blocks per cluster)

  __host__ __device__ int cluster_rows() const { return (seg_tiles_m + cluster_m - 1) / cluster_m; }
  __host__ __device__ int per_segment() const { return cluster_rows() * tiles_n; }
  // Cluster tiles in the whole walk.
  __host__ __device__ int count() const { return segments * per_segment(); }

  // The tile block `cta` of a cluster computes at step t of the walk.
  __host__ __device__ TileCoord at(int t, int cta = 0) const {
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
    const int crows = cluster_rows();
    const int gm = group_m / cluster_m > 0 ? group_m / cluster_m : 1;  // group, in cluster rows
    const int group = gm * tiles_n;
    const int first_m = (u / group) * gm;
    const int rows = crows - first_m < gm ? crows - first_m : gm;
    const int r = u % group;
    const int mi = (first_m + r % rows) * cluster_m + cta;
    c.valid = mi < seg_tiles_m;
    c.mi = c.valid ? mi : mi - cta;  // a repeat of the cluster's first (always real) tile
    c.ni = r / rows;
    return c;
  }
};

}  // namespace pk
