// Interprets a device-level kernel per rank and block into the protocol model's events.
#include "ProtocolModel.h"
#include "pk/Passes/Decisions.h"
#include <pk/runtime/host_check.h>
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include <algorithm>
#include <limits>
#include <set>

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::protocol;

// A dimension's extent where modelDims chose none: config.dimValue along the first, the spread
// (or 1) along the others.
static int64_t defaultExtent(const Config &config, int64_t d) {
  if (d == 0) return config.dimValue;
  return size_t(d) < config.spread.size() ? config.spread[d] : 1;
}

namespace {

constexpr int64_t kMaxModelledBlocks = 8;

struct FlagInfo {
  int64_t slot;
  bool block;
  int64_t shift;  // pk.spec_shift: the spec wrote slot - shift
};

// Evaluates one block's body. Integer values are concrete for the configuration; tiles
// and floats are not tracked because the protocol never depends on them.
class Interpreter {
public:
  Interpreter(const Config &c, int rank, int block, int localBlock, int64_t blocksInWorker,
              Process &out)
      : config(c), rank(rank), block(block), localBlock(localBlock),
        blocksInWorker(blocksInWorker), out(out) {}

  Operation *failedOp = nullptr;
  std::string why;

  // Integer arguments take the configured value; a host loop's trip arguments (pk.trips) take
  // the configured trip of the loop's range at the modelled sizes. False, with a reason that
  // says so, where the loop makes no such trip: the host issues no such launch.
  bool bindArguments(KernelOp kernel) {
    auto args = kernel.getBody().getArguments();
    const int64_t intValue = config.intArgs.value_or(config.dimValue);
    for (BlockArgument arg : args)
      if (arg.getType().isIntOrIndex()) values[arg] = intValue;
    auto trips = kernel->getAttrOfType<ArrayAttr>(kTripsAttr);
    if (!trips || trips.size() > args.size()) return true;
    ::pk::HostValues host;
    host.world = config.world;
    host.extent = [&](int a, int k) -> ::pk::Result<long long> { return extent(unsigned(a), k); };
    host.scalar = [&](int) -> ::pk::Result<long long> { return intValue; };
    auto eval = [&](Attribute text, int64_t &out) {
      auto str = dyn_cast_or_null<StringAttr>(text);
      if (!str) return false;
      auto e = ::pk::parse_host_expr(str.str());
      if (!e) return false;
      auto v = ::pk::evaluate_host_expr(*e, host);
      if (!v) return false;
      out = *v;
      return true;
    };
    const size_t first = args.size() - trips.size();
    for (auto [i, trip] : llvm::enumerate(trips.getAsRange<DictionaryAttr>())) {
      int64_t lb, ub, st;
      if (!eval(trip.get("lb"), lb) || !eval(trip.get("ub"), ub) || !eval(trip.get("step"), st) || st <= 0)
        return fail(kernel, "a host loop's bounds cannot be evaluated at the modelled sizes");
      const int64_t value = lb + config.trip * st;
      // Bounds that read integer arguments (which the model ties to one value) make the trip
      // for other argument values: model it. Bounds of sizes and the world alone do not.
      auto readsArgs = [&](StringRef key) { return cast<StringAttr>(trip.get(key)).getValue().contains("arg("); };
      if (value >= ub && !readsArgs("lb") && !readsArgs("ub"))
        return fail(kernel, std::string(kRefusedAtLaunch) + ": the host loop makes no trip " +
                                std::to_string(config.trip) + " at these sizes");
      values[args[first + i]] = value;
    }
    return true;
  }

  bool run(Block &body, int depth) {
    for (Operation &op : body)
      if (!step(&op, depth))
        return false;
    return true;
  }

  bool runOps(ArrayRef<Operation *> ops) {
    for (Operation *op : ops)
      if (!step(op, 0)) return false;
    return true;
  }

private:
  const Config &config;
  int rank, block, localBlock;
  int64_t blocksInWorker;
  Process &out;
  llvm::DenseMap<Value, int64_t> values;
  llvm::DenseSet<Value> unknown;  // integers computed from memory (`x.at(i)`)
  int64_t tile = -1;              // the dealt tile loop's tile being run (-1: outside one)
  llvm::DenseMap<Value, FlagInfo> flags;
  // Per dimension, the leading indices of a tile that came from inside a tensor (a clipped
  // load's valid0, valid1, ...), for race reports.
  llvm::DenseMap<Value, SmallVector<int64_t, 4>> validExtents;

  // Notes the indices of a tile loaded from `tensor` at `indices` that lie inside it, along
  // each dimension (the tile's rank is the tensor's); an index the model does not know leaves
  // that dimension whole.
  void noteLoad(Value tile, Value tensor, ValueRange indices) {
    auto arg = dyn_cast<BlockArgument>(tensor);
    auto type = dyn_cast<TileType>(tile.getType());
    if (!arg || !type || type.getShape().empty() || indices.empty()) return;
    ArrayRef<int64_t> shape = type.getShape();
    if (values.find(indices.front()) == values.end()) return;
    SmallVector<int64_t, 4> valid(shape.begin(), shape.end());
    for (size_t d = 0; d < shape.size() && (d == 0 || indices.size() == shape.size()); ++d) {
      auto origin = values.find(indices[d]);
      if (origin == values.end()) continue;
      valid[d] = std::clamp<int64_t>(extent(arg.getArgNumber(), int64_t(d)) - origin->second, 0, shape[d]);
    }
    validExtents[tile] = valid;
  }

