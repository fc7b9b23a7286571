// Rows of a 2-D tensor moved by an index tile (pk/tile/rt.cuh): gathers (embedding lookups,
// MoE dispatch reads) and scatters or scatter-adds (MoE combine). The indices are spread over
// the block like any tile, so they pass through the shared-memory stage once: every thread then
// reads the row index of each element it holds. Indices given as RowValues (computed by each
// thread for the rows it holds) need no stage and no barrier. Out-of-range rows and columns
// read as zero and are dropped on writes, so a bad index is never an out-of-bounds access.
#pragma once
#include <pk/tile/rows.cuh>

namespace pk {
namespace tile {

// Puts the R row indices of `idx` into the stage as `long long` and returns it; between
// barriers, so earlier users of the stage are done and every thread sees all indices. Like
// every user of the stage it opens with a barrier and needs none at its end: the next user's
// opening barrier waits for these reads. Indices
// past idx.valid0 (padding of a clipped load) or past `valid` (a scatter's moved tile: rows of
// its own padding are not data) become -1, a row that is never moved.
template <class Idx>
__device__ __forceinline__ const long long* stage_row_indices(const Idx& idx, float* stage,
                                                              long long valid = Idx::dim(0)) {
  static_assert(is_integer_v<typename Idx::elem>, "row indices are an integer tile");
  static_assert(Idx::kCount * sizeof(long long) <= kStageFloats * sizeof(float),
                "at most 2048 rows per gather or scatter");
  long long* rows = reinterpret_cast<long long*>(stage);
  __syncthreads();
#pragma unroll
  for (int s = 0; s < Idx::kSlots; ++s) {
    const long long i = Idx::index(s);
    if (i < Idx::kCount) rows[i] = !idx.padding(i) && i < valid ? static_cast<long long>(idx.v[s]) : -1;
  }
  __syncthreads();
  return rows;
}

// The row index of tile row r: from the stage, or computed (-1 past valid0: padding).
struct StagedRows {
  const long long* rows;
  __device__ __forceinline__ long long operator()(int, long long r) const { return rows[r]; }
};
template <class Made, class T>
struct RowsOf {
  const RowValues<Made, T>& v;
  long long valid = Made::dim(0);  // a scatter's moved tile: its padding rows stay put
  __device__ __forceinline__ long long operator()(int s, long long r) const {
    return r < v.valid0 && r < valid ? static_cast<long long>(v.at(s, r)) : -1;
  }
};

// The tensor offset of slot s's element i (row row_of(s, i / C), column col + i % C), or -1
// outside.
template <class Tile, class RowOf>
__device__ __forceinline__ long long row_offset(int s, RowOf row_of, const long long* shape,
                                                long long col) {
  const long long i = Tile::index(s);
  if (i >= Tile::kCount) return -1;
  const long long r = row_of(s, i / Tile::kCols), c = col + i % Tile::kCols;
  if (r < 0 || r >= shape[0] || c < 0 || c >= shape[1]) return -1;
  return r * shape[1] + c;
}

// Whether every run of kVec elements of a row-moved tile lies in one row, 16-byte aligned and
// inside the tensor's columns: then rows move as whole 16-byte runs (uniform over the block).
template <class Tile, class T>
__device__ __forceinline__ bool row_runs_fit(const T* data, const long long* shape, long long col) {
  if constexpr (is_integer_v<T> || Tile::kCols % Tile::kVec != 0 ||
                !(sizeof(T) <= 2 || ::pk::is_same<T, float>::value)) {
    return false;
  } else {
    return col >= 0 && col + Tile::kCols <= shape[1] && shape[1] % Tile::kVec == 0 &&
           col % Tile::kVec == 0 && reinterpret_cast<unsigned long long>(data) % 16 == 0;
  }
}

// Whether the run starting at slot s (row_runs_fit holds) lies in a row inside the tensor, and
// then its offset in `off`. One unsigned compare rejects both -1 (no row) and rows past the end.
template <class Tile, class RowOf>
__device__ __forceinline__ bool row_run_at(int s, RowOf row_of, const long long* shape, long long col,
                                           long long& off) {
  const long long i = Tile::index(s);
  if (!Tile::holds(i)) return false;
  const long long r = row_of(s, i / Tile::kCols);
  if (static_cast<unsigned long long>(r) >= static_cast<unsigned long long>(shape[0])) return false;
  off = r * shape[1] + col + i % Tile::kCols;
  return true;
}

// Runs of float rows (16 bytes of bf16, 8 of fp8) moved by a row vector of int indices, one
// per run (the MoE routing: owner == p ? place : -1), once row_runs_fit holds: the same runs
// as row_run_at with RowsOf, in fewer instructions. What is fixed for the call is worked out
// once: the tile rows that hold data (valid0, clamped to [0, rows]) and the tensor's rows as
// one 32-bit bound, min(rows, 2^31): an int index v lies in [0, rows) exactly when (unsigned)v
// is below it, so -1 (no row), negative and past-the-end indices are rejected by one 32-bit
// compare. The run's address is a 32 x 64-bit multiply-add in bytes from its column in row 0.
template <class Tile, class Made, class I, class T>
constexpr bool int_row_runs_v = ::pk::is_same<I, int>::value && RowValues<Made, I>::kPerRun && !is_integer_v<T>;
template <class Tile>
struct IndexedRuns {
  int valid;                     // tile rows below this hold data (a clipped load's padding does not)
  unsigned rows;                 // min(tensor rows, 2^31)
  unsigned long long row_bytes;  // the tensor's row length in bytes
  long long col;                 // the tile's first column
  template <class T>
  __device__ __forceinline__ IndexedRuns(long long valid0, const long long* shape, long long c, const T*)
      : valid(valid0 <= 0 ? 0 : valid0 < Tile::kRows ? static_cast<int>(valid0) : static_cast<int>(Tile::kRows)),
        rows(shape[0] < 0x80000000ll ? static_cast<unsigned>(shape[0]) : 0x80000000u),
        row_bytes(static_cast<unsigned long long>(shape[1]) * sizeof(T)), col(c) {}
  __device__ __forceinline__ bool all_rows() const { return valid >= static_cast<int>(Tile::kRows); }
  // Whether the run at slot s, whose row index is v, moves, and then its address in `p`.
  // AllRows: every tile row holds data (valid == kRows), so no run's row is tested against it.
  template <bool AllRows, class T>
  __device__ __forceinline__ bool at(int s, int v, T* data, T*& p) const {
    const long long i = Tile::index(s);
    if (!Tile::holds(i)) return false;
    const int e = static_cast<int>(i);  // 32-bit tile coordinates (kCount < 2^31)
    if ((!AllRows && e / static_cast<int>(Tile::kCols) >= valid) || static_cast<unsigned>(v) >= rows) return false;
    // Byte arithmetic: the run's column in row 0, then v rows on.
    using Byte = typename pick_type<::pk::is_same<const T, T>::value, const char, char>::type;
    Byte* const first = reinterpret_cast<Byte*>(data + col + e % static_cast<int>(Tile::kCols));
    p = reinterpret_cast<T*>(first + static_cast<unsigned long long>(static_cast<unsigned>(v)) * row_bytes);
    return true;
  }
};

// The runs of t gathered by IndexedRuns, and the packed runs of a tile scattered by them. Whole
// tiles (the common case) take AllRows: no run's row is tested against the valid rows (the fp8
// MoE dispatch ran 6 % faster for it: docs/benchmarks/moe-1xH200.md, run 19).
template <bool AllRows, class Tile, class Idx, class T>
__device__ __forceinline__ void load_indexed_runs(Tile& t, const IndexedRuns<Tile>& runs, const Idx& idx, const T* data) {
#pragma unroll
  for (int s = 0; s < Tile::kSlots; s += Tile::kVec) {
    float run[Tile::kVec] = {};  // a local run, so the tile's slots stay in registers
    const T* p = data;
    if (runs.template at<AllRows>(s, idx.v[s / Tile::kVec], data, p)) load_run(p, run);
#pragma unroll
    for (int k = 0; k < Tile::kVec; ++k) t.v[s + k] = run[k];
  }
}
template <bool AllRows, class Tile, class Packed, class Idx, class T>
__device__ __forceinline__ void store_indexed_runs(const Packed* packed, const IndexedRuns<Tile>& runs, const Idx& idx,
                                                   T* data) {
#pragma unroll
  for (int s = 0; s < Tile::kSlots; s += Tile::kVec) {
    T* p = data;
    if (runs.template at<AllRows>(s, idx.v[s / Tile::kVec], data, p)) store_packed(p, packed[s / Tile::kVec]);
  }
}

// t (R x C) = rows row_of(0..R) of `data` (shape rows x cols) from column `col`.
template <class Tile, class RowOf, class T>
__device__ void load_rows_of(Tile& t, RowOf row_of, const T* data, const long long* shape, long long col) {
  if constexpr (!is_integer_v<T>) {
    if (row_runs_fit<Tile>(data, shape, col)) {
#pragma unroll
      for (int s = 0; s < Tile::kSlots; s += Tile::kVec) {
        long long off = 0;
        float run[Tile::kVec] = {};  // a local run, so the tile's slots stay in registers
        if (row_run_at<Tile>(s, row_of, shape, col, off)) load_run(data + off, run);
#pragma unroll
        for (int k = 0; k < Tile::kVec; ++k) t.v[s + k] = run[k];
      }
      return;
    }
  }
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    const long long off = row_offset<Tile>(s, row_of, shape, col);
    t.v[s] = off >= 0 ? load_value(data[off]) : typename Tile::value(0);
  }
}

// t (R x C) = rows idx[0..R) of `data` (shape rows x cols) from column `col`.
template <class Tile, class Idx, class T>
__device__ void load_rows(Tile& t, const Idx& idx, const T* data, const long long* shape, long long col,
                          float* stage) {
  static_assert(Tile::kRank == 2 && Idx::kCount == Tile::dim(0), "one index per tile row");
  // Rows gathered by padding indices are padding too (computed from them).
  t.valid0 = idx.valid_count();
  t.valid1 = Tile::dim(1);
  load_rows_of(t, StagedRows{stage_row_indices(idx, stage)}, data, shape, col);
}
template <class Tile, class Made, class I, class T>
__device__ void load_rows(Tile& t, const RowValues<Made, I>& idx, const T* data, const long long* shape,
                          long long col, float*) {
  static_assert(Tile::kRank == 2, "rows of a 2-D tile");
  static_assert(same_rows_v<Tile, Made>, "row indices made for another tile's rows");
  t.valid0 = idx.valid0;  // rows gathered by padding indices are padding too
  t.valid1 = Tile::dim(1);
  if constexpr (int_row_runs_v<Tile, Made, I, T>) {
    if (row_runs_fit<Tile>(data, shape, col)) {
      const IndexedRuns<Tile> runs(idx.valid0, shape, col, data);
      if (runs.all_rows()) load_indexed_runs<true>(t, runs, idx, data);
      else load_indexed_runs<false>(t, runs, idx, data);
      return;
    }
  }
  load_rows_of(t, RowsOf<Made, I>{idx}, data, shape, col);
}

// Rows of t to rows row_of(0..R) of `data` from column `col`; `Add` adds them
// (red.global.add), so rows sent to one index by several tiles all arrive.
template <bool Add, class Tile, class RowOf, class T>
__device__ void store_rows_of(const Tile& t, RowOf row_of, T* data, const long long* shape, long long col) {
  if constexpr (!Add && !is_integer_v<T>) {
    if (row_runs_fit<Tile>(data, shape, col)) {
#pragma unroll
      for (int s = 0; s < Tile::kSlots; s += Tile::kVec) {
        long long off = 0;
        if (!row_run_at<Tile>(s, row_of, shape, col, off)) continue;
        float run[Tile::kVec];
#pragma unroll
        for (int k = 0; k < Tile::kVec; ++k) run[k] = t.v[s + k];
        store_run(data + off, run);
      }
      return;
    }
  }
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    const long long off = row_offset<Tile>(s, row_of, shape, col);
    if (off < 0) continue;
    if constexpr (Add) ::pk::detail::red_add(data + off, store_value<T>(t.v[s]));
    else data[off] = store_value<T>(t.v[s]);
  }
}

