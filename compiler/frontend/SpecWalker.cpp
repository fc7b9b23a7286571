// AST -> model: lowers the statements and expressions of PK_KERNEL functions that the
// spec language allows, and rejects everything else at its location with a sentence that
// says what to write instead. Variables become SSA values here (re-assignment rebinds a
// name; range() loops carry the names they assign), so the MLIR side maps ops one to one.
#include "SpecWalker.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <functional>

using namespace clang;

namespace pk::fe {
namespace {

// The largest tile or range() step: tiles are counted as (size + step - 1) / step and indices
// advanced by the step in 64 bits, which steps near 2^63 overflow (found by fuzzing).
constexpr int64_t kMaxStep = (int64_t(1) << 31) - 1;

// Why tiles of element type `e` cannot be added into memory (store_add, store_add_rows), or "".
std::string addsRefused(Elem e) {
  if (e == Elem::I8)
    return "adds support bf16, f16, f32, i32 and i64, got i8; i8 values would wrap at 8 bits: add them as i32 "
           "(cast<i32>, then narrow the result)";
  if (e == Elem::F8E4M3 || e == Elem::F8E5M2)
    return "adds support bf16, f16, f32, i32 and i64, got fp8; fp8 values do not add: add them as f32 or bf16 "
           "(cast, then quantise the result)";
  return "";
}

class KernelWalker {
public:
  KernelWalker(ASTContext &ctx, const std::string &prefix, ParseResult &result)
      : ctx(ctx), sm(ctx.getSourceManager()), prefix(prefix), result(result) {}

  void walk(const FunctionDecl *fn) {
    kernelDecl = fn->getCanonicalDecl();
    Kernel k;
    k.name = fn->getNameAsString();
    k.loc = loc(fn->getLocation());
    kernel = &k;
    region = &k.body;
    if (!fn->getReturnType()->isVoidType())
      return error(fn->getLocation(), "a kernel returns void; its results are its stores");
    if (isa<CXXMethodDecl>(fn))
      return error(fn->getLocation(), "a kernel is a free function, not a member function");
    if (fn->isTemplated())
      return error(fn->getLocation(),
                   "a kernel cannot be a template; write one kernel per element type");
    if (fn->isVariadic())
      return error(fn->getLocation(), "a kernel takes a fixed list of parameters, not `...`");
    for (const ParmVarDecl *p : fn->parameters()) {
      // Launchers, the JIT and pk_torch take every argument: a default would be silently unused.
      if (p->hasDefaultArg())
        return error(p->getDefaultArgRange().getBegin(),
                     "kernel parameters take no default values: every launch passes every argument (drop the "
                     "`= ...`)");
      ValueType t;
      if (!paramType(p, t)) return;
      int v = newValue(t);
      k.body.args.push_back(v);
      k.argLocs.push_back(loc(p->getLocation()));
      k.argNames.push_back(p->getNameAsString());
      bind(p, v);
    }
    const auto *body = dyn_cast_or_null<CompoundStmt>(fn->getBody());
    if (!body) return;
    for (auto it = body->body_begin(); it != body->body_end() && !failed; ++it) {
      // A trailing `return;` is harmless; any other return is a branch.
      if (isa<ReturnStmt>(*it) && it + 1 == body->body_end() &&
          !cast<ReturnStmt>(*it)->getRetValue())
        break;
      stmt(*it);
    }
    if (!failed) result.module.kernels.push_back(std::move(k));
  }

private:
  ASTContext &ctx;
  SourceManager &sm;
  const std::string &prefix;
  ParseResult &result;
  const FunctionDecl *kernelDecl = nullptr;
  Kernel *kernel = nullptr;
  Region *region = nullptr;
  bool failed = false;
  int exprDepth = 0, loopDepth = 0;
  // Far beyond any real spec; past them a hostile input gets an error, not a deep recursion.
  static constexpr int kMaxExprDepth = 256, kMaxLoopDepth = 32;
  llvm::DenseMap<const Decl *, int> names;  // variable -> its current value
  // Values that hold only 0 and 1: comparisons and their &&, || (logical()).
  llvm::DenseSet<int> masks;
  // Values that are never NaN (coordinates: iotas, index scalars, finite float constants, and
  // + - * min max of those), the comparisons that made masks, and the && / || of two masks: a
  // mask negated with ! is rewritten as the inverse comparison (De Morgan through && and ||)
  // where no NaN can make the two differ, so `!(c > r)` reads as `c <= r` (the attention
  // template's mask forms).
  llvm::DenseSet<int> neverNaNValues;
  struct Comparison { MapKind kind; int a, b; };
  llvm::DenseMap<int, Comparison> comparisonOf;
  struct Junction { bool all; int a, b; };
  llvm::DenseMap<int, Junction> junctionOf;
  // row_topk / row_topk_index already emitted: (input, K, region) -> (values, indices).
  std::map<std::tuple<int, int64_t, const Region *>, std::pair<int, int>> topks;
  // `auto py = y.on(p);`: the local names y's copy on rank p, with p as it was at the declaration.
  llvm::DenseMap<const Decl *, std::pair<int, int>> peerLocals;  // variable -> (tensor, rank)
  // `for (Origin2 o : tiles(...))`: the origin variable -> its coordinates' values (o.i0, ...).
  llvm::DenseMap<const Decl *, std::vector<int>> origins;

  //===--- helpers -------------------------------------------------------------===//

  SrcLoc loc(SourceLocation l) {
    SrcLoc out;
    PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(l));
    if (p.isValid()) {
      out.file = p.getFilename();
      out.line = p.getLine();
      out.col = p.getColumn();
    }
    return out;
  }

  void error(SourceLocation l, const std::string &message) {
    if (failed) return;  // one error per kernel: later ones would be consequences
    failed = true;
    result.errors.push_back({loc(l), message});
  }
  int fail(SourceLocation l, const std::string &message) {
    error(l, message);
    return -1;
  }

  int newValue(const ValueType &t) {
    kernel->values.push_back(t);
    return int(kernel->values.size()) - 1;
  }
  const ValueType &typeOf(int v) { return kernel->values[v]; }
  // `t` with leading extents of 1 up to `rank` dimensions.
  static ValueType withLeadingOnes(ValueType t, size_t rank) {
    t.shape.insert(t.shape.begin(), rank - t.shape.size(), 1);
    return t;
  }
  // The tile without unit extents, leading ones first, until it has `rank` dimensions (a 1 x N
  // row or an N x 1 column of a [N] tensor): the same elements in the same row-major order.
  static std::optional<ValueType> withoutUnitDims(ValueType t, size_t rank) {
    for (size_t d = 0; t.shape.size() > rank && d < t.shape.size();)
      if (t.shape[d] == 1) t.shape.erase(t.shape.begin() + d);
      else ++d;
    if (t.shape.size() != rank) return std::nullopt;
    return t;
  }
  // Why withoutUnitDims found no tile: `prep` is "of" (a load) or "into" (a store).
  static std::string tooManyExtents(const char *prep) {
    return std::string("a tile of higher rank than the tensor needs extents of 1 beyond the tensor's "
                       "rank (a 1 x N row or an N x 1 column ") + prep + " a [N] tensor)";
  }
  // The tile an access of `t` moves in a tensor of `rank` dimensions: `t` with leading 1s (a
  // tile of the trailing dimensions, one head of [H, S, D]) or without unit extents (a 1 x N
  // row of a [N] tensor). Fails (`prep`: "of" a load, "into" a store) where there is none.
  std::optional<ValueType> tileOfRank(const ValueType &t, size_t rank, SourceLocation l,
                                      const char *prep) {
    if (t.shape.size() == rank) return t;
    if (t.shape.size() < rank) return withLeadingOnes(t, rank);
    std::optional<ValueType> inner = withoutUnitDims(t, rank);
    if (!inner) fail(l, tooManyExtents(prep));
    return inner;
  }
  // `v` reshaped to `t` where their shapes differ.
  int reshapedTo(int v, const ValueType &t, SourceLocation l) {
    return typeOf(v).shape == t.shape ? v : emitValue(OpKind::Reshape, l, {v}, t);
  }
  // A register tile stored into a tensor of `rank` dimensions, reshaped to the tensor's rank.
  int storedTile(int tile, size_t rank, SourceLocation l) {
    std::optional<ValueType> t = tileOfRank(typeOf(tile), rank, l, "into");
    return t ? reshapedTo(tile, *t, l) : -1;
  }
  void bind(const Decl *d, int v) { names[d->getCanonicalDecl()] = v; }

  Op &emit(OpKind kind, SourceLocation l, std::vector<int> operands = {}) {
    Op op;
    op.kind = kind;
    op.loc = loc(l);
    op.operands = std::move(operands);
    region->ops.push_back(std::move(op));
    return region->ops.back();
  }
  int emitValue(OpKind kind, SourceLocation l, std::vector<int> operands, const ValueType &t,
                std::vector<int64_t> ints = {}, int attr = 0, int transport = 0) {
    int v = newValue(t);
    Op &op = emit(kind, l, std::move(operands));
    op.results = {v};
    op.ints = std::move(ints);
    op.attr = attr;
    op.transport = transport;
    return v;
  }
  int constant(SourceLocation l, int64_t value) {
    return emitValue(OpKind::Constant, l, {}, ValueType{}, {value});
  }

  static const Expr *strip(const Expr *e) {
    while (true) {
      const Expr *before = e;
      e = e->IgnoreParenImpCasts();
      if (auto *c = dyn_cast<ExprWithCleanups>(e)) e = c->getSubExpr();
      if (auto *m = dyn_cast<MaterializeTemporaryExpr>(e)) e = m->getSubExpr();
      if (auto *b = dyn_cast<CXXBindTemporaryExpr>(e)) e = b->getSubExpr();
      if (auto *d = dyn_cast<CXXDefaultArgExpr>(e)) e = d->getExpr();
      if (auto *c = dyn_cast<CXXConstructExpr>(e))
        if (c->getNumArgs() == 1 && c->getConstructor()->isCopyOrMoveConstructor())
          e = c->getArg(0);
      if (e == before) return e;
    }
  }

  /// The spec-language name of a builtin ("load", "prim::wait", "operator+"), or "" when
  /// the function is not declared by the embedded spec header.
  std::string builtinName(const FunctionDecl *fd) {
    const FunctionDecl *pattern = fd->getPrimaryTemplate()
                                      ? fd->getPrimaryTemplate()->getTemplatedDecl()
                                      : fd;
    SourceLocation l = sm.getSpellingLoc(pattern->getLocation());
    // The embedded header, or a copy of it included by its path (`#include "../pk/spec.h"`).
    llvm::StringRef file = sm.getFilename(l);
    if (!file.starts_with(prefix) && !file.ends_with("/pk/spec.h") && file != "pk/spec.h")
      return "";
    if (const auto *md = dyn_cast<CXXMethodDecl>(fd))
      return md->getParent()->getNameAsString() + "::" + md->getNameAsString();
    std::string q = fd->getQualifiedNameAsString();
    if (q.rfind("pk::", 0) != 0) return "";
    return q.substr(4);
  }

  bool elemType(QualType t, Elem &out) {
    const auto *rd = t.getCanonicalType()->getAsRecordDecl();
    std::string n = rd ? rd->getQualifiedNameAsString() : "";
    if (n == "pk::bf16") out = Elem::BF16;
    else if (n == "pk::f16") out = Elem::F16;
    else if (n == "pk::f32") out = Elem::F32;
    else if (n == "pk::i32") out = Elem::I32;
    else if (n == "pk::i64") out = Elem::I64;
    else if (n == "pk::i8") out = Elem::I8;
    else if (n == "pk::f8e4m3") out = Elem::F8E4M3;
    else if (n == "pk::f8e5m2") out = Elem::F8E5M2;
    else return false;
    return true;
  }

