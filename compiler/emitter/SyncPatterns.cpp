// Emission patterns for flags, signals, waits and barriers. One thread of the block talks
// to the peers; block barriers order the other threads' work around it.
#include "Emitter.h"

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

namespace {

LogicalResult emitFlag(Emitter &e, Operation *op) {
  auto flag = cast<FlagOp>(op);
  std::string number = std::to_string(flag.getSlot());
  if (Value offset = flag.getOffset()) {
    // A run-time slot (the same in every thread of the block): a block whose slot leaves the
    // kernel's flag region records it and leaves before it signals or waits on it.
    number = e.fresh("slot");
    e.line() << "const long long " << number << " = " << flag.getSlot() << "LL + "
             << e.name(offset) << ";";
    e.line() << "if (!pk::flag_slot_ok(ctx, " << number << ")) return;";
    number = "int(" + number + ")";
  }
  std::string slot = e.bind(flag.getResult(), "flag");
  if (flag.getScope() == FlagScope::block)
    e.line() << "const int " << slot << " = " << number
             << " * gridDim.x + blockIdx.x;  // per-block slot";
  else
    e.line() << "const int " << slot << " = " << number << " * gridDim.x;  // grid slot";
  return success();
}

// The block's writes happen before thread 0's system-scope release.
LogicalResult emitSignal(Emitter &e, Operation *op) {
  auto s = cast<SignalOp>(op);
  e.line() << "__syncthreads();";
  e.line() << "if (threadIdx.x == 0) pk::signal(ctx, int(" << e.name(s.getPeer()) << "), "
           << e.name(s.getFlag()) << ");";
  return success();
}

LogicalResult emitSignalAll(Emitter &e, Operation *op) {
  auto s = cast<SignalAllOp>(op);
  e.line() << "__syncthreads();";
  e.line() << "if (threadIdx.x == 0) pk::signal_all(ctx, " << e.name(s.getFlag()) << ");";
  return success();
}

// Thread 0 waits (acquire); the block barrier then orders every thread's reads after it.
// A wait that gave up makes the whole block leave; the host reports the error slot.
void emitBoundedAbort(Emitter &e, const std::string &call) {
  e.line() << "if (threadIdx.x == 0) pk_abort = !" << call << ";";
  e.line() << "__syncthreads();";
  e.line() << "if (pk_abort) return;";
}

LogicalResult emitWait(Emitter &e, Operation *op) {
  auto w = cast<WaitOp>(op);
  if (w.getCompare() != Compare::ge)
    return op->emitError("flags are monotone epochs: a wait must compare with >=, not ==");
  e.line() << "__syncthreads();";
  emitBoundedAbort(e, "pk::wait_ge(ctx, " + e.name(w.getFlag()) + ", " + e.epoch + " * " +
                          "(unsigned long long)(" + e.name(w.getCount()) + "))");
  return success();
}

// A barrier on a <block> flag meets block b of every rank; on a <grid> flag every block of
// every rank: each block bumps the flag on every rank (itself too) and waits for all of them.
LogicalResult emitBarrier(Emitter &e, Operation *op) {
  auto b = cast<BarrierOp>(op);
  auto flag = b.getFlag().getDefiningOp<FlagOp>();
  e.line() << "__syncthreads();";
  if (flag && flag.getScope() == FlagScope::grid) {
    const std::string f = e.name(b.getFlag());
    e.line() << "if (threadIdx.x == 0) { pk::signal_all(ctx, " << f << "); pk::signal(ctx, ctx.rank, " << f
             << "); }";
    emitBoundedAbort(e, "pk::wait_ge(ctx, " + f + ", " + e.epoch +
                            " * (unsigned long long)(ctx.world) * gridDim.x)");
    return success();
  }
  emitBoundedAbort(e, "pk::barrier(ctx, " + e.name(b.getFlag()) + ")");
  return success();
}

// TMA reads of data a wait published go through the async proxy: fence it after the wait.
LogicalResult emitProxyFence(Emitter &e, Operation *) {
  e.line() << "pk::proxy_fence_after_wait();";
  return success();
}

} // namespace

void mlir::pk::cuda::addSyncPatterns(PatternTable &table) {
  table["pk.sync.flag"] = emitFlag;
  table["pk.sync.signal"] = emitSignal;
  table["pk.sync.signal_all"] = emitSignalAll;
  table["pk.sync.wait"] = emitWait;
  table["pk.sync.barrier"] = emitBarrier;
  table["pk.sync.proxy_fence"] = emitProxyFence;
}
