// Emission patterns for the device communication primitives.
#include "Emitter.h"

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

namespace {

std::string reduceOpName(ReduceKind k) {
  return "pk::ReduceOp::" + stringifyReduceKind(k).str();
}

// The part of a 1-D tile at origin `i` that lies inside both the source and the destination:
// emits `lo` (elements before index 0 skipped) and `n` (elements moved; none when <= 0), and
// returns their names, so reads and writes stay inside both tensors as a clipped load and
// store would.
std::pair<std::string, std::string> clippedWindow(Emitter &e, Value src, Value dst, Value origin,
                                                  int64_t extent) {
  const std::string i = e.name(origin), lo = e.fresh("pk_lo"), n = e.fresh("pk_n");
  e.line() << "const long long " << lo << " = " << i << " < 0 ? -" << i << " : 0;";
  e.line() << "const long long " << n << " = min(min(" << extent << "LL, " << e.name(src)
           << ".numel - " << i << "), " << e.name(dst) << ".numel - " << i << ") - " << lo << ";";
  return {lo, n};
}

// `const long long o[4] = {...}` for a tile origin, inside the caller's braces.
std::string originOf(Emitter &e, ValueRange indices) {
  std::string s = "const long long o[4] = {";
  for (auto [i, v] : llvm::enumerate(indices)) s += (i ? ", " : "") + e.name(v);
  return s + "};";
}

// The general path's reduce: the tile at the origin, reduced over every rank, in registers.
LogicalResult emitReduceToRegisters(Emitter &e, ReduceOp r) {
  if (r.getTransport() != Transport::ldst)
    return r.emitError("no CUDA emission pattern for a multimem reduce into registers yet");
  std::string t = e.bind(r.getResult(), "tile");
  e.line() << tileTypeName(r.getResult().getType(), e.threads) << " " << t << ";";
  e.line() << "{ " << originOf(e, r.getIndices()) << " pk::tile::load_reduce<"
           << reduceOpName(r.getKind()) << ">(" << t << ", ctx, " << e.name(r.getSource())
           << ", o); }";
  return success();
}

// A reduced tile whose only use is a store to this rank's tensor is reduced straight into
// the destination: no register or shared-memory staging.
// Otherwise (N-D tensors, a tile used in compute) the tile is reduced into registers.
LogicalResult emitReduce(Emitter &e, Operation *op) {
  auto r = cast<ReduceOp>(op);
  auto store = r.getResult().hasOneUse()
                   ? dyn_cast<TileStoreOp>(*r.getResult().getUsers().begin())
                   : TileStoreOp();
  if (r.getSource().getType().getRank() != 1 || !store ||
      store.getIndices()[0] != r.getIndices()[0] || store->getBlock() != op->getBlock() ||
      r.getTransport() == Transport::multimem)
    return emitReduceToRegisters(e, r);
  std::string dest = e.name(store.getDest());
  std::string ptr = isa<SymTensorType>(store.getDest().getType())
                        ? dest + ".peer[ctx.rank]" : dest + ".data";
  std::string origin = e.name(r.getIndices()[0]);
  int64_t extent = r.getResult().getType().getShape()[0];
  const char *fn = r.getTransport() == Transport::multimem ? "pk::reduce_tile_multimem"
                                                           : "pk::reduce_tile";
  auto [lo, n] = clippedWindow(e, r.getSource(), store.getDest(), r.getIndices()[0], extent);
  e.line() << "if (" << n << " > 0) " << fn << "<" << reduceOpName(r.getKind()) << ">(ctx, "
           << e.name(r.getSource()) << ", " << origin << " + " << lo << ", " << n << ", " << ptr
           << " + " << origin << " + " << lo << ");";
  e.markEmitted(store);
  return success();
}

// N-D tiles: reduced into registers, then stored into every rank's copy of the destination.
LogicalResult emitAllReduceTileNd(Emitter &e, CommAllReduceOp r) {
  if (r.getTransport() != Transport::ldst)
    return r.emitError("no CUDA emission pattern for a multimem all_reduce of N-D tiles yet");
  auto src = r.getSource().getType();
  auto tile = TileType::get(r.getContext(), r.getShape(), src.getElementType(), MemorySpace::reg);
  std::string t = e.fresh("pk_reduced");
  e.line() << "{";
  e.indent();
  e.line() << tileTypeName(tile, e.threads) << " " << t << ";";
  e.line() << originOf(e, r.getIndices());
  e.line() << "pk::tile::load_reduce<" << reduceOpName(r.getKind()) << ">(" << t << ", ctx, "
           << e.name(r.getSource()) << ", o);";
  e.line() << "for (int r = 0; r < ctx.world; ++r) pk::tile::store(" << t << ", "
           << e.name(r.getDest()) << ".peer[r], " << e.name(r.getDest()) << ".shape, o);";
  e.dedent();
  e.line() << "}";
  return success();
}

LogicalResult emitAllReduceTile(Emitter &e, Operation *op) {
  auto r = cast<CommAllReduceOp>(op);
  if (r.getSource().getType().getRank() != 1) return emitAllReduceTileNd(e, r);
  // pk::all_reduce_tile_multimem takes the tensors' multicast addresses, which the runtime does
  // not map (symmetric tensors carry peer addresses only): refuse it here, not in NVRTC.
  if (r.getTransport() == Transport::multimem)
    return r.emitError("no CUDA emission pattern for a multimem all_reduce of a tile yet: it needs "
                       "the tensors' multicast addresses, which pkc's runtime does not map; use Ldst");
  auto [lo, n] = clippedWindow(e, r.getSource(), r.getDest(), r.getIndices()[0], r.getShape()[0]);
  e.line() << "if (" << n << " > 0) pk::all_reduce_tile<" << reduceOpName(r.getKind()) << ">(ctx, "
           << e.name(r.getSource()) << ", " << e.name(r.getDest()) << ", "
           << e.name(r.getIndices()[0]) << " + " << lo << ", " << n << ");";
  return success();
}

// Bulk groups are per thread: the thread that issued the TMA stores waits for them to be
// complete (not only read) before anything signals that their data is there.
LogicalResult emitBulkWait(Emitter &e, Operation *) {
  e.line() << "pk::bulk_wait_complete();";
  return success();
}

// The base pointer of a tensor on a rank: `t.peer[r]` for symmetric tensors, `t.data` for
// local ones (which are always this rank's).
std::string basePointer(Emitter &e, Value tensor, Value rank) {
  if (isa<SymTensorType>(tensor.getType()))
    return e.name(tensor) + ".peer[" + (rank ? e.name(rank) : std::string("ctx.rank")) + "]";
  return e.name(tensor) + ".data";
}

LogicalResult emitCopy(Emitter &e, Operation *op) {
  auto c = cast<CopyOp>(op);
  e.line() << "pk::copy_elems(" << basePointer(e, c.getSource(), c.getSrcRank()) << " + "
           << e.name(c.getSrcOffset()) << ", " << basePointer(e, c.getDest(), c.getDstRank())
           << " + " << e.name(c.getDstOffset()) << ", " << e.name(c.getCount()) << ");";
  return success();
}

LogicalResult emitSwap(Emitter &e, Operation *op) {
  auto s = cast<SwapOp>(op);
  std::string t = e.name(s.getTensor());
  e.line() << "pk::swap_elems(" << t << ".peer[" << e.name(s.getARank()) << "] + "
           << e.name(s.getAOffset()) << ", " << t << ".peer[" << e.name(s.getBRank()) << "] + "
           << e.name(s.getBOffset()) << ", " << e.name(s.getCount()) << ");";
  return success();
}

// Destinations as a pointer array: every rank's copy (two-shot), one rank's, or the local one.
LogicalResult emitReduceInto(Emitter &e, Operation *op) {
  auto r = cast<ReduceIntoOp>(op);
  std::string elem = elementTypeName(getTensorElementType(r.getDest().getType()));
  std::string dst = e.name(r.getDest());
  std::string ptrs, count;
  if (isa<SymTensorType>(r.getDest().getType()) && !r.getDstRank()) {
    ptrs = dst + ".peer";
    count = "ctx.world";
  } else {
    std::string one = e.fresh("pk_dst");
    e.line() << elem << "* const " << one << "[1] = {"
             << basePointer(e, r.getDest(), r.getDstRank()) << "};";
    ptrs = one;
    count = "1";
  }
  e.line() << "pk::reduce_into<" << reduceOpName(r.getKind()) << ">(ctx, " << e.name(r.getSource())
           << ", " << e.name(r.getSrcOffset()) << ", " << e.name(r.getCount()) << ", " << ptrs
           << ", " << count << ", " << e.name(r.getDstOffset()) << ");";
  return success();
}

// The one-round small-message path: an int status (1 taken, 0 not, -1 a wait gave up, which
// ends the block like any failed wait), then the op's i1 result. The direct path's waits in
// this worker count only the launches that took it (pk_direct_epoch), since launches that
// took the one-round path do not signal the direct path's flags.
LogicalResult emitPushSmall(Emitter &e, Operation *op) {
  auto p = cast<PushSmallOp>(op);
  std::string kind = p.getKind() ? reduceOpName(*p.getKind()) : "pk::ReduceOp::sum";
  std::string status = e.fresh("pk_small");
  std::string lanes = e.name(p.getLanes());
  std::string direct = e.fresh("pk_direct_epoch");
  e.line() << "unsigned long long " << direct << " = ctx.epoch;";
  e.line() << "const int " << status << " = pk::push_small<pk::SmallCollective::"
           << stringifyCollectiveKind(p.getCollective()) << ", " << kind << ">(ctx, "
           << basePointer(e, p.getInput(), Value()) << ", " << e.name(p.getInput())
           << ".numel, " << basePointer(e, p.getOutput(), Value()) << ", "
           << e.name(p.getOutput()) << ".numel, "
           << (p.getRoot() ? e.name(p.getRoot()) : std::string("0")) << ", "
           << e.name(p.getCount()) << ", " << e.name(p.getLlCount()) << ", " << lanes
           << " - blockIdx.x, " << pushSmallSlotUnits(p) << "LL * gridDim.x, "
           << p.getMaxBytesAttr().getInt() << "LL, " << p.getLlMaxBytesAttr().getInt() << "LL, "
           << direct << ");";
  e.line() << "if (" << status << " < 0) return;";
  e.epoch = direct;
  std::string taken = e.bind(p.getTaken(), "taken");
  e.line() << "const bool " << taken << " = " << status << " > 0;";
  return success();
}

} // namespace

void mlir::pk::cuda::addCommPatterns(PatternTable &table) {
  table["pk.comm.bulk_wait"] = emitBulkWait;
  table["pk.comm.reduce"] = emitReduce;
  table["pk.comm.all_reduce"] = emitAllReduceTile;
  table["pk.comm.copy"] = emitCopy;
  table["pk.comm.swap"] = emitSwap;
  table["pk.comm.reduce_into"] = emitReduceInto;
  table["pk.comm.push_small"] = emitPushSmall;
}
