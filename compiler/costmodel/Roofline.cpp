// Roofline bounds of spec kernels (pk/CostModel/Roofline.h).
#include "pk/CostModel/Roofline.h"

#include "pk/Dialect/Pk.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"

#include <array>
#include <functional>
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::pk;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

int elementBytes(Type t) {
  if (isFp8(t) || t.isInteger(8)) return 1;
  if (t.isBF16() || t.isF16()) return 2;
  if (t.isF64() || t.isInteger(64) || t.isIndex()) return 8;
  return 4;
}

struct Counter {
  KernelOp kernel;
  const RooflineInputs &in;
  std::string error;
  Operation *errorAt = nullptr;

  int argIndex(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &kernel.getBody().front() ? int(arg.getArgNumber()) : -1;
  }
  std::optional<std::vector<int64_t>> shapeOf(Value tensor, Operation *user) {
    int a = argIndex(tensor);
    auto it = a >= 0 ? in.shapes.find(a) : in.shapes.end();
    if (it == in.shapes.end()) {
      if (!errorAt) error = "give the shape of argument #" + std::to_string(a) + " (--shape=" +
                            std::to_string(a) + ":<d0>x<d1>...)", errorAt = user;
      return std::nullopt;
    }
    // The given extents must be the argument's: as many as its rank, and its static sizes.
    llvm::ArrayRef<int64_t> declared = getTensorShape(tensor.getType());
    const std::vector<int64_t> &given = it->second;
    std::string why;
    if (given.size() != declared.size())
      why = "gives " + std::to_string(given.size()) + " extents for a tensor of rank " +
            std::to_string(declared.size());
    for (size_t d = 0; why.empty() && d < given.size(); ++d)
      if (!ShapedType::isDynamic(declared[d]) && declared[d] != given[d])
        why = "gives " + std::to_string(given[d]) + " for dimension " + std::to_string(d) +
              ", which the spec fixes at " + std::to_string(declared[d]);
    if (!why.empty()) {
      if (!errorAt) error = "--shape of argument #" + std::to_string(a) + " " + why, errorAt = user;
      return std::nullopt;
    }
    return given;
  }
  double tensorBytes(Value tensor, Operation *user) {
    auto shape = shapeOf(tensor, user);
    Type element;
    if (auto s = dyn_cast<SymTensorType>(tensor.getType())) element = s.getElementType();
    else if (auto l = dyn_cast<LocalTensorType>(tensor.getType())) element = l.getElementType();
    if (!shape || !element) return 0;
    double n = elementBytes(element);
    for (int64_t d : *shape) n *= double(d);
    return n;
  }

  // Values of enclosing loop induction variables while trips() enumerates a loop.
  llvm::DenseMap<Value, int64_t> env;