  /// Maps a C++ type to a model type; false (no diagnostic) when it is not in the language.
  bool mapType(QualType qt, ValueType &out) {
    QualType t = qt.getNonReferenceType().getCanonicalType();
    if (t->isIntegerType() && !t->isBooleanType() && !t->isEnumeralType()) {
      out.kind = ValueType::Index;
      return true;
    }
    if (t->isRealFloatingType()) {  // float scalars (kernel arguments, constants) are f32
      out.kind = ValueType::Scalar;
      out.elem = Elem::F32;
      return true;
    }
    const auto *spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(t->getAsRecordDecl());
    if (!spec) {
      const auto *rd = t->getAsRecordDecl();
      if (rd && rd->getQualifiedNameAsString() == "pk::Flag") {
        out.kind = ValueType::Flag;
        return true;
      }
      return false;
    }
    std::string n = spec->getQualifiedNameAsString();
    const TemplateArgumentList &args = spec->getTemplateArgs();
    if (args.size() < 1 || args[0].getKind() != TemplateArgument::Type ||
        !elemType(args[0].getAsType(), out.elem))
      return false;
    if (n == "pk::Tensor" || n == "pk::Sym" || n == "pk::Scratch") {
      out.kind = n == "pk::Tensor" ? ValueType::Tensor : ValueType::Sym;
      out.scratch = n == "pk::Scratch";
      int64_t rank = args[1].getAsIntegral().getExtValue();
      if (rank < 1 || rank > 5) return false;
      out.shape.assign(rank, -1);
      return true;
    }
    if (n == "pk::Tile" || n == "pk::SmemTile") {
      out.kind = ValueType::Tile;
      out.smem = n == "pk::SmemTile";
      if (args.size() < 2 || args[1].getKind() != TemplateArgument::Pack) return false;
      for (const TemplateArgument &a : args[1].pack_elements())
        out.shape.push_back(a.getAsIntegral().getExtValue());
      if (out.shape.empty()) return false;
      for (int64_t s : out.shape)
        if (s <= 0) return false;
      return tileLimit(out.shape).empty();
    }
    return false;
  }

  // Why the tile library cannot hold a tile of `shape` (positive extents), or "". It
  // addresses up to 4 dimensions and counts elements in a C++ int; larger tiles were accepted
  // here and then refused by NVRTC (`load<16, 9223372036854775807>`, a 5-D tile of a 4-D
  // tensor's trailing dimensions).
  static std::string tileLimit(llvm::ArrayRef<int64_t> shape) {
    constexpr int64_t kMaxElements = (int64_t(1) << 31) - 1;
    if (shape.size() > 4)
      return "a tile has 1 to 4 dimensions; this one has " + std::to_string(shape.size()) +
             " (leave out leading extents of 1)";
    int64_t n = 1;
    for (int64_t s : shape) {
      if (s > kMaxElements / n)  // per factor, so the product never overflows
        return "this tile has more than " + std::to_string(kMaxElements) +
               " elements: use smaller tiles (a tile loop covers a tensor of any size)";
      n *= s;
    }
    return "";
  }

  std::string typeName(QualType t) { return t.getAsString(ctx.getPrintingPolicy()); }

  bool paramType(const ParmVarDecl *p, ValueType &t) {
    // A scalar parameter arrives as the launcher passes it: only float is an f32 as declared.
    QualType c = p->getType().getNonReferenceType().getCanonicalType();
    if (c->isRealFloatingType() && !c->isSpecificBuiltinType(clang::BuiltinType::Float)) {
      error(p->getLocation(), "a '" + typeName(p->getType()) + "' parameter would be narrowed to "
                              "float; scalars compute in f32, declare it float");
      return false;
    }
    if (!mapType(p->getType(), t) || t.kind == ValueType::Tile || t.kind == ValueType::Flag) {
      error(p->getLocation(), "unsupported kernel parameter type '" + typeName(p->getType()) +
                                  "'; parameters are Tensor<T, Rank>, Sym<T, Rank>, Scratch<T, Rank>, "
                                  "index or float, "
                                  "with T one of bf16, f16, f32, f8e4m3, f8e5m2, i8, i32, i64 and Rank 1 to 4");
      return false;
    }
    // A launch passes four extents a tensor (pk::Tensor's shape[4]); a fifth would be read
    // from past them.
    if ((t.kind == ValueType::Tensor || t.kind == ValueType::Sym) && t.shape.size() > 4) {
      error(p->getLocation(), "a kernel's tensors have 1 to 4 dimensions (a launch passes four "
                              "extents); this one has " + std::to_string(t.shape.size()) +
                              ": merge two of its dimensions");
      return false;
    }
    return true;
  }

  bool constInt(const Expr *e, int64_t &out) {
    Expr::EvalResult r;
    if (e->isValueDependent() || !e->EvaluateAsInt(r, ctx)) return false;
    out = r.Val.getInt().getExtValue();
    return true;
  }

  //===--- statements ----------------------------------------------------------===//

  void stmt(const Stmt *s) {
    if (failed) return;
    if (auto *c = dyn_cast<CompoundStmt>(s)) {
      for (const Stmt *x : c->body()) stmt(x);
      return;
    }
    if (isa<NullStmt>(s)) return;
    if (auto *d = dyn_cast<DeclStmt>(s)) {
      for (const Decl *x : d->decls()) declaration(x);
      return;
    }
    if (auto *f = dyn_cast<CXXForRangeStmt>(s)) return rangeFor(f);
    if (isa<ForStmt, WhileStmt, DoStmt>(s))
      return error(s->getBeginLoc(),
                   "this loop is not in the spec language; write `for (auto k : range(lo, "
                   "hi, step))` for a sequential loop with a constant step, or `for (auto "
                   "[m, n] : tiles(M, N, {TM, TN}))` for a parallel tile loop");
    if (isa<IfStmt, SwitchStmt, ConditionalOperator>(s))
      return error(s->getBeginLoc(),
                   "branches are not in the spec language; tile loops clip partial tiles at "
                   "tensor edges, so express the work as loops over tiles instead");
    if (isa<GotoStmt, IndirectGotoStmt, LabelStmt>(s))
      return error(s->getBeginLoc(),
                   "goto and labels are not in the spec language; use range() or tiles() loops");
    if (isa<BreakStmt, ContinueStmt>(s))
      return error(s->getBeginLoc(), "break and continue are not in the spec language; loops "
                                     "run their whole trip count, so narrow the range instead");
    if (isa<ReturnStmt>(s))
      return error(s->getBeginLoc(), "return is only allowed as the kernel's last statement; "
                                     "a kernel runs straight through its loops");
    if (isa<CXXTryStmt>(s))
      return error(s->getBeginLoc(), "exceptions are not in the spec language; errors in a "
                                     "kernel are reported by pkc and the runtime, not thrown");
    if (isa<AsmStmt>(s))
      return error(s->getBeginLoc(), "inline assembly is not in the spec language; pkc "
                                     "chooses the instructions, use the pk/spec.h operations");
    if (auto *e = dyn_cast<Expr>(s)) {
      expr(e);
      return;
    }
    error(s->getBeginLoc(), construct(s) +
                                " is not in the spec language; a kernel body holds variable "
                                "declarations, tile loops and calls to pk/spec.h operations");
  }

  // A C++ construct named as a user writes it, for "... is not in the spec language".
  static std::string construct(const Stmt *s) {
    if (isa<AttributedStmt>(s)) return "a statement attribute or pragma (such as #pragma unroll)";
    if (isa<UnaryExprOrTypeTraitExpr>(s)) return "sizeof / alignof";
    if (isa<SwitchStmt>(s)) return "switch";
    if (isa<WhileStmt, DoStmt>(s)) return "a while loop (tile loops use tiles() and range())";
    if (isa<GotoStmt, LabelStmt>(s)) return "goto";
    if (isa<CXXThisExpr>(s)) return "this";
    if (isa<StringLiteral>(s)) return "a string literal";
    if (isa<CXXNewExpr, CXXDeleteExpr>(s)) return "new / delete";
    if (isa<LambdaExpr>(s)) return "a lambda";
    if (isa<CStyleCastExpr, CXXStaticCastExpr, CXXReinterpretCastExpr, CXXConstCastExpr>(s))
      return "this cast (tiles convert with cast<T>(t))";
    return std::string("'") + s->getStmtClassName() + "'";
  }

  void declaration(const Decl *d) {
    if (isa<StaticAssertDecl, TypedefNameDecl, UsingDecl, UsingDirectiveDecl>(d)) return;
    const auto *v = dyn_cast<VarDecl>(d);
    if (!v)
      return error(d->getLocation(), "only variable declarations are allowed in a kernel body");
    if (!v->hasLocalStorage() || v->isStaticLocal())
      return error(v->getLocation(), "static and thread-local variables are not in the spec "
                                     "language; declare a plain local `auto x = ...;`");
    if (isa<DecompositionDecl>(v))
      return error(v->getLocation(), "structured bindings are only allowed in tiles() loops");
    if (!v->getInit())
      return error(v->getLocation(), "declare variables with their value, e.g. `auto acc = "
                                     "zeros<f32, 128, 256>();`");
    if (isa<LambdaExpr>(strip(v->getInit())))
      return error(v->getInit()->getBeginLoc(),
                   "lambdas are not in the spec language; write the computation inline");
    if (isPeerRef(v->getInit())) {  // a peer's copy, named once and used by later moves
      int peer = -1, tensor = peerExpr(v->getInit(), peer);
      if (tensor >= 0) peerLocals[v->getCanonicalDecl()] = {tensor, peer};
      return;
    }
    // A named choice (`const Reduce op = Max;`): a constant the operations read where they
    // take one, so it needs no value of its own.
    if (v->getType()->isEnumeralType()) {
      int64_t c;
      if (!v->getType().isConstQualified() || !constInt(v->getInit(), c))
        return error(v->getLocation(), "a Reduce, Transport or Scope variable names a constant "
                                       "choice: declare it const with a constant value, e.g. "
                                       "`const Reduce op = Max;`");
      return;
    }
    ValueType t;
    if (!mapType(v->getType(), t)) {
      // A tile past the library's limits says which limit, at its initialiser's call.
      if (t.kind == ValueType::Tile && v->getInit() && expr(v->getInit()) < 0) return;
      return error(v->getLocation(), unsupportedType(v->getType()));
    }
    int value = expr(v->getInit());
    if (value < 0) return;
    const bool wantScalar = t.kind == ValueType::Scalar;
    if (wantScalar != (typeOf(value).kind == ValueType::Scalar)) {
      // `float s = 2;`: an integer constant converts, as in C++; other mixes are not in the
      // language (float scalars only combine with tiles).
      const auto *lit = dyn_cast<IntegerLiteral>(strip(v->getInit()));
      if (!wantScalar || !lit)
        return error(v->getLocation(),
                     wantScalar ? "a float variable takes a float value (a constant such as 2.0f "
                                  "or a float parameter); index values do not convert to floats"
                                : "a float scalar cannot initialise an index variable; float "
                                  "scalars combine with tiles");
      const float x = static_cast<float>(lit->getValue().getZExtValue());
      uint32_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      value = emitValue(OpKind::FConstant, v->getLocation(), {}, t, {int64_t(bits)});
    }
    bind(v, value);
  }

  std::string unsupportedType(QualType t) {
    QualType c = t.getNonReferenceType();
    if (c->isPointerType() || c->isArrayType())
      return "pointers and arrays are not in the spec language; use Tensor<T, Rank> or Sym<T, "
             "Rank> parameters and tiles";
    if (c->isFloatingType())
      return "floating-point scalars are not in the spec language; compute on tiles of bf16, "
             "f16 or f32";
    return "unsupported type '" + typeName(t) +
           "'; spec variables are index integers, tiles (Tile<T, ...>, SmemTile<T, ...>) or "
           "flags";
  }