  // Element-wise tile ops keep the least valid extents of their operands, as pk::tile::rt
  // does, where the operands have the result's shape (a transpose or a broadcast moves
  // them); a reshape that adds or drops leading unit dimensions keeps the trailing ones.
  void propagateValid(Operation *op) {
    if (isa<TileTransposeOp>(op) || op->getNumResults() != 1) return;
    auto out = dyn_cast<TileType>(op->getResult(0).getType());
    if (!out || out.getShape().empty()) return;
    ArrayRef<int64_t> outShape = out.getShape();
    if (isa<TileReshapeOp>(op)) {
      auto it = validExtents.find(op->getOperand(0));
      if (it == validExtents.end()) return;
      ArrayRef<int64_t> in = cast<TileType>(op->getOperand(0).getType()).getShape();
      const size_t common = std::min(in.size(), outShape.size());
      // The trailing `common` extents must agree, and the rest be units.
      if (in.take_back(common) != outShape.take_back(common) ||
          llvm::any_of(in.drop_back(common), [](int64_t e) { return e != 1; }) ||
          llvm::any_of(outShape.drop_back(common), [](int64_t e) { return e != 1; }))
        return;
      SmallVector<int64_t, 4> valid(outShape.begin(), outShape.end());
      const bool empty = llvm::any_of(it->second, [](int64_t v) { return v <= 0; });
      for (size_t d = 0; d < common; ++d)
        valid[outShape.size() - common + d] = it->second[in.size() - common + d];
      if (empty) valid[0] = 0;  // a tile wholly outside its tensor stays padding
      validExtents[op->getResult(0)] = valid;
      return;
    }
    // A product's rows are A's and its columns B's (B's rows with transpose_b); the K padding
    // is zeros on both sides and adds nothing. The accumulator bounds both.
    if (auto mma = dyn_cast<TileMmaOp>(op)) {
      if (outShape.size() != 2) return;
      SmallVector<int64_t, 4> valid(outShape.begin(), outShape.end());
      bool any = false;
      auto bound = [&](Value v, size_t from, size_t to) {
        auto it = validExtents.find(v);
        if (it == validExtents.end() || it->second.size() != 2) return;
        valid[to] = std::min(valid[to], it->second[from]);
        any = true;
      };
      bound(mma.getA(), 0, 0);
      bound(mma.getB(), mma.getTransposeB() ? 0 : 1, 1);
      bound(mma.getAcc(), 0, 0);
      bound(mma.getAcc(), 1, 1);
      if (any) validExtents[op->getResult(0)] = valid;
      return;
    }
    // Along a dimension an operand shares with the result; one it is broadcast along (extent
    // 1) or that the op reduces (the result's extent 1) does not bound it.
    SmallVector<int64_t, 4> least(outShape.begin(), outShape.end());
    bool any = false;
    for (Value in : op->getOperands()) {
      auto it = validExtents.find(in);
      if (it == validExtents.end()) continue;
      auto type = dyn_cast<TileType>(in.getType());
      if (!type || type.getRank() != out.getRank()) return;
      for (size_t d = 0; d < least.size(); ++d) {
        const int64_t e = type.getShape()[d];
        if (e == outShape[d]) least[d] = std::min(least[d], it->second[d]);
        else if (e != 1 && outShape[d] != 1) return;
      }
      any = true;
    }
    if (any) validExtents[op->getResult(0)] = least;
  }

  // Where a loaded tile came from (its tensor and box): the rows a scatter by it writes.
  struct RowSource {
    unsigned tensor;
    SmallVector<int64_t, 2> lo, hi;
  };
  llvm::DenseMap<Value, RowSource> rowSources;

  void noteStore(Value tile) {
    if (auto it = validExtents.find(tile); it != validExtents.end())
      out.events.back().access.validRows = it->second[0];
  }

  bool fail(Operation *op, const std::string &reason) {
    failedOp = op;
    why = reason;
    return false;
  }

  // Whether `rows` numbers the tile's rows from its origin, cast<i32>(row_index(m)) or that plus
  // one value s for every row, and then the first row number, m + s.
  bool numberedRows(Operation *user, Value rows, int64_t &first) {
    auto strip = [](Value v) -> Value {
      if (auto c = v.getDefiningOp<TileCastOp>()) return c.getInput();
      return v;
    };
    int64_t shift = 0;
    rows = strip(rows);
    if (auto map = rows.getDefiningOp<TileMapOp>(); map && map.getKind() == MapKind::add && map.getInputs().size() == 2) {
      Value x = map.getInputs()[0], y = map.getInputs()[1];
      if (!y.getDefiningOp<TileSplatOp>()) std::swap(x, y);
      auto splat = y.getDefiningOp<TileSplatOp>();
      if (!splat || !get(user, splat.getScalar(), shift)) return false;
      rows = strip(x);
    }
    auto iota = rows.getDefiningOp<TileIotaOp>();
    if (!iota || iota.getDim() != 0 || !get(user, iota.getOrigin(), first)) return false;
    first += shift;
    return true;
  }

  bool get(Operation *user, Value v, int64_t &result) {
    if (unknown.contains(v))
      return fail(user, std::string(kFromMemory) + " (pk.load_scalar) decides an index, a bound, a peer or a "
                        "branch here, and the checker cannot know it on every rank");
    auto it = values.find(v);
    if (it == values.end())
      return fail(user, "an index operand is not computed from constants, pk.rank, "
                        "pk.world_size, pk.dim or tile origins");
    result = it->second;
    return true;
  }

  bool getAll(Operation *user, ValueRange vs, SmallVectorImpl<int64_t> &result) {
    for (Value v : vs) {
      int64_t x;
      if (!get(user, v, x)) return false;
      result.push_back(x);
    }
    return true;
  }

  bool tensorArg(Operation *op, Value tensor, unsigned &number) {
    auto arg = dyn_cast<BlockArgument>(tensor);
    if (!arg || !isa<KernelOp>(arg.getOwner()->getParentOp()))
      return fail(op, "the tensor is not a kernel argument");
    number = arg.getArgNumber();
    return true;
  }

  // The modelled extent of kernel argument `arg` along dimension `d`: config.dimValue along
  // the first, 1 along the others, unless modelDims chose another.
  int64_t extent(unsigned arg, int64_t d) const { return modelledExtent(config, arg, d); }

  // Pushes the boxes that make up the row-major run [from, to) of an N-D tensor whose extents
  // after dimension d are `extents` (at most two partial rows and one box of whole rows per
  // dimension), so runs and tiles of one tensor compare in the same coordinates.
  void runBoxes(const Event &proto, ArrayRef<int64_t> extents, size_t d, int64_t from, int64_t to,
                SmallVectorImpl<int64_t> &lo, SmallVectorImpl<int64_t> &hi) {
    if (from >= to) return;
    if (d + 1 == extents.size()) {
      Event e = proto;
      e.access.lo.assign(lo.begin(), lo.end());
      e.access.hi.assign(hi.begin(), hi.end());
      e.access.lo.push_back(from);
      e.access.hi.push_back(to);
      out.events.push_back(std::move(e));
      return;
    }
    int64_t stride = 1;
    for (size_t k = d + 1; k < extents.size(); ++k) stride *= std::max<int64_t>(extents[k], 1);
    auto row = [&](int64_t r, int64_t a, int64_t b) {  // part [a, b) of row r
      lo.push_back(r);
      hi.push_back(r + 1);
      runBoxes(proto, extents, d + 1, a, b, lo, hi);
      lo.pop_back();
      hi.pop_back();
    };
    int64_t first = from / stride, last = (to - 1) / stride;
    if (first == last) return row(first, from - first * stride, to - first * stride);
    if (from % stride) row(first++, from % stride, stride);
    int64_t whole = to % stride ? last : last + 1;  // rows [first, whole) are whole
    if (whole > first) {
      Event e = proto;
      e.access.lo.assign(lo.begin(), lo.end());
      e.access.hi.assign(hi.begin(), hi.end());
      e.access.lo.push_back(first);
      e.access.hi.push_back(whole);
      for (size_t k = d + 1; k < extents.size(); ++k) {
        e.access.lo.push_back(0);
        e.access.hi.push_back(std::max<int64_t>(extents[k], 1));
      }
      out.events.push_back(std::move(e));
    }
    if (to % stride) row(last, 0, to % stride);
  }