  // An index value at rank 0 for the given shapes (and the loop variables in env), or nullopt.
  std::optional<int64_t> eval(Value v) {
    if (auto it = env.find(v); it != env.end()) return it->second;
    Operation *op = v.getDefiningOp();
    if (!op) return std::nullopt;
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      if (auto i = dyn_cast<IntegerAttr>(c.getValue())) return i.getInt();
    if (auto d = dyn_cast<DimOp>(op)) {
      auto shape = shapeOf(d.getTensor(), op);
      int64_t k = d.getDimAttr().getInt();
      return shape && k < int64_t(shape->size()) ? std::optional<int64_t>((*shape)[k]) : std::nullopt;
    }
    if (isa<WorldSizeOp>(op)) return in.world;
    if (isa<RankOp>(op)) return 0;
    if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(op)) return eval(op->getOperand(0));
    if (op->getNumOperands() != 2) return std::nullopt;
    auto x = eval(op->getOperand(0)), y = eval(op->getOperand(1));
    if (!x || !y) return std::nullopt;
    if (isa<arith::AddIOp>(op)) return *x + *y;
    if (isa<arith::SubIOp>(op)) return *x - *y;
    if (isa<arith::MulIOp>(op)) return *x * *y;
    if (isa<arith::DivSIOp, arith::DivUIOp>(op)) return *y ? std::optional<int64_t>(*x / *y) : std::nullopt;
    if (isa<arith::RemSIOp, arith::RemUIOp>(op)) return *y ? std::optional<int64_t>(*x % *y) : std::nullopt;
    if (isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op)) return ceilDiv(*x, *y);
    if (isa<arith::MinSIOp, arith::MinUIOp>(op)) return std::min(*x, *y);
    if (isa<arith::MaxSIOp, arith::MaxUIOp>(op)) return std::max(*x, *y);
    return std::nullopt;
  }

  // How many times `op` runs, as a fraction of whole tiles: the product over its enclosing loops
  // of extent / step, so a tail tile counts only the part inside the bounds (the work a bound
  // may assume is the work the spec asks for, not the padding). A loop whose variable bounds an
  // inner loop (the causal key loop `range(0, m + 64, 64)` inside `tiles(..., {64})`) is
  // walked iteration by iteration instead, up to kMaxWalk iterations in all.
  static constexpr int64_t kMaxWalk = 1 << 22;
  std::optional<double> trips(Operation *op) {
    SmallVector<Operation *> loops;  // outermost first
    for (Operation *p = op->getParentOp(); p && p != kernel.getOperation(); p = p->getParentOp())
      if (isa<TileForeachOp, scf::ForOp>(p)) loops.insert(loops.begin(), p);
    SmallVector<bool> walked;  // which levels bound an inner loop: decided once, not per iteration
    for (size_t i = 0; i < loops.size(); ++i) walked.push_back(boundsInner(loops, i));
    int64_t budget = kMaxWalk;
    return tripsFrom(loops, walked, 0, budget);
  }
  // Whether an induction variable of `loop` feeds a bound of a loop after it in `loops`.
  static bool boundsInner(ArrayRef<Operation *> loops, size_t i) {
    llvm::SetVector<Value> ivs;
    if (auto f = dyn_cast<TileForeachOp>(loops[i])) ivs.insert(f.getBody().front().args_begin(), f.getBody().front().args_end());
    else ivs.insert(cast<scf::ForOp>(loops[i]).getInductionVar());
    for (size_t j = i + 1; j < loops.size(); ++j) {
      SmallVector<Value> bounds(loops[j]->getOperands());  // foreach: its bounds; scf.for: lb, ub, step, inits
      for (Value b : bounds) {
        SmallVector<Value> stack{b};
        llvm::SmallPtrSet<Operation *, 16> seen;
        while (!stack.empty()) {
          Value v = stack.pop_back_val();
          if (ivs.contains(v)) return true;
          if (Operation *d = v.getDefiningOp(); d && seen.insert(d).second)
            for (Value o : d->getOperands()) stack.push_back(o);
        }
      }
    }
    return false;
  }
  // (lower, upper, step) of each dimension of loop `i`, from the current env.
  std::optional<SmallVector<std::array<int64_t, 3>>> ranges(Operation *loop) {
    SmallVector<std::array<int64_t, 3>> out;
    if (auto f = dyn_cast<TileForeachOp>(loop)) {
      for (auto [ub, step] : llvm::zip(f.getUpperBounds(), f.getSteps())) {
        auto u = eval(ub);
        if (!u) return std::nullopt;
        out.push_back({0, *u, step});
      }
    } else {
      auto s = cast<scf::ForOp>(loop);
      auto lb = eval(s.getLowerBound()), ub = eval(s.getUpperBound()), st = eval(s.getStep());
      if (!lb || !ub || !st || *st <= 0) return std::nullopt;
      out.push_back({*lb, *ub, *st});
    }
    return out;
  }
  std::optional<double> tripsFrom(ArrayRef<Operation *> loops, ArrayRef<bool> walked, size_t i,
                                  int64_t &budget) {
    if (i == loops.size()) return 1.0;
    auto r = ranges(loops[i]);
    if (!r) return std::nullopt;
    if (!walked[i]) {
      double n = 1;
      for (auto [lo, hi, step] : *r) n *= double(std::max<int64_t>(hi - lo, 0)) / double(step);
      auto inner = tripsFrom(loops, walked, i + 1, budget);
      return inner ? std::optional<double>(n * *inner) : std::nullopt;
    }
    // Walk the iterations (the last dimension innermost), each weighted by its share of a step.
    SmallVector<Value> ivs;
    if (auto f = dyn_cast<TileForeachOp>(loops[i])) ivs.append(f.getBody().front().args_begin(), f.getBody().front().args_end());
    else ivs.push_back(cast<scf::ForOp>(loops[i]).getInductionVar());
    double total = 0;
    std::function<bool(size_t, double)> walk = [&](size_t d, double weight) {
      if (d == r->size()) {
        if (--budget < 0) return false;
        auto inner = tripsFrom(loops, walked, i + 1, budget);
        if (!inner) return false;
        total += weight * *inner;
        return true;
      }
      auto [lo, hi, step] = (*r)[d];
      for (int64_t x = lo; x < hi; x += step) {
        env[ivs[d]] = x;
        if (!walk(d + 1, weight * double(std::min(step, hi - x)) / double(step))) return false;
      }
      return true;
    };
    const bool ok = walk(0, 1.0);
    for (Value v : ivs) env.erase(v);
    return ok ? std::optional<double>(total) : std::nullopt;
  }
  double tripsOrFail(Operation *op) {
    auto t = trips(op);
    if (!t && !errorAt) error = "a loop bound here depends on values the roofline cannot size", errorAt = op;
    return t ? *t : 0;
  }
  static double tileBytes(Type t) {
    auto tile = cast<TileType>(t);
    double n = elementBytes(tile.getElementType());
    for (int64_t d : tile.getShape()) n *= double(d);
    return n;
  }
};

}  // namespace