  /// Collects the variables declared outside `body` that it assigns, in first-seen order.
  void assignedOuter(const Stmt *body, std::vector<const Decl *> &out,
                     SourceLocation &where) {
    llvm::SmallPtrSet<const Decl *, 8> seen;
    std::function<void(const Stmt *)> visit = [&](const Stmt *s) {
      if (!s) return;
      const Expr *lhs = nullptr;
      if (auto *b = dyn_cast<BinaryOperator>(s); b && b->isAssignmentOp()) lhs = b->getLHS();
      if (auto *o = dyn_cast<CXXOperatorCallExpr>(s); o && o->isAssignmentOp())
        lhs = o->getArg(0);
      if (auto *u = dyn_cast<UnaryOperator>(s); u && u->isIncrementDecrementOp())
        lhs = u->getSubExpr();
      if (lhs)
        if (auto *r = dyn_cast<DeclRefExpr>(strip(lhs))) {
          const Decl *d = r->getDecl()->getCanonicalDecl();
          if (names.count(d) && seen.insert(d).second) {
            out.push_back(d);
            if (where.isInvalid()) where = s->getBeginLoc();
          }
        }
      for (const Stmt *c : s->children()) visit(c);
    };
    visit(body);
  }

  void rangeFor(const CXXForRangeStmt *f) {
    if (loopDepth >= kMaxLoopDepth)
      return error(f->getBeginLoc(), "loops nest deeper than " + std::to_string(kMaxLoopDepth) +
                                         " levels; a kernel's loop nest is a few tile loops");
    ++loopDepth;
    rangeForInner(f);
    --loopDepth;
  }

  void rangeForInner(const CXXForRangeStmt *f) {
    const auto *call = dyn_cast<CallExpr>(strip(f->getRangeInit()));
    const FunctionDecl *callee = call ? call->getDirectCallee() : nullptr;
    std::string name = callee ? builtinName(callee) : "";
    if (name != "tiles" && name != "range")
      return error(f->getBeginLoc(), "range-based for loops iterate over tiles(...) (parallel) "
                                     "or range(lo, hi, step) (sequential) only");
    const VarDecl *var = f->getLoopVariable();
    std::vector<const Decl *> ivs;
    if (auto *dd = dyn_cast<DecompositionDecl>(var)) {
      for (const BindingDecl *b : dd->bindings()) ivs.push_back(b);
    } else {
      ivs.push_back(var);
    }
    if (name == "tiles") return tilesLoop(f, call, ivs);
    return sequentialLoop(f, call, var);
  }

  void tilesLoop(const CXXForRangeStmt *f, const CallExpr *call,
                 const std::vector<const Decl *> &ivs) {
    unsigned dims = call->getNumArgs() - 1;
    // `for (Origin2 o : tiles(M, N, {..}))`: one name for the origin, read as o.i0, o.i1.
    const VarDecl *origin = nullptr;
    if (dims > 1 && ivs.size() == 1 && !isa<DecompositionDecl>(ivs[0])) origin = f->getLoopVariable();
    if (!origin && ivs.size() != dims)
      return error(f->getLoopVariable()->getLocation(),
                   "bind one name per tile dimension: `for (auto [m, n] : tiles(M, N, {TM, "
                   "TN}))`");
    std::vector<int> ubs;
    for (unsigned i = 0; i < dims; ++i) ubs.push_back(indexExpr(call->getArg(i)));
    if (failed) return;
    std::vector<int64_t> steps;
    const Expr *init = strip(call->getArg(dims));
    if (const auto *cast = dyn_cast<CXXFunctionalCastExpr>(init))  // Steps2{128, 256}
      init = strip(cast->getSubExpr());
    const auto *list = dyn_cast<InitListExpr>(init);
    if (!list || list->getNumInits() != dims)
      return error(call->getArg(dims)->getBeginLoc(),
                   "give the tile steps as a braced list of integer constants, e.g. {128, 256}");
    for (unsigned i = 0; i < dims; ++i) {
      // {16} for two dimensions: C++ fills the missing step with an implicit 0.
      if (isa<ImplicitValueInitExpr>(list->getInit(i)))
        return error(list->getBeginLoc(), "give one tile step per dimension (" + std::to_string(dims) +
                                              "), e.g. {128, 256}; this list has " + std::to_string(i));
      int64_t s;
      if (!constInt(list->getInit(i), s) || s <= 0)
        return error(list->getInit(i)->getBeginLoc(),
                     "tile steps must be positive integer constants, known when pkc runs");
      // The kernel counts tiles as (size + step - 1) / step in 64 bits: a step near 2^63
      // overflowed it into no tiles at all (found by fuzzing).
      if (s > kMaxStep)
        return error(list->getInit(i)->getBeginLoc(),
                     "a tile step must be at most " + std::to_string(kMaxStep) + ", not " +
                         std::to_string(s) + " (the tile count, (size + step - 1) / step, "
                         "would overflow)");
      steps.push_back(s);
    }
    std::vector<const Decl *> assigned;
    SourceLocation where;
    assignedOuter(f->getBody(), assigned, where);
    if (!assigned.empty())
      return error(where, "the iterations of a tiles() loop run in parallel, so it cannot "
                          "assign a variable declared outside it; declare the variable inside "
                          "the loop, or use range() for a sequential loop");
    Op op;
    op.kind = OpKind::TileForeach;
    op.loc = loc(f->getBeginLoc());
    op.operands = ubs;
    op.ints = steps;
    op.regions.emplace_back();
    for (unsigned i = 0; i < dims; ++i) {
      int v = newValue(ValueType{});
      op.regions[0].args.push_back(v);
      if (origin) origins[origin->getCanonicalDecl()].push_back(v);
      else bind(ivs[i], v);
    }
    Region *outer = region;
    region = &op.regions[0];
    stmt(f->getBody());
    region = outer;
    region->ops.push_back(std::move(op));
  }

  void sequentialLoop(const CXXForRangeStmt *f, const CallExpr *call, const VarDecl *iv) {
    if (isa<DecompositionDecl>(iv))
      return error(iv->getLocation(), "range() yields one index; write `for (auto k : range(lo, "
                                      "hi, step))`");
    // A run-time step is checked where the loop starts (a step <= 0 skips the loop and
    // reports an error rather than hanging); a constant one here.
    int64_t step;
    bool known = constInt(call->getArg(2), step);
    if (known && step <= 0)
      return error(call->getArg(2)->getBeginLoc(),
                   "the step of range() must be positive (a step of " + std::to_string(step) +
                       " never reaches hi)");
    // The loop steps its index by `step` until it passes hi, in 64 bits: a step near 2^63
    // wrapped it negative and the loop ran on (found by fuzzing).
    if (known && step > kMaxStep)
      return error(call->getArg(2)->getBeginLoc(),
                   "the step of range() must be at most " + std::to_string(kMaxStep) + ", not " +
                       std::to_string(step) + " (the index would overflow past hi)");
    int lo = indexExpr(call->getArg(0));
    int hi = indexExpr(call->getArg(1));
    if (failed) return;
    int stepValue = known ? constant(call->getArg(2)->getBeginLoc(), step)
                          : indexExpr(call->getArg(2));
    if (failed) return;
    std::vector<const Decl *> carried;
    SourceLocation where;
    assignedOuter(f->getBody(), carried, where);

    Op op;
    op.kind = OpKind::For;
    op.loc = loc(f->getBeginLoc());
    op.operands = {lo, hi, stepValue};
    op.regions.emplace_back();
    int ivValue = newValue(ValueType{});
    op.regions[0].args.push_back(ivValue);
    bind(iv, ivValue);
    std::vector<int> before;
    for (const Decl *d : carried) {
      int init = names[d];
      before.push_back(init);
      op.operands.push_back(init);
      int arg = newValue(typeOf(init));
      op.regions[0].args.push_back(arg);
      names[d] = arg;
    }
    Region *outer = region;
    region = &op.regions[0];
    stmt(f->getBody());
    if (failed) {
      region = outer;
      return;
    }
    Op yield;
    yield.kind = OpKind::Yield;
    yield.loc = op.loc;
    for (size_t i = 0; i < carried.size(); ++i) {
      int now = names[carried[i]];
      if (typeOf(now).kind != typeOf(before[i]).kind ||
          typeOf(now).shape != typeOf(before[i]).shape) {
        region = outer;
        return error(where, "a variable carried by a range() loop must keep its type");
      }
      yield.operands.push_back(now);
    }
    region->ops.push_back(std::move(yield));
    region = outer;
    for (const Decl *d : carried) {
      int r = newValue(typeOf(names[d]));
      op.results.push_back(r);
      names[d] = r;
    }
    region->ops.push_back(std::move(op));
  }

  //===--- expressions ---------------------------------------------------------===//

  int indexExpr(const Expr *e) {
    int v = expr(e);
    if (v < 0 || typeOf(v).kind == ValueType::Index) return v;
    const ValueType::Kind k = typeOf(v).kind;
    return fail(e->getBeginLoc(),
                std::string("expected an index (an integer), got ") +
                    (k == ValueType::Scalar ? "a float: coordinates, sizes, ranks and seeds are integers "
                                              "(take an integer kernel argument)"
                     : k == ValueType::Tile ? "a tile (an index is one integer; x.at(i) reads one element)"
                                            : "a tensor or flag"));
  }
  int tileExpr(const Expr *e) {
    int v = expr(e);
    if (v >= 0 && typeOf(v).kind != ValueType::Tile)
      return fail(e->getBeginLoc(), "expected a tile");
    return v;
  }
  int tensorExpr(const Expr *e, bool symOnly) {
    int v = expr(e);
    if (v < 0) return v;
    ValueType::Kind k = typeOf(v).kind;
    if (k == ValueType::Sym || (!symOnly && k == ValueType::Tensor)) return v;
    return fail(e->getBeginLoc(), symOnly ? "expected a symmetric tensor (Sym<T, Rank>)"
                                          : "expected a tensor");
  }

  /// The local that `e` names, if it holds a peer's copy (`auto py = y.on(p);`).
  const std::pair<int, int> *peerLocal(const Expr *e) {
    const auto *r = dyn_cast<DeclRefExpr>(strip(e));
    if (!r) return nullptr;
    auto it = peerLocals.find(r->getDecl()->getCanonicalDecl());
    return it == peerLocals.end() ? nullptr : &it->second;
  }

  /// Whether `e` is `C.on(peer)`, or a local holding one.
  bool isPeerRef(const Expr *e) {
    if (peerLocal(e)) return true;
    const auto *m = dyn_cast<CXXMemberCallExpr>(strip(e));
    return m && m->getMethodDecl() && builtinName(m->getMethodDecl()) == "Sym::on";
  }

  /// `C.on(peer)`: returns the tensor and sets `peer`.
  int peerExpr(const Expr *e, int &peer) {
    if (const std::pair<int, int> *local = peerLocal(e)) {
      peer = local->second;
      return local->first;
    }
    const auto *m = dyn_cast<CXXMemberCallExpr>(strip(e));
    if (!m || !m->getMethodDecl() || m->getMethodDecl()->getNameAsString() != "on")
      return fail(e->getBeginLoc(), "name the destination rank with `tensor.on(peer)`");
    int t = tensorExpr(m->getImplicitObjectArgument(), /*symOnly=*/true);
    peer = indexExpr(m->getArg(0));
    return peer < 0 ? -1 : t;
  }

  bool enumArg(const Expr *e, int &out) {
    int64_t v;
    if (!constInt(e, v)) {
      error(e->getBeginLoc(), "expected a constant such as Sum, Max, Min or Tma, Ldst");
      return false;
    }
    // Reduce(7) or Transport(9) is a constant too, but names no operation: refuse it rather
    // than lower it as some default.
    if (const auto *et = e->IgnoreParenImpCasts()->getType()->getAs<clang::EnumType>()) {
      const clang::EnumDecl *decl = et->getDecl()->getDefinitionOrSelf();
      bool named = false;
      std::string names;
      for (const clang::EnumConstantDecl *c : decl->enumerators()) {
        named |= c->getInitVal() == v;
        names += (names.empty() ? "" : ", ") + c->getNameAsString();
      }
      if (!named) {
        error(e->getBeginLoc(), std::to_string(v) + " is not a " + decl->getNameAsString() +
                                    ": write one of " + names);
        return false;
      }
    }
    out = int(v);
    return true;
  }