  // Records an access to `memRank`'s copy of `tensor`, covering `shape` from `origin`. A
  // flat run (one index, one extent) in a tensor of higher rank becomes the boxes it covers.
  bool access(Operation *op, Value tensor, ValueRange indices, ArrayRef<int64_t> shape,
              int memRank, bool write, bool add, bool tma) {
    Event e{EventKind::Access, op};
    e.access.tile = tile;
    if (!tensorArg(op, tensor, e.access.tensor)) return false;
    SmallVector<int64_t> origin;
    if (!getAll(op, indices, origin)) return false;
    size_t rank = getTensorShape(tensor.getType()).size();
    if (origin.size() == 1 && shape.size() == 1 && rank > 1) {
      e.access.memRank = memRank;
      e.access.write = write;
      e.access.add = add;
      e.access.tma = tma;
      SmallVector<int64_t> extents, lo, hi;
      for (size_t d = 0; d < rank; ++d) extents.push_back(extent(e.access.tensor, int64_t(d)));
      runBoxes(e, extents, 0, origin[0], origin[0] + shape[0], lo, hi);
      return true;
    }
    e.access.memRank = memRank;
    e.access.write = write;
    e.access.add = add;
    e.access.tma = tma;
    for (auto [i, o] : llvm::enumerate(origin)) {
      e.access.lo.push_back(o);
      e.access.hi.push_back(o + (i < shape.size() ? shape[i] : 1));
    }
    out.events.push_back(std::move(e));
    return true;
  }

  // An access to the whole of `memRank`'s copy of `tensor` (writes commute, as adds do).
  bool wholeAccess(Operation *op, Value tensor, int memRank, bool write) {
    Event e{EventKind::Access, op};
    e.access.tile = tile;
    if (!tensorArg(op, tensor, e.access.tensor)) return false;
    e.access.memRank = memRank;
    e.access.write = write;
    e.access.add = write;
    out.events.push_back(std::move(e));
    return true;
  }

  bool signal(Operation *op, Value flag, int peer) {
    auto f = flags.find(flag);
    if (f == flags.end()) return fail(op, "the flag is not a pk.sync.flag of this worker");
    Event e{EventKind::Signal, op};
    e.peer = peer;
    e.slot = f->second.slot;
    e.shift = f->second.shift;
    e.blockKey = f->second.block ? block : -1;
    out.events.push_back(e);
    return true;
  }

  bool signalAll(Operation *op, Value flag) {
    for (int p = 1; p < config.world; ++p)
      if (!signal(op, flag, (rank + p) % config.world)) return false;
    return true;
  }

  bool wait(Operation *op, Value flag, int64_t count, bool equal) {
    auto f = flags.find(flag);
    if (f == flags.end()) return fail(op, "the flag is not a pk.sync.flag of this worker");
    Event e{EventKind::Wait, op};
    e.slot = f->second.slot;
    e.shift = f->second.shift;
    e.blockKey = f->second.block ? block : -1;
    e.count = count;
    e.equal = equal;
    out.events.push_back(e);
    return true;
  }