// A copy of t (a tile or a column of row values) whose every row moves, its padding rows too:
// a local store_add moves rows to their own places, as a plain store writes them.
template <class T>
__device__ __forceinline__ T all_rows(T t) {
  t.valid0 = 1ll << 40;
  return t;
}

// Rows of t to rows idx[0..R) of `data` from column `col`. Rows of t past t.valid0 (a clipped
// load's padding, and what is computed from it) are not data and move nowhere, as padding
// indices do not.
template <bool Add, class Tile, class Idx, class T>
__device__ void store_rows(const Tile& t, const Idx& idx, T* data, const long long* shape, long long col,
                           float* stage) {
  static_assert(Tile::kRank == 2 && Idx::kCount == Tile::dim(0), "one index per tile row");
  store_rows_of<Add>(t, StagedRows{stage_row_indices(idx, stage, t.valid0)}, data, shape, col);
}
template <bool Add, class Tile, class Made, class I, class T>
__device__ void store_rows(const Tile& t, const RowValues<Made, I>& idx, T* data, const long long* shape,
                           long long col, float*) {
  static_assert(Tile::kRank == 2, "rows of a 2-D tile");
  static_assert(same_rows_v<Tile, Made>, "row indices made for another tile's rows");
  // Rows of t past t.valid0 move nowhere, as padding indices do not: one bound, the indices',
  // folded here once (the two bounds kept apart cost the MoE dispatches a third more instructions).
  RowValues<Made, I> moved = idx;
  if (t.valid0 < moved.valid0) moved.valid0 = t.valid0;
  if constexpr (!Add && int_row_runs_v<Tile, Made, I, T>) {
    // Every run packed first, whether it moves or not (pk/tile/rt.cuh PackedRun).
    PackedRun<T> packed[Tile::kSlots / Tile::kVec];
#pragma unroll
    for (int s = 0; s < Tile::kSlots; s += Tile::kVec) packed[s / Tile::kVec] = pack_run<T>(t.v + s);
    if (row_runs_fit<Tile>(data, shape, col)) {
      const IndexedRuns<Tile> runs(moved.valid0, shape, col, data);
      if (runs.all_rows()) store_indexed_runs<true, Tile>(packed, runs, moved, data);
      else store_indexed_runs<false, Tile>(packed, runs, moved, data);
      return;
    }
  }
  store_rows_of<Add>(t, RowsOf<Made, I>{moved}, data, shape, col);
}

}  // namespace tile
}  // namespace pk