  // A move to or from one peer has no multicast form: multimem addresses every rank's copy at
  // once, so Multimem means nothing here (and guessing "every peer" would change the result).
  bool onePeerTransport(const Expr *e, int transport, const std::string &call) {
    if (transport != int(TransportKind::Multimem)) return true;
    error(e->getBeginLoc(), "'" + call + "' moves a tile to or from one peer, which has no multicast "
                            "form; Multimem is for reductions over every rank (prim::reduce, "
                            "prim::all_reduce): write Ldst or Tma");
    return false;
  }

  std::vector<int> indices(const CallExpr *call, unsigned from, unsigned rank,
                           SourceLocation l) {
    std::vector<int> out;
    if (call->getNumArgs() - from != rank) {
      error(l, "give one index per tensor dimension (" + std::to_string(rank) + ")");
      return out;
    }
    // The tile library addresses 1-4 dimensions (kernel parameters have at most 4).
    if (rank > 4) {
      error(l, "tiles and elements are addressed in tensors of at most 4 dimensions; this one has " +
                   std::to_string(rank));
      return out;
    }
    for (unsigned i = from; i < call->getNumArgs(); ++i) out.push_back(indexExpr(call->getArg(i)));
    return out;
  }

  int expr(const Expr *e) {
    if (failed) return -1;
    if (exprDepth >= kMaxExprDepth)
      return fail(e->getBeginLoc(), "expression nests deeper than " +
                                        std::to_string(kMaxExprDepth) +
                                        " levels; split it into named variables");
    ++exprDepth;
    int v = exprInner(e);
    --exprDepth;
    return v;
  }

  int exprInner(const Expr *e) {
    // A cast the user wrote (`float(x.cols())`, `static_cast<long>(n)`): between integers, or
    // between floats, the value itself; from an integer to a float, as below.
    const Expr *toFloat = nullptr;  // an integer expression used as a float
    if (auto *c = dyn_cast<ExplicitCastExpr>(e->IgnoreParens())) {
      const Expr *inner = c->getSubExpr()->IgnoreParenImpCasts();
      const QualType to = c->getType(), from = inner->getType();
      if ((to->isRealFloatingType() && from->isRealFloatingType()) ||
          (to->isIntegerType() && from->isIntegerType()))
        return expr(inner);
      if (to->isRealFloatingType() && from->isIntegerType()) toFloat = inner;
    }
    // An index where a float is expected (a mask against a size: `col_index(n) < k.rows()`).
    if (auto *c = dyn_cast<CastExpr>(e->IgnoreParens());
        c && c->getType()->isRealFloatingType() && c->getSubExpr()->getType()->isIntegerType())
      toFloat = c->getSubExpr();
    if (toFloat) {
      if (auto *i = dyn_cast<IntegerLiteral>(strip(toFloat)))
        return floatConstant(toFloat->getBeginLoc(), static_cast<float>(i->getValue().getSExtValue()));
      int x = indexExpr(toFloat);
      if (x < 0) return -1;
      return asFloat(x, toFloat->getBeginLoc());
    }
    e = strip(e);
    SourceLocation l = e->getBeginLoc();
    if (auto *i = dyn_cast<IntegerLiteral>(e)) {
      // An unsigned 64-bit literal with the top bit set (a hash multiplier such as
      // 0x9E3779B97F4A7C15UL) is taken modulo 2^64, as C++ converts it to the signed i64 that
      // wrapping tile arithmetic multiplies by.
      const bool wraps = i->getType()->isUnsignedIntegerType() && i->getValue().getBitWidth() == 64;
      if (i->getValue().getActiveBits() > 63 && !wraps)
        return fail(l, "integer constant does not fit in 64 bits");
      return constant(l, int64_t(i->getValue().getZExtValue()));
    }
    if (auto *r = dyn_cast<DeclRefExpr>(e)) {
      const Decl *d = r->getDecl()->getCanonicalDecl();
      auto it = names.find(d);
      if (it != names.end()) return it->second;
      if (origins.count(d))
        return fail(l, "a tile origin is read by its coordinates: " +
                           r->getDecl()->getNameAsString() + ".i0, " +
                           r->getDecl()->getNameAsString() + ".i1, ...");
      int64_t v;
      if (isa<EnumConstantDecl>(d) || (isa<VarDecl>(d) && constInt(e, v))) {
        if (constInt(e, v)) return constant(l, v);
      }
      return fail(l, "'" + r->getDecl()->getNameAsString() +
                         "' is not a kernel parameter or a local variable of the kernel; "
                         "globals are not in the spec language");
    }
    if (auto *me = dyn_cast<MemberExpr>(e)) {
      // o.i0 of a tile origin: the loop's index along that dimension.
      if (auto *base = dyn_cast<DeclRefExpr>(strip(me->getBase()))) {
        auto it = origins.find(base->getDecl()->getCanonicalDecl());
        llvm::StringRef field = me->getMemberDecl()->getName();
        if (it != origins.end() && field.size() == 2 && field[0] == 'i' &&
            unsigned(field[1] - '0') < it->second.size())
          return it->second[field[1] - '0'];
      }
    }
    if (auto *b = dyn_cast<BinaryOperator>(e)) return binary(b);
    if (auto *u = dyn_cast<UnaryOperator>(e)) {
      if (u->getOpcode() == UO_Minus) {
        // A negative float literal (-1e30f, a mask's fill) is one constant.
        if (auto *f = dyn_cast<FloatingLiteral>(u->getSubExpr()->IgnoreParenImpCasts()))
          return floatConstant(l, -static_cast<float>(f->getValueAsApproximateDouble()));
        int x = expr(u->getSubExpr());
        if (x < 0) return -1;
        if (typeOf(x).kind == ValueType::Scalar)  // times -1: exact, and -0.0 for 0.0 as in C++
          return emitValue(OpKind::FMul, l, {floatConstant(l, -1.0f), x}, typeOf(x));
        if (typeOf(x).kind != ValueType::Index)
          return fail(u->getSubExpr()->getBeginLoc(),
                      "expected an index (an integer) or a float, got a tensor or flag");
        return emitValue(OpKind::Sub, l, {constant(l, 0), x}, ValueType{});
      }
      if (u->getOpcode() == UO_Plus) return expr(u->getSubExpr());
      return fail(l, "this operator is not in the spec language; index arithmetic has + - * / % "
                     "and assignment, tiles have + - * / and unary -");
    }
    if (isa<CXXNewExpr, CXXDeleteExpr>(e))
      return fail(l, "heap allocation is not in the spec language; tensors come in as kernel "
                     "parameters and tiles are values (zeros, load)");
    if (isa<CXXThrowExpr>(e))
      return fail(l, "exceptions are not in the spec language; errors in a kernel are reported "
                     "by pkc and the runtime, not thrown");
    if (isa<LambdaExpr>(e))
      return fail(l, "lambdas are not in the spec language; write the computation inline");
    if (auto *f = dyn_cast<FloatingLiteral>(e))
      return floatConstant(l, static_cast<float>(f->getValueAsApproximateDouble()));
    if (isa<ConditionalOperator>(e))
      return fail(l, "the conditional operator is not in the spec language: between two indices, "
                     "choose with min / max and integer arithmetic (`max(offsets.at(b + 1), (b + 1) / "
                     "nb * n)`); between tiles, use where(mask, a, b); tile loops clip partial tiles "
                     "at tensor edges instead of branching");
    if (auto *op = dyn_cast<CXXOperatorCallExpr>(e)) return operatorCall(op);
    if (auto *m = dyn_cast<CXXMemberCallExpr>(e)) return memberCall(m);
    if (auto *c = dyn_cast<CallExpr>(e)) return call(c);
    if (isa<CXXConstructExpr, InitListExpr, CXXTemporaryObjectExpr>(e))
      return fail(l, "constructing objects is not in the spec language; tiles come from "
                     "zeros<T, ...>(), load<...>(...) and tile operations");
    return fail(l, construct(e) +
                       " is not in the spec language; expressions are index arithmetic and "
                       "calls to pk/spec.h operations");
  }

  int assign(const Expr *lhs, const Expr *rhs, int value, SourceLocation l) {
    const auto *r = dyn_cast<DeclRefExpr>(strip(lhs));
    if (!r || !names.count(r->getDecl()->getCanonicalDecl()))
      return fail(l, "only local variables can be assigned");
    if (isa<ParmVarDecl>(r->getDecl()))
      return fail(l, "kernel parameters cannot be reassigned; declare a local variable");
    (void)rhs;
    if (value >= 0) names[r->getDecl()->getCanonicalDecl()] = value;
    return value;
  }

  int floatConstant(SourceLocation l, float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    ValueType t;
    t.kind = ValueType::Scalar;
    int v = emitValue(OpKind::FConstant, l, {}, t, {int64_t(bits)});
    if (std::isfinite(x)) neverNaNValues.insert(v);
    return v;
  }

  int binary(const BinaryOperator *b) {
    SourceLocation l = b->getOperatorLoc();
    if (b->getOpcode() == BO_Assign) return assign(b->getLHS(), b->getRHS(), expr(b->getRHS()), l);
    if (b->getOpcode() == BO_Comma)
      return fail(l, "the comma operator is not in the spec language; write one statement each");
    OpKind k;
    switch (b->getOpcode()) {
    case BO_Add: case BO_AddAssign: k = OpKind::Add; break;
    case BO_Sub: case BO_SubAssign: k = OpKind::Sub; break;
    case BO_Mul: case BO_MulAssign: k = OpKind::Mul; break;
    case BO_Div: case BO_DivAssign: k = OpKind::Div; break;
    case BO_Rem: case BO_RemAssign: k = OpKind::Rem; break;
    default:
      return fail(l, "this operator is not in the spec language; index arithmetic has + - * / % "
                     "and assignment");
    }
    if (std::optional<int> u = unsignedArithmetic(b, k, l)) return *u;
    int x = expr(b->getLHS());
    int y = expr(b->getRHS());
    if (x < 0 || y < 0) return -1;
    for (auto [v, side] : {std::pair{x, b->getLHS()}, std::pair{y, b->getRHS()}})
      if (typeOf(v).kind != ValueType::Index && typeOf(v).kind != ValueType::Scalar)
        return fail(side->getBeginLoc(), "expected an index (an integer) or a float, got a "
                                         "tensor or flag");
    int v;
    if (typeOf(x).kind == ValueType::Scalar || typeOf(y).kind == ValueType::Scalar) {
      // Float arithmetic, an integer operand converted to float first (as C++ does).
      if (k == OpKind::Rem)
        return fail(l, "% takes integers; for floats there is no remainder in the spec language");
      x = asFloat(x, l);
      y = asFloat(y, l);
      const OpKind fk = k == OpKind::Add ? OpKind::FAdd : k == OpKind::Sub ? OpKind::FSub
                        : k == OpKind::Mul ? OpKind::FMul : OpKind::FDiv;
      v = emitValue(fk, l, {x, y}, typeOf(x));
    } else {
      v = emitValue(k, l, {x, y}, ValueType{});
    }
    if (b->isCompoundAssignmentOp()) return assign(b->getLHS(), nullptr, v, l);
    return v;
  }

  // Scalar arithmetic that C++ does in an unsigned type: indices are signed 64-bit, so unsigned
  // int results (modulo 2^32 in C++: `5u - 6u` is 4294967295, a hash `seed * 2654435761u` wraps)
  // and unsigned 64-bit division and remainder (which read the operands as values past 2^63)
  // would differ silently. A constant the compiler folds keeps its C++ value; the rest is refused
  // with the fix. None: not such an operation; else the folded constant, or -1 (refused).
  std::optional<int> unsignedArithmetic(const BinaryOperator *b, OpKind k, SourceLocation l) {
    QualType type = b->getType();
    if (auto *c = dyn_cast<CompoundAssignOperator>(b)) type = c->getComputationResultType();
    type = type.getCanonicalType();
    if (!type->isUnsignedIntegerType() || type->isBooleanType()) return std::nullopt;
    const unsigned width = ctx.getIntWidth(type);
    if (width >= 64 && k != OpKind::Div && k != OpKind::Rem) return std::nullopt;  // + - * wrap alike modulo 2^64
    Expr::EvalResult folded;
    if (!b->isCompoundAssignmentOp() && !b->isValueDependent() && b->EvaluateAsInt(folded, ctx))
      return constant(l, int64_t(folded.Val.getInt().getZExtValue()));
    const std::string what = width < 64 ? "unsigned int arithmetic wraps modulo 2^32 in C++"
                                        : "unsigned 64-bit division and remainder read values past 2^63 as C++ does";
    return fail(l, what + ", which pkc's signed 64-bit index arithmetic does not reproduce: compute in a signed "
                   "type (index, long long) and reduce explicitly where you mean the wrap "
                   "(`(a * b) % 4294967296`)");
  }