  bool arith(Operation *op) {
    // Float arithmetic (an index converted for a mask, a scale) feeds only tile compute, never
    // an index or a flag the model follows: a conversion back to an integer is refused below.
    if (op->getNumResults() > 0 &&
        llvm::all_of(op->getResultTypes(), [](Type t) { return isa<FloatType>(t); }))
      return true;
    // Integer arithmetic on a value read from memory is unknown too; only a use that needs it fails.
    if (llvm::any_of(op->getOperands(), [&](Value v) { return unknown.contains(v); })) {
      for (Value r : op->getResults()) unknown.insert(r);
      return true;
    }
    auto binary = [&](auto fn) {
      int64_t a, b;
      if (!get(op, op->getOperand(0), a) || !get(op, op->getOperand(1), b)) return false;
      std::optional<int64_t> r = fn(a, b);
      if (!r) return fail(op, "division by zero while evaluating the protocol");
      values[op->getResult(0)] = *r;
      return true;
    };
    using R = std::optional<int64_t>;
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      auto attr = dyn_cast<IntegerAttr>(c.getValue());
      if (attr) values[c.getResult()] = attr.getValue().getSExtValue();
      return true;  // float constants feed tiles only
    }
    if (isa<arith::AddIOp>(op)) return binary([](int64_t a, int64_t b) -> R { return a + b; });
    if (isa<arith::SubIOp>(op)) return binary([](int64_t a, int64_t b) -> R { return a - b; });
    if (isa<arith::MulIOp>(op)) return binary([](int64_t a, int64_t b) -> R { return a * b; });
    // An index `/` or `%` by a run-time zero gives 0 (pk::scalar_div / scalar_rem, as the
    // language defines it), so the model takes 0 too: sizes it picks, such as one row over
    // several ranks in `x.rows() / world_size()`, must not leave the protocol unverified.
    if (isa<arith::DivSIOp, arith::DivUIOp>(op))
      return binary([](int64_t a, int64_t b) -> R { return b ? R(a / b) : R(0); });
    if (isa<arith::RemSIOp, arith::RemUIOp>(op))
      return binary([](int64_t a, int64_t b) -> R { return b ? R(a % b) : R(0); });
    if (isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op))
      return binary([](int64_t a, int64_t b) -> R {
        return b ? R((a + b - 1) / b) : std::nullopt;
      });
    if (isa<arith::MinSIOp, arith::MinUIOp>(op))
      return binary([](int64_t a, int64_t b) -> R { return std::min(a, b); });
    if (isa<arith::MaxSIOp, arith::MaxUIOp>(op))
      return binary([](int64_t a, int64_t b) -> R { return std::max(a, b); });
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      auto pred = cmp.getPredicate();
      return binary([pred](int64_t a, int64_t b) -> R {
        uint64_t ua = uint64_t(a), ub = uint64_t(b);  // unsigned predicates: as emitted
        switch (pred) {
        case arith::CmpIPredicate::eq: return a == b;
        case arith::CmpIPredicate::ne: return a != b;
        case arith::CmpIPredicate::slt: return a < b;
        case arith::CmpIPredicate::sle: return a <= b;
        case arith::CmpIPredicate::sgt: return a > b;
        case arith::CmpIPredicate::sge: return a >= b;
        case arith::CmpIPredicate::ult: return ua < ub;
        case arith::CmpIPredicate::ule: return ua <= ub;
        case arith::CmpIPredicate::ugt: return ua > ub;
        case arith::CmpIPredicate::uge: return ua >= ub;
        }
        return std::nullopt;
      });
    }
    if (auto sel = dyn_cast<arith::SelectOp>(op)) {
      if (!sel.getType().isIntOrIndex()) return true;
      int64_t c, t, f;
      if (!get(op, sel.getCondition(), c) || !get(op, sel.getTrueValue(), t) ||
          !get(op, sel.getFalseValue(), f))
        return false;
      values[sel.getResult()] = c ? t : f;
      return true;
    }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp,
            arith::TruncIOp>(op)) {
      int64_t a;
      if (!get(op, op->getOperand(0), a)) return false;
      values[op->getResult(0)] = a;
      return true;
    }
    return fail(op, "the protocol checker cannot evaluate this arith op");
  }

  // The outermost tile loop of a worker is spread over its blocks (t = block; t += blocks),
  // as the emitter does; nested loops run whole in each block.
  bool foreach(TileForeachOp loop, int depth) {
    SmallVector<int64_t> ubs;
    if (!getAll(loop, loop.getUpperBounds(), ubs)) return false;
    ArrayRef<int64_t> steps = loop.getSteps();
    SmallVector<int64_t> trips;
    int64_t total = 1;
    for (auto [ub, st] : llvm::zip(ubs, steps)) {
      trips.push_back(ub > 0 ? (ub + st - 1) / st : 0);
      total *= trips.back();
    }
    int64_t first = depth == 0 ? localBlock : 0, stride = depth == 0 ? blocksInWorker : 1;
    // A bound, as for sequential loops: a loop nest the modelled sizes blow up is reported
    // unverified (a warning) instead of keeping the compiler busy for minutes.
    constexpr int64_t kMaxTiles = 1 << 16;
    if ((total - first + stride - 1) / stride > kMaxTiles)
      return fail(loop, "the tile loop runs more than 65536 tiles per block at the modelled sizes");
    Block &body = loop.getBody().front();
    for (int64_t t = first; t < total; t += stride) {
      int64_t rest = t;
      for (int d = int(trips.size()) - 1; d >= 0; --d) {
        values[body.getArgument(d)] = (rest % trips[d]) * steps[d];
        rest /= trips[d];
      }
      if (depth == 0) tile = t;
      bool ok = run(body, depth + 1) && withinBudget(loop);
      if (depth == 0) tile = -1;
      if (!ok) return false;
    }
    return true;
  }

  // The simulation compares every block's accesses with the others': a launch whose loops
  // the modelled sizes make long (a key loop inside a query loop, sized by a collective's
  // large tiles) is reported unverified instead of keeping the compiler busy for minutes.
  bool withinBudget(Operation *loop) {
    constexpr size_t kMaxEvents = 1 << 16;
    if (out.events.size() <= kMaxEvents) return true;
    return fail(loop, "a block makes more than 65536 accesses and signals at the modelled sizes");
  }

  // Whether every trip of `loop` makes the same accesses: its induction variable and carried
  // values are unused, and it holds no signal, wait or barrier (whose counts add up per trip)
  // and no collective.
  static bool repeatsOneTrip(scf::ForOp loop) {
    if (!loop.getInductionVar().use_empty() || loop.getNumRegionIterArgs() > 0) return false;
    bool orders = false;
    loop.getBody()->walk([&](Operation *op) {
      StringRef name = op->getName().getStringRef();
      orders |= name.starts_with("pk.sync.") || name.starts_with("pk.coll.");
    });
    return !orders;
  }

  // The local tensors a loop only reads (tile and row loads, scalar reads of this rank's
  // tensors), when it writes nothing, waits for nothing and touches no peer; false otherwise.
  static bool onlyReadsLocal(scf::ForOp loop, SmallVectorImpl<Value> &read) {
    bool ok = true;
    loop.getBody()->walk([&](Operation *op) {
      if (auto l = dyn_cast<TileLoadOp>(op)) read.push_back(l.getSource());
      else if (auto l = dyn_cast<TileLoadRowsOp>(op); l && !l.getPeer()) read.push_back(l.getSource());
      else if (auto l = dyn_cast<LoadScalarOp>(op)) read.push_back(l.getSource());
      else if (!op->getNumRegions() && !isa<scf::YieldOp>(op) && !isPure(op)) ok = false;
    });
    return ok;
  }

  // A sequential loop runs whole in every block, trip by trip; index values it carries are
  // tracked (tiles are not). A tile loop inside it stays spread over the blocks, as emitted.
  bool forLoop(scf::ForOp loop, int depth) {
    // Bounds read from memory (a jagged bag's offsets) over a loop that only reads local
    // tensors: whatever its trips, it reads no more than those whole tensors, which is what
    // the model records; the index values it carries out are unknown.
    SmallVector<Value> read;
    if (llvm::any_of(ValueRange{loop.getLowerBound(), loop.getUpperBound(), loop.getStep()},
                     [&](Value v) { return unknown.contains(v); }) &&
        onlyReadsLocal(loop, read)) {
      for (Value tensor : read)
        if (!wholeAccess(loop, tensor, rank, false)) return false;
      for (Value result : loop.getResults()) unknown.insert(result);
      return true;
    }
    int64_t lb, ub, st;
    if (!get(loop, loop.getLowerBound(), lb) || !get(loop, loop.getUpperBound(), ub) ||
        !get(loop, loop.getStep(), st))
      return false;
    // A run-time step: every value in [lo, hi) is a trip, a superset of the trips any positive
    // step makes, so the loop's accesses can only grow. VerifyProtocol rejects such loops that
    // signal, wait or carry indices, where the exact trips matter.
    if (!getConstantIntValue(loop.getStep())) st = 1;
    if (st <= 0) return fail(loop, "the loop's step is not positive");
    // Trips that repeat one another's accesses, with nothing inside to order them differently:
    // two show every race and reuse hazard the rest could (each pair of trips is alike), and
    // modelling thousands made the race check quadratic in the trips (minutes for 4000).
    if (repeatsOneTrip(loop) && ub > lb + 2 * st) ub = lb + 2 * st;
    constexpr int64_t kMaxTrips = 4096;
    if (ub > lb && (ub - lb + st - 1) / st > kMaxTrips)
      return fail(loop, "the loop runs more than 4096 trips at the modelled sizes");
    Block &body = *loop.getBody();
    auto carry = [&](ValueRange from, ValueRange to) {
      for (auto [f, t] : llvm::zip(from, to)) {
        auto it = values.find(f);
        if (it != values.end()) values[t] = it->second;
        // A carried tile (a K loop's accumulator) keeps the valid extents it was given.
        if (auto v = validExtents.find(f); v != validExtents.end()) {
          SmallVector<int64_t, 4> valid = v->second;
          validExtents[t] = std::move(valid);
        } else {
          validExtents.erase(t);
        }
      }
    };
    carry(loop.getInitArgs(), loop.getRegionIterArgs());
    for (int64_t i = lb; i < ub; i += st) {
      values[loop.getInductionVar()] = i;
      for (Operation &op : body.without_terminator())
        if (!step(&op, depth)) return false;
      if (!withinBudget(loop)) return false;
      carry(body.getTerminator()->getOperands(), loop.getRegionIterArgs());
    }
    carry(loop.getRegionIterArgs(), loop.getResults());
    return true;
  }

  bool step(Operation *op, int depth) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) return forLoop(loop, depth);
    if (op->getDialect() && op->getDialect()->getNamespace() == "arith") return arith(op);
    if (isa<RankOp>(op)) { values[op->getResult(0)] = rank; return true; }
    if (isa<WorldSizeOp>(op)) { values[op->getResult(0)] = config.world; return true; }
    if (isa<GridBlocksOp>(op)) { values[op->getResult(0)] = blocksInWorker; return true; }
    // The first dimension takes the configured size (with and without a partial tile); the
    // others are 1, so an N-D tensor's element count is that size too and stays small.
    if (auto dim = dyn_cast<DimOp>(op)) {
      int64_t d = dim.getDimAttr().getInt();
      auto arg = dyn_cast<BlockArgument>(dim.getTensor());
      values[dim.getResult()] = arg ? extent(arg.getArgNumber(), d) : d == 0 ? config.dimValue : 1;
      return true;
    }
    if (auto f = dyn_cast<FlagOp>(op)) {
      int64_t slot = int64_t(f.getSlot()), offset = 0;
      if (f.getOffset() && !get(op, f.getOffset(), offset)) return false;
      slot += offset;
      // The emitted check (pk::flag_slot_ok) stops a launch whose slot leaves the region; at
      // the modelled sizes it must fit, or the protocol cannot be what the kernel runs.
      if (slot < 0 || slot >= kMaxModelledSlots)
        return fail(op, "the flag slot is " + std::to_string(slot) +
                            " at the modelled sizes, outside [0, " +
                            std::to_string(kMaxModelledSlots) + ")");
      auto shift = f->getAttrOfType<IntegerAttr>(kSpecShiftAttrName);
      flags[f.getResult()] = {slot, f.getScope() == FlagScope::block, shift ? shift.getInt() : 0};
      return true;
    }
    if (auto s = dyn_cast<SignalOp>(op)) {
      int64_t peer;
      return get(op, s.getPeer(), peer) && signal(op, s.getFlag(), int(peer));
    }
    if (auto s = dyn_cast<SignalAllOp>(op)) return signalAll(op, s.getFlag());
    if (auto w = dyn_cast<WaitOp>(op)) {
      int64_t count;
      return get(op, w.getCount(), count) &&
             wait(op, w.getFlag(), count, w.getCompare() == Compare::eq);
    }
    if (auto b = dyn_cast<BarrierOp>(op)) {
      // A <grid> flag's barrier meets every block of every rank (SyncPatterns.cpp).
      auto f = flags.find(b.getFlag());
      if (f != flags.end() && !f->second.block)
        return signalAll(op, b.getFlag()) && signal(op, b.getFlag(), rank) &&
               wait(op, b.getFlag(), config.world * blocksInWorker, false);
      return signalAll(op, b.getFlag()) && wait(op, b.getFlag(), config.world - 1, false);
    }
    if (isa<BulkWaitOp>(op)) { out.events.push_back({EventKind::BulkWait, op}); return true; }
    if (isa<ProxyFenceOp>(op)) { out.events.push_back({EventKind::ProxyFence, op}); return true; }
    if (auto s = dyn_cast<StoreAsyncOp>(op)) {
      int64_t peer;
      if (!get(op, s.getPeer(), peer) ||
          !access(op, s.getDest(), s.getIndices(), s.getValue().getType().getShape(),
                  int(peer), true, false, s.getTransport() == Transport::tma))
        return false;
      noteStore(s.getValue());
      return true;
    }
    if (auto s = dyn_cast<StoreAddAsyncOp>(op)) {
      int64_t peer;
      return get(op, s.getPeer(), peer) &&
             access(op, s.getDest(), s.getIndices(), s.getValue().getType().getShape(),
                    int(peer), true, true, s.getTransport() == Transport::tma);
    }
    if (auto r = dyn_cast<ReduceOp>(op)) {
      for (int m = 0; m < config.world; ++m)
        if (!access(op, r.getSource(), r.getIndices(), r.getResult().getType().getShape(), m,
                    false, false, false))
          return false;
      return true;
    }
    if (auto a = dyn_cast<CommAllReduceOp>(op)) {
      for (int m = 0; m < config.world; ++m)
        if (!access(op, a.getSource(), a.getIndices(), a.getShape(), m, false, false, false))
          return false;
      for (int m = 0; m < config.world; ++m)
        if (!access(op, a.getDest(), a.getIndices(), a.getShape(), m, true, false, false))
          return false;
      return true;
    }
    // A run of `count` elements: read from one rank's source, written to one rank's dest.
    if (auto c = dyn_cast<CopyOp>(op)) {
      int64_t count, srcRank = rank, dstRank = rank;
      if (!get(op, c.getCount(), count)) return false;
      if (c.getSrcRank() && !get(op, c.getSrcRank(), srcRank)) return false;
      if (c.getDstRank() && !get(op, c.getDstRank(), dstRank)) return false;
      if (count <= 0) return true;
      return access(op, c.getSource(), c.getSrcOffset(), {count}, int(srcRank), false, false,
                    false) &&
             access(op, c.getDest(), c.getDstOffset(), {count}, int(dstRank), true, false, false);
    }
    // Two runs of one tensor, each read and written (on two ranks).
    if (auto s = dyn_cast<SwapOp>(op)) {
      int64_t count, a, b;
      if (!get(op, s.getCount(), count) || !get(op, s.getARank(), a) || !get(op, s.getBRank(), b))
        return false;
      if (count <= 0) return true;
      return access(op, s.getTensor(), s.getAOffset(), {count}, int(a), true, false, false) &&
             access(op, s.getTensor(), s.getBOffset(), {count}, int(b), true, false, false);
    }
    // Reads every rank's source; writes one rank's dest, or every rank's (symmetric dest
    // without a rank: the two-shot step), or this rank's local dest.
    if (auto r = dyn_cast<ReduceIntoOp>(op)) {
      int64_t count;
      if (!get(op, r.getCount(), count)) return false;
      if (count <= 0) return true;
      for (int m = 0; m < config.world; ++m)
        if (!access(op, r.getSource(), r.getSrcOffset(), {count}, m, false, false, false))
          return false;
      SmallVector<int64_t> targets;
      if (r.getDstRank()) {
        int64_t d;
        if (!get(op, r.getDstRank(), d)) return false;
        targets.push_back(d);
      } else if (isa<SymTensorType>(r.getDest().getType())) {
        for (int m = 0; m < config.world; ++m) targets.push_back(m);
      } else {
        targets.push_back(rank);
      }
      for (int64_t d : targets)
        if (!access(op, r.getDest(), r.getDstOffset(), {count}, int(d), true, false, false))
          return false;
      return true;
    }
    // The one-round small-message path runs a protocol of its own (pk/device/push_small.cuh);
    // the model takes the direct path that follows it, which every launch size may take.
    if (isa<PushSmallOp>(op)) { values[op->getResult(0)] = 0; return true; }
    // Run-time algorithm choice: the condition is evaluated like any index value.
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      int64_t cond;
      if (!get(op, branch.getCondition(), cond)) return false;
      Region &taken = cond ? branch.getThenRegion() : branch.getElseRegion();
      return taken.empty() || run(taken.front(), depth);
    }
    if (isa<scf::YieldOp>(op)) return true;
    if (auto l = dyn_cast<LoadPeerOp>(op)) {
      int64_t peer;
      noteLoad(l.getResult(), l.getSource(), l.getIndices());
      return get(op, l.getPeer(), peer) &&
             access(op, l.getSource(), l.getIndices(), l.getResult().getType().getShape(),
                    int(peer), false, false, l.getTransport() == Transport::tma);
    }
    if (auto l = dyn_cast<TileLoadOp>(op)) {
      noteLoad(l.getResult(), l.getSource(), l.getIndices());
      const size_t before = out.events.size();
      auto shape = cast<TileType>(l.getResult().getType()).getShape();
      if (!access(op, l.getSource(), l.getIndices(), shape, rank, false, false, false)) return false;
      if (out.events.size() == before + 1 && out.events.back().access.lo.size() == shape.size()) {
        const Access &a = out.events.back().access;
        rowSources[l.getResult()] = {a.tensor, a.lo, a.hi};
      }
      return true;
    }
    if (auto s = dyn_cast<TileStoreOp>(op)) {
      if (!access(op, s.getDest(), s.getIndices(), s.getValue().getType().getShape(), rank,
                  true, false, false))
        return false;
      noteStore(s.getValue());
      return true;
    }
    if (auto loop = dyn_cast<TileForeachOp>(op)) return foreach(loop, depth);
    // Rows moved by index, and slots claimed from counters: which rows is known only at run
    // time, so each touches the whole tensor of one rank's copy. Scattered rows are marked as
    // adds: concurrent scatters into one tensor are the construct's meaning (which of several
    // writes to one row lands is unspecified), while any other access beside them races.
    if (auto l = dyn_cast<TileLoadRowsOp>(op)) {
      int64_t peer = rank;
      return (!l.getPeer() || get(op, l.getPeer(), peer)) &&
             wholeAccess(op, l.getSource(), int(peer), false);
    }
    // A local store_add adds the tile's rows at their own places (an iota of the rows from m):
    // the box a store would write, as adds.
    if (auto s = dyn_cast<TileStoreRowsOp>(op); s && s.getAllRows() && !s.getPeer())
      if (auto rows = s.getRows().getDefiningOp<TileIotaOp>(); rows && rows.getDim() == 0) {
        SmallVector<Value> at = {rows.getOrigin(), s.getCol()};
        if (!access(op, s.getDest(), at, s.getValue().getType().getShape(), rank, true, true, false)) return false;
        out.events.back().access.rows = 2;
        return true;
      }
    if (auto s = dyn_cast<TileStoreRowsOp>(op)) {
      int64_t peer = rank;
      if (s.getPeer() && !get(op, s.getPeer(), peer)) return false;
      if (!wholeAccess(op, s.getDest(), int(peer), true)) return false;
      Access &a = out.events.back().access;
      a.rows = s.getAdd() ? 2 : 1;
      // Into a 2-D tensor: its rows at the tile's columns (padding columns included: only
      // padding rows stay behind). The access stays whole-tensor for the race check, which
      // takes scatters as commuting; checkScatterColumns compares these.
      int64_t col;
      auto tile = cast<TileType>(s.getValue().getType());
      if (getTensorShape(s.getDest().getType()).size() == 2 && tile.getRank() == 2 && get(op, s.getCol(), col)) {
        a.colLo = col;
        // Not clipped at the tensor's end, as a plain store's box is not: the model's sizes tie
        // tensors the kernel leaves free (a packed [N, 2 D] cache modelled as wide as [N, D]).
        a.colHi = col + tile.getShape()[1];
      }
      Value rows = s.getRows();
      if (auto c = rows.getDefiningOp<TileCastOp>()) rows = c.getInput();
      int64_t first = 0;
      if (auto it = rowSources.find(rows); it != rowSources.end()) {
        a.rowsFrom = int(it->second.tensor);
        a.rowsLo = it->second.lo;
        a.rowsHi = it->second.hi;
      } else if (numberedRows(op, s.getRows(), first)) {
        // Only the first row is surely moved (the rows past the moved tile's valid ones stay
        // behind, and the model does not know how many are valid): two scatters that share
        // their first row write the same rows.
        a.rowsFrom = Access::kNumberedRows;
        a.rowsLo = {first};
        a.rowsHi = {first + 1};
      }
      return true;
    }
    if (auto c = dyn_cast<TileClaimOp>(op)) return wholeAccess(op, c.getCounter(), rank, true);
    // A float element read as a scalar (`x.at(i)` of an f32 tensor): a read of this rank's
    // tensor, of any element (the whole tensor, as for rows by index). Its value feeds only
    // float arithmetic, never a bound, an index or a branch, so the model needs no value for
    // it. An index read stays unmodelled: it may bound a loop (LoadScalarOp's description).
    if (auto l = dyn_cast<LoadScalarOp>(op); l && !l.getResult().getType().isIntOrIndex())
      return wholeAccess(op, l.getSource(), rank, false);
    // An integer read: a read like the float one, whose value the model does not know.
    if (auto l = dyn_cast<LoadScalarOp>(op)) {
      unknown.insert(l.getResult());
      return wholeAccess(op, l.getSource(), rank, false);
    }
    // Argument checks depend only on symmetric shapes: every rank takes the same branch, and
    // a failing check leaves before any signal. The model follows the passing branch, and a
    // configuration whose sizes fail a check is no launch at all.
    if (auto check = dyn_cast<CheckOp>(op)) {
      auto it = values.find(check.getCondition());
      if (it != values.end() && !unknown.contains(check.getCondition()) && it->second == 0)
        return fail(op, std::string(kRefusedAtLaunch) + ": " + check.getMessage().str());
      return true;
    }
    if (isa<YieldOp, ReturnOp>(op)) return true;
    // Tile compute: no index results, no regions, no effects on memory the protocol sees.
    bool indexResult = llvm::any_of(op->getResultTypes(),
                                    [](Type t) { return t.isIntOrIndex(); });
    if (!indexResult && op->getNumRegions() == 0 && op->getDialect() &&
        op->getDialect()->getNamespace() == "pk" && isPure(op)) {
      propagateValid(op);
      return true;
    }
    return fail(op, "the protocol checker has no model of this op");
  }
};

} // namespace

