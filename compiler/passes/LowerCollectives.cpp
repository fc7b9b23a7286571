// Rule 3: lower communication intent to one-way signals and direct reads/writes.
#include "FlagsAbove.h"
#include "Phases.h"
#include "ProfileOption.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/EffectLedger.h"
#include "pk/Passes/Passes.h"
#include "mlir/IR/Builders.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKLOWERCOLLECTIVESPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

// Builds the device-level body of one collective inside a communicator worker.
//
// Protocol (the same for every collective, so any mix of them in a kernel keeps flag counts
// per launch fixed): each block signals `arrive` once per peer ("my input is ready and my
// output is free"), waits for the peers' arrivals, moves its tiles by reading the peers'
// symmetric inputs directly into the destination, then signals `depart` ("I am done with
// your input / I finished writing into your output") and waits for the peers' departures
// before the kernel may end. Flags are per block and monotone epochs: no handshake, no
// reset, no staging buffer.
struct CollBuilder {
  OpBuilder &b;
  Location loc;
  Value rank, world, peers;

  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivSIOp::create(b, loc, x, y); }
  // Element count of a contiguous row-major tensor: a collective of an N-D tensor moves blocks
  // of whole rows, which are contiguous runs of elements, so it lowers as on the flat tensor.
  Value dim(Value t) {
    int64_t rank = int64_t(getTensorShape(t.getType()).size());
    Value n = DimOp::create(b, loc, b.getIndexType(), t, 0);
    for (int64_t d = 1; d < rank; ++d) n = mul(n, DimOp::create(b, loc, b.getIndexType(), t, d));
    return n;
  }
  Value dimAt(Value t, int64_t d) { return DimOp::create(b, loc, b.getIndexType(), t, d); }
  // `n` on the root, 0 elsewhere: rooted collectives whose work happens on the root only.
  Value onRootOnly(Value root, Value n) {
    Value isRoot = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank, root);
    return arith::SelectOp::create(b, loc, isRoot, n, c(0));
  }
  // `n`, or 0 when `r` is this rank: in place, a rank's own chunk is already where it goes.
  Value unlessSelf(Value r, Value n) {
    Value self = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank, r);
    return arith::SelectOp::create(b, loc, self, c(0), n);
  }
  // This rank for a symmetric tensor, none for a local one.
  Value here(Value tensor) { return isa<SymTensorType>(tensor.getType()) ? rank : Value(); }

  // A tile loop over [0, ub) (or [0, W) x [0, ub) with `overRanks`); calls body(r, i, count).
  // The peer of the k-th trip over ranks: (rank + 1 + k) mod W, so that the ranks start on
  // different sources (each pulls from the next rank first, from itself last) instead of all
  // reading rank 0's egress at once. Only copies walk ranks this way; reductions read every
  // rank in one op, in rank order, so every rank sums in the same order.
  Value rotated(Value k) {
    Value s = add(k, add(rank, c(1)));
    Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, s, world);
    return arith::SelectOp::create(b, loc, wraps, sub(s, world), s);
  }

  void tiles(Value ub, int64_t tile, bool overRanks,
             llvm::function_ref<void(Value, Value, Value)> body) {
    SmallVector<Value> ubs;
    SmallVector<int64_t> steps;
    if (overRanks) ubs.push_back(world), steps.push_back(1);
    ubs.push_back(ub), steps.push_back(tile);
    auto loop = TileForeachOp::create(b, loc, ubs, steps);
    OpBuilder::InsertionGuard guard(b);
    Block &blk = loop.getBody().front();
    b.setInsertionPointToStart(&blk);
    Value r = overRanks ? rotated(blk.getArgument(0)) : Value();
    Value i = blk.getArgument(overRanks ? 1 : 0);
    body(r, i, min(c(tile), sub(ub, i)));
  }

  // As tiles, over [0, outer) x [0, ub) (with `overRanks`, [0, W) first): body(r, o, i, count).
  void tilesOuter(Value outer, Value ub, int64_t tile, bool overRanks,
                  llvm::function_ref<void(Value, Value, Value, Value)> body) {
    SmallVector<Value> ubs;
    SmallVector<int64_t> steps;
    if (overRanks) ubs.push_back(world), steps.push_back(1);
    ubs.push_back(outer), steps.push_back(1);
    ubs.push_back(ub), steps.push_back(tile);
    auto loop = TileForeachOp::create(b, loc, ubs, steps);
    OpBuilder::InsertionGuard guard(b);
    Block &blk = loop.getBody().front();
    b.setInsertionPointToStart(&blk);
    unsigned at = overRanks ? 1 : 0;
    Value r = overRanks ? rotated(blk.getArgument(0)) : Value();
    Value i = blk.getArgument(at + 1);
    body(r, blk.getArgument(at), i, min(c(tile), sub(ub, i)));
  }
  // Elements of dimensions [from, rank) of a row-major tensor: the run one index of the
  // dimensions before `from` addresses.
  Value inner(Value t, int64_t from) {
    int64_t rank = int64_t(getTensorShape(t.getType()).size());
    Value n = c(1);
    for (int64_t d = from; d < rank; ++d) n = mul(n, dimAt(t, d));
    return n;
  }
  Value outer(Value t, int64_t until) {
    Value n = c(1);
    for (int64_t d = 0; d < until; ++d) n = mul(n, dimAt(t, d));
    return n;
  }

  void copy(Transport t, Value src, Value srcOff, Value srcRank, Value dst, Value dstOff,
            Value dstRank, Value count) {
    CopyOp::create(b, loc, t, src, srcOff, srcRank, dst, dstOff, dstRank, count);
  }
  void reduce(ReduceKind k, Transport t, Value src, Value srcOff, Value dst, Value dstOff,
              Value dstRank, Value count) {
    ReduceIntoOp::create(b, loc, k, t, src, srcOff, dst, dstOff, dstRank, count);
  }
};

CollectiveKind collectiveKind(Operation *op) {
  if (isa<AllGatherOp>(op)) return CollectiveKind::all_gather;
  if (isa<ReduceScatterOp>(op)) return CollectiveKind::reduce_scatter;
  if (isa<AllToAllOp>(op)) return CollectiveKind::all_to_all;
  if (isa<BroadcastOp>(op)) return CollectiveKind::broadcast;
  if (isa<ReduceToRootOp>(op)) return CollectiveKind::reduce;
  if (isa<GatherOp>(op)) return CollectiveKind::gather;
  if (isa<ScatterOp>(op)) return CollectiveKind::scatter;
  return CollectiveKind::all_reduce;
}

