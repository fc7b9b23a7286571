// Model -> pk dialect. The walker already resolved names, types and loop-carried values,
// so this is a one-to-one mapping of model ops to pk/arith/scf ops.
#include "ModelToMlir.h"

#include <cstring>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "pk/Dialect/Pk.h"
#include "llvm/ADT/DenseMap.h"

namespace pk::fe {
namespace {

using namespace mlir;
using namespace mlir::pk;

class Builder {
public:
  Builder(const Kernel &kernel, MLIRContext &ctx) : kernel(kernel), ctx(ctx), b(&ctx) {}

  Location loc(const SrcLoc &l) { return FileLineColLoc::get(&ctx, l.file, l.line, l.col); }

  Type elem(Elem e) {
    switch (e) {
    case Elem::BF16: return b.getBF16Type();
    case Elem::F16: return b.getF16Type();
    case Elem::F32: return b.getF32Type();
    case Elem::I32: return b.getI32Type();
    case Elem::I64: return b.getI64Type();
    case Elem::I8: return b.getIntegerType(8);
    case Elem::F8E4M3: return b.getType<Float8E4M3FNType>();
    case Elem::F8E5M2: return b.getType<Float8E5M2Type>();
    }
    return {};
  }

  Type type(int value) {
    const ValueType &t = kernel.values[value];
    switch (t.kind) {
    case ValueType::Index: return b.getIndexType();
    case ValueType::Flag: return FlagType::get(&ctx);
    case ValueType::Scalar: return b.getF32Type();
    case ValueType::Tensor:
      return LocalTensorType::get(&ctx, toDynamic(t.shape), elem(t.elem));
    case ValueType::Sym: return SymTensorType::get(&ctx, toDynamic(t.shape), elem(t.elem));
    case ValueType::Tile:
      return TileType::get(&ctx, t.shape, elem(t.elem),
                           t.smem ? MemorySpace::smem : MemorySpace::reg);
    }
    return {};
  }

  static SmallVector<int64_t> toDynamic(const std::vector<int64_t> &shape) {
    return SmallVector<int64_t>(shape.size(), ShapedType::kDynamic);
  }

  KernelOp build(OpBuilder &top) {
    SmallVector<Type> argTypes;
    for (int a : kernel.body.args) argTypes.push_back(type(a));
    auto fnType = FunctionType::get(&ctx, argTypes, {});
    auto op = top.create<KernelOp>(loc(kernel.loc), kernel.name, fnType, ArrayAttr(),
                                   ArrayAttr());
    Block *block = new Block();
    op.getBody().push_back(block);
    for (size_t i = 0; i < kernel.body.args.size(); ++i) {
      int a = kernel.body.args[i];
    {
      // The parameter's name rides on its location, for diagnostics that name the tensor.
      Location at = loc(kernel.argLocs[i]);
      if (i < kernel.argNames.size() && !kernel.argNames[i].empty())
        at = NameLoc::get(StringAttr::get(&ctx, kernel.argNames[i]), at);
      values[a] = block->addArgument(type(a), at);
    }
      if (kernel.values[a].scratch) op.setArgAttr(i, kScratchAttrName, UnitAttr::get(&ctx));
    }
    b.setInsertionPointToEnd(block);
    for (const Op &o : kernel.body.ops) emit(o);
    b.create<ReturnOp>(loc(kernel.loc));
    return op;
  }

private:
  const Kernel &kernel;
  MLIRContext &ctx;
  OpBuilder b;
  llvm::DenseMap<int, Value> values;

  Value v(int id) { return values.lookup(id); }
  SmallVector<Value> vs(const std::vector<int> &ids, size_t from = 0) {
    SmallVector<Value> out;
    for (size_t i = from; i < ids.size(); ++i) out.push_back(v(ids[i]));
    return out;
  }
  void def(const Op &o, Value result) { values[o.results[0]] = result; }