  // An index or float scalar as an f32 scalar (an index converted as C++ converts it).
  int asFloat(int v, SourceLocation l) {
    if (typeOf(v).kind != ValueType::Index) return v;
    ValueType f;
    f.kind = ValueType::Scalar;
    int r = emitValue(OpKind::IndexToFloat, l, {v}, f);
    neverNaNValues.insert(r);
    return r;
  }

  bool neverNaN(int v) { return typeOf(v).kind == ValueType::Index || neverNaNValues.count(v); }

  int mapOp(MapKind kind, SourceLocation l, std::vector<const Expr *> args) {
    std::vector<int> in;
    for (const Expr *a : args) {
      int v = expr(a);
      if (v >= 0 && typeOf(v).kind != ValueType::Tile && typeOf(v).kind != ValueType::Scalar &&
          typeOf(v).kind != ValueType::Index)
        return fail(a->getBeginLoc(), "expected a tile or a scalar");
      in.push_back(v);
    }
    if (failed) return -1;
    for (size_t i = 0; i < in.size() && in.size() == 2; ++i) {
      if (typeOf(in[1 - i]).kind != ValueType::Tile) continue;
      if (!fitsIntTile(args[i], typeOf(in[1 - i]).elem, kind == MapKind::Sub && i == 1)) return -1;
      if (!indexBesideI8(kind, args[i], in[i], typeOf(in[1 - i]).elem)) return -1;
    }
    return mapValues(kind, l, in);
  }

  // A run-time index beside an i8 tile becomes an i8 splat: its value wraps at 8 bits. Adds,
  // subtractions, products and bit operations give the same 8 bits either way; comparisons,
  // min / max, shifts, divisions and remainders would not (t < 200 would be t < -56), so they
  // are refused with the fix.
  bool indexBesideI8(MapKind kind, const Expr *e, int v, Elem tileElem) {
    int64_t c;
    if (tileElem != Elem::I8 || typeOf(v).kind != ValueType::Index || constInt(e, c)) return true;
    if (kind == MapKind::Add || kind == MapKind::Sub || kind == MapKind::Mul || kind == MapKind::BitAnd ||
        kind == MapKind::BitOr || kind == MapKind::BitXor)
      return true;
    fail(e->getBeginLoc(), "this index would be narrowed to the i8 tile it meets (its value wraps at 8 bits: a "
                           "value such as 200 would become -56); make that tile i32 first: cast<i32>(t)");
    return false;
  }

  // An integer constant beside an i32 or i8 tile (or making one: where of two integers) becomes
  // a splat of its type; one that does not fit would wrap silently, so it is refused with the fix.
  // subtrahend: the constant is subtracted from the tile (t - 128, whose 8 bits are t + -128's).
  bool fitsIntTile(const Expr *e, Elem elem, bool subtrahend = false) {
    int64_t v;
    if ((elem != Elem::I32 && elem != Elem::I8) || !constInt(e, v)) return true;
    if (elem == Elem::I8 && v >= -128 && v <= 127) return true;
    if (elem == Elem::I8) {
      fail(e->getBeginLoc(), std::to_string(v) + " does not fit the i8 tile it meets (it would wrap); "
                             "make that tile i32 first: cast<i32>(t)" +
                                 (subtrahend && v == 128 ? std::string(", or, if the 8-bit wrap is meant, write t + -128")
                                                         : std::string()));
      return false;
    }
    if (v >= INT32_MIN && v <= INT32_MAX) return true;
    fail(e->getBeginLoc(), std::to_string(v) + " does not fit the i32 tile it meets (it would wrap); "
                           "make that tile i64 first: cast<i64>(t), or for where of two integers "
                           "cast<i64>(where(c, 1, 0)) * " + std::to_string(v));
    return false;
  }

  // mapOp on values already walked.
  int mapValues(MapKind kind, SourceLocation l, std::vector<int> in) {
    // min / max of two indices (C++ picks pk/spec.h's float overload): the integer min / max,
    // an index (a clamp of a bound or an origin), exact at any size.
    if ((kind == MapKind::Min || kind == MapKind::Max) && in.size() == 2 &&
        typeOf(in[0]).kind == ValueType::Index && typeOf(in[1]).kind == ValueType::Index)
      return emitValue(kind == MapKind::Min ? OpKind::MinIndex : OpKind::MaxIndex, l, in, typeOf(in[0]));
    // Only scalars: math on f32 scalars (pk/spec.h declares the float overloads), an index
    // argument converted first as C++ converts it.
    if (std::none_of(in.begin(), in.end(), [&](int v) { return typeOf(v).kind == ValueType::Tile; })) {
      for (int &v : in) v = asFloat(v, l);
      int r = emitValue(OpKind::ScalarMap, l, in, typeOf(in[0]), {}, int(kind));
      if (keepsFinite(kind) && llvm::all_of(in, [&](int x) { return neverNaN(x); })) neverNaNValues.insert(r);
      return r;
    }
    // A scalar beside a tile (a float beside a float tile, an integer beside an integer one,
    // as pk/spec.h's overloads allow) becomes a tile of that type, every element the scalar.
    // Beside a bf16, f16 or fp8 tile the op runs in f32 and rounds once, as every tile op does:
    // the tile is cast to f32 and the result back, so the scalar keeps its f32 value (a splat
    // of the tile's type would round 1000.4 to 1000 before x - 1000.4).
    std::optional<ValueType> narrow;
    for (size_t i = 0; i < in.size(); ++i) {
      if (typeOf(in[i]).kind == ValueType::Tile) continue;
      if (in.size() != 2 || typeOf(in[1 - i]).kind != ValueType::Tile)
        return fail(l, "a scalar combines with a tile, not on its own");
      ValueType t = typeOf(in[1 - i]);
      t.smem = false;
      if (t.elem == Elem::BF16 || t.elem == Elem::F16 || t.elem == Elem::F8E4M3 ||
          t.elem == Elem::F8E5M2) {
        narrow = t;
        t.elem = Elem::F32;
        in[1 - i] = emitValue(OpKind::Cast, l, {in[1 - i]}, t);
      }
      const bool finite = neverNaN(in[i]);
      in[i] = emitValue(OpKind::Splat, l, {in[i]}, t);
      if (finite) neverNaNValues.insert(in[i]);
    }
    // A broadcast takes, in each dimension, the extent of the operand that is not 1 there
    // (pk/spec.h's Broadcast; the verifier checks the rest): [M, 1] x [1, N] is M x N.
    ValueType result = typeOf(in[0]);
    if (in.size() == 2 && typeOf(in[1]).shape.size() == result.shape.size())
      for (size_t d = 0; d < result.shape.size(); ++d)
        if (result.shape[d] == 1) result.shape[d] = typeOf(in[1]).shape[d];
    result.smem = false;
    int v = emitValue(OpKind::Map, l, in, result, {}, int(kind));
    if (narrow) {
      result.elem = narrow->elem;
      v = emitValue(OpKind::Cast, l, {v}, result);
    }
    if (keepsFinite(kind) && llvm::all_of(in, [&](int x) { return neverNaN(x); })) neverNaNValues.insert(v);
    if (kind >= MapKind::Lt && kind <= MapKind::Ne) {
      masks.insert(v);
      if (!narrow && in.size() == 2) comparisonOf[v] = {kind, in[0], in[1]};
    }
    return v;
  }

  // uniform<S...>(seed, i0, ...): h = hash(seed mod 2^32 - 2^31, floor(seed / 2^32)), then h = hash(h, i_d) for each
  // dimension d's coordinate i_d in the tensor (pk.tile.map hash on i32 tiles, 31 bits), and
  // (h / 128) * 2^-24 in [0, 1). Made of i32 maps, iotas and a cast, so every path that takes
  // those takes it (a GEMM's epilogue too).
  int uniform(const CallExpr *c, SourceLocation l) {
    ValueType t;
    if (resultTile(c, t) < 0) return -1;
    // Origins for the tile's dimensions, or (as load and store take them) for a tensor of higher
    // rank: the leading ones fixed, each element's coordinate there the origin itself.
    const size_t rank = t.shape.size(), given = c->getNumArgs() - 1;
    if (given < rank || given > 4)
      return fail(l, "uniform<S...>(seed, i0, ...) takes the seed and one origin per dimension of the tile (" +
                         std::to_string(rank) + "), or of the tensor the tile is of (at most 4), got " +
                         std::to_string(given));
    int seed = indexExpr(c->getArg(0));
    std::vector<int> origin;
    for (size_t d = 0; d < given; ++d) origin.push_back(indexExpr(c->getArg(unsigned(d + 1))));
    if (failed) return -1;
    const size_t lead = given - rank;
    ValueType words = t;
    words.elem = Elem::I32;
    auto map = [&](MapKind kind, int x, int y, const ValueType &type) {
      return emitValue(OpKind::Map, l, {x, y}, type, {}, int(kind));
    };
    // The seed's two words as ints for any seed: (seed mod 2^32) - 2^31 and floor(seed / 2^32),
    // a one-to-one split of the 64-bit seed (a truncating division would give -1 and 2^32 - 1 the
    // same words), which a template's int parameters hold too.
    auto index = [&](OpKind kind, int x, int64_t y) { return emitValue(kind, l, {x, constant(l, y)}, ValueType{}); };
    const int64_t word = int64_t(1) << 32;
    int mod = index(OpKind::Rem, index(OpKind::Add, index(OpKind::Rem, seed, word), word), word);
    int low = index(OpKind::Sub, mod, word / 2);
    int high = index(OpKind::Div, emitValue(OpKind::Sub, l, {seed, mod}, ValueType{}), word);  // exact
    int h = map(MapKind::Hash, emitValue(OpKind::Splat, l, {low}, words),
                emitValue(OpKind::Splat, l, {high}, words), words);
    for (size_t d = 0; d < lead; ++d) h = map(MapKind::Hash, h, emitValue(OpKind::Splat, l, {origin[d]}, words), words);
    for (size_t d = 0; d < rank; ++d)
      h = map(MapKind::Hash, h, emitValue(OpKind::Iota, l, {origin[lead + d]}, words, {}, int(d)), words);
    int top = map(MapKind::Div, h, emitValue(OpKind::Splat, l, {constant(l, 128)}, words), words);
    return map(MapKind::Mul, emitValue(OpKind::Cast, l, {top}, t),
               emitValue(OpKind::Splat, l, {floatConstant(l, 0x1p-24f)}, t), t);
  }

  // Tiles compared with 0 (1 where not 0), unless they already hold only 0 and 1.
  int truth(int v, SourceLocation l) {
    if (masks.count(v)) return v;
    const Elem e = typeOf(v).elem;
    const bool integer = isIntElem(e);
    return mapValues(MapKind::Ne, l, {v, integer ? constant(l, 0) : asFloat(constant(l, 0), l)});
  }