struct LowerCollectives : mlir::pk::impl::PkLowerCollectivesPassBase<LowerCollectives> {
  using PkLowerCollectivesPassBase::PkLowerCollectivesPassBase;

  // The pull copies and register reductions are ld/st; a TMA or copy-engine choice for a
  // whole-tensor collective is lowered as ld/st (recorded) until those paths exist here.
  static Transport lowered(Operation *op, Transport t) {
    if (t == Transport::ldst) return t;
    recordDecision(op, "rule 3 (one-way sync)",
                   t == Transport::multimem
                       ? Twine("transport 'multimem' is lowered as ldst: no lowering uses multicast yet "
                               "(pkc's runtime maps no multicast addresses), so this one uses register "
                               "pulls and the code is the same as without --allow-multicast")
                       : "transport '" + stringifyTransport(t) + "' is lowered as ldst: direct "
                         "collectives use register pulls (TMA/copy-engine pulls are not lowered yet)");
    return Transport::ldst;
  }

  // In place (input and output the same tensor): the lowerings whose reads and writes stay
  // race-free, or an error naming what to write instead.
  static LogicalResult checkInPlace(Operation *op) {
    if (op->getOperand(0) != op->getOperand(1)) return success();
    if (isa<AllReduceOp>(op)) {
      recordDecision(op, "rule 3 (one-way sync)",
                     "in place: two-shot on the direct path, where rank r alone reads and "
                     "writes shard r (read every rank's chunk, then write it everywhere), as the "
                     "one-shot path would overwrite data a peer still reads; the one-round paths "
                     "(LL, push) stay, since peers read only their landing slots and each block "
                     "reads its groups of x before it writes them");
      return success();
    }
    if (isa<BroadcastOp>(op)) {
      recordDecision(op, "rule 3 (one-way sync)",
                     "in place: the root keeps its data (no self-copy), the others overwrite "
                     "theirs with the root's");
      return success();
    }
    if (isa<ReduceToRootOp>(op)) {
      recordDecision(op, "rule 3 (one-way sync)",
                     "in place: only the root writes, each chunk after reading it from every "
                     "rank");
      return success();
    }
    if (isa<AllToAllOp>(op)) {
      recordDecision(op, "rule 3 (one-way sync)",
                     "in place: for each pair of ranks the lower one swaps the two blocks "
                     "(block p of rank r with block r of rank p), reading both before writing "
                     "either, so no rank overwrites a block its peer has yet to read");
      return success();
    }
    // The size-changing ones take NCCL's in-place form: the tensor holds world_size chunks
    // and the rank's own chunk is its input (all-gather, gather) or its output
    // (reduce-scatter, scatter). Each rank writes only chunks no peer reads.
    if (isa<AllGatherOp, GatherOp>(op)) {
      recordDecision(op, "rule 3 (one-way sync)",
                     "in place: chunk r of the tensor is rank r's input; each rank pulls the "
                     "peers' chunks into their places and never writes its own, the only "
                     "chunk the peers read");
      return success();
    }
    recordDecision(op, "rule 3 (one-way sync)",
                   isa<ScatterOp>(op)
                       ? "in place: the tensor holds world_size chunks and chunk r is rank r's "
                         "output; rank r copies it from the root's chunk r, which the root "
                         "never writes"
                       : "in place: the tensor holds world_size chunks and chunk r is rank r's "
                         "output; rank r alone writes it, after reading it from every rank "
                         "(element by element), and no rank reads another's chunk r");
    return success();
  }

  // In place, a size-changing collective's chunk: the tensor's elements over world_size.
  static bool inPlaceChunks(Operation *op) {
    return op->getOperand(0) == op->getOperand(1) &&
           isa<AllGatherOp, GatherOp, ReduceScatterOp, ScatterOp>(op);
  }

