// Emission patterns for tile ops on the general path: every tile is a register tile of the
// block (pk/tile/rt.cuh) and every op one call into the tile library, so the emitted loop reads
// like the spec. Loops that match a Hopper template never get here (pk-lower-gemm).
#include "Emitter.h"
#include "pk/Passes/TileShared.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include <cmath>

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

// The tile library's type for `t` in a block of `threads`: rt<T, rank, S0..S3, threads> (or pt).
std::string mlir::pk::cuda::tileTypeName(TileType t, int threads, StringRef tmpl) {
  std::string s = "pk::tile::" + tmpl.str() + "<" + elementTypeName(t.getElementType()) + ", " +
                  std::to_string(t.getRank());
  for (int d = 0; d < 4; ++d)
    s += ", " + std::to_string(d < t.getRank() ? t.getShape()[d] : 1);
  return s + ", " + std::to_string(threads) + ">";
}

// The fp32 C++ expression of a map kind applied to the expressions x (and y).
std::string mlir::pk::cuda::mapExpression(MapKind kind, StringRef x, StringRef y, bool fast) {
  // Operands that are not plain names are parenthesised.
  auto operand = [](StringRef v) {
    bool plain = llvm::all_of(v, [](char c) { return llvm::isAlnum(c) || c == '_' || c == '.'; });
    return plain ? v.str() : "(" + v.str() + ")";
  };
  auto fill = [&](StringRef pattern) {  // pattern: in terms of X and Y
    std::string out;
    for (char c : pattern) out += c == 'X' ? operand(x) : c == 'Y' ? operand(y) : std::string(1, c);
    return out;
  };
  if (fast) {
    switch (kind) {
    case MapKind::tanh: return fill("pk::gemm::tanh_approx(X)");
    case MapKind::gelu_tanh:
      return fill("pk::gemm::gelu_tanh_approx(X)");
    default: break;
    }
  }
  switch (kind) {
  case MapKind::add: return fill("X + Y");
  case MapKind::sub: return fill("X - Y");
  case MapKind::mul: return fill("X * Y");
  case MapKind::div: return fill("X / Y");
  case MapKind::max: return fill("fmaxf(X, Y)");
  case MapKind::min: return fill("fminf(X, Y)");
  case MapKind::exp: return fill("pk::tile::exp_ftz(X)");
  case MapKind::neg: return fill("-X");
  case MapKind::sqrt: return fill("sqrtf(X)");
  case MapKind::rsqrt: return fill("rsqrtf(X)");
  case MapKind::log: return fill("logf(X)");
  case MapKind::tanh: return fill("tanhf(X)");
  // x / y by rcp.approx (__fdividef): exp_ftz is already approximate, and the IEEE division's
  // slow-path sequence made silu(x) * y the slowest element-wise kernel (0.86 of the copy).
  case MapKind::sigmoid: return fill("__fdividef(1.f, 1.f + pk::tile::exp_ftz(-X))");
  case MapKind::silu: return fill("__fdividef(X, 1.f + pk::tile::exp_ftz(-X))");
  case MapKind::gelu_tanh: return fill("0.5f * X * (1.f + tanhf(0.7978845608f * (X + 0.044715f * X * X * X)))");
  case MapKind::gelu_erf: return fill("0.5f * X * (1.f + erff(X * 0.7071067812f))");
  case MapKind::erf: return fill("erff(X)");
  case MapKind::sin: return fill("sinf(X)");
  case MapKind::cos: return fill("cosf(X)");
  case MapKind::abs: return fill("fabsf(X)");
  case MapKind::round: return fill("rintf(X)");
  case MapKind::floor: return fill("floorf(X)");
  case MapKind::ceil: return fill("ceilf(X)");
  case MapKind::pow: return fill("powf(X, Y)");
  case MapKind::lt: return fill("X < Y ? 1.f : 0.f");
  case MapKind::le: return fill("X <= Y ? 1.f : 0.f");
  case MapKind::gt: return fill("X > Y ? 1.f : 0.f");
  case MapKind::ge: return fill("X >= Y ? 1.f : 0.f");
  case MapKind::eq: return fill("X == Y ? 1.f : 0.f");
  case MapKind::ne: return fill("X != Y ? 1.f : 0.f");
  case MapKind::rem: case MapKind::hash: case MapKind::bit_and: case MapKind::bit_or:
  case MapKind::bit_xor: case MapKind::shl: case MapKind::shr:
    break;  // integer tiles only (integerMapExpression)
  }
  return "";
}