  // a && b, a || b and !a on tiles: 1 where true and 0 where false, as comparisons give, a tile
  // being true where it is not 0 (as where() takes it). The product and the maximum of two
  // masks, so masks combined this way still read as masks (the attention template's).
  int logical(const char *op, SourceLocation l, std::vector<const Expr *> args) {
    std::vector<int> in;
    for (const Expr *a : args) in.push_back(tileExpr(a));
    if (failed) return -1;
    if (args.size() == 1) {
      if (int n = negation(in[0], l); n >= 0 || failed) return n;
      const Elem e = typeOf(in[0]).elem;
      const bool integer = isIntElem(e);
      return mapValues(MapKind::Eq, l, {in[0], integer ? constant(l, 0) : asFloat(constant(l, 0), l)});
    }
    int a = truth(in[0], l), b = truth(in[1], l);
    if (failed) return -1;
    // Masks hold only 0 and 1, so an integer mask joins a float one as f32 without loss
    // (`(p > thr) && (ids >= 0)`).
    if (typeOf(a).elem != typeOf(b).elem)
      for (int *side : {&a, &b}) {
        if (typeOf(*side).elem == Elem::F32) continue;
        ValueType t = typeOf(*side);
        t.elem = Elem::F32;
        *side = emitValue(OpKind::Cast, l, {*side}, t);
        masks.insert(*side);
      }
    return junction(StringRef(op) == "&&", a, b, l);
  }
  int junction(bool all, int a, int b, SourceLocation l) {
    int v = mapValues(all ? MapKind::Mul : MapKind::Max, l, {a, b});
    masks.insert(v);
    junctionOf[v] = {all, a, b};
    return v;
  }

  static bool keepsFinite(MapKind k) {
    return k == MapKind::Add || k == MapKind::Sub || k == MapKind::Mul || k == MapKind::Neg || k == MapKind::Min ||
           k == MapKind::Max;
  }
  // !m as a mask without a test against 0, or -1 where it cannot be: the inverse comparison of
  // operands that are never NaN, and De Morgan's laws through && and ||.
  int negation(int m, SourceLocation l) {
    static const std::pair<MapKind, MapKind> inverse[] = {{MapKind::Lt, MapKind::Ge}, {MapKind::Le, MapKind::Gt},
                                                          {MapKind::Gt, MapKind::Le}, {MapKind::Ge, MapKind::Lt},
                                                          {MapKind::Eq, MapKind::Ne}, {MapKind::Ne, MapKind::Eq}};
    if (auto c = comparisonOf.find(m); c != comparisonOf.end()) {
      const Comparison cmp = c->second;
      const bool equality = cmp.kind == MapKind::Eq || cmp.kind == MapKind::Ne;  // exact with NaN too
      if (!equality && (!neverNaN(cmp.a) || !neverNaN(cmp.b))) return -1;
      for (auto [k, inv] : inverse)
        if (k == cmp.kind) return mapValues(inv, l, {cmp.a, cmp.b});
      return -1;
    }
    if (auto j = junctionOf.find(m); j != junctionOf.end()) {
      const Junction both = j->second;
      int a = negation(both.a, l);
      if (a < 0) return -1;
      int b = negation(both.b, l);
      if (b < 0) return -1;
      return junction(!both.all, a, b, l);
    }
    return -1;
  }

  // where(c, a, b): a and b tiles of the result's type, or one of them a float scalar (splat
  // to the other's type); c a mask of the same shape.
  int select(const CallExpr *c, SourceLocation l) {
    int cond = tileExpr(c->getArg(0));
    int a = expr(c->getArg(1)), b = expr(c->getArg(2));
    if (failed) return -1;
    const bool aTile = typeOf(a).kind == ValueType::Tile, bTile = typeOf(b).kind == ValueType::Tile;
    for (auto [v, e] : {std::pair{a, c->getArg(1)}, std::pair{b, c->getArg(2)}})
      if (typeOf(v).kind != ValueType::Tile && typeOf(v).kind != ValueType::Scalar &&
          typeOf(v).kind != ValueType::Index)
        return fail(e->getBeginLoc(), "expected a tile or a scalar");
    ValueType t = typeOf(aTile ? a : bTile ? b : cond);
    if (!aTile && !bTile) {
      // Two scalars: an i32 tile of the mask's shape for two integers, else an f32 one.
      const bool integers = typeOf(a).kind == ValueType::Index && typeOf(b).kind == ValueType::Index;
      t.elem = integers ? Elem::I32 : Elem::F32;
      if (!integers) {
        a = asFloat(a, l);
        b = asFloat(b, l);
      }
    }
    t.smem = false;
    // The result's shape: in each dimension the extent of the mask or a value that is not 1
    // (pk/spec.h's Broadcast; every operand of one rank).
    for (int v : {cond, a, b}) {
      const ValueType &vt = typeOf(v);
      if (vt.kind != ValueType::Tile) continue;
      if (vt.shape.size() != t.shape.size())
        return fail(l, "where's mask and values must be tiles of one rank");
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (t.shape[d] == 1) t.shape[d] = vt.shape[d];
        else if (vt.shape[d] != 1 && vt.shape[d] != t.shape[d])
          return fail(l, "where's mask and values must have equal extents, or 1, in each dimension");
      }
    }
    if ((!aTile && !fitsIntTile(c->getArg(1), t.elem)) || (!bTile && !fitsIntTile(c->getArg(2), t.elem)))
      return -1;
    if (!aTile) a = emitValue(OpKind::Splat, l, {a}, t);
    if (!bTile) b = emitValue(OpKind::Splat, l, {b}, t);
    // A smaller mask or value is spread to the result's shape by a multiplication with ones,
    // which is exact for every value (-0, infinities and NaN included), so the select still
    // never mixes its two sides.
    auto spread = [&](int v) {
      if (typeOf(v).shape == t.shape) return v;
      ValueType full = typeOf(v);
      full.shape = t.shape;
      full.smem = false;
      const bool integer = isIntElem(full.elem);
      int one = integer ? constant(l, 1) : asFloat(constant(l, 1), l);
      int ones = emitValue(OpKind::Splat, l, {one}, full);
      return emitValue(OpKind::Map, l, {v, ones}, full, {}, int(MapKind::Mul));
    };
    cond = spread(cond);
    a = spread(a);
    b = spread(b);
    return emitValue(OpKind::Select, l, {cond, a, b}, t);
  }

  int operatorCall(const CXXOperatorCallExpr *o) {
    SourceLocation l = o->getOperatorLoc();
    if (o->isAssignmentOp() && o->getOperator() == OO_Equal)
      return assign(o->getArg(0), o->getArg(1), expr(o->getArg(1)), l);
    const FunctionDecl *fd = o->getDirectCallee();
    std::string n = fd ? builtinName(fd) : "";
    bool unary = o->getNumArgs() == 1;
    if (n == "operator+" && !unary) return mapOp(MapKind::Add, l, {o->getArg(0), o->getArg(1)});
    if (n == "operator-" && !unary) return mapOp(MapKind::Sub, l, {o->getArg(0), o->getArg(1)});
    if (n == "operator-" && unary) return mapOp(MapKind::Neg, l, {o->getArg(0)});
    if (n == "operator*") return mapOp(MapKind::Mul, l, {o->getArg(0), o->getArg(1)});
    if (n == "operator/") return mapOp(MapKind::Div, l, {o->getArg(0), o->getArg(1)});
    if (n == "operator%") return mapOp(MapKind::Rem, l, {o->getArg(0), o->getArg(1)});
    static const std::pair<const char *, MapKind> bitwise[] = {
        {"operator&", MapKind::BitAnd}, {"operator|", MapKind::BitOr}, {"operator^", MapKind::BitXor},
        {"operator<<", MapKind::Shl}, {"operator>>", MapKind::Shr}};
    for (const auto &[name, kind] : bitwise)
      if (n == name && !unary) return mapOp(kind, l, {o->getArg(0), o->getArg(1)});
    static const std::pair<const char *, MapKind> comparisons[] = {
        {"operator<", MapKind::Lt}, {"operator<=", MapKind::Le}, {"operator>", MapKind::Gt},
        {"operator>=", MapKind::Ge}, {"operator==", MapKind::Eq}, {"operator!=", MapKind::Ne}};
    for (const auto &[name, kind] : comparisons)
      if (n == name && !unary) return mapOp(kind, l, {o->getArg(0), o->getArg(1)});
    if (n == "operator&&" && !unary) return logical("&&", l, {o->getArg(0), o->getArg(1)});
    if (n == "operator||" && !unary) return logical("||", l, {o->getArg(0), o->getArg(1)});
    if (n == "operator!" && unary) return logical("!", l, {o->getArg(0)});
    return fail(l, "this operator is not in the spec language; tiles have + - * /, unary -, "
                   "% (integer tiles), the comparisons < <= > >= == != and && || ! on masks");
  }

  int memberCall(const CXXMemberCallExpr *m) {
    const CXXMethodDecl *md = m->getMethodDecl();
    SourceLocation l = m->getExprLoc();
    if (md && md->isVirtual())
      return fail(l, "virtual calls are not in the spec language; call pk/spec.h operations "
                     "directly");
    std::string n = md ? builtinName(md) : "";
    int dim = -1;
    if (n == "Tensor::size" || n == "Sym::size" || n == "Tensor::rows" || n == "Sym::rows")
      dim = 0;
    else if (n == "Tensor::cols" || n == "Sym::cols")
      dim = 1;
    else if (n == "Tensor::dim" || n == "Sym::dim") {
      int64_t d;
      if (!constInt(m->getArg(0), d))
        return fail(m->getArg(0)->getBeginLoc(), "the dimension of dim() must be a constant");
      if (d < 0)
        return fail(m->getArg(0)->getBeginLoc(),
                    "dimension " + std::to_string(d) + " is out of range: dimensions count from 0");
      dim = int(d);
    } else if (n == "Tensor::at") {
      int t = tensorExpr(m->getImplicitObjectArgument(), false);
      if (t < 0) return -1;
      std::vector<int> ops = {t};
      for (int i : indices(m, 0, typeOf(t).shape.size(), l)) ops.push_back(i);
      if (failed) return -1;
      ValueType r;
      const bool integer = isIntElem(typeOf(t).elem);
      r.kind = integer ? ValueType::Index : ValueType::Scalar;
      return emitValue(OpKind::LoadScalar, l, ops, r);
    } else if (n == "Sym::on") {
      return fail(l, "`tensor.on(peer)` names a peer's copy; pass it straight to store, "
                     "store_add or a primitive");
    }
    if (dim < 0)
      return fail(l, "calls to member functions other than the pk/spec.h tensor methods are "
                     "not in the spec language");
    int t = tensorExpr(m->getImplicitObjectArgument(), false);
    if (t < 0) return -1;
    if (dim >= int(typeOf(t).shape.size()))
      return fail(l, "dimension " + std::to_string(dim) + " is out of range for a tensor of rank " +
                         std::to_string(typeOf(t).shape.size()));
    return emitValue(OpKind::Dim, l, {t}, ValueType{}, {dim});
  }

  int resultTile(const CallExpr *c, ValueType &t) {
    const bool mapped = mapType(c->getType(), t);
    if (!mapped && t.kind == ValueType::Tile && !t.shape.empty() &&
        llvm::all_of(t.shape, [](int64_t s) { return s > 0; }))
      return fail(c->getBeginLoc(), tileLimit(t.shape));
    if (!mapped || t.kind != ValueType::Tile)
      return fail(c->getBeginLoc(), "the result must be a tile: give its shape as template "
                                    "arguments with positive extents (load<128, 64>(A, m, k)) and "
                                    "its element type one of bf16, f16, f32, f8e4m3, f8e5m2, i8, "
                                    "i32, i64 (cast<f32>(t))");
    return 0;
  }