FailureOr<std::vector<KernelRoofline>> mlir::pk::computeRoofline(ModuleOp module,
                                                                 const RooflineInputs &in,
                                                                 const ::pk::MachineProfile &profile) {
  std::vector<KernelRoofline> out;
  const double w = double(in.world), remote = w > 1 ? (w - 1) / w : 0;
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    Counter c{kernel, in, {}, nullptr};
    KernelRoofline r;
    bool peerTiles = false;
    r.kernel = kernel.getSymName().str();
    // Compulsory HBM traffic: every tensor argument the kernel uses, read or written once;
    // except one touched only by rows moved by index or scalar reads, where which rows is
    // data (an embedding table's T of V rows): a lower bound counts none of it.
    for (BlockArgument arg : kernel.getBody().front().getArguments()) {
      if (!isa<SymTensorType, LocalTensorType>(arg.getType()) || arg.use_empty()) continue;
      bool byIndex = false, whole = false;
      for (Operation *user : arg.getUsers()) {
        if (isa<TileLoadRowsOp, TileStoreRowsOp, LoadScalarOp>(user)) byIndex = true;
        else if (!isa<DimOp>(user)) whole = true;
      }
      if (byIndex && !whole) {
        r.notes.push_back("argument #" + std::to_string(arg.getArgNumber()) +
                          " is moved by index only: no compulsory bytes counted");
        continue;
      }
      r.hbmBytes += c.tensorBytes(arg, kernel);
    }
    kernel.walk([&](Operation *op) {
      if (auto mma = dyn_cast<TileMmaOp>(op)) {
        auto a = cast<TileType>(mma.getA().getType());
        auto acc = cast<TileType>(mma.getType());
        const double k = double(a.getShape()[1]);
        r.flops += 2.0 * double(acc.getShape()[0]) * double(acc.getShape()[1]) * k * c.tripsOrFail(op);
        Type e = a.getElementType();
        r.flopType = e.isF16() ? "f16" : isFp8(e) ? "fp8" : "bf16";
      } else if (isa<AllReduceOp>(op)) {
        r.linkBytes += 2 * remote * c.tensorBytes(op->getOperand(0), op);  // reduce-scatter + all-gather
      } else if (isa<AllGatherOp, GatherOp, BroadcastOp>(op)) {
        r.linkBytes += remote * c.tensorBytes(op->getOperand(1), op);  // what each rank receives
      } else if (isa<ReduceScatterOp, AllToAllOp, ReduceToRootOp, ScatterOp>(op)) {
        r.linkBytes += remote * c.tensorBytes(op->getOperand(0), op);
      } else if (isa<StoreTileOp, AddTileOp, LoadPeerOp>(op)) {
        Value tile = isa<LoadPeerOp>(op) ? op->getResult(0) : op->getOperand(0);
        r.linkBytes += remote * Counter::tileBytes(tile.getType()) * c.tripsOrFail(op);
        peerTiles = true;
      }
    });
    if (c.errorAt) return mlir::emitError(c.errorAt->getLoc(), "roofline: ") << c.error;
    if (r.flops > 0 && !r.flopType.empty()) {
      const double peak = r.flopType == "f16"   ? profile.tensor_f16_tflops
                          : r.flopType == "fp8" ? profile.tensor_fp8_tflops
                                                : profile.tensor_bf16_tflops;
      if (peak > 0) r.computeUs = r.flops / (peak * 1e6);
      else r.notes.push_back("the profile has no tensor-core peak for " + r.flopType);
    }
    if (profile.hbm_gbs > 0) r.hbmUs = r.hbmBytes / (profile.hbm_gbs * 1e3);
    else r.notes.push_back("the profile has no HBM peak");
    if (r.linkBytes > 0) {
      if (profile.link_gbs > 0) r.linkUs = r.linkBytes / (profile.link_gbs * 1e3);
      else r.notes.push_back("the profile has no link peak");
    }
    // Fixed costs bound a kernel alongside its work, not on top of it: a launch back to back
    // overlaps the previous kernel's tail, so only the largest of them all is sure.
    r.fixedUs = profile.launch_us;
    if (profile.launch_us <= 0) r.notes.push_back("the profile has no launch time");
    if (in.world > 1 && r.linkBytes > 0) {
      if (profile.link_hop_us > 0) r.fixedUs += profile.link_hop_us;
      else r.notes.push_back("the profile has no flag hop between GPUs");
    }
    r.overlapUs = std::max({r.computeUs, r.hbmUs, r.linkUs, r.fixedUs});
    r.serialUs = std::max(std::max(r.computeUs, r.hbmUs) + r.linkUs, r.fixedUs);
    r.binds = r.overlapUs == r.computeUs && r.computeUs > 0 ? "compute"
              : r.overlapUs == r.linkUs && r.linkUs > 0   ? "link"
              : r.overlapUs == r.hbmUs && r.hbmUs > 0     ? "HBM"
              : r.fixedUs > 0                             ? "fixed costs"
                                                          : "HBM";
    if (peerTiles && in.world > 1)
      r.notes.push_back("peer tile traffic assumes (W - 1) / W of the tiles go to other ranks");
    out.push_back(std::move(r));
  }
  return out;
}