// Whether `v` is computed from pk.grid_blocks (through index arithmetic).
static bool countsGridBlocks(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def) return false;
  if (isa<GridBlocksOp>(def)) return true;
  return llvm::any_of(def->getOperands(), [](Value in) { return countsGridBlocks(in); });
}

bool mlir::pk::protocol::buildProcesses(KernelOp kernel, const Config &config,
                                        SmallVectorImpl<Process> &processes,
                                        Operation *&where, std::string &why) {
  // Top-level ops outside workers: constants, flags and sizes the workers use (a rooted
  // collective's root), evaluated first in every block. A kernel with no worker at all (the
  // explicit primitives, written by hand) is one worker over the general path's grid.
  Block &top = kernel.getBody().front();
  SmallVector<Operation *> preamble, postamble;
  SmallVector<std::pair<Block *, int64_t>> bodies;  // (worker body, blocks)
  const size_t workers = llvm::range_size(top.getOps<WorkerOp>());
  for (Operation &op : top) {
    if (auto worker = dyn_cast<WorkerOp>(op)) {
      bodies.push_back({&worker.getBody().front(),
                        worker.getBlocks() > 0 ? worker.getBlocks() : config.blocks});
      continue;
    }
    if (isa<ReturnOp>(op) || workers == 0) continue;
    // With one worker, the kernel's grid is the worker's: every block runs the top-level ops
    // around it (the spec's own pk::prim protocol around a lowered collective), in order.
    if (workers == 1) {
      (bodies.empty() ? preamble : postamble).push_back(&op);
      continue;
    }
    if (op.getNumRegions() || !(isPure(&op) || isa<FlagOp>(op))) {
      where = &op;
      why = "an op with effects outside the kernel's workers (which run on separate blocks)";
      return false;
    }
    preamble.push_back(&op);
  }
  const bool anyWorker = workers > 0;
  if (!anyWorker) bodies.push_back({&top, kGeneralPathBlocks});
  int firstBlock = 0;
  for (auto [body, workerBlocks] : bodies) {
    int64_t blocks = workerBlocks;
    // Blocks with <block> flags only pair with the same block of other ranks, so a few
    // stand for many; <grid> flags count every block, so those need the exact number.
    if (blocks > kMaxModelledBlocks) {
      // A <grid> flag is fine with stand-ins when every wait on it counts the blocks through
      // pk.grid_blocks (the model's block count then); a literal count needs every block.
      // So is one bumped only inside a tile loop (a flag per tile, or per trip): each tile is
      // one block's, so the signals per launch follow the tiles, not the blocks.
      auto perTile = [&](FlagOp f) {
        return llvm::all_of(f->getUsers(), [&](Operation *user) {
          return isa<WaitOp>(user) || user->getParentOfType<TileForeachOp>();
        });
      };
      bool grid = false;
      body->walk([&](WaitOp w) {
        auto f = w.getFlag().getDefiningOp<FlagOp>();
        if (f && f.getScope() == FlagScope::grid && !countsGridBlocks(w.getCount()) && !perTile(f))
          grid = true;
      });
      if (grid) {
        where = body->getParentOp();
        why = "a <grid> flag is bumped outside a tile loop (once by each of the kernel's " +
              std::to_string(workerBlocks) + " blocks, fewer when ranks share a GPU) and waited "
              "on for a count that does not follow the blocks; use a <block> flag";
        return false;
      }
      blocks = config.standIns;
    }
    processes.reserve(processes.size() + blocks * config.world);
    size_t events = 0;  // the previous block's count, a good guess for the next one's
    for (int64_t b = 0; b < blocks; ++b)
      for (int r = 0; r < config.world; ++r) {
        Process p;
        p.events.reserve(events);
        p.rank = r;
        p.block = firstBlock + int(b);
        Interpreter interp(config, r, p.block, int(b), blocks, p);
        if (!interp.bindArguments(kernel) || !interp.runOps(preamble) || !interp.run(*body, 0) || !interp.runOps(postamble)) {
          where = interp.failedOp;
          why = interp.why;
          return false;
        }
        events = p.events.size();
        processes.push_back(std::move(p));
      }
    firstBlock += int(blocks);
  }
  return true;
}