  int call(const CallExpr *c) {
    SourceLocation l = c->getExprLoc();
    const FunctionDecl *fd = c->getDirectCallee();
    if (!fd)
      return fail(l, "indirect calls are not in the spec language; call pk/spec.h operations");
    if (fd->getCanonicalDecl() == kernelDecl)
      return fail(l, "recursion is not in the spec language; a kernel's work is bounded by "
                     "its tile loops");
    std::string n = builtinName(fd);
    if (n.empty())
      return fail(l, "calls to '" + fd->getNameAsString() +
                         "' are not in the spec language; only pk/spec.h operations can be "
                         "called (write helpers as macros, or inline them)");
    ValueType idx;
    auto arg = [&](unsigned i) { return c->getArg(i); };
    if (n == "rank") return emitValue(OpKind::Rank, l, {}, idx);
    if (n == "world_size") return emitValue(OpKind::WorldSize, l, {}, idx);
    if (n == "next_rank" || n == "prev_rank") {
      int r = emitValue(OpKind::Rank, l, {}, idx);
      int w = emitValue(OpKind::WorldSize, l, {}, idx);
      int s = n == "next_rank" ? emitValue(OpKind::Add, l, {r, constant(l, 1)}, idx)
                               : emitValue(OpKind::Sub, l,
                                           {emitValue(OpKind::Add, l, {r, w}, idx),
                                            constant(l, 1)}, idx);
      return emitValue(OpKind::Rem, l, {s, w}, idx);
    }
    if (n == "tiles" || n == "range")
      return fail(l, "tiles() and range() are only allowed as the range of a for loop");
    if ((n == "load" || n == "load_smem") && isPeerRef(arg(0))) {
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      if (n == "load_smem")
        return fail(l, "load_smem from a peer's copy is not lowered on the general path: load it "
                       "into registers with load(y.on(p), ...), or write the protocol with "
                       "prim::load_peer_smem");
      int peer = -1;
      int src = peerExpr(arg(0), peer);
      if (src < 0) return -1;
      std::vector<int> ops = {src, peer};
      const size_t rank = typeOf(src).shape.size();
      for (int i : indices(c, 1, rank, l)) ops.push_back(i);
      if (failed) return -1;
      std::optional<ValueType> moved = tileOfRank(t, rank, l, "of");
      if (!moved) return -1;
      return reshapedTo(emitValue(OpKind::LoadPeer, l, ops, *moved, {}, 0, /*transport=Ldst*/ 0), t, l);
    }
    if (n == "load" || n == "load_smem") {
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      int src = tensorExpr(arg(0), false);
      if (src < 0) return -1;
      std::vector<int> ops = {src};
      const size_t rank = typeOf(src).shape.size();
      for (int i : indices(c, 1, rank, l)) ops.push_back(i);
      if (failed) return -1;
      if (t.shape.size() == rank) return emitValue(OpKind::Load, l, ops, t);
      if (t.smem)
        return fail(l, std::string("load_smem takes one extent per tensor dimension") +
                           (t.shape.size() < rank ? " (write the leading 1s)" : ""));
      // A 1 x N row of a [N] bias, an N x 1 column, or one head of [H, S, D]: the load of the
      // tile at the tensor's rank, reshaped.
      std::optional<ValueType> moved = tileOfRank(t, rank, l, "of");
      if (!moved) return -1;
      return reshapedTo(emitValue(OpKind::Load, l, ops, *moved), t, l);
    }
    if (n == "store" || n == "store_add") {
      bool toPeer = isPeerRef(arg(0));
      int peer = -1;
      int dest = toPeer ? peerExpr(arg(0), peer) : tensorExpr(arg(0), false);
      int tile = tileExpr(arg(1));
      if (failed) return -1;
      if (n == "store_add" && !toPeer) {
        // Into this rank's tensor: the tile's rows added at rows m.. by index (red.global.add),
        // as store_add_rows does, so tiles that meet (partial sums over row tiles) all arrive.
        if (typeOf(dest).shape.size() != 2)
          return fail(l, std::string("store_add into a local tensor takes a 2-D tensor (it adds the tile's "
                         "rows by index, as store_add_rows does); ") +
                             (typeOf(dest).shape.size() == 1 ? "view a 1-D one as [1, N]"
                                                             : "view it as 2-D, its leading dimensions as rows ([A, B, C] as [A * B, C])"));
        tile = storedTile(tile, 2, l);
        if (tile < 0 || typeOf(tile).smem)
          return tile < 0 ? -1 : fail(l, "store_add takes a register tile: load it with load<...>");
        if (std::string why = addsRefused(typeOf(tile).elem); !why.empty()) return fail(l, "store_add: " + why);
        std::vector<int> at = indices(c, 2, 2, l);
        if (failed) return -1;
        ValueType rows;
        rows.kind = ValueType::Tile;
        rows.elem = Elem::I32;
        rows.shape = {typeOf(tile).shape[0]};
        int slots = emitValue(OpKind::Iota, l, {at[0]}, rows, {}, 0);
        // Every row moves (all_rows), as a plain store writes it: a row from past the end of
        // one operand's tensor holds data from the others (dy[t] w0 + dy[t + 1] w1).
        emit(OpKind::StoreRows, l, {tile, dest, slots, at[1]}).attr = 1 | 2;
        return -2;
      }
      // Peer stores go from registers; a shared-memory tile reached the CUDA emitter, which
      // has no such pattern (found by fuzzing).
      if (toPeer && typeOf(tile).smem)
        return fail(l, n + " into a peer's copy takes a register tile: load it with load<...>, "
                           "not load_smem (shared-memory tiles are for mma and mma_t operands)");
      tile = storedTile(tile, typeOf(dest).shape.size(), l);
      if (tile < 0) return -1;
      std::vector<int> ops = toPeer ? std::vector<int>{tile, dest, peer}
                                    : std::vector<int>{tile, dest};
      for (int i : indices(c, 2, typeOf(dest).shape.size(), l)) ops.push_back(i);
      if (failed) return -1;
      emit(!toPeer ? OpKind::Store : n == "store" ? OpKind::StoreTile : OpKind::AddTile, l, ops);
      return -2;
    }
    if (n == "cumsum" || n == "histogram") {
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      int in = tileExpr(arg(0));
      if (in < 0) return -1;
      return emitValue(n == "cumsum" ? OpKind::Cumsum : OpKind::Histogram, l, {in}, t);
    }
    if (n == "reshape") {
      auto shapeText = [](const std::vector<int64_t> &shape) {
        std::string text = "[";
        for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
        return text + "]";
      };
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      int in = tileExpr(arg(0));
      if (in < 0) return -1;
      auto nonUnit = [](const std::vector<int64_t> &shape) {
        std::vector<int64_t> dims;
        for (int64_t d : shape)
          if (d != 1) dims.push_back(d);
        return dims;
      };
      if (typeOf(in).smem)
        return fail(l, "reshape takes a register tile: load it with load<...>");
      if (nonUnit(typeOf(in).shape) != nonUnit(t.shape))
        return fail(l, "reshape adds or drops dimensions of 1 only, keeping the others in order (a "
                       "[64] tile can become [1, 64] or [64, 1]); " + shapeText(typeOf(in).shape) +
                       " cannot become " + shapeText(t.shape));
      return typeOf(in).shape == t.shape ? in : emitValue(OpKind::Reshape, l, {in}, t);
    }
    if (n == "transpose") {
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      int in = tileExpr(arg(0));
      if (in < 0) return -1;
      return emitValue(OpKind::Transpose, l, {in}, t);
    }
    if (n == "load_rows") {
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      int peer = -1;
      int src = isPeerRef(arg(0)) ? peerExpr(arg(0), peer) : tensorExpr(arg(0), false);
      int rows = tileExpr(arg(1));
      int col = indexExpr(arg(2));
      if (failed) return -1;
      std::vector<int> ops = {src, rows, col};
      if (peer >= 0) ops.push_back(peer);
      return emitValue(OpKind::LoadRows, l, ops, t);
    }
    if (n == "store_rows" || n == "store_add_rows") {
      int peer = -1;
      int dest = isPeerRef(arg(0)) ? peerExpr(arg(0), peer) : tensorExpr(arg(0), false);
      int tile = tileExpr(arg(1));
      int rows = tileExpr(arg(2));
      int col = indexExpr(arg(3));
      if (failed) return -1;
      if (std::string why = n == "store_add_rows" ? addsRefused(typeOf(tile).elem) : ""; !why.empty())
        return fail(l, "store_add_rows: " + why);
      std::vector<int> ops = {tile, dest, rows, col};
      if (peer >= 0) ops.push_back(peer);
      emit(OpKind::StoreRows, l, ops).attr = n == "store_add_rows";
      return -2;
    }
    if (n == "claim") {
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      int counter = tensorExpr(arg(0), false);
      int idx = tileExpr(arg(1));
      if (failed) return -1;
      return emitValue(OpKind::Claim, l, {counter, idx}, t);
    }
    if (n == "zeros") {
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      return emitValue(OpKind::Zeros, l, {}, t);
    }
    if (n == "mma" || n == "mma_t") {
      int a = tileExpr(arg(0)), b = tileExpr(arg(1)), acc = tileExpr(arg(2));
      if (failed) return -1;
      return emitValue(OpKind::Mma, l, {a, b, acc}, typeOf(acc), {}, n == "mma_t" ? 1 : 0);
    }
    if (n == "max") return mapOp(MapKind::Max, l, {arg(0), arg(1)});
    if (n == "min") return mapOp(MapKind::Min, l, {arg(0), arg(1)});
    if (n == "exp") return mapOp(MapKind::Exp, l, {arg(0)});
    static const std::pair<const char *, MapKind> unaryMath[] = {
        {"sqrt", MapKind::Sqrt}, {"rsqrt", MapKind::Rsqrt}, {"log", MapKind::Log},
        {"tanh", MapKind::Tanh}, {"sigmoid", MapKind::Sigmoid}, {"silu", MapKind::Silu},
        {"gelu", MapKind::GeluTanh}, {"gelu_erf", MapKind::GeluErf}, {"erf", MapKind::Erf}, {"sin", MapKind::Sin},
        {"cos", MapKind::Cos}, {"abs", MapKind::Abs}, {"round", MapKind::Round}, {"floor", MapKind::Floor},
        {"ceil", MapKind::Ceil}};
    for (const auto &[name, kind] : unaryMath)
      if (n == name) return mapOp(kind, l, {arg(0)});
    if (n == "pow") return mapOp(MapKind::Pow, l, {arg(0), arg(1)});
    if (n == "where") return select(c, l);
    if (n == "row_index" || n == "col_index" || n == "dim_index") {
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      int64_t dim = n == "row_index" ? 0 : 1;
      if (n == "dim_index") {
        const TemplateArgumentList *targs = c->getDirectCallee()->getTemplateSpecializationArgs();
        dim = targs && targs->size() > 0 && targs->get(0).getKind() == TemplateArgument::Integral
                  ? targs->get(0).getAsIntegral().getSExtValue()
                  : -1;
        if (dim < 0 || dim >= int64_t(t.shape.size()))
          return fail(l, "dim_index<D, S...>: D (" + std::to_string(dim) + ") must name one of the tile's " +
                             std::to_string(t.shape.size()) + " dimensions, counted from 0");
      }
      int origin = indexExpr(arg(0));
      if (origin < 0) return -1;
      int v = emitValue(OpKind::Iota, l, {origin}, t, {}, int(dim));
      neverNaNValues.insert(v);
      return v;
    }
    if (n == "uniform") return uniform(c, l);
    if (n == "cast") {
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      int in = tileExpr(arg(0));
      if (in < 0) return -1;
      return emitValue(OpKind::Cast, l, {in}, t);
    }
    if (n == "row_topk" || n == "row_topk_index") {
      ValueType t, asked;
      if (!mapType(c->getType(), asked) && asked.kind == ValueType::Tile && !asked.shape.empty() &&
          asked.shape.back() <= 0)
        return fail(l, n + "<K>: K (the elements each row keeps) must be at least 1, got " +
                           std::to_string(asked.shape.back()));
      if (resultTile(c, t) < 0) return -1;
      int in = tileExpr(arg(0));
      if (in < 0) return -1;
      // One op gives both results: a kernel asking for both gets one pass (same input, K and
      // region).
      const auto key = std::make_tuple(in, t.shape.back(), region);
      auto found = topks.find(key);
      if (found == topks.end()) {
        ValueType values = typeOf(in), indices;
        values.shape = t.shape;
        values.smem = false;
        indices = values;
        indices.elem = Elem::I32;
        Op &op = emit(OpKind::Topk, l, {in});
        op.results = {newValue(values), newValue(indices)};
        found = topks.emplace(key, std::make_pair(op.results[0], op.results[1])).first;
      }
      return n == "row_topk" ? found->second.first : found->second.second;
    }
    if (n == "row_sum" || n == "row_max" || n == "row_min") {
      ValueType t;
      if (resultTile(c, t) < 0) return -1;
      int in = tileExpr(arg(0));
      if (in < 0) return -1;
      ReduceKind k = n == "row_sum" ? ReduceKind::Sum
                     : n == "row_max" ? ReduceKind::Max : ReduceKind::Min;
      return emitValue(OpKind::ReduceRows, l, {in}, t, {}, int(k));
    }
    if (n == "all_reduce" || n == "reduce_scatter" || n == "all_gather" || n == "all_to_all") {
      bool reduces = n == "all_reduce" || n == "reduce_scatter";
      int kind = 0;
      if (reduces && !enumArg(arg(0), kind)) return -1;
      unsigned first = reduces ? 1 : 0;
      int in = tensorExpr(arg(first), true);
      int out = tensorExpr(arg(first + 1), false);
      if (failed) return -1;
      OpKind k = n == "all_reduce"       ? OpKind::AllReduce
                 : n == "reduce_scatter" ? OpKind::ReduceScatter
                 : n == "all_gather"     ? OpKind::AllGather : OpKind::AllToAll;
      // Along a dimension (all_gather, reduce_scatter), or split and concatenated along two
      // (all_to_all): constants.
      std::vector<int64_t> dims;
      for (unsigned i = first + 2; i < c->getNumArgs(); ++i) {
        int64_t dim = 0;
        if (!constInt(arg(i), dim))
          return fail(arg(i)->getBeginLoc(), n == "all_to_all" ? "the dimensions of 'all_to_all' must be constant integers"
                                                               : "the dimension of '" + n + "' must be a constant integer");
        dims.push_back(dim);
      }
      Op &o = emit(k, l, {in, out});
      o.attr = kind;
      o.ints = dims.empty() ? std::vector<int64_t>{0} : dims;
      return -2;
    }
    if (n == "broadcast" || n == "reduce" || n == "gather" || n == "scatter") {
      bool reduces = n == "reduce";
      int kind = 0;
      if (reduces && !enumArg(arg(0), kind)) return -1;
      unsigned first = reduces ? 1 : 0;
      int in = tensorExpr(arg(first), true);
      int out = tensorExpr(arg(first + 1), false);
      int root = indexExpr(arg(first + 2));
      if (failed) return -1;
      // A constant root is checked here; a run-time one against world_size() at launch.
      if (int64_t r; constInt(arg(first + 2), r) && r < 0)
        return fail(arg(first + 2)->getBeginLoc(),
                    "the root is a rank, 0 to world_size() - 1; got " + std::to_string(r));
      OpKind k = n == "broadcast" ? OpKind::Broadcast
                 : n == "reduce"  ? OpKind::ReduceToRoot
                 : n == "gather"  ? OpKind::Gather : OpKind::Scatter;
      emit(k, l, {in, out, root}).attr = kind;
      return -2;
    }
    if (n == "prim::store_async" || n == "prim::store_add_async") {
      int transport, peer = -1;
      if (!enumArg(arg(0), transport) || !onePeerTransport(arg(0), transport, n)) return -1;
      int dest = peerExpr(arg(1), peer);
      int tile = tileExpr(arg(2));
      if (failed) return -1;
      // A tile of the trailing dimensions, as store takes (register tiles: a shared-memory one
      // has the tensor's rank).
      if (typeOf(tile).smem && typeOf(tile).shape.size() != typeOf(dest).shape.size())
        return fail(l, n + " of a shared-memory tile takes one extent per tensor dimension (load it "
                           "with the leading 1s); a tile of the trailing dimensions is a register tile");
      if (!typeOf(tile).smem) tile = storedTile(tile, typeOf(dest).shape.size(), l);
      if (tile < 0) return -1;
      std::vector<int> ops = {tile, dest, peer};
      for (int i : indices(c, 3, typeOf(dest).shape.size(), l)) ops.push_back(i);
      if (failed) return -1;
      emit(n == "prim::store_async" ? OpKind::StoreAsync : OpKind::StoreAddAsync, l, ops)
          .transport = transport;
      return -2;
    }
    if (n == "prim::reduce") {
      ValueType t;
      int kind, transport;
      if (resultTile(c, t) < 0 || !enumArg(arg(0), kind) || !enumArg(arg(1), transport))
        return -1;
      int src = tensorExpr(arg(2), true);
      if (src < 0) return -1;
      std::vector<int> ops = {src};
      for (int i : indices(c, 3, typeOf(src).shape.size(), l)) ops.push_back(i);
      if (failed) return -1;
      std::optional<ValueType> moved = tileOfRank(t, typeOf(src).shape.size(), l, "of");
      if (!moved) return -1;
      return reshapedTo(emitValue(OpKind::CommReduce, l, ops, *moved, {}, kind, transport), t, l);
    }
    if (n == "prim::all_reduce") {
      int kind, transport;
      if (!enumArg(arg(0), kind) || !enumArg(arg(1), transport)) return -1;
      std::vector<int64_t> shape;
      if (const TemplateArgumentList *ta = fd->getTemplateSpecializationArgs())
        if (ta->size() > 0 && ta->get(0).getKind() == TemplateArgument::Pack)
          for (const TemplateArgument &a : ta->get(0).pack_elements())
            shape.push_back(a.getAsIntegral().getExtValue());
      int src = tensorExpr(arg(2), true), dst = tensorExpr(arg(3), true);
      if (failed) return -1;
      // A tile of the trailing dimensions, as the other primitives take: leading extents of 1.
      if (!shape.empty() && shape.size() < typeOf(src).shape.size())
        shape.insert(shape.begin(), typeOf(src).shape.size() - shape.size(), 1);
      if (shape.size() != typeOf(src).shape.size())
        return fail(l, "give the tile shape as template arguments, at most one extent per tensor "
                       "dimension: prim::all_reduce<4096>(Sum, Ldst, x, y, i)");
      std::vector<int> ops = {src, dst};
      for (int i : indices(c, 4, typeOf(src).shape.size(), l)) ops.push_back(i);
      if (failed) return -1;
      Op &op = emit(OpKind::CommAllReduce, l, ops);
      op.attr = kind;
      op.transport = transport;
      op.ints = shape;
      return -2;
    }
    if (n == "prim::load_peer" || n == "prim::load_peer_smem") {
      ValueType t;
      int transport, peer = -1;
      if (resultTile(c, t) < 0 || !enumArg(arg(0), transport) ||
          !onePeerTransport(arg(0), transport, n))
        return -1;
      int src = peerExpr(arg(1), peer);
      if (failed) return -1;
      std::vector<int> ops = {src, peer};
      for (int i : indices(c, 2, typeOf(src).shape.size(), l)) ops.push_back(i);
      if (failed) return -1;
      if (t.smem) {
        if (t.shape.size() != typeOf(src).shape.size())
          return fail(l, "prim::load_peer_smem takes one extent per tensor dimension (write the "
                         "leading 1s); a tile of the trailing dimensions is a register tile "
                         "(prim::load_peer)");
        return emitValue(OpKind::LoadPeer, l, ops, t, {}, 0, transport);
      }
      std::optional<ValueType> moved = tileOfRank(t, typeOf(src).shape.size(), l, "of");
      if (!moved) return -1;
      return reshapedTo(emitValue(OpKind::LoadPeer, l, ops, *moved, {}, 0, transport), t, l);
    }
    if (n == "prim::flag") {
      int64_t slot;
      int scope;
      // A constant slot is checked here; a run-time one (a flag per tile) at launch.
      std::vector<int> offset;
      if (!constInt(arg(0), slot)) {
        slot = 0;
        offset.push_back(indexExpr(arg(0)));
        if (failed) return -1;
      } else if (slot < 0 || slot >= 1024) {
        return fail(arg(0)->getBeginLoc(), "flag slots are in [0, 1024), got " + std::to_string(slot));
      }
      if (!enumArg(arg(1), scope)) return -1;
      ValueType f;
      f.kind = ValueType::Flag;
      return emitValue(OpKind::Flag, l, offset, f, {slot}, scope);
    }
    if (n == "prim::signal" || n == "prim::wait") {
      int f = expr(arg(0)), x = indexExpr(arg(1));
      if (failed) return -1;
      if (int64_t v; n == "prim::wait" && constInt(arg(1), v) && v < 0)
        return fail(arg(1)->getBeginLoc(), "a wait counts the signals it needs per launch, 0 or "
                                           "more; got " + std::to_string(v));
      if (int64_t v; n == "prim::signal" && constInt(arg(1), v) && v < 0)
        return fail(arg(1)->getBeginLoc(), "the peer is a rank, 0 to world_size() - 1; got " +
                                               std::to_string(v));
      emit(n == "prim::signal" ? OpKind::Signal : OpKind::Wait, l, {f, x});
      return -2;
    }
    if (n == "prim::signal_all" || n == "prim::barrier") {
      int f = expr(arg(0));
      if (failed) return -1;
      emit(n == "prim::signal_all" ? OpKind::SignalAll : OpKind::Barrier, l, {f});
      return -2;
    }
    return fail(l, "'" + n + "' cannot be used here");
  }
};