namespace {

// The integer C++ expression of a map kind on integer tiles (the verifier admits only these
// kinds there): wrapping arithmetic (pk/tile/int_math.cuh: signed overflow is undefined in C++),
// division and remainder by zero give 0.
std::string integerMapExpression(MapKind kind) {
  switch (kind) {
  case MapKind::add: return "pk::tile::wrap_add(x, y)";
  case MapKind::sub: return "pk::tile::wrap_sub(x, y)";
  case MapKind::mul: return "pk::tile::wrap_mul(x, y)";
  case MapKind::div: return "pk::tile::wrap_div(x, y)";
  case MapKind::rem: return "pk::tile::wrap_rem(x, y)";
  case MapKind::hash: return "pk::tile::wrap_hash(x, y)";
  case MapKind::bit_and: return "x & y";
  case MapKind::bit_or: return "x | y";
  case MapKind::bit_xor: return "x ^ y";
  case MapKind::shl: return "pk::tile::wrap_shl(x, y)";
  case MapKind::shr: return "pk::tile::wrap_shr(x, y)";
  case MapKind::max: return "x > y ? x : y";
  case MapKind::min: return "x < y ? x : y";
  case MapKind::neg: return "pk::tile::wrap_neg(x)";
  case MapKind::abs: return "pk::tile::wrap_abs(x)";
  case MapKind::lt: return "x < y ? 1 : 0";
  case MapKind::le: return "x <= y ? 1 : 0";
  case MapKind::gt: return "x > y ? 1 : 0";
  case MapKind::ge: return "x >= y ? 1 : 0";
  case MapKind::eq: return "x == y ? 1 : 0";
  case MapKind::ne: return "x != y ? 1 : 0";
  default: return "";
  }
}

} // namespace

// A local pointer and shape of this rank's copy of a tensor argument.
std::string mlir::pk::cuda::dataOf(Emitter &e, Value tensor) {
  if (isa<SymTensorType>(tensor.getType())) return e.name(tensor) + ".peer[ctx.rank]";
  return e.name(tensor) + ".data";
}

namespace {

// `const long long o[4] = {...}` for a tile origin, inside the caller's braces.
std::string origin(Emitter &e, ValueRange indices) {
  std::string s = "const long long o[4] = {";
  for (auto [i, v] : llvm::enumerate(indices)) s += (i ? ", " : "") + e.name(v);
  return s + "};";
}

std::string declare(Emitter &e, Value v, StringRef prefix) {
  std::string n = e.bind(v, prefix);
  e.line() << tileTypeName(cast<TileType>(v.getType()), e.threads) << " " << n << ";";
  return n;
}

LogicalResult emitLoad(Emitter &e, Operation *op) {
  auto load = cast<TileLoadOp>(op);
  std::string t;
  // pk-batch-tile-loads marks tiles that are only moved (pk.packed): held packed (pk/tile/packed.cuh).
  if (load->hasAttr("pk.packed") && !e.prefetched.count(op)) {
    t = e.bind(load.getResult(), "tile");
    e.line() << tileTypeName(load.getType(), e.threads, "pt") << " " << t << ";  // held packed: only moved";
  } else {
    t = declare(e, load.getResult(), "tile");
  }
  e.line() << "{ " << origin(e, load.getIndices());
  // A tile the loop copied ahead into its ring (emitTileForeach) is read from there.
  auto ring = e.prefetched.find(op);
  if (ring != e.prefetched.end())
    e.os << " pk::tile::load_prefetched(" << t << ", " << ring->second.slot << ", "
         << (ring->second.made.empty() ? "" : ring->second.made + ", ");
  else
    e.os << " pk::tile::load(" << t << ", ";
  e.os << dataOf(e, load.getSource()) << ", " << e.name(load.getSource()) << ".shape, o); }";
  return success();
}

} // namespace

void mlir::pk::cuda::emitPrefetch(Emitter &e, TileLoadOp load, StringRef slot, StringRef when,
                                  StringRef fits, StringRef bit) {
  auto tile = cast<TileType>(load.getType());
  e.line() << "{ " << origin(e, load.getIndices());
  if (!when.empty()) e.os << " if (" << when << ")";
  if (!fits.empty()) e.os << " pk::tile::note_copy(" << fits << ", " << bit << ",";
  e.os << " pk::tile::prefetch<" << tileTypeName(tile, e.threads) << ">(" << slot << ", "
       << dataOf(e, load.getSource()) << ", " << e.name(load.getSource()) << ".shape, o)"
       << (fits.empty() ? "" : ")") << "; }";
}