  static mlir::pk::MapKind mapKind(int k) {
    switch (fe::MapKind(k)) {
    case fe::MapKind::Add: return mlir::pk::MapKind::add;
    case fe::MapKind::Sub: return mlir::pk::MapKind::sub;
    case fe::MapKind::Mul: return mlir::pk::MapKind::mul;
    case fe::MapKind::Div: return mlir::pk::MapKind::div;
    case fe::MapKind::Max: return mlir::pk::MapKind::max;
    case fe::MapKind::Min: return mlir::pk::MapKind::min;
    case fe::MapKind::Exp: return mlir::pk::MapKind::exp;
    case fe::MapKind::Neg: return mlir::pk::MapKind::neg;
    case fe::MapKind::Sqrt: return mlir::pk::MapKind::sqrt;
    case fe::MapKind::Rsqrt: return mlir::pk::MapKind::rsqrt;
    case fe::MapKind::Log: return mlir::pk::MapKind::log;
    case fe::MapKind::Tanh: return mlir::pk::MapKind::tanh;
    case fe::MapKind::Sigmoid: return mlir::pk::MapKind::sigmoid;
    case fe::MapKind::Silu: return mlir::pk::MapKind::silu;
    case fe::MapKind::GeluTanh: return mlir::pk::MapKind::gelu_tanh;
    case fe::MapKind::GeluErf: return mlir::pk::MapKind::gelu_erf;
    case fe::MapKind::Erf: return mlir::pk::MapKind::erf;
    case fe::MapKind::Sin: return mlir::pk::MapKind::sin;
    case fe::MapKind::Cos: return mlir::pk::MapKind::cos;
    case fe::MapKind::Abs: return mlir::pk::MapKind::abs;
    case fe::MapKind::Round: return mlir::pk::MapKind::round;
    case fe::MapKind::Floor: return mlir::pk::MapKind::floor;
    case fe::MapKind::Ceil: return mlir::pk::MapKind::ceil;
    case fe::MapKind::Pow: return mlir::pk::MapKind::pow;
    case fe::MapKind::Lt: return mlir::pk::MapKind::lt;
    case fe::MapKind::Le: return mlir::pk::MapKind::le;
    case fe::MapKind::Gt: return mlir::pk::MapKind::gt;
    case fe::MapKind::Ge: return mlir::pk::MapKind::ge;
    case fe::MapKind::Eq: return mlir::pk::MapKind::eq;
    case fe::MapKind::Ne: return mlir::pk::MapKind::ne;
    case fe::MapKind::Rem: return mlir::pk::MapKind::rem;
    case fe::MapKind::Hash: return mlir::pk::MapKind::hash;
    case fe::MapKind::BitAnd: return mlir::pk::MapKind::bit_and;
    case fe::MapKind::BitOr: return mlir::pk::MapKind::bit_or;
    case fe::MapKind::BitXor: return mlir::pk::MapKind::bit_xor;
    case fe::MapKind::Shl: return mlir::pk::MapKind::shl;
    case fe::MapKind::Shr: return mlir::pk::MapKind::shr;
    }
    return mlir::pk::MapKind::add;
  }
  static mlir::pk::ReduceKind reduceKind(int k) {
    return k == 1 ? mlir::pk::ReduceKind::max : k == 2 ? mlir::pk::ReduceKind::min : mlir::pk::ReduceKind::sum;
  }
  static Transport transport(int t) {
    return t == 1 ? Transport::tma : t == 2 ? Transport::multimem : Transport::ldst;
  }