int mlir::pk::protocol::numberFlags(MutableArrayRef<Process> processes) {
  // Unsigned keys: DenseMap hashes signed integers by a multiply that leaves only the low
  // bits (here the block) in the bucket index; unsigned 64-bit keys get a full mix.
  llvm::DenseMap<uint64_t, int> numbers;
  for (Process &p : processes)
    for (Event &e : p.events) {
      if (e.kind != EventKind::Signal && e.kind != EventKind::Wait) continue;
      int holder = e.kind == EventKind::Signal ? e.peer : p.rank;
      uint64_t key = uint64_t((int64_t(holder) * kMaxModelledSlots + e.slot) * 65536 +
                              (e.blockKey + 1));
      e.flag = numbers.try_emplace(key, int(numbers.size())).first->second;
    }
  return int(numbers.size());
}

// An extent the spec divides by the world size (`x.dim(0) / world_size()`: heads, experts or
// rows per rank, and owners `h / (x.dim(0) / world_size())`) is one the spec needs to be a
// multiple of it; at other sizes such owners reach past the last rank (a run-time error, not a
// race). The model gives it world x the default extent.
static void modelDividedDims(KernelOp kernel, Config &config) {
  auto strip = [](Value v) {
    while (auto cast = v.getDefiningOp<arith::IndexCastOp>()) v = cast.getIn();
    return v;
  };
  kernel.walk([&](Operation *op) {
    if (!isa<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(op)) return;
    auto dim = strip(op->getOperand(0)).getDefiningOp<DimOp>();
    if (!dim || !strip(op->getOperand(1)).getDefiningOp<WorldSizeOp>()) return;
    auto arg = dyn_cast<BlockArgument>(dim.getTensor());
    if (!arg || arg.getOwner() != &kernel.getBody().front()) return;
    const int64_t d = int64_t(dim.getDim());
    config.dims.insert({{arg.getArgNumber(), d}, config.world * defaultExtent(config, d)});
  });
}