void collectKernels(const DeclContext *dc, std::vector<const FunctionDecl *> &out) {
  for (const Decl *d : dc->decls()) {
    if (const auto *ns = dyn_cast<NamespaceDecl>(d)) {
      collectKernels(ns, out);
    } else if (const auto *ls = dyn_cast<LinkageSpecDecl>(d)) {
      collectKernels(ls, out);
    } else if (const auto *rd = dyn_cast<CXXRecordDecl>(d)) {
      // Collected so that the walker can say a kernel is a free function.
      collectKernels(rd, out);
    } else if (const auto *ct = dyn_cast<ClassTemplateDecl>(d)) {
      collectKernels(ct->getTemplatedDecl(), out);
    } else if (const auto *ft = dyn_cast<FunctionTemplateDecl>(d)) {
      // Collected so that the walker can say why a kernel template is not allowed.
      const FunctionDecl *fd = ft->getTemplatedDecl();
      for (const auto *a : fd->specific_attrs<AnnotateAttr>())
        if (a->getAnnotation() == "pk.kernel") {
          out.push_back(fd);
          break;
        }
    } else if (const auto *fd = dyn_cast<FunctionDecl>(d)) {
      if (!fd->doesThisDeclarationHaveABody()) continue;
      for (const auto *a : fd->specific_attrs<AnnotateAttr>())
        if (a->getAnnotation() == "pk.kernel") {
          out.push_back(fd);
          break;
        }
    }
  }
}

} // namespace

void walkKernels(ASTContext &context, const std::string &builtinPrefix,
                 const std::string &onlyKernel, ParseResult &result) {
  std::vector<const FunctionDecl *> kernels;
  collectKernels(context.getTranslationUnitDecl(), kernels);
  // One kernel asked for: the others are not lowered, so their errors do not stop it. With no
  // kernel of that name all are walked, and the caller lists them in its error.
  auto named = [&](const FunctionDecl *fd) { return fd->getNameAsString() == onlyKernel; };
  if (!onlyKernel.empty() && llvm::any_of(kernels, named))
    llvm::erase_if(kernels, [&](const FunctionDecl *fd) { return !named(fd); });
  if (kernels.empty()) {
    SrcLoc l;
    const SourceManager &sm = context.getSourceManager();
    if (auto entry = sm.getFileEntryRefForID(sm.getMainFileID())) l.file = entry->getName().str();
    l.line = 1;
    l.col = 1;
    result.errors.push_back(
        {l, "no kernel in this file; mark one with PK_KERNEL (from <pk/spec.h>)"});
    return;
  }
  for (const FunctionDecl *fd : kernels) KernelWalker(context, builtinPrefix, result).walk(fd);
}

} // namespace pk::fe