  void emit(const Op &o) {
    Location l = loc(o.loc);
    const auto &in = o.operands;
    switch (o.kind) {
    case OpKind::Rank: return def(o, b.create<RankOp>(l, b.getIndexType()));
    case OpKind::WorldSize: return def(o, b.create<WorldSizeOp>(l, b.getIndexType()));
    case OpKind::Dim: return def(o, b.create<DimOp>(l, b.getIndexType(), v(in[0]), o.ints[0]));
    case OpKind::Constant: return def(o, b.create<arith::ConstantIndexOp>(l, o.ints[0]));
    case OpKind::Add: return def(o, b.create<arith::AddIOp>(l, v(in[0]), v(in[1])));
    case OpKind::Sub: return def(o, b.create<arith::SubIOp>(l, v(in[0]), v(in[1])));
    case OpKind::Mul: return def(o, b.create<arith::MulIOp>(l, v(in[0]), v(in[1])));
    case OpKind::Div: return def(o, b.create<arith::DivSIOp>(l, v(in[0]), v(in[1])));
    case OpKind::Rem: return def(o, b.create<arith::RemSIOp>(l, v(in[0]), v(in[1])));
    case OpKind::MinIndex: return def(o, b.create<arith::MinSIOp>(l, v(in[0]), v(in[1])));
    case OpKind::MaxIndex: return def(o, b.create<arith::MaxSIOp>(l, v(in[0]), v(in[1])));
    case OpKind::TileForeach: {
      auto loop = b.create<TileForeachOp>(l, vs(in), o.ints);
      Block &body = loop.getBody().front();
      for (size_t i = 0; i < o.regions[0].args.size(); ++i)
        values[o.regions[0].args[i]] = body.getArgument(i);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(body.getTerminator());
      for (const Op &x : o.regions[0].ops) emit(x);
      return;
    }
    case OpKind::For: {
      auto loop = b.create<scf::ForOp>(l, v(in[0]), v(in[1]), v(in[2]), vs(in, 3));
      Block *body = loop.getBody();
      for (size_t i = 0; i < o.regions[0].args.size(); ++i)
        values[o.regions[0].args[i]] = body->getArgument(i);
      {
        OpBuilder::InsertionGuard guard(b);
        // The builder adds an empty scf.yield when there are no carried values.
        if (!body->empty()) body->getTerminator()->erase();
        b.setInsertionPointToEnd(body);
        for (const Op &x : o.regions[0].ops) emit(x);
      }
      for (size_t i = 0; i < o.results.size(); ++i) values[o.results[i]] = loop.getResult(i);
      return;
    }
    case OpKind::Yield: b.create<scf::YieldOp>(l, vs(in)); return;
    case OpKind::Load:
      return def(o, b.create<TileLoadOp>(l, type(o.results[0]), v(in[0]), vs(in, 1)));
    case OpKind::Store: b.create<TileStoreOp>(l, v(in[0]), v(in[1]), vs(in, 2)); return;
    case OpKind::LoadScalar: {
      mlir::Type t = kernel.values[o.results[0]].kind == ValueType::Index ? mlir::Type(b.getIndexType())
                                                                       : mlir::Type(b.getF32Type());
      return def(o, b.create<LoadScalarOp>(l, t, v(in[0]), vs(in, 1)));
    }
    case OpKind::Cumsum: return def(o, b.create<TileCumsumOp>(l, type(o.results[0]), v(in[0])));
    case OpKind::Claim:
      return def(o, b.create<TileClaimOp>(l, type(o.results[0]), v(in[0]), v(in[1])));
    case OpKind::Histogram:
      return def(o, b.create<TileHistogramOp>(l, type(o.results[0]), v(in[0])));
    case OpKind::Transpose:
      return def(o, b.create<TileTransposeOp>(l, type(o.results[0]), v(in[0])));
    case OpKind::Reshape:
      return def(o, b.create<TileReshapeOp>(l, type(o.results[0]), v(in[0])));
    case OpKind::LoadRows:
      return def(o, b.create<TileLoadRowsOp>(l, type(o.results[0]), v(in[0]), v(in[1]), v(in[2]),
                                             in.size() > 3 ? v(in[3]) : Value()));
    case OpKind::StoreRows:
      b.create<TileStoreRowsOp>(l, v(in[0]), v(in[1]), v(in[2]), v(in[3]),
                                in.size() > 4 ? v(in[4]) : Value(), /*add=*/(o.attr & 1) != 0,
                                /*all_rows=*/(o.attr & 2) != 0);
      return;
    case OpKind::Topk: {
      auto topk = b.create<TileTopkOp>(l, type(o.results[0]), type(o.results[1]), v(in[0]));
      values[o.results[0]] = topk.getValues();
      values[o.results[1]] = topk.getIndices();
      return;
    }
    case OpKind::Zeros: return def(o, b.create<TileZerosOp>(l, type(o.results[0])));
    case OpKind::Mma:
      return def(o, b.create<TileMmaOp>(l, v(in[2]).getType(), v(in[0]), v(in[1]), v(in[2]),
                                        /*transpose_b=*/o.attr == 1));
    case OpKind::Map:
      return def(o, b.create<TileMapOp>(l, type(o.results[0]), mapKind(o.attr), vs(in)));
    case OpKind::Cast: return def(o, b.create<TileCastOp>(l, type(o.results[0]), v(in[0])));
    case OpKind::Select:
      return def(o, b.create<TileSelectOp>(l, type(o.results[0]), v(in[0]), v(in[1]), v(in[2])));
    case OpKind::Iota:
      return def(o, b.create<TileIotaOp>(l, type(o.results[0]), v(in[0]), int64_t(o.attr)));
    case OpKind::FConstant: {
      float f;
      const uint32_t bits = static_cast<uint32_t>(o.ints[0]);
      std::memcpy(&f, &bits, sizeof f);
      return def(o, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(f)));
    }
    case OpKind::FAdd: return def(o, b.create<arith::AddFOp>(l, v(in[0]), v(in[1])));
    case OpKind::FSub: return def(o, b.create<arith::SubFOp>(l, v(in[0]), v(in[1])));
    case OpKind::FMul: return def(o, b.create<arith::MulFOp>(l, v(in[0]), v(in[1])));
    case OpKind::FDiv: return def(o, b.create<arith::DivFOp>(l, v(in[0]), v(in[1])));
    case OpKind::ScalarMap:
      return def(o, b.create<ScalarMapOp>(l, b.getF32Type(), mapKind(o.attr), vs(in)));
    case OpKind::IndexToFloat: {
      Value i64 = b.create<arith::IndexCastOp>(l, b.getI64Type(), v(in[0]));
      return def(o, b.create<arith::SIToFPOp>(l, b.getF32Type(), i64));
    }
    case OpKind::Splat:
      return def(o, b.create<TileSplatOp>(l, type(o.results[0]), v(in[0])));
    case OpKind::ReduceRows:
      return def(o, b.create<TileReduceRowsOp>(l, type(o.results[0]), reduceKind(o.attr),
                                               v(in[0])));
    case OpKind::AllReduce:
      b.create<AllReduceOp>(l, reduceKind(o.attr), v(in[0]), v(in[1]));
      return;
    case OpKind::ReduceScatter:
      b.create<ReduceScatterOp>(l, reduceKind(o.attr), v(in[0]), v(in[1]), Transport::automatic,
                                Algorithm::automatic, o.ints.empty() ? 0 : o.ints[0]);
      return;
    case OpKind::AllGather:
      b.create<AllGatherOp>(l, v(in[0]), v(in[1]), Transport::automatic,
                            o.ints.empty() ? 0 : o.ints[0]);
      return;
    case OpKind::AllToAll:
      b.create<AllToAllOp>(l, v(in[0]), v(in[1]), Transport::automatic, o.ints.size() > 1 ? o.ints[0] : 0,
                           o.ints.size() > 1 ? o.ints[1] : 0);
      return;
    case OpKind::Broadcast: b.create<BroadcastOp>(l, v(in[0]), v(in[1]), v(in[2])); return;
    case OpKind::ReduceToRoot:
      b.create<ReduceToRootOp>(l, reduceKind(o.attr), v(in[0]), v(in[1]), v(in[2]));
      return;
    case OpKind::Gather: b.create<GatherOp>(l, v(in[0]), v(in[1]), v(in[2])); return;
    case OpKind::Scatter: b.create<ScatterOp>(l, v(in[0]), v(in[1]), v(in[2])); return;
    case OpKind::StoreTile:
      b.create<StoreTileOp>(l, v(in[0]), v(in[1]), v(in[2]), vs(in, 3));
      return;
    case OpKind::AddTile:
      b.create<AddTileOp>(l, v(in[0]), v(in[1]), v(in[2]), vs(in, 3));
      return;
    case OpKind::StoreAsync:
    case OpKind::StoreAddAsync: {
      // TMA reads its tile from shared memory: a register tile's store moves by ld/st, and
      // pk-select-transport says why under --explain.
      Transport t = transport(o.transport);
      auto tile = dyn_cast<TileType>(v(in[0]).getType());
      bool fromRegisters = t == Transport::tma && tile && tile.getMemorySpace() != MemorySpace::smem;
      if (fromRegisters) t = Transport::ldst;
      Operation *store =
          o.kind == OpKind::StoreAsync
              ? b.create<StoreAsyncOp>(l, v(in[0]), v(in[1]), v(in[2]), vs(in, 3), t).getOperation()
              : b.create<StoreAddAsyncOp>(l, v(in[0]), v(in[1]), v(in[2]), vs(in, 3), t).getOperation();
      if (fromRegisters) store->setAttr(kTmaFromRegistersAttrName, UnitAttr::get(&ctx));
      return;
    }
    case OpKind::CommReduce:
      return def(o, b.create<ReduceOp>(l, type(o.results[0]), reduceKind(o.attr),
                                       transport(o.transport), v(in[0]), vs(in, 1)));
    case OpKind::CommAllReduce:
      b.create<CommAllReduceOp>(l, reduceKind(o.attr), transport(o.transport), v(in[0]),
                                vs(in, 2), v(in[1]), o.ints);
      return;
    case OpKind::LoadPeer: {
      // As for stores: a TMA load lands in shared memory, so a register tile loads by ld/st.
      Transport t = transport(o.transport);
      auto tile = dyn_cast<TileType>(type(o.results[0]));
      bool intoRegisters = t == Transport::tma && tile && tile.getMemorySpace() != MemorySpace::smem;
      auto load = b.create<LoadPeerOp>(l, type(o.results[0]), intoRegisters ? Transport::ldst : t,
                                       v(in[0]), v(in[1]), vs(in, 2));
      if (intoRegisters) load->setAttr(kTmaFromRegistersAttrName, UnitAttr::get(&ctx));
      return def(o, load);
    }
    case OpKind::Flag:
    {
      // pk.spec: the spec's own protocol, which pkc compiles only once it is proved.
      auto flag = b.create<FlagOp>(l, FlagType::get(&ctx), o.ints[0], in.empty() ? Value() : v(in[0]),
                                   o.attr == 1 ? FlagScope::grid : FlagScope::block);
      flag->setAttr("pk.spec", UnitAttr::get(&ctx));
      return def(o, flag);
    }
    case OpKind::Signal: b.create<SignalOp>(l, v(in[0]), v(in[1])); return;
    case OpKind::SignalAll: b.create<SignalAllOp>(l, v(in[0])); return;
    case OpKind::Wait: b.create<WaitOp>(l, v(in[0]), v(in[1])); return;
    case OpKind::Barrier: b.create<BarrierOp>(l, v(in[0])); return;
    }
  }
};

} // namespace

OwningOpRef<ModuleOp> buildModule(const Module &model, MLIRContext &context) {
  context.loadDialect<PkDialect, arith::ArithDialect, scf::SCFDialect>();
  Location unknown = UnknownLoc::get(&context);
  if (!model.kernels.empty()) {
    const SrcLoc &l = model.kernels.front().loc;
    unknown = FileLineColLoc::get(&context, l.file, 1, 1);
  }
  OwningOpRef<ModuleOp> module = ModuleOp::create(unknown);
  OpBuilder top(&context);
  top.setInsertionPointToEnd(module->getBody());
  for (const Kernel &k : model.kernels) Builder(k, context).build(top);
  return module;
}

} // namespace pk::fe