void mlir::pk::protocol::modelDims(KernelOp kernel, Config &config) {
  modelDividedDims(kernel, config);
  auto entries = kernel->getAttrOfType<ArrayAttr>("pk.model_dims");
  if (!entries) return;
  constexpr int64_t kRows = 3;  // indices before the collective's dimension
  for (Attribute a : entries) {
    auto e = dyn_cast<DenseI64ArrayAttr>(a);
    if (!e || (e.size() != 3 && e.size() != 4)) continue;
    const int64_t small = e[0], large = e[1], dim = e[2];
    const int64_t value = e.size() == 4 ? e[3] : config.dimValue;
    for (int64_t d = 0; d < dim; ++d) {
      if (small >= 0) config.dims[{unsigned(small), d}] = kRows;
      if (large >= 0) config.dims[{unsigned(large), d}] = kRows;
    }
    if (small >= 0) config.dims[{unsigned(small), dim}] = value;
    if (large >= 0) config.dims[{unsigned(large), dim}] = config.world * value;
  }
  // The two sides of a collective agree in every dimension but the collective's (both of an
  // all-to-all's). A tensor in two collectives along different dimensions (a reduce-scatter
  // along 2 into r, then an all-gather of r along 1) gets an extent from each entry; carry
  // each extent across to the other side, the collectives' own extents winning over the few
  // rows filled in before them, so that every tensor's modelled shape passes the checks
  // (else runs of r's rows overlap in g and the model reports a race that cannot happen).
  using Key = std::pair<unsigned, int64_t>;
  std::set<Key> own;  // extents along a collective's own dimension
  std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> apart;  // per pair: dims that differ
  auto pairOf = [](int64_t a, int64_t b) { return std::make_pair(std::min(a, b), std::max(a, b)); };
  for (Attribute a : entries) {
    auto e = dyn_cast<DenseI64ArrayAttr>(a);
    if (!e || (e.size() != 3 && e.size() != 4)) continue;
    for (int64_t side : {e[0], e[1]})
      if (side >= 0) own.insert({unsigned(side), e[2]});
    if (e[0] >= 0 && e[1] >= 0) apart[pairOf(e[0], e[1])].insert(e[2]);
  }
  auto args = kernel.getBody().front().getArguments();
  auto rankOf = [&](int64_t arg) -> int64_t {
    return arg < int64_t(args.size()) ? int64_t(getTensorShape(args[arg].getType()).size()) : 0;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto &[pair, dims] : apart) {
      auto [a, b] = pair;
      for (int64_t d = 0; d < std::min(rankOf(a), rankOf(b)); ++d) {
        if (dims.count(d)) continue;
        Key ka{unsigned(a), d}, kb{unsigned(b), d};
        auto ia = config.dims.find(ka), ib = config.dims.find(kb);
        if (ia == config.dims.end() && ib == config.dims.end()) continue;
        auto copy = [&](const Key &from, const Key &to) {
          config.dims[to] = config.dims[from];
          if (own.count(from)) own.insert(to);
          changed = true;
        };
        if (ib == config.dims.end()) copy(ka, kb);
        else if (ia == config.dims.end()) copy(kb, ka);
        else if (ia->second != ib->second) {
          if (own.count(ka) && !own.count(kb)) copy(ka, kb);
          else if (own.count(kb) && !own.count(ka)) copy(kb, ka);
        }
      }
    }
  }
}