std::string mlir::pk::formatRooflineText(const std::vector<KernelRoofline> &kernels, int64_t world) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (const KernelRoofline &k : kernels) {
    os << "kernel " << k.kernel << " (world size " << world << ")\n";
    os << llvm::format("  tensor-core FLOPs      %14.0f", k.flops)
       << (k.flopType.empty() ? "" : " (" + k.flopType + ")")
       << llvm::format("  -> %10.2f us\n", k.computeUs);
    os << llvm::format("  HBM bytes (compulsory) %14.0f  -> %10.2f us\n", k.hbmBytes, k.hbmUs);
    os << llvm::format("  link bytes per rank    %14.0f  -> %10.2f us\n", k.linkBytes, k.linkUs);
    const char *fixed = world > 1 && k.linkBytes > 0 ? "fixed costs (launch, flag hop)" : "fixed costs (launch)";
    os << llvm::format("  %-37s  -> %10.2f us\n", fixed, k.fixedUs);
    os << "  bound: " << k.binds
       << llvm::format("; perfect overlap %.2f us, communication after compute %.2f us\n",
                       k.overlapUs, k.serialUs);
    for (const std::string &n : k.notes) os << "  note: " << n << "\n";
  }
  return s;
}

std::string mlir::pk::formatRooflineJson(const std::vector<KernelRoofline> &kernels, int64_t world) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "{\"world\": " << world << ", \"kernels\": [";
  for (auto [i, k] : llvm::enumerate(kernels)) {
    os << (i ? ", " : "") << "{\"kernel\": \"" << k.kernel << "\""
       << llvm::format(", \"flops\": %.0f, \"flop_type\": \"", k.flops) << k.flopType << "\""
       << llvm::format(", \"hbm_bytes\": %.0f, \"link_bytes_per_rank\": %.0f", k.hbmBytes, k.linkBytes)
       << llvm::format(", \"compute_us\": %.3f, \"hbm_us\": %.3f, \"link_us\": %.3f", k.computeUs, k.hbmUs, k.linkUs)
       << llvm::format(", \"fixed_us\": %.3f", k.fixedUs)
       << llvm::format(", \"overlap_us\": %.3f, \"serial_us\": %.3f", k.overlapUs, k.serialUs)
       << ", \"binds\": \"" << k.binds << "\"}";
  }
  os << "]}\n";
  return s;
}