namespace {

// A cast of an f32 register tile to bf16 or f16 whose only use is a store: the store rounds
// the f32 tile itself (to nearest even, as the cast does), so the cast is not emitted; that
// saves a scalar conversion per element (the store packs two elements by one cvt).
TileCastOp castFoldedIntoStore(Value stored) {
  auto c = stored.getDefiningOp<TileCastOp>();
  if (!c || !c->hasOneUse() || !isa<TileStoreOp>(*c->user_begin())) return {};
  auto in = cast<TileType>(c.getInput().getType());
  Type out = cast<TileType>(c.getResult().getType()).getElementType();
  if (in.getMemorySpace() != MemorySpace::reg || !in.getElementType().isF32() ||
      !(out.isBF16() || out.isF16()))
    return {};
  return c;
}

LogicalResult emitStore(Emitter &e, Operation *op) {
  auto store = cast<TileStoreOp>(op);
  Value stored = store.getValue();
  if (std::optional<TileType> layout = rowStatsLayout(e, stored)) {
    std::string values = rowVector(e, op, stored, *layout);
    if (values.empty())
      return op->emitError("internal: a column of row statistics in registers did not rebuild here");
    e.line() << "{ " << origin(e, store.getIndices()) << " pk::tile::store_row_values(" << values
             << ", " << dataOf(e, store.getDest()) << ", " << e.name(store.getDest())
             << ".shape, o); }";
    return success();
  }
  if (TileCastOp folded = castFoldedIntoStore(stored)) stored = folded.getInput();
  e.line() << "{ " << origin(e, store.getIndices()) << " pk::tile::store("
           << e.name(stored) << ", " << dataOf(e, store.getDest()) << ", "
           << e.name(store.getDest()) << ".shape, o); }";
  return success();
}

// A lower bound of index value `v` known from how it is built (rank() >= 0, world_size() >= 1,
// constants, sums, differences by a constant, products of non-negative values), if any.
std::optional<int64_t> lowerBound(Value v, int depth = 0) {
  if (depth > 8) return std::nullopt;
  if (auto c = getConstantIntValue(v)) return *c;
  Operation *def = v.getDefiningOp();
  if (!def) return std::nullopt;
  if (isa<RankOp>(def)) return 0;
  if (isa<WorldSizeOp>(def)) return 1;
  if (!isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def)) return std::nullopt;
  auto a = lowerBound(def->getOperand(0), depth + 1);
  if (!a) return std::nullopt;
  if (isa<arith::SubIOp>(def)) {
    auto c = getConstantIntValue(def->getOperand(1));
    return c ? std::optional<int64_t>(*a - *c) : std::nullopt;
  }
  auto b = lowerBound(def->getOperand(1), depth + 1);
  if (!b) return std::nullopt;
  if (isa<arith::AddIOp>(def)) return *a + *b;
  return *a >= 0 && *b >= 0 ? std::optional<int64_t>(*a * *b) : std::nullopt;
}

// Whether `peer` is within ranks 0..W-1 by construction: this rank; a non-negative value
// modulo world_size() (next_rank(), prev_rank(), (rank() + k) % world_size()); or the
// variable of a range loop from a non-negative constant to world_size() by a positive
// constant step (a loop over the peers). Such accesses need no run-time guard.
bool peerInRangeByConstruction(Value peer) {
  if (peer.getDefiningOp<RankOp>()) return true;
  if (auto rem = peer.getDefiningOp<arith::RemSIOp>()) {
    auto from = lowerBound(rem.getLhs());
    return from && *from >= 0 && rem.getRhs().getDefiningOp<WorldSizeOp>();
  }
  auto arg = dyn_cast<BlockArgument>(peer);
  auto loop = arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : scf::ForOp();
  if (!loop || loop.getInductionVar() != peer) return false;
  auto lb = getConstantIntValue(loop.getLowerBound()), step = getConstantIntValue(loop.getStep());
  return lb && *lb >= 0 && step && *step > 0 && loop.getUpperBound().getDefiningOp<WorldSizeOp>();
}

// `if (...) ` that skips a tile access to `x.on(peer)` when the rank is outside the world (the
// launch then reports it, pk/device/check.cuh); nothing for this rank's own copy, or a rank in
// range by construction.
std::string peerGuard(Emitter &e, Value peer) {
  if (!peer || peerInRangeByConstruction(peer)) return "";
  return "if (pk::peer_in_range(ctx, " + e.name(peer) + ")) ";
}

// A tile written (or added) into rank p's copy of a symmetric tensor: the general path's
// ld/st route (pk-lower-peer-tiles). The general path holds every tile in registers (a
// load_smem tile too: emitLoad), so the memory space does not matter; TMA belongs to templates.
LogicalResult emitPeerStore(Emitter &e, Operation *op) {
  auto transport = op->getAttrOfType<TransportAttr>("transport");
  if (!transport || transport.getValue() != Transport::ldst)
    return op->emitError("no CUDA emission pattern for ")
           << op->getName() << " by "
           << (transport ? stringifyTransport(transport.getValue()) : StringRef("?"))
           << " outside a template yet; store with Ldst";
  Value dest = op->getOperand(1), peer = op->getOperand(2);
  const char *fn = isa<StoreAddAsyncOp>(op) ? "pk::tile::store_add(" : "pk::tile::store(";
  e.line() << peerGuard(e, peer) << "{ " << origin(e, op->getOperands().drop_front(3)) << " " << fn
           << e.name(op->getOperand(0)) << ", " << e.name(dest) << ".peer[" << e.name(peer)
           << "], " << e.name(dest) << ".shape, o); }";
  return success();
}