int64_t mlir::pk::protocol::largestStep(KernelOp kernel) {
  // A collective's loop steps through element runs (16384 elements a tile), a tile loop
  // through rows: where both appear, sizes from the runs' step would give the tile loops
  // thousands of tiles at every world size, so the tile loops' steps decide.
  auto movesRuns = [](TileForeachOp loop) {
    bool runs = false;
    loop.getBody().walk([&](Operation *op) { runs |= isa<CopyOp, SwapOp, ReduceIntoOp>(op); });
    return runs;
  };
  // The sizes are first dimensions (config.dimValue): a loop position bounded by a later
  // dimension of a tensor takes its extent elsewhere (spreadExtents), so its step does not count.
  // (c2_ag_planes of user_specs13: y.dim(0) in steps of 1 beside 128-column tiles was 385 planes.)
  auto laterDim = [](Value bound) {
    auto dim = bound.getDefiningOp<DimOp>();
    return dim && dim.getDim() != 0;
  };
  int64_t tileStep = 0, runStep = 0;
  kernel.walk([&](TileForeachOp loop) {
    int64_t &step = movesRuns(loop) ? runStep : tileStep;
    for (auto [bound, s] : llvm::zip(loop.getUpperBounds(), loop.getSteps()))
      if (!laterDim(bound)) step = std::max(step, s);
  });
  return std::max<int64_t>(tileStep ? tileStep : runStep, 1);
}

int64_t mlir::pk::protocol::slotRepeatTiles(KernelOp kernel) {
  int64_t modulus = 0;
  bool perTile = false;
  kernel.walk([&](FlagOp flag) {
    if (!flag.getOffset()) return;
    SmallVector<Value> work = {flag.getOffset()};
    llvm::DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second) continue;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        perTile |= isa<TileForeachOp>(arg.getOwner()->getParentOp());
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (!def || def->getNumRegions()) continue;
      if (isa<arith::RemSIOp, arith::RemUIOp>(def))
        if (std::optional<int64_t> c = getConstantIntValue(def->getOperand(1)))
          modulus = std::max(modulus, std::abs(*c));
      llvm::append_range(work, def->getOperands());
    }
  });
  if (!perTile) return 0;
  // A constant modulus c repeats every c tiles; any other non-injective form (a modulus spelled
  // t - t / c * c, or taken by a run-time value) repeats within the slots a launch can have.
  return std::min(modulus ? modulus : kMaxModelledSlots, kMaxModelledSlots);
}

// The largest step of the kernel's tile loops at each position.
static std::vector<int64_t> stepsByPosition(KernelOp kernel) {
  std::vector<int64_t> steps;
  kernel.walk([&](TileForeachOp loop) {
    ArrayRef<int64_t> s = loop.getSteps();
    if (s.size() > steps.size()) steps.resize(s.size(), 1);
    for (size_t d = 0; d < s.size(); ++d) steps[d] = std::max(steps[d], s[d]);
  });
  return steps;
}

int64_t mlir::pk::protocol::modelledExtent(const Config &config, unsigned arg, int64_t d) {
  if (auto it = config.dims.find({arg, d}); it != config.dims.end()) return it->second;
  return defaultExtent(config, d);
}

void mlir::pk::protocol::skewExtents(KernelOp kernel, Config &config) {
  if (config.skew == 0) return;
  const std::vector<int64_t> steps = stepsByPosition(kernel);
  SmallVector<std::pair<unsigned, size_t>> tensors;  // argument number, rank
  for (BlockArgument arg : kernel.getBody().getArguments())
    if (isa<LocalTensorType, SymTensorType>(arg.getType()))
      tensors.push_back({arg.getArgNumber(), getTensorShape(arg.getType()).size()});
  for (auto [i, t] : llvm::enumerate(tensors)) {
    const int64_t order = config.skew > 0 ? int64_t(i) : int64_t(tensors.size() - 1 - i);
    for (size_t d = 0; d < t.second; ++d) {
      // A step and one more per position: other tile counts and other partial tiles.
      const int64_t delta = (d < steps.size() ? steps[d] : 1) + 1;
      config.dims.insert({{t.first, int64_t(d)}, defaultExtent(config, int64_t(d)) + order * delta});
    }
  }
}

std::vector<int64_t> mlir::pk::protocol::spreadExtents(KernelOp kernel) {
  const std::vector<int64_t> steps = stepsByPosition(kernel);
  if (steps.size() < 2) return {};
  std::vector<int64_t> extents(steps.size(), 1);
  for (size_t d = 1; d < steps.size(); ++d) extents[d] = 2 * steps[d] + 1;
  return extents;
}
