// The plain-data model between the Clang walker and the MLIR builder: kernels as nested
// lists of ops over numbered values. Neither Clang nor MLIR headers appear here, because
// both define names like Type and Attr and their TUs must stay apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pk::fe {

struct SrcLoc {
  std::string file;
  unsigned line = 0, col = 0;
};

enum class Elem { BF16, F16, F32, I32, I64, F8E4M3, F8E5M2, I8 };
inline bool isIntElem(Elem e) { return e == Elem::I32 || e == Elem::I64 || e == Elem::I8; }

struct ValueType {
  enum Kind { Index, Tensor, Sym, Tile, Flag, Scalar } kind = Index;  // Scalar: an f32
  Elem elem = Elem::F32;
  std::vector<int64_t> shape;  // tiles: static extents; tensors: -1 per dimension
  bool smem = false;           // tiles only
  bool scratch = false;        // Scratch<T, Rank> parameters: contents unspecified afterwards
};

enum class OpKind {
  Rank, WorldSize, Dim, Constant,
  Add, Sub, Mul, Div, Rem, MinIndex, MaxIndex,  // index arithmetic
  TileForeach, For, Yield,                 // loops (Yield ends a For body)
  Load, Store, Zeros, Mma, Map, Cast, ReduceRows,
  Select, Iota,                            // mask select; coordinates (dim in attr)
  LoadRows, StoreRows,                     // rows by an index tile (StoreRows: attr 1 adds)
  Transpose, Reshape, Cumsum, Histogram, Claim,
  Topk,                                    // results: values, indices
  LoadScalar,                              // x.at(i...): index (integer tensors) or f32
  FConstant, Splat,                        // an f32 constant (bits in ints[0]); scalar -> tile
  IndexToFloat,                            // an index (a size, a tile origin) as an f32 scalar
  FAdd, FSub, FMul, FDiv,                  // f32 scalar arithmetic (float parameters, constants)
  ScalarMap,                               // math on f32 scalars (MapKind in attr)
  AllReduce, AllGather, ReduceScatter, AllToAll, StoreTile, AddTile,
  Broadcast, ReduceToRoot, Gather, Scatter,    // rooted collectives (root: operand 2)
  StoreAsync, StoreAddAsync, CommReduce, CommAllReduce, LoadPeer,
  Flag, Signal, SignalAll, Wait, Barrier,
};

// Small enums carried in Op::attr, matching the dialect's enums by name.
enum class MapKind {
  Add, Sub, Mul, Div, Max, Min, Exp, Neg,
  Sqrt, Rsqrt, Log, Tanh, Sigmoid, Silu, GeluTanh, GeluErf, Erf, Sin, Cos, Abs, Pow,
  Lt, Le, Gt, Ge, Eq, Ne, Rem, Hash, BitAnd, BitOr, BitXor, Shl, Shr, Round, Floor, Ceil,
};
enum class ReduceKind { Sum, Max, Min };
enum class TransportKind { Ldst, Tma, Multimem };

struct Op;
struct Region {
  std::vector<int> args;  // value ids of the block arguments
  std::vector<Op> ops;
};

struct Op {
  OpKind kind;
  SrcLoc loc;
  std::vector<int> operands;  // value ids; for Peer-addressed ops: value, dest, peer, indices
  std::vector<int> results;   // value ids
  int attr = 0;               // MapKind / ReduceKind / scope, per op
  int transport = 0;          // TransportKind for primitives
  std::vector<int64_t> ints;  // Constant value, Dim index, foreach steps, tile shapes, slot
  std::vector<Region> regions;
};

struct Kernel {
  std::string name;
  SrcLoc loc;
  std::vector<ValueType> values;  // type of every value id
  Region body;                    // args are the kernel's parameters
  std::vector<SrcLoc> argLocs;    // where each parameter is declared
  std::vector<std::string> argNames;  // and its name, for diagnostics
};

struct Module {
  std::vector<Kernel> kernels;
};

} // namespace pk::fe