// A tile loaded from rank p's copy of a symmetric tensor (a pull), by ld/st. As for
// load_smem, the general path holds a shared-memory tile (load_peer_smem) in registers.
LogicalResult emitPeerLoad(Emitter &e, Operation *op) {
  auto load = cast<LoadPeerOp>(op);
  if (load.getTransport() != Transport::ldst)
    return op->emitError("no CUDA emission pattern for pk.comm.load_peer by ")
           << stringifyTransport(load.getTransport()) << " outside a template yet; load with Ldst";
  std::string t = declare(e, load.getResult(), "tile");
  e.line() << peerGuard(e, load.getPeer()) << "{ " << origin(e, load.getIndices()) << " pk::tile::load(" << t << ", "
           << e.name(load.getSource()) << ".peer[" << e.name(load.getPeer()) << "], "
           << e.name(load.getSource()) << ".shape, o); }";
  return success();
}

} // namespace

// The lambda of a map kind for the tile library's map: over fp32 values for float tiles, over
// the element type itself for integer tiles (the operands' type: a comparison's result may be
// of another type than its operands).
std::string mlir::pk::cuda::mapLambda(MapKind kind, Type operand) {
  const bool binary = kind == MapKind::add || kind == MapKind::sub || kind == MapKind::mul ||
                      kind == MapKind::div || kind == MapKind::max || kind == MapKind::min ||
                      kind == MapKind::pow || (kind >= MapKind::lt && kind <= MapKind::rem) ||
                      kind == MapKind::hash || (kind >= MapKind::bit_and && kind <= MapKind::shr);
  const bool integer = isa<IntegerType>(operand);
  const std::string v = integer ? elementTypeName(operand) : "float";
  return (binary ? "[](" + v + " x, " + v + " y) { return " : "[](" + v + " x) { return ") +
         (integer ? integerMapExpression(kind) : mapExpression(kind, "x", "y")) + "; }";
}