  // Each collective's tile loops; `b` sits between the arrival and departure waits.
  LogicalResult emitBody(Operation *op, CollBuilder &B, int64_t tile) {
    auto transportOf = [&]() {
      return lowered(op, op->getAttrOfType<TransportAttr>("transport").getValue());
    };
    if (auto ar = dyn_cast<AllReduceOp>(op)) {
      Value x = ar.getInput(), y = ar.getOutput();
      Value n = B.dim(x);
      ReduceKind k = ar.getKind();
      auto oneShot = [&] {
        B.tiles(n, tile, false, [&](Value, Value i, Value cnt) {
          B.reduce(k, Transport::ldst, x, i, y, i, B.here(y), cnt);
        });
      };
      // Rank r reduces shard r and writes it into every rank's output. Shards are rounded
      // up to whole 16-byte vectors so every shard starts aligned (vector path).
      int64_t perVec = 16 / (ar.getInput().getType().getElementType().getIntOrFloatBitWidth() / 8);
      auto twoShot = [&] {
        Value even = B.div(B.add(n, B.sub(B.world, B.c(1))), B.world);
        Value shard = B.mul(B.div(B.add(even, B.c(perVec - 1)), B.c(perVec)), B.c(perVec));
        Value begin = B.min(B.mul(B.rank, shard), n);
        Value len = B.sub(B.min(B.add(begin, shard), n), begin);
        B.tiles(len, tile, false, [&](Value, Value i, Value cnt) {
          Value at = B.add(begin, i);
          B.reduce(k, Transport::ldst, x, at, y, at, Value(), cnt);
        });
      };
      if (ar.getTransport() != Transport::ldst) lowered(op, ar.getTransport());
      if (x == y) return twoShot(), success();
      if (ar.getAlgorithm() == Algorithm::one_shot) return oneShot(), success();
      if (ar.getAlgorithm() == Algorithm::two_shot) return twoShot(), success();
      auto threshold = op->getAttrOfType<IntegerAttr>("pk.two_shot_min_bytes");
      if (!threshold)
        return op->emitOpError("algorithm is still 'auto' without a threshold; run "
                               "pk-select-algorithm first");
      // two-shot iff (W-1)(W-2) * bytes >= threshold * W, evaluated on the device.
      int64_t elemBytes = ar.getInput().getType().getElementType().getIntOrFloatBitWidth() / 8;
      Value lhs = B.mul(B.mul(B.peers, B.sub(B.world, B.c(2))), B.mul(n, B.c(elemBytes)));
      Value rhs = B.mul(B.c(threshold.getInt()), B.world);
      Value useTwo = arith::CmpIOp::create(B.b, B.loc, arith::CmpIPredicate::sge, lhs, rhs);
      auto branch = scf::IfOp::create(B.b, B.loc, useTwo, /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(B.b);
        B.b.setInsertionPointToStart(branch.thenBlock());
        twoShot();
        B.b.setInsertionPointToStart(branch.elseBlock());
        oneShot();
      }
      recordDecision(op, "rule 3 (one-way sync)",
                     "both algorithms share the arrival and departure flags, so either branch "
                     "keeps the per-launch signal counts");
      return success();
    }
    if (auto rs = dyn_cast<ReduceScatterOp>(op); rs && rs.getDim() > 0) {
      // Along dimension d: for each index o of the dimensions before d, rank r's output is the
      // run [r*yin, (r+1)*yin) of the input's xin = W*yin elements (yin: dims d.. of y).
      Value x = rs.getInput(), y = rs.getOutput();
      bool inPlace = x == y;
      Value xin = B.inner(x, rs.getDim());
      Value yin = inPlace ? B.div(xin, B.world) : B.inner(y, rs.getDim());
      Transport t = transportOf();
      B.tilesOuter(B.outer(y, rs.getDim()), yin, tile, false, [&](Value, Value o, Value i, Value cnt) {
        Value src = B.add(B.add(B.mul(o, xin), B.mul(B.rank, yin)), i);
        B.reduce(rs.getKind(), t, x, src, y, inPlace ? src : B.add(B.mul(o, yin), i), B.here(y), cnt);
      });
      return success();
    }
    if (auto ag = dyn_cast<AllGatherOp>(op); ag && ag.getDim() > 0) {
      // Along dimension d: rank r's input run o (xin elements: dims d.. of x) lands at
      // [o*yin + r*xin, ...) of every output, yin = W*xin.
      Value x = ag.getInput(), y = ag.getOutput();
      bool inPlace = x == y;
      Value yin = B.inner(y, ag.getDim());
      Value xin = inPlace ? B.div(yin, B.world) : B.inner(x, ag.getDim());
      Transport t = transportOf();
      B.tilesOuter(B.outer(y, ag.getDim()), xin, tile, true, [&](Value r, Value o, Value i, Value cnt) {
        Value at = B.add(B.add(B.mul(o, yin), B.mul(r, xin)), i);
        B.copy(t, x, inPlace ? at : B.add(B.mul(o, xin), i), r, y, at, B.here(y),
               inPlace ? B.unlessSelf(r, cnt) : cnt);
      });
      return success();
    }
    if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
      Value x = rs.getInput(), y = rs.getOutput();
      bool inPlace = x == y;
      Value n = inPlace ? B.div(B.dim(y), B.world) : B.dim(y);
      Value base = B.mul(B.rank, n);
      Transport t = transportOf();
      B.tiles(n, tile, false, [&](Value, Value i, Value cnt) {
        B.reduce(rs.getKind(), t, x, B.add(base, i), y, inPlace ? B.add(base, i) : i,
                 B.here(y), cnt);
      });
      return success();
    }
    if (auto ag = dyn_cast<AllGatherOp>(op)) {
      Value x = ag.getInput(), y = ag.getOutput();
      bool inPlace = x == y;
      Value n = inPlace ? B.div(B.dim(y), B.world) : B.dim(x);
      Transport t = transportOf();
      B.tiles(n, tile, true, [&](Value r, Value i, Value cnt) {
        Value at = B.add(B.mul(r, n), i);
        B.copy(t, x, inPlace ? at : i, r, y, at, B.here(y), inPlace ? B.unlessSelf(r, cnt) : cnt);
      });
      return success();
    }
    if (auto a2a = dyn_cast<AllToAllOp>(op); a2a && getCollectiveDim(op) != 0) {
      // Split along s, concatenated along c: rank me pulls from each rank r the box of x_r
      // whose dimension s is [me*Ys, (me+1)*Ys) into y's box whose dimension c is
      // [r*Xc, (r+1)*Xc). Dimensions from m = max(s, c) on are one contiguous run in both
      // (dimension m a sub-range, the later ones whole); the box's dimensions before m are
      // walked as one outer index. Within one dimension (s == c, x and y of one shape) the
      // box is one block of Xs/W along it, so Ys and Xc are both that block.
      Value x = a2a.getInput(), y = a2a.getOutput();
      const int64_t s = a2a.getSplitDim(), c = a2a.getConcatDim(), m = std::max(s, c);
      Value block = s == c ? B.div(B.dimAt(x, s), B.world) : Value();
      // Sizes and strides once, ahead of the tile loop.
      SmallVector<Value> extent, strideX, strideY;
      for (int64_t d = 0; d <= m; ++d) {
        extent.push_back(d == s && s == c ? block : d == c ? B.dimAt(x, d) : B.dimAt(y, d));
        strideX.push_back(B.inner(x, d + 1));
        strideY.push_back(B.inner(y, d + 1));
      }
      Value mine = B.mul(B.rank, block ? block : B.dimAt(y, s));
      Value xc = block ? block : B.dimAt(x, c);
      Value outer = B.c(1);
      for (int64_t d = 0; d < m; ++d) outer = B.mul(outer, extent[d]);
      Value run = B.mul(extent[m], strideY[m]);
      Transport t = transportOf();
      B.tilesOuter(outer, run, tile, true, [&](Value r, Value o, Value i, Value cnt) {
        Value src = i, dst = i, rest = o, theirs = B.mul(r, xc);
        if (m == s) src = B.add(src, B.mul(mine, strideX[s]));
        if (m == c) dst = B.add(dst, B.mul(theirs, strideY[c]));
        for (int64_t d = m - 1; d >= 0; --d) {  // the box's coordinate along d, innermost first
          Value k = arith::RemSIOp::create(B.b, B.loc, rest, extent[d]);
          rest = B.div(rest, extent[d]);
          src = B.add(src, B.mul(d == s ? B.add(k, mine) : k, strideX[d]));
          dst = B.add(dst, B.mul(d == c ? B.add(k, theirs) : k, strideY[d]));
        }
        if (x == y) {  // in place (s == c): the lower rank of each pair swaps the two boxes
          Value lower = arith::CmpIOp::create(B.b, B.loc, arith::CmpIPredicate::slt, B.rank, r);
          Value n = arith::SelectOp::create(B.b, B.loc, lower, cnt, B.c(0));
          SwapOp::create(B.b, B.loc, x, dst, B.rank, src, r, n);
          return;
        }
        B.copy(t, x, src, r, y, dst, B.here(y), cnt);
      });
      return success();
    }
    if (auto a2a = dyn_cast<AllToAllOp>(op)) {
      Value x = a2a.getInput(), y = a2a.getOutput();
      // Block length; the launch-time check rejects N that is not a multiple of W.
      Value m = B.div(B.dim(x), B.world);
      Value mine = B.mul(B.rank, m);
      Transport t = transportOf();
      if (x == y) {  // in place: pairwise swaps, done by the lower rank of each pair
        B.tiles(m, tile, true, [&](Value r, Value i, Value cnt) {
          Value lower = arith::CmpIOp::create(B.b, B.loc, arith::CmpIPredicate::slt, B.rank, r);
          Value n = arith::SelectOp::create(B.b, B.loc, lower, cnt, B.c(0));
          SwapOp::create(B.b, B.loc, x, B.add(B.mul(r, m), i), B.rank, B.add(mine, i), r, n);
        });
        return success();
      }
      B.tiles(m, tile, true, [&](Value r, Value i, Value cnt) {
        B.copy(t, x, B.add(mine, i), r, y, B.add(B.mul(r, m), i), B.here(y), cnt);
      });
      return success();
    }
    if (auto bc = dyn_cast<BroadcastOp>(op)) {
      Value x = bc.getInput(), y = bc.getOutput();
      Transport t = transportOf();
      Value n = B.dim(x);
      if (x == y) n = B.unlessSelf(bc.getRoot(), n);  // in place: the root has nothing to copy
      B.tiles(n, tile, false, [&](Value, Value i, Value cnt) {
        B.copy(t, x, i, bc.getRoot(), y, i, B.here(y), cnt);
      });
      return success();
    }
    if (auto rd = dyn_cast<ReduceToRootOp>(op)) {
      Value x = rd.getInput(), y = rd.getOutput();
      Transport t = transportOf();
      B.tiles(B.onRootOnly(rd.getRoot(), B.dim(x)), tile, false, [&](Value, Value i, Value cnt) {
        B.reduce(rd.getKind(), t, x, i, y, i, B.here(y), cnt);
      });
      return success();
    }
    if (auto ga = dyn_cast<GatherOp>(op)) {
      Value x = ga.getInput(), y = ga.getOutput();
      bool inPlace = x == y;
      Value n = inPlace ? B.div(B.dim(y), B.world) : B.dim(x);
      Transport t = transportOf();
      B.tiles(B.onRootOnly(ga.getRoot(), n), tile, true, [&](Value r, Value i, Value cnt) {
        Value at = B.add(B.mul(r, n), i);
        B.copy(t, x, inPlace ? at : i, r, y, at, B.here(y), inPlace ? B.unlessSelf(r, cnt) : cnt);
      });
      return success();
    }
    if (auto sc = dyn_cast<ScatterOp>(op)) {
      Value x = sc.getInput(), y = sc.getOutput();
      bool inPlace = x == y;
      Value n = inPlace ? B.div(B.dim(y), B.world) : B.dim(y);
      Value base = B.mul(B.rank, n);
      Transport t = transportOf();
      if (inPlace) n = B.unlessSelf(sc.getRoot(), n);  // the root's chunk is already there
      B.tiles(n, tile, false, [&](Value, Value i, Value cnt) {
        B.copy(t, x, B.add(base, i), sc.getRoot(), y, inPlace ? B.add(base, i) : i, B.here(y),
               cnt);
      });
      return success();
    }
    return op->emitOpError("has no lowering yet");
  }

  // Sizes are run-time values: the output/input size rules are checked when the kernel
  // starts (pk.check), before any signal, so a wrong size is an error and never an
  // out-of-bounds peer access.
  static void check(CollBuilder &B, Value expected, Value actual, StringRef what) {
    Value ok = arith::CmpIOp::create(B.b, B.loc, arith::CmpIPredicate::eq, expected, actual);
    CheckOp::create(B.b, B.loc, ok, expected, actual, B.b.getStringAttr(what));
  }

  static void emitShapeChecks(Operation *op, CollBuilder &B) {
    StringRef name = op->getName().getStringRef();
    Value x = op->getOperand(0), y = op->getOperand(1);
    if (auto a2a = dyn_cast<AllToAllOp>(op); a2a && a2a.getSplitDim() == a2a.getConcatDim() &&
                                              a2a.getSplitDim() != 0) {
      // Within dimension s > 0: one shape, cut in world_size equal blocks along s.
      const int64_t s = a2a.getSplitDim();
      check(B, B.c(0), arith::RemSIOp::create(B.b, B.loc, B.dimAt(x, s), B.world),
            (name + ": dimension " + Twine(s) +
             " holds world_size equal blocks: it must be a multiple of world_size (remainder shown)")
                .str());
      if (x != y)
        for (int64_t d = 0; d < int64_t(getTensorShape(x.getType()).size()); ++d)
          check(B, B.dimAt(x, d), B.dimAt(y, d),
                (name + ": dimension " + Twine(d) + " of the input and the output must agree").str());
      return;
    }
    if (auto a2a = dyn_cast<AllToAllOp>(op); a2a && a2a.getSplitDim() != a2a.getConcatDim()) {
      const int64_t s = a2a.getSplitDim(), c = a2a.getConcatDim();
      check(B, B.mul(B.world, B.dimAt(y, s)), B.dimAt(x, s),
            (name + ": dimension " + Twine(s) + " (split) of the input must be world_size times the output's").str());
      check(B, B.mul(B.world, B.dimAt(x, c)), B.dimAt(y, c),
            (name + ": dimension " + Twine(c) + " (concat) of the output must be world_size times the input's").str());
      for (int64_t d = 0; d < int64_t(getTensorShape(x.getType()).size()); ++d)
        if (d != s && d != c)
          check(B, B.dimAt(x, d), B.dimAt(y, d),
                (name + ": dimension " + Twine(d) + " of the input and the output must agree").str());
      return;
    }
    if (int64_t dim = getCollectiveDim(op)) {
      // Along dimension `dim`: that one is world_size times larger on the gathered side (or
      // divides by world_size in place); the others agree.
      bool gathers = isa<AllGatherOp>(op);
      Value small = gathers ? x : y, large = gathers ? y : x;
      if (x == y)
        check(B, B.c(0), arith::RemSIOp::create(B.b, B.loc, B.dimAt(x, dim), B.world),
              (name + ": in place, dimension " + Twine(dim) +
               " holds world_size equal chunks: it must be a multiple of world_size (remainder shown)")
                  .str());
      else
        check(B, B.mul(B.world, B.dimAt(small, dim)), B.dimAt(large, dim),
              (name + ": dimension " + Twine(dim) + " of the " + (gathers ? "output" : "input") +
               " must be world_size times the " + (gathers ? "input's" : "output's"))
                  .str());
      int64_t rank = int64_t(getTensorShape(x.getType()).size());
      for (int64_t d = 0; d < rank; ++d)
        if (d != dim && x != y)
          check(B, B.dimAt(x, d), B.dimAt(y, d),
                (name + ": dimension " + Twine(d) + " of the input and the output must agree").str());
      return;
    }
    Value n = B.dim(x), m = B.dim(y);
    if (inPlaceChunks(op)) {
      Value rows = getTensorShape(x.getType()).size() > 1 ? B.dimAt(x, 0) : n;
      check(B, B.c(0), arith::RemSIOp::create(B.b, B.loc, rows, B.world),
            (name + ": in place, the tensor holds world_size equal chunks: its " +
             (rows == n ? "element count" : "row count") +
             " must be a multiple of world_size (remainder shown)")
                .str());
    } else if (isa<AllGatherOp, GatherOp>(op)) {
      check(B, B.mul(B.world, n), m,
            (name + ": the output must hold world_size times the input's elements").str());
    } else if (isa<ReduceScatterOp, ScatterOp>(op)) {
      check(B, B.mul(B.world, m), n,
            (name + ": the input must hold world_size times the output's elements").str());
    } else if (isa<AllToAllOp>(op)) {
      Value rem = arith::RemSIOp::create(B.b, B.loc, n, B.world);
      check(B, B.c(0), rem,
            (name + ": the element count must be a multiple of world_size (remainder shown)").str());
      check(B, n, m, (name + ": input and output must have the same element count").str());
    } else {
      check(B, n, m, (name + ": input and output must have the same element count").str());
    }
    // N-D tensors: the dimensions after the first agree, and an all-to-all's blocks are whole
    // rows (for 1-D tensors these are the checks above).
    int64_t rank = int64_t(getTensorShape(x.getType()).size());
    for (int64_t d = 1; d < rank; ++d)
      check(B, B.dimAt(x, d), B.dimAt(y, d),
            (name + ": dimension " + Twine(d) + " of the input and the output must agree").str());
    if (rank > 1 && isa<AllToAllOp>(op))
      check(B, B.c(0), arith::RemSIOp::create(B.b, B.loc, B.dimAt(x, 0), B.world),
            (name + ": the rows must be a multiple of world_size (remainder shown)").str());
    if (isa<BroadcastOp, ReduceToRootOp, GatherOp, ScatterOp>(op)) {
      Value root = op->getOperand(2);
      Value ok = arith::CmpIOp::create(B.b, B.loc, arith::CmpIPredicate::ult, root, B.world);
      CheckOp::create(B.b, B.loc, ok, B.world, root,
                      B.b.getStringAttr((name + ": the root must be a rank below world_size "
                                         "(expected: below the first value)").str()));
    }
  }

  // A collective along dimension d > 0 tells the protocol model which extents its checks
  // need ([small, large, d]; in place, the tensor is the large side), since the default model
  // sizes (dimension 0 only) would fail them.
  static void noteModelDims(Operation *op) {
    int64_t dim = getCollectiveDim(op);
    if (dim == 0) return;
    auto kernel = op->getParentOfType<KernelOp>();
    auto argNo = [&](Value v) -> int64_t {
      auto a = dyn_cast<BlockArgument>(v);
      return a && a.getOwner() == &kernel.getBody().front() ? int64_t(a.getArgNumber()) : -1;
    };
    bool gathers = isa<AllGatherOp>(op);
    Value x = op->getOperand(0), y = op->getOperand(1);
    int64_t small = x == y ? -1 : argNo(gathers ? x : y), large = argNo(gathers ? y : x);
    SmallVector<Attribute> entries;
    if (auto old = kernel->getAttrOfType<ArrayAttr>("pk.model_dims"))
      entries.append(old.begin(), old.end());
    if (auto a2a = dyn_cast<AllToAllOp>(op)) {
      // x is large along s, y along c. The deeper entry first: an entry sets the dimensions
      // before its own to a few rows, and the shallower one then sets its dimension, to a few
      // rows too (its extent multiplies the deeper run's tiles).
      const int64_t s = a2a.getSplitDim(), c = a2a.getConcatDim();
      if (s == c) {  // one shape, world_size blocks along s: both sides are the large one
        entries.push_back(DenseI64ArrayAttr::get(op->getContext(), {-1, argNo(x), s}));
        if (x != y) entries.push_back(DenseI64ArrayAttr::get(op->getContext(), {-1, argNo(y), s}));
        kernel->setAttr("pk.model_dims", ArrayAttr::get(op->getContext(), entries));
        return;
      }
      auto entry = [&](Value small, Value large, int64_t d) {
        return d == std::max(s, c) ? DenseI64ArrayAttr::get(op->getContext(), {argNo(small), argNo(large), d})
                                   : DenseI64ArrayAttr::get(op->getContext(), {argNo(small), argNo(large), d, 3});
      };
      auto sEntry = entry(y, x, s), cEntry = entry(x, y, c);
      entries.push_back(s > c ? sEntry : cEntry);
      entries.push_back(s > c ? cEntry : sEntry);
      kernel->setAttr("pk.model_dims", ArrayAttr::get(op->getContext(), entries));
      return;
    }
    entries.push_back(DenseI64ArrayAttr::get(op->getContext(), {small, large, dim}));
    kernel->setAttr("pk.model_dims", ArrayAttr::get(op->getContext(), entries));
  }

  // `skip`: the direct path's arrival and departure rounds that a grid-wide barrier beside the
  // collective makes redundant (roundsBesideBarriers).
  LogicalResult lower(Operation *op, int64_t &nextSlot, int64_t &blocks,
                      std::pair<bool, bool> skip = {false, false}) {
    noteModelDims(op);
    auto transport = op->getAttrOfType<TransportAttr>("transport");
    if (transport && transport.getValue() == Transport::automatic)
      return op->emitOpError("transport is still 'auto'; run pk-select-transport first");
    auto blocksAttr = op->getAttrOfType<IntegerAttr>("pk.blocks");
    auto tileAttr = op->getAttrOfType<IntegerAttr>("pk.tile");
    blocks = blocksAttr ? blocksAttr.getInt() : defaultBlocks;
    int64_t tile = tileAttr ? tileAttr.getInt() : tileElements;

    Location loc = op->getLoc();
    MLIRContext *ctx = op->getContext();
    OpBuilder b(op);
    auto worker = WorkerOp::create(b, loc, Role::communicator, blocks);
    Block *body = new Block();
    worker.getBody().push_back(body);
    b.setInsertionPointToStart(body);
    CollBuilder B{b, loc, {}, {}, {}};
    auto flagType = FlagType::get(ctx);
    Value arrive = FlagOp::create(b, loc, flagType, nextSlot++, FlagScope::block);
    Value depart = FlagOp::create(b, loc, flagType, nextSlot++, FlagScope::block);
    auto pushMax = op->getAttrOfType<IntegerAttr>("pk.push_max_bytes");
    Value lanes, count, llCount;
    int64_t llMax = 0;
    if (pushMax && pushMax.getInt() > 0) {
      // The one-round path's launch counters (flag path, LL path), then its per-(source, lane)
      // slots (block-scope slot units).
      count = FlagOp::create(b, loc, flagType, nextSlot++, FlagScope::block);
      llCount = FlagOp::create(b, loc, flagType, nextSlot++, FlagScope::block);
      if (auto ll = op->getAttrOfType<IntegerAttr>("pk.ll_max_bytes")) llMax = ll.getInt();
      lanes = FlagOp::create(b, loc, flagType, nextSlot, FlagScope::block);
      nextSlot += (kPushSmallSlots + blocks - 1) / blocks;
    }
    B.rank = RankOp::create(b, loc, b.getIndexType());
    B.world = WorldSizeOp::create(b, loc, b.getIndexType());
    B.peers = B.sub(B.world, B.c(1));
    emitShapeChecks(op, B);
    // The direct path; behind the one-round path's "not taken" when there is one.
    std::optional<OpBuilder::InsertionGuard> guard;
    if (lanes) {
      auto kind = op->getAttrOfType<ReduceKindAttr>("kind");
      Value root = isa<BroadcastOp, ReduceToRootOp, GatherOp, ScatterOp>(op) ? op->getOperand(2)
                                                                            : Value();
      Value taken = PushSmallOp::create(b, loc, b.getI1Type(), CollectiveKindAttr::get(ctx, collectiveKind(op)), kind,
                                        op->getOperand(0), op->getOperand(1), root, count,
                                        llCount, lanes, b.getI64IntegerAttr(pushMax.getInt()),
                                        b.getI64IntegerAttr(llMax));
      Value direct = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq, taken,
          arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0));
      auto branch = scf::IfOp::create(b, loc, direct, /*withElseRegion=*/false);
      guard.emplace(b);
      b.setInsertionPointToStart(branch.thenBlock());
      recordDecision(op, "rule 3 (one-way sync)",
                     "messages of up to " + ::pk::formatBytes(pushMax.getInt()) +
                         " per peer that fit the kernel's landing buffer take one round: each "
                         "rank pushes them into its peers' landing buffers and signals once "
                         "per source; larger ones take the direct path below");
    }
    if (!skip.first) {
      SignalAllOp::create(b, loc, arrive);
      WaitOp::create(b, loc, arrive, B.peers, Compare::ge);
    }
    if (failed(emitBody(op, B, tile))) return failure();
    if (!skip.second) {
      SignalAllOp::create(b, loc, depart);
      WaitOp::create(b, loc, depart, B.peers, Compare::ge);
    }
    guard.reset();
    YieldOp::create(b, loc);
    recordDecision(op, "rule 3 (one-way sync)",
                   Twine(skip.first ? "each block" : "each block signals arrival once per peer,") +
                       " reads the peers' symmetric inputs directly into the destination in " +
                       Twine(tile) + "-element tiles (no staging buffer)" +
                       (skip.second ? "" : ", then signals departure; flags are per-block monotone epochs"));
    markLowered(op);
    op->erase();
    return success();
  }

  // Whether a phase writes tiles or rows into peers' copies (pk-lower-peer-tiles left them
  // here) or reads tiles or rows from them: both need the peers' other phases ordered around.
  static bool touchesPeers(Operation *phase) {
    bool peers = false;
    phase->walk([&](Operation *op) {
      peers |= isa<StoreAsyncOp, StoreAddAsyncOp, LoadPeerOp>(op);
      if (auto l = dyn_cast<TileLoadRowsOp>(op)) peers |= bool(l.getPeer());
      if (auto s = dyn_cast<TileStoreRowsOp>(op)) peers |= bool(s.getPeer());
    });
    return peers;
  }

  // A grid-wide barrier before `op`: every block of every rank signals every rank (itself
  // included) once, then waits for world_size x grid_blocks signals of this launch. In a
  // kernel whose phases never touch peers (`rankLocal`) the ranks have nothing to order: each
  // block signals its own rank only and waits for grid_blocks signals (rule 3: no sync that
  // orders nothing; a slow rank no longer holds up the others at every phase).
  static void gridBarrier(Operation *op, int64_t slot, bool rankLocal) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value f = FlagOp::create(b, loc, FlagType::get(op->getContext()), slot, FlagScope::grid);
    Value rank = RankOp::create(b, loc, b.getIndexType());
    Value blocks = GridBlocksOp::create(b, loc, b.getIndexType());
    Value count = blocks;
    if (!rankLocal) {
      Value world = WorldSizeOp::create(b, loc, b.getIndexType());
      count = arith::MulIOp::create(b, loc, world, blocks);
      SignalAllOp::create(b, loc, f);
    }
    SignalOp::create(b, loc, f, rank);
    WaitOp::create(b, loc, f, count, Compare::ge);
  }

  // Whether `op` is the wait (or the first signal) of a grid-wide barrier (gridBarrier).
  static bool onGridFlag(Operation *op) {
    Value flag = isa<WaitOp>(op) ? cast<WaitOp>(op).getFlag()
                 : isa<SignalAllOp>(op) ? cast<SignalAllOp>(op).getFlag() : Value();
    auto f = flag ? flag.getDefiningOp<FlagOp>() : FlagOp();
    return f && f.getScope() == FlagScope::grid && !f.getOffset();
  }
  // The nearest op before (or after) `op` that does more than compute values or check shapes.
  static Operation *effectNeighbour(Operation *op, bool after) {
    for (Operation *o = after ? op->getNextNode() : op->getPrevNode(); o;
         o = after ? o->getNextNode() : o->getPrevNode())
      if (!isa<CheckOp>(o) && !isMemoryEffectFree(o)) return o;
    return nullptr;
  }
  // A collective right after a grid-wide barrier needs no arrival round: the barrier already
  // orders every block of every rank after the earlier phases, which is all an arrival says.
  // Right before one, it needs no departure round: the barrier orders every rank's later
  // phases (and the kernel's end) after every block's pulls (set 37, finding 2).
  static std::pair<bool, bool> roundsBesideBarriers(Operation *collective) {
    Operation *before = effectNeighbour(collective, false);
    Operation *after = effectNeighbour(collective, true);
    std::pair<bool, bool> drop{before && isa<WaitOp>(before) && onGridFlag(before),
                               after && isa<SignalAllOp>(after) && onGridFlag(after)};
    if (drop.first || drop.second)
      recordDecision(collective, "rule 3 (one-way sync)",
                     Twine("no ") +
                         (drop.first && drop.second ? "arrival or departure round"
                          : drop.first              ? "arrival round"
                                                    : "departure round") +
                         ": the grid-wide barrier beside the collective already orders every "
                         "rank's blocks around its pulls");
    return drop;
  }
  // Kernels whose phases depend on each other (compute, then a collective of its result, then
  // compute on that): one worker runs the phases in order, with a grid-wide barrier before
  // every phase that touches a tensor an earlier phase wrote (or writes one it read).
  LogicalResult lowerPhases(KernelOp kernel, ArrayRef<Operation *> collectives,
                            ArrayRef<Operation *> dependent, int64_t &nextSlot) {
    Block &entry = kernel.getBody().front();
    int64_t blocks = kGeneralPathBlocks;
    for (Operation *op : collectives) {
      noteModelDims(op);
      if (auto a = op->getAttrOfType<IntegerAttr>("pk.blocks")) blocks = std::max(blocks, a.getInt());
    }
    OpBuilder b(kernel.getContext());
    b.setInsertionPointToStart(&entry);
    auto worker = WorkerOp::create(b, kernel.getLoc(), Role::communicator, blocks);
    Block *body = new Block();
    worker.getBody().push_back(body);
    for (Operation &op : llvm::make_early_inc_range(entry))
      if (&op != worker.getOperation() && !isa<ReturnOp>(op)) op.moveBefore(body, body->end());
    b.setInsertionPointToEnd(body);
    YieldOp::create(b, kernel.getLoc());

    // Phases that write into peers' copies also get a barrier before them (no peer still
    // reads those tensors, in this launch or the previous one) and one after the last of them
    // (no rank reads them, or ends the kernel, before every peer's writes have landed).
    llvm::SmallPtrSet<Operation *, 8> barrierBefore(dependent.begin(), dependent.end());
    Operation *lastPeerPhase = nullptr;
    for (Operation &op : *body)
      if (isPhase(&op) && touchesPeers(&op)) lastPeerPhase = &op;
    bool barrierAfterPeers = false;
    for (Operation &op : *body) {
      if (!isPhase(&op) || !touchesPeers(&op) || barrierBefore.contains(&op)) continue;
      barrierBefore.insert(&op);
      recordDecision(&op, "rule 3 (one-way sync)",
                     "this phase writes tiles into peers' copies (or reads rows from them): a "
                     "grid-wide barrier first, so that no peer still reads what it writes, or "
                     "still writes what it reads (in this launch or the previous one)");
    }
    // No collective, no phase that touches peers and no other communication or flag op (to be
    // safe with what earlier passes left): the barriers stay inside each rank.
    bool commOps = false;
    body->walk([&](Operation *op) {
      StringRef name = op->getName().getStringRef();
      commOps |= name.starts_with("pk.comm.") || name.starts_with("pk.coll.") || name.starts_with("pk.sync.");
    });
    const bool rankLocal = collectives.empty() && !lastPeerPhase && !commOps;
    size_t barriers = 0;
    for (Operation &op : llvm::make_early_inc_range(*body)) {
      if (!barrierBefore.contains(&op)) continue;
      gridBarrier(&op, nextSlot++, rankLocal);
      ++barriers;
      barrierAfterPeers |= lastPeerPhase && lastPeerPhase->isBeforeInBlock(&op);
      if (llvm::is_contained(dependent, &op))
        recordDecision(&op, "rule 3 (one-way sync)",
                       rankLocal
                           ? "this phase uses a tensor an earlier phase of the kernel wrote (or "
                             "writes one it read): a grid-wide barrier first, inside this rank "
                             "(no phase touches peers), each block signalling it once (one "
                             "persistent launch; all blocks resident)"
                           : "this phase uses a tensor an earlier phase of the kernel wrote (or "
                             "writes one it read): a grid-wide barrier first, each block of each "
                             "rank signalling every rank once (one persistent launch; all blocks "
                             "resident)");
    }
    if (lastPeerPhase && !barrierAfterPeers) {
      gridBarrier(body->getTerminator(), nextSlot++, /*rankLocal=*/false);
      ++barriers;
      recordDecision(lastPeerPhase, "rule 3 (one-way sync)",
                     "the last phase that writes into peers (or reads from them): a grid-wide "
                     "barrier after it, so the kernel ends only once every peer's writes into "
                     "this rank have landed (and no peer still reads what the next launch "
                     "overwrites)");
    }
    // Each collective's protocol, inlined into the one worker in program order.
    for (Operation *op : collectives) {
      Operation *before = op->getPrevNode();
      int64_t used = 0;
      if (failed(lower(op, nextSlot, used, roundsBesideBarriers(op)))) return failure();
      auto inner = cast<WorkerOp>(before ? before->getNextNode() : &body->front());
      Block &innerBody = inner.getBody().front();
      for (Operation &op : llvm::make_early_inc_range(innerBody))
        if (!isa<YieldOp>(op)) op.moveBefore(inner);
      inner->erase();
    }
    recordDecision(kernel, "rule 2 (overlap)",
                   Twine("one worker of ") + Twine(blocks) + " blocks runs the kernel's phases in " +
                       "order (" + Twine(barriers) + " grid-wide barrier" +
                       (barriers == 1 ? "" : "s") + " between dependent phases)");
    return success();
  }

  void runOnOperation() override {
    auto profile = loadProfileOption(getOperation(), profilePath);
    if (!profile) return signalPassFailure();
    // Without pk-select-algorithm: twice the SMs that reach 90% of the profiled ld/st
    // bandwidth (1024-thread samples, 512-thread blocks).
    defaultBlocks = 2 * ::pk::smsFor90Percent(*profile, ::pk::Mechanism::ldst, 256ll << 20);
    bool failed = false;
    getOperation().walk([&](KernelOp kernel) {
      int64_t nextSlot = 0;
      // The spec's own flags (pk::prim) move up past the ones this pass numbers from 0.
      FlagsAbove userFlags(kernel);
      SmallVector<Operation *> collectives;
      TileForeachOp compute;
      kernel.walk([&](Operation *op) {
        if (auto loop = dyn_cast<TileForeachOp>(op); loop && !compute) compute = loop;
        if (isa<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp, BroadcastOp,
                ReduceToRootOp, GatherOp, ScatterOp>(op))
          collectives.push_back(op);
        else if (isa<StoreTileOp, AddTileOp>(op)) {
          op->emitOpError("is lowered by pk-lower-peer-tiles, which must run first");
          failed = true;
        }
      });
      // Phases that depend on each other run in order in one worker (lowerPhases), with or
      // without a collective among them. A kernel that signals and waits itself (pk::prim)
      // orders its phases by its own protocol, which pk-verify-protocol proves.
      SmallVector<Operation *> dependent;
      if (!hasOwnProtocol(kernel)) {
        if (Operation *nested = unorderedNestedPhase(kernel.getBody().front())) {
          if (isCollectiveIntent(nested))
            nested->emitError("a collective inside a range loop would run several times in one "
                              "launch, and its flags count one run per launch; pkc runs such a "
                              "loop as a host loop of launches only when its bounds are known on "
                              "the host (constants, sizes, the world size, integer arguments) and "
                              "it carries no values");
          else
            nested->emitError("this phase depends on another phase inside the same range loop "
                              "(a tensor one writes and the other reads or writes); pkc orders "
                              "them only at the kernel's top level, or as a host loop of launches "
                              "when the loop's bounds are known on the host (constants, sizes, "
                              "the world size, integer arguments) and it carries no values");
          failed = true;
          return;
        }
        dependent = dependentPhases(kernel.getBody().front());
      }
      // Local compute beside a collective always runs in the one worker.
      const bool phased = !dependent.empty() || (compute && !collectives.empty());
      // The one-round path lands in the kernel's one landing buffer: with several collectives
      // in a kernel, a fast rank's next collective could overwrite what a peer still reads
      // from the previous one, so such kernels keep the direct path only.
      if (collectives.size() > 1 || phased)
        for (Operation *op : collectives)
          if (auto push = op->getAttrOfType<IntegerAttr>("pk.push_max_bytes");
              push && push.getInt() > 0) {
            op->setAttr("pk.push_max_bytes", IntegerAttr::get(push.getType(), 0));
            op->setAttr("pk.ll_max_bytes", IntegerAttr::get(push.getType(), 0));
            // The small-message paths announced by rule 1 are gone: say only what remains.
            dropDecisions(op, "rule 1 (small messages)");
            dropDecisions(op, "rule 1 (LL)");
            recordDecision(op, "rule 3 (one-way sync)",
                           phased ? Twine("no one-round path: the kernel's phases run in one "
                                          "worker, where only the direct path is modelled")
                                  : "no one-round path: the kernel has " +
                                        Twine(collectives.size()) +
                                        " collectives, which would share its landing buffer (as "
                                        "separate kernels each keeps its one-round paths)");
          }
      for (Operation *op : collectives) {
        if (mlir::failed(checkInPlace(op))) {
          failed = true;
          continue;
        }
        // In place (checkInPlace says why): an all-reduce keeps its one-round paths, whose
        // peers read only landing slots and whose blocks read each group of x before they
        // write it (the decode step's all_reduce(Sum, x, x) is mostly such messages), and its
        // direct path is two-shot; the others take the direct path only.
        if (op->getOperand(0) == op->getOperand(1)) {
          if (isa<AllReduceOp>(op)) dropDecisions(op, "rule 1 (algorithm)");
          else if (auto push = op->getAttrOfType<IntegerAttr>("pk.push_max_bytes"); push && push.getInt() > 0) {
            op->setAttr("pk.push_max_bytes", IntegerAttr::get(push.getType(), 0));
            op->setAttr("pk.ll_max_bytes", IntegerAttr::get(push.getType(), 0));
            dropDecisions(op, "rule 1 (small messages)");
            dropDecisions(op, "rule 1 (LL)");
          }
        }
      }
      if (phased && !failed) {
        failed |= mlir::failed(lowerPhases(kernel, collectives, dependent, nextSlot));
        kernel->setAttr("pk.level", StringAttr::get(kernel.getContext(), "device"));
        userFlags.shift(nextSlot);
        return;
      }
      for (Operation *op : collectives) {
        if (failed) break;
        int64_t blocks = 0;
        failed |= mlir::failed(lower(op, nextSlot, blocks));
        if (!failed)
          recordDecision(kernel, "rule 2 (overlap)",
                         Twine(blocks) + " communicator blocks run the collective (no compute "
                         "to overlap with)");
      }
      kernel->setAttr("pk.level", StringAttr::get(kernel.getContext(), "device"));
      userFlags.shift(nextSlot);
    });
    if (failed) signalPassFailure();
  }

  int64_t defaultBlocks = 64;
};

} // namespace