namespace {

// The float constant a tile is splatted from, or null.
FloatAttr splatConstant(Value tile) {
  auto splat = tile.getDefiningOp<TileSplatOp>();
  auto constant = splat ? splat.getScalar().getDefiningOp<arith::ConstantOp>() : nullptr;
  return constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
}

// pow(t, c) with c a constant integer from -4 to 4, as multiplications (powf costs about 40
// instructions and rounds less well than one or two multiplies): "" for any other exponent.
std::string powByConstant(TileMapOp map) {
  if (map.getKind() != MapKind::pow || map.getInputs().size() != 2) return "";
  FloatAttr value = splatConstant(map.getInputs()[1]);
  if (!value || !isa<FloatType>(cast<TileType>(map.getInputs()[0].getType()).getElementType())) return "";
  const double c = value.getValueAsDouble();
  if (c != static_cast<double>(static_cast<int>(c)) || c < -4 || c > 4) return "";
  const int n = static_cast<int>(c < 0 ? -c : c);
  static const char *const kPowers[] = {"1.f", "x", "x * x", "x * x * x", "(x * x) * (x * x)"};
  return c < 0 ? std::string("1.f / (") + kPowers[n] + ")" : std::string(kPowers[n]);
}

// "1/c" as a float literal when `map` divides a float tile by a splat of a constant power of
// two c (with a normal reciprocal); "" otherwise.
std::string exactInverse(TileMapOp map) {
  if (map.getKind() != MapKind::div || map.getInputs().size() != 2 ||
      map.getInputs()[0].getType() != map.getResult().getType() ||
      !isa<FloatType>(map.getResult().getType().getElementType()))
    return "";
  FloatAttr value = splatConstant(map.getInputs()[1]);
  if (!value) return "";
  int exponent = 0;
  const double c = value.getValueAsDouble();
  if (c == 0 || !std::isfinite(c) || std::fabs(std::frexp(c, &exponent)) != 0.5) return "";
  if (exponent - 1 < -126 || exponent - 1 > 126) return "";  // 1 / c must be a normal float
  // A hex float: exactly 2^-(exponent - 1), with c's sign.
  return std::string(c < 0 ? "-" : "") + "0x1p" + std::to_string(1 - exponent) + "f";
}

LogicalResult emitMap(Emitter &e, Operation *op) {
  auto map = cast<TileMapOp>(op);
  if (rowStatsLayout(e, map.getResult())) return success();  // rebuilt where it is used
  std::string out = declare(e, map.getResult(), "tile");
  // t / c for a constant power of two c: a multiply by 1 / c, which is exact (the IEEE
  // division is a dozen instructions per element). Other divisors keep the division, so a
  // quantisation's rounding matches C++ (and PyTorch) bit for bit.
  if (std::string inverse = exactInverse(map); !inverse.empty()) {
    e.line() << "pk::tile::map(" << out << ", " << e.name(map.getInputs()[0])
             << ", [](float x) { return x * " << inverse << "; });";
    return success();
  }
  if (std::string power = powByConstant(map); !power.empty()) {
    e.line() << "pk::tile::map(" << out << ", " << e.name(map.getInputs()[0])
             << ", [](float x) { return " << power << "; });";
    return success();
  }
  std::string f = mapLambda(
      map.getKind(), cast<TileType>(map.getInputs()[0].getType()).getElementType());
  if (map.getInputs().size() == 1) {
    e.line() << "pk::tile::map(" << out << ", " << e.name(map.getInputs()[0]) << ", " << f << ");";
    return success();
  }
  Value a = map.getInputs()[0], b = map.getInputs()[1];
  if (std::string q = divisorExpression(e, op, "x"); !q.empty()) {
    e.line() << "pk::tile::map(" << out << ", " << e.name(a) << ", [&](int x) { return " << q
             << "; });";
    return success();
  }
  if (a.getType() == map.getResult().getType() && b.getType() == map.getResult().getType()) {
    e.line() << "pk::tile::map(" << out << ", " << e.name(a) << ", " << e.name(b) << ", " << f
             << ");";
    return success();
  }
  // Neither operand has the result's shape ([M, 1] x [1, N]): the first is broadcast to it
  // first, through the stage, and the second against that.
  std::string fullName;
  if (a.getType() != map.getResult().getType() && b.getType() != map.getResult().getType()) {
    if (rowStatsLayout(e, a) || rowStatsLayout(e, b))
      return op->emitError("internal: a column of row statistics in registers met an outer broadcast");
    fullName = e.fresh("tile");
    e.line() << tileTypeName(map.getResult().getType(), e.threads) << " " << fullName << ";";
    e.line() << "pk::tile::broadcast_to(" << fullName << ", " << e.name(a) << ", pk_stage);";
    a = Value();
  }
  // One operand broadcasts against the other: a rows x 1 or 1 x cols tile of a 2-D one, a
  // one-element tile, or any tile whose extents are the result's or 1.
  bool vecFirst = a && a.getType() != map.getResult().getType();
  Value vec = vecFirst ? a : b;
  if (fullName.empty()) fullName = e.name(vecFirst ? b : a);
  auto vecType = cast<TileType>(vec.getType());
  // Dividing by an f32 row or column vector multiplies by its reciprocals, computed once per
  // vector element instead of a full-precision division per tile element (softmax's e /
  // row_sum(e)); within 2 ulp of fp32 division (docs/language.md).
  // Only for such vectors (2-D, one extent 1): any other divisor divides correctly rounded.
  const bool vector2d = vecType.getShape().size() == 2 && vecType.getNumElements() > 1 &&
                        (vecType.getShape()[0] == 1 || vecType.getShape()[1] == 1);
  const bool reciprocal =
      map.getKind() == MapKind::div && !vecFirst && vecType.getElementType().isF32() && vector2d;
  if (reciprocal) f = "[](float x, float y) { return x * y; }";
  // A rows x 1 vector rebuilt from loads and maps is computed by each thread for its rows.
  const bool byRow = vecType.getNumElements() > 1 && vecType.getShape().back() == 1 &&
                     vecType.getShape().size() == 2;
  std::string rv = byRow ? rowVector(e, op, vec, map.getResult().getType(), reciprocal) : "";
  if (rv.empty() && rowStatsLayout(e, vec))
    return op->emitError("internal: a column of row statistics in registers did not rebuild here");
  if (!rv.empty()) {
    e.line() << "pk::tile::map_broadcast(" << out << ", " << fullName << ", " << rv << ", "
             << (vecFirst ? "true" : "false") << ", " << f << ", nullptr);";
    return success();
  }
  std::string vecName = e.name(vec);
  if (reciprocal) {
    vecName = e.fresh("recip");
    e.line() << tileTypeName(vecType, e.threads) << " " << vecName << ";";
    e.line() << "pk::tile::map(" << vecName << ", " << e.name(vec) << ", [](float x) { return 1.f / x; });";
  }
  // A one-element vector is in every thread (pk/tile/rt.cuh): no stage (TileShared.cpp).
  const bool staged = vecType.getNumElements() > 1;
  e.line() << "pk::tile::map_broadcast(" << out << ", " << fullName << ", " << vecName
           << ", " << (vecFirst ? "true" : "false") << ", " << f << ", "
           << (staged ? "pk_stage" : "nullptr") << ");";
  return success();
}

LogicalResult emitCast(Emitter &e, Operation *op) {
  auto c = cast<TileCastOp>(op);
  if (castFoldedIntoStore(c.getResult()) || rowStatsLayout(e, c.getResult())) return success();
  std::string out = declare(e, c.getResult(), "tile");
  e.line() << "pk::tile::cast(" << out << ", " << e.name(c.getInput()) << ");";
  return success();
}

LogicalResult emitSplat(Emitter &e, Operation *op) {
  auto splat = cast<TileSplatOp>(op);
  // Only read by columns rebuilt per row (which read the scalar itself): nothing to declare.
  if (!splat->use_empty() && llvm::all_of(splat->getUsers(), [&](Operation *user) {
        return user->getNumResults() == 1 && rowStatsLayout(e, user->getResult(0));
      }))
    return success();
  std::string out = declare(e, splat.getResult(), "tile");
  if (isa<FloatType>(splat.getScalar().getType()))
    e.line() << "pk::tile::fill(" << out << ", static_cast<float>(" << e.name(splat.getScalar()) << "));";
  else  // an integer or index: exact in integer tiles, the nearest float in float ones
    e.line() << "pk::tile::fill(" << out << ", " << e.name(splat.getScalar()) << ");";
  return success();
}

LogicalResult emitSelect(Emitter &e, Operation *op) {
  auto s = cast<TileSelectOp>(op);
  if (rowStatsLayout(e, s.getResult())) return success();  // rebuilt where it is used
  std::string out = declare(e, s.getResult(), "tile");
  e.line() << "pk::tile::select(" << out << ", " << e.name(s.getCond()) << ", "
           << e.name(s.getOnTrue()) << ", " << e.name(s.getOnFalse()) << ");";
  return success();
}

LogicalResult emitIota(Emitter &e, Operation *op) {
  auto iota = cast<TileIotaOp>(op);
  std::string out = declare(e, iota.getResult(), "tile");
  e.line() << "pk::tile::iota(" << out << ", " << e.name(iota.getOrigin()) << ", "
           << iota.getDim() << ");";
  return success();
}

LogicalResult emitZeros(Emitter &e, Operation *op) {
  std::string out = declare(e, op->getResult(0), "tile");
  e.line() << "pk::tile::zeros(" << out << ");";
  return success();
}

TileTransposeOp columnReduction(Operation *op);

LogicalResult emitReduceRows(Emitter &e, Operation *op) {
  auto r = cast<TileReduceRowsOp>(op);
  if (columnReduction(op)) return success();  // a column reduction: emitted at its outer transpose
  // The row accumulators hold 4096 floats or i32s, 2048 i64s.
  const int64_t maxRows = r.getResult().getType().getElementType().isInteger(64) ? 2048 : 4096;
  if (r.getResult().getType().getShape()[0] > maxRows)
    return op->emitError("the general tile path reduces tiles of at most ")
           << maxRows << " rows (this one has " << r.getResult().getType().getShape()[0]
           << "); use a tile of fewer rows";
  if (!rowStatsOf(e, op).empty()) return success();  // kept in registers
  std::string out = declare(e, r.getResult(), "rows");
  e.line() << "pk::tile::reduce_rows(" << out << ", " << e.name(r.getInput())
           << ", pk::tile::RowOp::" << stringifyReduceKind(r.getKind()) << ", ";
  if (blockwideRowReduction(r.getInput().getType(), e.threads))
    e.os << "pk_partials, " << e.partialsHalf << ", pk_parity);";
  else
    e.os << "pk_stage, pk_rows);";
  return success();
}

// Rows gathered or scattered by an index tile (pk/tile/gather.cuh); the indices pass through
// the stage, which holds 2048 of them.
LogicalResult checkRowCount(Operation *op, TileType rows) {
  if (rows.getNumElements() > 2048)
    return op->emitError("the general tile path moves at most 2048 rows by index at once (this "
                         "tile has ")
           << rows.getNumElements() << "); use a tile of fewer rows";
  return success();
}

LogicalResult emitReshape(Emitter &e, Operation *op) {
  auto r = cast<TileReshapeOp>(op);
  std::string out = declare(e, r.getResult(), "tile");
  e.line() << "pk::tile::reshape(" << out << ", " << e.name(r.getInput()) << ");";
  return success();
}

// transpose(reduce_rows(transpose(t))) of a 2-D register tile t, each op used only by the next: the
// column reduction of t (1 x N). Returns the outer transpose, or null.
TileTransposeOp columnReduction(Operation *op) {
  auto outerOf = [](Operation *o) -> TileTransposeOp {
    if (!o || o->getNumResults() != 1 || !o->getResult(0).hasOneUse()) return {};
    return dyn_cast<TileTransposeOp>(*o->getResult(0).getUsers().begin());
  };
  auto reduceOf = [](Operation *o) -> TileReduceRowsOp {
    if (!o || o->getNumResults() != 1 || !o->getResult(0).hasOneUse()) return {};
    return dyn_cast<TileReduceRowsOp>(*o->getResult(0).getUsers().begin());
  };
  auto match = [](TileTransposeOp outer) -> bool {
    auto r = outer ? outer.getInput().getDefiningOp<TileReduceRowsOp>() : TileReduceRowsOp();
    auto inner = r ? r.getInput().getDefiningOp<TileTransposeOp>() : TileTransposeOp();
    if (!inner || !r.getResult().hasOneUse() || !inner.getResult().hasOneUse()) return false;
    TileType t = inner.getInput().getType();
    return t.getRank() == 2 && t.getMemorySpace() == MemorySpace::reg && isa<FloatType>(t.getElementType()) &&
           t.getShape()[1] <= 4096;
  };
  if (auto outer = dyn_cast<TileTransposeOp>(op); outer && match(outer)) return outer;
  if (auto r = dyn_cast<TileReduceRowsOp>(op)) {
    if (auto outer = outerOf(op); outer && match(outer)) return outer;
    return {};
  }
  if (auto inner = dyn_cast<TileTransposeOp>(op))
    if (auto outer = outerOf(reduceOf(inner)); outer && match(outer)) return outer;
  return {};
}

LogicalResult emitTranspose(Emitter &e, Operation *op) {
  auto t = cast<TileTransposeOp>(op);
  if (TileTransposeOp outer = columnReduction(op)) {
    if (outer != t) return success();  // the inner transpose: emitted as part of the outer one
    auto r = t.getInput().getDefiningOp<TileReduceRowsOp>();
    Value in = r.getInput().getDefiningOp<TileTransposeOp>().getInput();
    std::string out = declare(e, t.getResult(), "tile");
    e.line() << "pk::tile::reduce_cols(" << out << ", " << e.name(in) << ", pk::tile::RowOp::"
             << stringifyReduceKind(r.getKind()) << ", pk_stage);";
    return success();
  }
  std::string out = declare(e, t.getResult(), "tile");
  e.line() << "pk::tile::transpose(" << out << ", " << e.name(t.getInput()) << ", pk_stage);";
  return success();
}

// Prefix sums pass the tile through the stage in chunks (pk/tile/scan.cuh), any length.
// Each row's K largest and their columns (pk/tile/topk.cuh), a warp per row through the stage.
LogicalResult emitTopk(Emitter &e, Operation *op) {
  auto t = cast<TileTopkOp>(op);
  const int64_t n = t.getInput().getType().getShape().back(), k = t.getValues().getType().getShape().back();
  if (n + 2 * k > 4096)
    return op->emitError("the general tile path takes the top k of rows of at most 4096 - 2k elements (this "
                         "row has ")
           << n << ", k = " << k << "); take the top k of each part of the row, store them, and take the top k of those";
  std::string values = declare(e, t.getValues(), "tile"), indices = declare(e, t.getIndices(), "tile");
  e.line() << "pk::tile::row_topk(" << values << ", " << indices << ", " << e.name(t.getInput()) << ", pk_stage);";
  return success();
}

LogicalResult emitCumsum(Emitter &e, Operation *op) {
  auto c = cast<TileCumsumOp>(op);
  std::string out = declare(e, c.getResult(), "tile");
  e.line() << "pk::tile::cumsum(" << out << ", " << e.name(c.getInput()) << ", pk_stage);";
  return success();
}

LogicalResult emitHistogram(Emitter &e, Operation *op) {
  auto h = cast<TileHistogramOp>(op);
  if (h.getResult().getType().getNumElements() > 4096)
    return op->emitError("the general tile path counts at most 4096 values at once (this "
                         "histogram has ")
           << h.getResult().getType().getNumElements() << ")";
  std::string out = declare(e, h.getResult(), "tile");
  e.line() << "pk::tile::histogram(" << out << ", " << e.name(h.getInput()) << ", pk_stage);";
  return success();
}

// The rows' tensor: this rank's copy, or rank `peer`'s copy of a symmetric tensor.
std::string rowsData(Emitter &e, Value tensor, Value peer) {
  if (peer) return e.name(tensor) + ".peer[" + e.name(peer) + "]";
  return dataOf(e, tensor);
}

LogicalResult emitLoadRows(Emitter &e, Operation *op) {
  auto load = cast<TileLoadRowsOp>(op);
  if (failed(checkRowCount(op, load.getRows().getType()))) return failure();
  std::string rows = rowVector(e, op, load.getRows(), load.getResult().getType());
  if (rows.empty()) rows = e.name(load.getRows());
  std::string t = declare(e, load.getResult(), "tile");
  e.line() << peerGuard(e, load.getPeer()) << "pk::tile::load_rows(" << t << ", " << rows << ", "
           << rowsData(e, load.getSource(), load.getPeer()) << ", " << e.name(load.getSource())
           << ".shape, " << e.name(load.getCol()) << ", pk_stage);";
  return success();
}

LogicalResult emitStoreRows(Emitter &e, Operation *op) {
  auto store = cast<TileStoreRowsOp>(op);
  if (failed(checkRowCount(op, store.getRows().getType()))) return failure();
  // all_rows: the value's padding rows move too (pk::tile::all_rows clears the mark).
  auto moved = [&](const std::string &v) { return store.getAllRows() ? "pk::tile::all_rows(" + v + ")" : v; };
  if (std::optional<TileType> layout = rowStatsLayout(e, store.getValue())) {
    std::string values = rowVector(e, op, store.getValue(), *layout),
                rows = rowVector(e, op, store.getRows(), *layout);
    if (values.empty() || rows.empty())
      return op->emitError("internal: a column of row statistics in registers did not rebuild here");
    values = moved(values);
    e.line() << peerGuard(e, store.getPeer()) << "pk::tile::scatter_row_values<" << (store.getAdd() ? "true" : "false") << ">("
             << values << ", " << rows << ", " << rowsData(e, store.getDest(), store.getPeer())
             << ", " << e.name(store.getDest()) << ".shape, " << e.name(store.getCol()) << ");";
    return success();
  }
  std::string rows = rowVector(e, op, store.getRows(), cast<TileType>(store.getValue().getType()));
  if (rows.empty()) rows = e.name(store.getRows());
  e.line() << peerGuard(e, store.getPeer()) << "pk::tile::store_rows<" << (store.getAdd() ? "true" : "false") << ">("
           << moved(e.name(store.getValue())) << ", " << rows << ", "
           << rowsData(e, store.getDest(), store.getPeer()) << ", " << e.name(store.getDest())
           << ".shape, " << e.name(store.getCol()) << ", pk_stage);";
  return success();
}

// Slots from per-index counters (atomics in global memory; no stage needed).
LogicalResult emitClaim(Emitter &e, Operation *op) {
  auto claim = cast<TileClaimOp>(op);
  std::string t = declare(e, claim.getResult(), "tile");
  e.line() << "pk::tile::claim(" << t << ", " << e.name(claim.getIndex()) << ", "
           << dataOf(e, claim.getCounter()) << ", " << e.name(claim.getCounter())
           << ".shape[0]);";
  return success();
}

LogicalResult emitMma(Emitter &e, Operation *op) {
  auto mma = cast<TileMmaOp>(op);
  auto a = mma.getA().getType(), b = mma.getB().getType();
  int64_t n = mma.getTransposeB() ? b.getShape()[0] : b.getShape()[1];
  if (a.getShape()[0] + n > 4096)
    return op->emitError("the general tile path multiplies tiles with M + N of at most 4096 "
                         "(this one: ")
           << a.getShape()[0] << " + " << n << "); a GEMM loop of the template's shape takes "
           << "the Hopper template instead";
  auto carried = e.fragmentAccumulators.find(op);
  if (carried != e.fragmentAccumulators.end()) {  // a loop's accumulator, in fragments
    e.bindTo(mma.getResult(), carried->second);
    e.line() << carried->second << ".step(" << e.name(mma.getA()) << ", " << e.name(mma.getB())
             << ", pk_stage);";
    return success();
  }
  std::string out = declare(e, mma.getResult(), "acc");
  e.line() << out << " = " << e.name(mma.getAcc()) << ";";
  e.line() << "pk::tile::mma<" << (mma.getTransposeB() ? "true" : "false") << ">(" << out << ", "
           << e.name(mma.getA()) << ", " << e.name(mma.getB()) << ", pk_stage);";
  return success();
}

} // namespace

void mlir::pk::cuda::addTilePatterns(PatternTable &table) {
  table["pk.tile.load"] = emitLoad;
  table["pk.tile.store"] = emitStore;
  table["pk.tile.map"] = emitMap;
  table["pk.tile.cast"] = emitCast;
  table["pk.tile.zeros"] = emitZeros;
  table["pk.tile.splat"] = emitSplat;
  table["pk.tile.select"] = emitSelect;
  table["pk.tile.iota"] = emitIota;
  table["pk.tile.reduce_rows"] = emitReduceRows;
  table["pk.tile.mma"] = emitMma;
  table["pk.tile.transpose"] = emitTranspose;
  table["pk.tile.reshape"] = emitReshape;
  table["pk.tile.cumsum"] = emitCumsum;
  table["pk.tile.topk"] = emitTopk;
  table["pk.tile.histogram"] = emitHistogram;
  table["pk.tile.load_rows"] = emitLoadRows;
  table["pk.tile.store_rows"] = emitStoreRows;
  table["pk.tile.claim"] = emitClaim;
  table["pk.comm.store_async"] = emitPeerStore;
  table["pk.comm.store_add_async"] = emitPeerStore;
  table["pk.comm.load_peer"] = emitPeerLoad;
}
