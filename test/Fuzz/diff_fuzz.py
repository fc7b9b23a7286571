"""Generative differential fuzzer for pkc: random single-kernel specs, each checked against a
float64 reference interpreter of the same program (a developer tool, not part of CI).

Each program is one tile loop over 2-D tensors whose shapes are not multiples of the tile:
element-wise math, casts to bf16 / f16, row reductions, masks (data, causal, padding, uniform),
let-bound values, `range` loops that accumulate, and row-wise kernels (whole rows in one tile,
or rows wider than a tile walked by two `range` loops). See test/Fuzz/README.md.

The reference evaluates the program on the padded tile grid (loads read zeros past the tensor,
reductions count the padding, as the docs say the GPU does) and carries, next to each value, a
bound on how far the GPU's fp32 value may be from it (rounding, approximate math, bf16 / f16
rounding, comparisons whose sides are within their bounds). A result outside twice that bound is
a FAIL. One interpreter, two array backends: pure Python (runs here) and torch float64 (--run).

  python3 test/Fuzz/diff_fuzz.py --compile-only --pkc PKC --seed 1 --count 300 --out DIR
  python3 test/Fuzz/diff_fuzz.py --check-ref --seed 1 --count 30         # the reference alone
  PYTHONPATH=python python3 test/Fuzz/diff_fuzz.py --run --pkc PKC --seed 1 --count 200
--ranks: multi-rank programs (collectives between compute phases, peer stores and adds,
rank-dependent math), checked at W = 1..4 ranks sharing one GPU (pk_torch.run_shared_gpu).
Program i of seed S is the same whatever --count is: --seed S --only i reproduces it.
"""
import argparse
import concurrent.futures
import math
import operator
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import time

U = 2.0 ** -24  # fp32 unit roundoff
REL16 = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10}  # one ulp of a 16-bit value, relative
TINY16 = {"bf16": 2.0 ** -126, "f16": 2.0 ** -24}
# Rounding of an fp32 sum of n terms, relative to the sum of their magnitudes: the worst case is
# (n - 1) u, but rounding errors of sums in any order stay within a few sqrt(n) u but with
# negligible probability (Higham and Mary, SIAM J. Sci. Comput. 2019); 4 sqrt(n) u + 4 u.
SUMERR = lambda n: (4 * math.sqrt(n) + 4) * U
ATOL = 1e-7  # slack beside twice the bound (flushed denormals, the last bits of approximations)


# ---------------------------------------------------------------------------------------------
# Array backends. The interpreter uses + - * / unary -, abs() and the methods below only, so a
# Python list and a torch tensor run the same reference code.

class PyArr:
    __slots__ = ("r", "c", "d")

    def __init__(self, r, c, d):
        self.r, self.c, self.d = r, c, d

    def _zip(self, o, f):
        if isinstance(o, PyArr):
            return PyArr(self.r, self.c, [f(x, y) for x, y in zip(self.d, o.d)])
        return PyArr(self.r, self.c, [f(x, o) for x in self.d])

    def __add__(self, o): return self._zip(o, operator.add)
    __radd__ = __add__
    def __sub__(self, o): return self._zip(o, operator.sub)
    def __rsub__(self, o): return self._zip(o, lambda x, y: y - x)
    def __mul__(self, o): return self._zip(o, operator.mul)
    __rmul__ = __mul__
    def __truediv__(self, o): return self._zip(o, operator.truediv)
    def __rtruediv__(self, o): return self._zip(o, lambda x, y: y / x)
    def __neg__(self): return PyArr(self.r, self.c, [-x for x in self.d])
    def __abs__(self): return PyArr(self.r, self.c, [abs(x) for x in self.d])


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _bf16(x):  # via fp32, as the GPU rounds an fp32 result: round to nearest even
    b = struct.unpack("I", struct.pack("f", _f32(x)))[0]
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return struct.unpack("f", struct.pack("I", b & 0xFFFFFFFF))[0]


def _f16(x):
    try:
        return struct.unpack("e", struct.pack("e", _f32(x)))[0]
    except OverflowError:  # past 65520 rounds to infinity
        return math.copysign(math.inf, x)


def _mul32(h, c):  # h * c mod 2^32 with products below 2^48: no int64 overflow on tensors
    return (h * (c & 0xFFFF) + (((h * (c >> 16)) & 0xFFFF) << 16)) & 0xFFFFFFFF


def _fmix32(h):  # MurmurHash3's finaliser, on Python ints and on int64 tensors alike
    h = _mul32(h ^ (h >> 16), 0x85EBCA6B)
    h = _mul32(h ^ (h >> 13), 0xC2B2AE35)
    return h ^ (h >> 16)


def _hash(u, v):
    return _fmix32(u ^ _fmix32((v + 0x9E3779B9) & 0xFFFFFFFF)) >> 1


def _seed_word(seed):  # docs/language.md: H((seed mod 2^32) - 2^31, floor(seed / 2^32)), seed < 2^31
    return _hash((seed - 2 ** 31) & 0xFFFFFFFF, 0)


class PyBackend:
    MATH = {"exp": math.exp, "log": math.log, "sqrt": math.sqrt, "tanh": math.tanh, "erf": math.erf,
            "expm1": math.expm1, "sin": math.sin, "cos": math.cos}
    ROUND = {"f32": _f32, "bf16": _bf16, "f16": _f16}

    def full(self, r, c, v): return PyArr(r, c, [float(v)] * (r * c))
    def iota(self, r, c, axis): return PyArr(r, c, [float(i // c if axis == 0 else i % c) for i in range(r * c)])
    def f(self, name, x): return PyArr(x.r, x.c, [self.MATH[name](v) for v in x.d])
    def round(self, x, dt): return PyArr(x.r, x.c, [self.ROUND[dt](v) for v in x.d])

    def maximum(self, a, b): return a._zip(b, max)
    def minimum(self, a, b): return a._zip(b, min)
    def where(self, m, a, b): return PyArr(m.r, m.c, [x if k != 0 else y for k, x, y in zip(m.d, a.d, b.d)])

    def cmp(self, op, a, b):
        f = CMP[op]
        return a._zip(b, lambda x, y: 1.0 if f(x, y) else 0.0)

    def segred(self, x, op, w):  # reduce runs of w columns, the result broadcast back over the run
        f = {"sum": math.fsum, "max": max, "min": min}[op]
        out = []
        for s in range(0, len(x.d), w):
            out += [float(f(x.d[s:s + w]))] * w
        return PyArr(x.r, x.c, out)

    def scan(self, x, w):  # running sums along runs of w columns (cumsum of each tile's rows)
        out = []
        for s in range(0, len(x.d), w):
            acc = 0.0
            for v in x.d[s:s + w]:
                acc += v
                out.append(acc)
        return PyArr(x.r, x.c, out)

    def T(self, x): return PyArr(x.c, x.r, [x.d[i * x.c + j] for j in range(x.c) for i in range(x.r)])

    def pad(self, x, r, c):  # x: list of rows (2-D) or a list (1-D row vector, broadcast over rows)
        if isinstance(x, PyArr):
            x = [x.d[i * x.c:(i + 1) * x.c] for i in range(x.r)]
        rows = [x] * r if not isinstance(x[0], list) else x
        d = []
        for i in range(r):
            row = rows[i] if i < len(rows) else []
            d += list(row) + [0.0] * (c - len(row))
        return PyArr(r, c, d)

    def uniform(self, seed, r, c):
        h0 = _seed_word(seed)
        return PyArr(r, c, [(_hash(_hash(h0, i // c), i % c) >> 7) * 2.0 ** -24 for i in range(r * c)])

    def crop(self, x, r, c): return [x.d[i * x.c:i * x.c + c] for i in range(r)]
    def shape(self, x): return (x.r, x.c)
    def arr(self, rows): return PyArr(len(rows), len(rows[0]), [float(v) for row in rows for v in row])
    def part(self, x, r0, r1, c0, c1): return PyArr(r1 - r0, c1 - c0, [v for i in range(r0, r1) for v in x.d[i * x.c + c0:i * x.c + c1]])

    def cat(self, xs, dim):
        if dim == 0:
            return PyArr(sum(x.r for x in xs), xs[0].c, [v for x in xs for v in x.d])
        return self.arr([sum((x.d[i * x.c:(i + 1) * x.c] for x in xs), []) for i in range(xs[0].r)])


class TorchBackend:
    def __init__(self, torch, device):
        self.t, self.dev = torch, device
        self.dt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}

    def full(self, r, c, v): return self.t.full((r, c), float(v), dtype=self.t.float64, device=self.dev)

    def iota(self, r, c, axis):
        i = self.t.arange(r if axis == 0 else c, dtype=self.t.float64, device=self.dev)
        return (i[:, None] if axis == 0 else i[None, :]).expand(r, c).contiguous()

    def f(self, name, x): return getattr(self.t.special if name == "erf" else self.t, name)(x)
    def round(self, x, dt): return x.float().to(self.dt[dt]).double()  # via fp32, as _bf16 / _f16

    def _arr(self, a, like): return a if self.t.is_tensor(a) else self.t.full_like(like, float(a))
    def maximum(self, a, b): return self.t.maximum(a, self._arr(b, a))
    def minimum(self, a, b): return self.t.minimum(a, self._arr(b, a))
    def where(self, m, a, b): return self.t.where(m != 0, a, b)
    def cmp(self, op, a, b): return CMP[op](a, self._arr(b, a)).double()

    def segred(self, x, op, w):
        r, c = x.shape
        v = x.reshape(r, c // w, w)
        v = v.sum(-1, keepdim=True) if op == "sum" else (v.amax(-1, keepdim=True) if op == "max" else v.amin(-1, keepdim=True))
        return v.expand(r, c // w, w).reshape(r, c)

    def scan(self, x, w): return x.reshape(x.shape[0], -1, w).cumsum(-1).reshape(x.shape)
    def T(self, x): return x.t().contiguous()

    def pad(self, x, r, c):
        x = x.double()
        if x.dim() == 1:
            x = x[None, :].expand(r, x.shape[0])
        return self.t.nn.functional.pad(x, (0, c - x.shape[1], 0, r - x.shape[0]))

    def uniform(self, seed, r, c):
        h0 = _seed_word(seed)
        i = self.t.arange(r, dtype=self.t.int64, device=self.dev)[:, None].expand(r, c)
        j = self.t.arange(c, dtype=self.t.int64, device=self.dev)[None, :].expand(r, c)
        return (_hash(_hash(self.t.full_like(i, h0), i), j) >> 7).double() * 2.0 ** -24

    def crop(self, x, r, c): return x[:r, :c]
    def shape(self, x): return tuple(x.shape)
    def arr(self, rows): return self.t.tensor(rows, dtype=self.t.float64, device=self.dev)
    def part(self, x, r0, r1, c0, c1): return x[r0:r1, c0:c1]
    def cat(self, xs, dim): return self.t.cat(xs, dim)


CMP = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq}


# ---------------------------------------------------------------------------------------------
# Programs. A node is an op with argument nodes, an element type, a shape (T: the tile, R: a
# column of one value per row, V: a 1 x N row, S: a scalar), a bound on |value| the generator
# keeps small, and its C++ text.

class N:
    __slots__ = ("op", "args", "dt", "shape", "bound", "code", "attr")

    def __init__(self, op, args, dt, shape, bound, code, attr=None):
        self.op, self.args, self.dt, self.shape, self.bound, self.code, self.attr = op, args, dt, shape, bound, code, attr


class Program:
    """kind: tile2d (tiles(rows, cols, {BM, BN})), rows (whole rows in one BM x BN tile) or
    rowloop (a row reduction over `range` chunks of BK columns, then a second loop storing)."""

    ranked, inb, store_op, row = False, 2.0, "store", "m"  # multi-rank phases change these (RGen)

    def spec(self):
        p = [f"Tensor<{dt}, 2> {n}" for n, dt in self.inputs]
        p += [f"Tensor<f32, 1> {self.vec}"] if self.vec else []
        p += [f"Tensor<{dt}, 2> {n}" for n, dt, _ in self.outputs]
        p += [f"float {self.scalar[0]}"] if self.scalar else []
        return ("#include <pk/spec.h>\nusing namespace pk;\n\n"
                f"// diff_fuzz.py --seed {self.seed} --only {self.index}: {self.kind}, [{self.R}, {self.C}]\n"
                f"PK_KERNEL void {self.name}({', '.join(p)}) {{\n" + "\n".join(self.loop_lines()) + "\n}\n")

    def loop_lines(self):
        x0, out = self.inputs[0][0], []
        body = []
        for name, node in self.stmts:
            if node.op == "loop":
                mode, k = node.attr
                upd = f"{name} * 0.5f + {node.args[0].code}" if mode == "decay" else f"{name} + {node.args[0].code} * float(r)"
                body += [f"auto {name} = zeros<{node.dt}, {self.TM}, {self.TN}>();",
                         f"for (auto r : range(0, {k}, 1)) {name} = {upd};"]
            else:
                body.append(f"auto {name} = {node.args[0].code};")
        body += [f"{self.store_op}({n}, {node.code}, {self.row}, {self.ni});" for n, _, node in self.outputs]
        if self.kind == "tile2d":
            out.append(f"  for (auto [m, n] : tiles({x0}.rows(), {x0}.cols(), {{{self.BM}, {self.BN}}})) {{")
            out += ["    " + s for s in body]
        else:
            out.append(f"  for (auto m : tiles({x0}.rows(), {{{self.BM}}})) {{")
            if self.kind == "rows":
                out += ["    " + s for s in body]
            else:
                mode, f = self.acc.attr, self.acc.args[0]
                start = "" if mode == "sum" else " - 1e30f"
                upd = f"acc + row_sum({f.code})" if mode == "sum" else f"max(acc, row_max({f.code}))"
                out += [f"    auto acc = zeros<f32, {self.BM}, 1>(){start};",
                        f"    for (auto k : range(0, {x0}.cols(), {self.BK})) acc = {upd};",
                        f"    for (auto k : range(0, {x0}.cols(), {self.BK})) {{"]
                out += ["      " + s for s in body] + ["    }"]
        out.append("  }")
        return out


def comb(*nodes):  # the broadcast shape of operands (scalars take the other's)
    s = {n.shape for n in nodes} - {"S"}
    return s.pop() if len(s) == 1 else "T" if s else "S"


def lit(v):
    s = f"{v!r}f"
    return f"({s})" if v < 0 else s


CONSTS = [0.5, 0.25, 0.75, 1.5, 2.0, 3.0, 0.125, -1.0, -0.5, 1.25, 0.375, -2.0]  # exact in bf16 and f16
LIMIT = 3000.0  # generated values stay below this (f16 holds 65504; fp32 error bounds stay meaningful)
UNARY = ["neg", "abs", "exp", "log1p", "sqrt", "rsqrt", "tanh", "sigmoid", "silu", "gelu", "gelu_erf",
         "sin", "cos", "square"]


class Gen:
    def __init__(self, seed, index):
        self.rng = r = random.Random(f"{seed}:{index}")
        p = self.p = Program()
        p.seed, p.index, p.name = seed, index, f"dz_{seed}_{index}"
        p.kind = r.choice(["tile2d"] * 5 + ["rows"] * 3 + ["rowloop"] * 2)
        p.R = r.choice([1, 3, 17, 37, 45, 64, 100, 130, 150])
        tails = lambda n: n if r.random() < 0.1 else n + r.choice([1, 3, 5, 7, 9, 13, 31])
        if p.kind == "tile2d":
            p.BM, p.BN = r.choice([16, 32, 64, 128, 16, 32, 48]), r.choice([16, 32, 64, 128, 16, 32, 64, 96])
            p.C = max(1, tails(r.choice([0, 32, 64, 96, 128, 160, 256])))
            p.TM, p.TN, p.ni, p.W = p.BM, p.BN, "n", p.BN
            p.Cp = -(-p.C // p.BN) * p.BN
        elif p.kind == "rows":
            p.C = max(1, tails(r.choice([0, 32, 64, 96, 192, 256, 384])))
            p.BN = 1 << (p.C - 1).bit_length() if r.random() < 0.7 else -(-p.C // 16) * 16
            p.BN = max(p.BN, 8)
            p.BM = r.choice([b for b in (1, 2, 4, 8, 16, 32) if b * p.BN <= 8192])
            p.TM, p.TN, p.ni, p.W, p.Cp = p.BM, p.BN, "0", p.BN, p.BN
        else:
            p.C = max(1, tails(r.choice([64, 128, 256, 384, 512])))
            p.BM, p.BK = r.choice([4, 8, 16, 32]), r.choice([32, 64, 128])
            p.TM, p.TN, p.ni, p.W = p.BM, p.BK, "k", p.BK
            p.Cp = -(-p.C // p.BK) * p.BK
        p.Rp = -(-p.R // p.BM) * p.BM
        p.inputs = [(f"x{i}", r.choice(["f32"] * 4 + ["bf16", "f16"])) for i in range(r.randint(1, 3))]
        p.vec = "w" if r.random() < 0.4 else None
        p.scalar = ("s", r.choice(CONSTS)) if r.random() < 0.4 else None
        p.stmts, self.vars, p.acc, self.no_let = [], [], None, False
        self.ops = r.randint(3, 10)
        if p.kind == "rowloop":
            mode = r.choice(["sum", "max"])
            self.no_let = True  # F sits in the first loop, the lets in the second
            f = self.tile(self.expr("f32", 3))
            self.no_let = False
            if mode == "sum" and f.bound * p.Cp > LIMIT:
                f = self.un("tanh", f)
            p.acc = N("acc", [f], "f32", "R", f.bound * (p.Cp if mode == "sum" else 1), "acc", mode)
            self.ops = r.randint(2, 6)
        self.fill()

    def fill(self, outs=None):  # lets, then the outputs [(name, element type or None: random)]
        p, r = self.p, self.rng
        for _ in range(r.choice([0, 0, 1, 2])):
            self.let()
        p.outputs = []
        for name, odt in outs or [(f"y{j}", None) for j in range(1 if r.random() < 0.75 else 2)]:
            odt = odt or r.choice(["f32"] * 3 + ["bf16", "f16"])
            self.ops = r.randint(2, 6)
            e = self.tile(self.expr(r.choice(["f32"] * 3 + ["bf16", "f16"]), 4))
            used = {id(n) for _, _, o in p.outputs for n in self.walk(o)} | {id(n) for n in self.walk(e)}
            for v in [p.acc] + [v for _, v in p.stmts]:  # every let and the accumulator reach an output
                if v is not None and id(v) not in used:
                    e = self.bin(r.choice(["add", "mul", "sub"]), e, self.cast(e.dt, v))
                    used |= {id(n) for n in self.walk(v)}
            p.outputs.append((name, odt, self.cast(odt, e)))

    def walk(self, n):
        yield n
        for a in n.args:
            yield from self.walk(a)

    # -- leaves
    def load(self, dt):
        p, r = self.p, self.rng
        names = [n for n, d in p.inputs if d == dt]
        if not names:
            return self.cast(dt, self.load("f32") if r.random() < 0.5 else self.load(r.choice(p.inputs)[1]))
        x = r.choice(names)
        return N("load", [], dt, "T", p.inb, f"load<{p.TM}, {p.TN}>({x}, m, {p.ni})", x)

    def leaf(self, dt):
        p, r = self.p, self.rng
        c = r.random()
        if c < 0.15 and p.vec:
            v = N("vec", [], "f32", "V", 2.0, f"load<1, {p.TN}>({p.vec}, {p.ni})", p.vec)
            return self.cast(dt, v)
        if c < 0.3 and self.vars:
            v = r.choice(self.vars)
            if v.dt == dt:
                return v
        if c < 0.4 and p.acc and dt == "f32":
            return p.acc
        return self.load(dt)

    def scal(self):
        p, r = self.p, self.rng
        if p.ranked and r.random() < 0.35:  # rank() or world_size() as a float
            k = r.choice(["rank", "world"])
            return N("rk", [], "f32", "S", 4.0, "float(rank())" if k == "rank" else "float(world_size())", k)
        if p.scalar and r.random() < 0.4:
            return N("scalar", [], "f32", "S", abs(p.scalar[1]), p.scalar[0], p.scalar[1])
        v = r.choice(CONSTS)
        return N("const", [], "f32", "S", abs(v), lit(v), v)

    # -- constructors: keep the bounds, spell the C++
    def cast(self, dt, a):
        if a.dt == dt:
            return a
        if dt == "f16" and a.bound > LIMIT:
            a = self.un("tanh", a)
        return N("cast", [a], dt, a.shape, a.bound, f"cast<{dt}>({a.code})")

    def un(self, op, a):
        b, c = a.bound, a.code
        if op == "exp":
            if b > 4:
                a = self.un("neg", self.un("abs", a))
                c = a.code
            return N("exp", [a], a.dt, a.shape, math.exp(min(b, 4)), f"exp({c})")
        if op == "log1p":  # log(1 + |a|): the argument stays >= 1
            one = N("add", [self.un("abs", a), N("const", [], "f32", "S", 1.0, "1.0f", 1.0)], a.dt, a.shape, b + 1,
                    f"(abs({c}) + 1.0f)")
            return N("log", [one], a.dt, a.shape, math.log1p(b), f"log({one.code})")
        if op == "sqrt":
            a = self.un("abs", a)
            return N("sqrt", [a], a.dt, a.shape, math.sqrt(b), f"sqrt({a.code})")
        if op == "rsqrt":
            one = N("add", [self.un("abs", a), N("const", [], "f32", "S", 1.0, "1.0f", 1.0)], a.dt, a.shape, b + 1,
                    f"(abs({c}) + 1.0f)")
            return N("rsqrt", [one], a.dt, a.shape, 1.0, f"rsqrt({one.code})")
        if op == "square":
            if b > 50:
                return self.un("tanh", a)
            return N("square", [a], a.dt, a.shape, b * b, f"pow({c}, 2.0f)")
        if op == "neg":
            return N("neg", [a], a.dt, a.shape, b, f"(-{c})")
        nb = {"abs": b, "tanh": 1.0, "sigmoid": 1.0, "silu": b, "gelu": b, "gelu_erf": b, "sin": 1.0, "cos": 1.0}[op]
        return N(op, [a], a.dt, a.shape, nb, f"{op}({c})")

    def bin(self, op, a, b):
        if a.shape == "S" and b.shape == "S":
            a = self.tile(a)
        sh = comb(a, b)
        dt = a.dt if a.shape != "S" else b.dt
        ba, bb = a.bound, b.bound
        if op == "div":  # by 1 + |b| (>= 1), or by a constant
            if b.shape != "S":
                b = N("add", [self.un("abs", b), N("const", [], "f32", "S", 1.0, "1.0f", 1.0)], b.dt, b.shape, bb + 1,
                      f"(1.0f + abs({b.code}))")
            elif b.op != "const" or abs(b.attr) < 0.5:
                b = N("const", [], "f32", "S", 2.0, "2.0f", 2.0)
            bound = ba / min(1.0, abs(b.attr) if b.shape == "S" else 1.0)
        else:
            bound = {"add": ba + bb, "sub": ba + bb, "mul": ba * bb, "max": max(ba, bb), "min": max(ba, bb)}[op]
        if bound > LIMIT:
            return self.bin("add", self.un("tanh", a) if a.shape != "S" else a, self.un("tanh", b) if b.shape != "S" else b)
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
        code = f"({a.code} {sym[op]} {b.code})" if op in sym else f"{op}({a.code}, {b.code})"
        return N(op, [a, b], dt, sh, bound, code)

    def tile(self, a):  # make a T-shaped node of a (adds a load where a is a row, a column or a scalar)
        if a.shape == "T":
            return a
        return self.bin("add", a, self.load(a.dt if a.shape != "S" else "f32"))

    def mask(self, dt):
        p, r = self.p, self.rng
        c = r.random()
        ri = N("rowi", [], "f32", "T", 1e9, f"row_index<{p.TM}, {p.TN}>(m)")
        ci = N("coli", [], "f32", "T", 1e9, f"col_index<{p.TM}, {p.TN}>({p.ni})")
        if c < 0.35:
            a = self.expr(dt, 1)
            b = self.expr(dt, 1) if r.random() < 0.5 else self.scal()
            if a.shape == "S":
                a = self.tile(a)
            op = r.choice(["<", "<=", ">", ">="])
            return N("cmp", [a, b], dt, comb(a, b), 1, f"({a.code} {op} {b.code})", op)
        if c < 0.55:
            op = r.choice(["<=", "<", ">="])
            k = r.choice([0, 0, 3, -5])
            rhs = ri if k == 0 else N("add", [ri, N("const", [], "f32", "S", k, lit(float(k)), float(k))], "f32", "T", 1e9,
                                      f"({ri.code} + {lit(float(k))})")
            return N("cmp", [ci, rhs], "f32", "T", 1, f"({ci.code} {op} {rhs.code})", op)
        if c < 0.7:
            lim = r.choice([0.25, 0.5, 0.75])
            u = N("uniform", [], "f32", "T", 1, f"uniform<{p.TM}, {p.TN}>({1000 + p.index}, m, {p.ni})", 1000 + p.index)
            return N("cmp", [u, N("const", [], "f32", "S", lim, lit(lim), lim)], "f32", "T", 1, f"({u.code} < {lit(lim)})", "<")
        if c < 0.85:
            x0 = p.inputs[0][0]
            size = N("size", [], "f32", "S", 1e9, f"{x0}.cols()", "cols")
            return N("cmp", [ci, size], "f32", "T", 1, f"({ci.code} < {size.code})", "<")
        a, b = self.mask(dt), self.mask(dt)
        return N("and", [a, b], "f32", comb(a, b), 1, f"({a.code} && {b.code})")

    # -- expressions: about self.ops operations in all
    def expr(self, dt, depth):
        r = self.rng
        if depth <= 0 or self.ops <= 0 or r.random() < 0.2:
            return self.leaf(dt)
        self.ops -= 1
        c = r.random()
        if c < 0.3:
            op = r.choice(["add", "sub", "mul", "div", "max", "min", "add", "mul"])
            a = self.expr(dt, depth - 1)
            b = self.scal() if r.random() < 0.3 else self.expr(dt, depth - 1)
            return self.bin(op, b, a) if r.random() < 0.3 and op != "div" else self.bin(op, a, b)
        if c < 0.46:
            return self.un(r.choice(UNARY), self.expr(dt, depth - 1))
        if c < 0.5:  # running sums along the tile's rows
            a = self.tile(self.expr(dt, depth - 1))
            if a.bound * self.p.W > LIMIT:
                a = self.un("tanh", a)
            return N("scan", [a], dt, "T", a.bound * self.p.W, f"cumsum({a.code})")
        if c < 0.62:
            m = self.mask(r.choice([dt, "f32"]))
            a = self.expr(dt, depth - 1)
            b = self.scal() if r.random() < 0.4 else self.expr(dt, depth - 1)
            if r.random() < 0.5:
                a, b = b, a
            if a.shape == "S" and b.shape == "S":
                a = self.tile(a)
            return N("where", [m, a, b], dt, comb(m, a, b), max(a.bound, b.bound), f"where({m.code}, {a.code}, {b.code})")
        if c < 0.74:
            a = self.tile(self.expr(dt, depth - 1))
            op, col = r.choice(["sum", "max", "min"]), r.random() < 0.25
            width = (self.p.TM if col else self.p.W) if op == "sum" else 1
            if a.bound * width > LIMIT:
                a = self.un("tanh", a)
            if col:  # a column reduction, as the docs spell it
                red = N("cred", [a], dt, "V", a.bound * width, f"transpose(row_{op}(transpose({a.code})))", op)
            else:
                red = N("red", [a], dt, "R", a.bound * width, f"row_{op}({a.code})", op)
            return red if r.random() < 0.3 else self.bin(r.choice(["add", "sub", "div", "mul"]), self.tile(self.expr(dt, depth - 1)), red)
        if c < 0.84:
            other = r.choice(["bf16", "f16"]) if dt == "f32" else "f32"
            return self.cast(dt, self.expr(other, depth - 1))
        if c < 0.92 and dt == "f32":  # a softmax over the tile's rows, sometimes masked first
            z = self.tile(self.expr(dt, depth - 1))
            if r.random() < 0.5:
                m = self.mask("f32")
                z = N("where", [m, z, N("const", [], "f32", "S", 1e30, "-1e30f", -1e30)], dt, "T", 1e30,
                      f"where({m.code}, {z.code}, -1e30f)")
            z = self.bind(z)
            mx = N("red", [z], dt, "R", z.bound, f"row_max({z.code})", "max")
            d = N("sub", [z, mx], dt, "T", 2 * z.bound, f"({z.code} - {mx.code})")
            e = self.bind(N("exp", [d], dt, "T", 1.0, f"exp({d.code})"))
            if r.random() < 0.5:
                return e
            s = N("red", [e], dt, "R", self.p.W, f"row_sum({e.code})", "sum")
            return N("div", [e, s], dt, "T", 1.0, f"({e.code} / {s.code})")
        if self.no_let:
            return self.un(r.choice(UNARY), self.expr(dt, depth - 1))
        return self.let(dt, depth - 1)

    def bind(self, node):  # auto tK = node; (text shared, not repeated), where lets may go
        if self.no_let or node.op in ("load", "var"):
            return node
        name = f"t{len(self.p.stmts)}"
        v = N("var", [node], node.dt, node.shape, node.bound, name)
        self.p.stmts.append((name, v))
        return v

    def let(self, dt=None, depth=2):  # a named value (auto tK = ...) or a range loop accumulating one
        r, p = self.rng, self.p
        dt = dt or r.choice(["f32", "f32", "bf16"])
        body = self.tile(self.expr(dt, depth))
        name = f"t{len(p.stmts)}"
        if r.random() < 0.35:
            mode, k = r.choice(["decay", "ramp"]), r.randint(1, 4)
            grow = 2.0 if mode == "decay" else k * (k - 1) / 2
            if body.bound * grow > LIMIT:
                body = self.un("tanh", body)
            node = N("loop", [body], dt, "T", body.bound * max(grow, 1), name, (mode, k))
        else:
            node = N("var", [body], dt, "T", body.bound, name)
        p.stmts.append((name, node))
        self.vars.append(node)
        return node


# ---------------------------------------------------------------------------------------------
# The reference: values and error bounds on the padded grid.

class Ev:
    def __init__(self, prog, bk, inputs, bounds=None):  # bounds: on inputs that carry an error
        self.p, self.bk, self.memo = prog, bk, {}
        R, C = prog.Rp, prog.Cp
        self.z = bk.full(R, C, 0.0)
        self.inp = {n: bk.pad(inputs[n], R, C) for n, _ in prog.inputs}
        self.err = {n: bk.pad(b, R, C) for n, b in (bounds or {}).items()}
        if prog.vec:
            self.inp[prog.vec] = bk.pad(inputs[prog.vec], R, C)

    def run(self):
        p = self.p
        return [tuple(self.bk.crop(x, p.R, p.C) for x in self.ev(node)) for _, _, node in p.outputs]

    def ev(self, n):
        k = id(n)
        if k not in self.memo:
            self.memo[k] = self._ev(n)
        return self.memo[k]

    def fin(self, dt, v, prop, rnd, exact):
        """The value rounded to dt and its bound: prop (from the operands) + rnd (this op in fp32);
        a 16-bit result of an exact op on exact operands is exact (the GPU rounds the same fp32)."""
        bk = self.bk
        if exact:  # an exact operation on exact operands whose result fp32 holds: no rounding (index math)
            rnd = rnd * (1.0 - bk.cmp("<=", prop, 0.0) * bk.cmp("==", bk.round(v, "f32"), v))
        if dt == "f32":
            return v, prop + rnd
        v = bk.round(v, dt)
        e = prop + rnd + REL16[dt] * abs(v) + TINY16[dt]
        return v, (bk.where(bk.cmp(">", prop, 0.0), e, self.z) if exact else e)

    def _ev(self, n):
        bk, p, z, op = self.bk, self.p, self.z, n.op
        R, C = p.Rp, p.Cp
        if op in ("load", "vec"):
            return self.inp[n.attr], self.err.get(n.attr, z)
        if op == "rk":
            return bk.full(R, C, p.rank if n.attr == "rank" else p.world), z
        if op in ("const", "scalar"):
            return bk.full(R, C, n.attr), z
        if op == "size":
            return bk.full(R, C, p.C if n.attr == "cols" else p.R), z
        if op in ("rowi", "coli"):
            return bk.iota(R, C, 0 if op == "rowi" else 1), z
        if op == "uniform":
            return bk.uniform(n.attr, R, C), z
        if op == "var":
            return self.ev(n.args[0])
        if op == "acc":  # sum or max of F over whole padded rows, accumulated in fp32
            v, e = self.ev(n.args[0])
            if n.attr == "max":
                return bk.segred(v, "max", C), bk.segred(e, "max", C)
            return bk.segred(v, "sum", C), bk.segred(e, "sum", C) + SUMERR(C) * bk.segred(abs(v), "sum", C)
        if op == "loop":
            body = self.ev(n.args[0])
            acc = (z, z)
            for i in range(n.attr[1]):
                if n.attr[0] == "decay":
                    acc = self.binop("add", self.binop("mul", acc, (bk.full(R, C, 0.5), z), n.dt), body, n.dt)
                else:
                    acc = self.binop("add", acc, self.binop("mul", body, (bk.full(R, C, float(i)), z), n.dt), n.dt)
            return acc
        if op == "cmp":  # a 0 / 1 mask; its "bound" is 1 where the comparison may go either way
            (a, ea), (b, eb) = self.ev(n.args[0]), self.ev(n.args[1])
            return bk.cmp(n.attr, a, b), bk.cmp("<=", abs(a - b), ea + eb) * bk.cmp(">", ea + eb, 0.0)
        if op == "and":
            (a, ea), (b, eb) = self.ev(n.args[0]), self.ev(n.args[1])
            return a * b, bk.maximum(ea, eb)
        if op == "where":
            (m, amb), (a, ea), (b, eb) = (self.ev(x) for x in n.args)
            v = bk.where(m, a, b)
            return v, bk.where(amb, abs(a - b) + bk.maximum(ea, eb), bk.where(m, ea, eb))
        if op == "cast":
            v, e = self.ev(n.args[0])
            return (v, e) if n.dt == "f32" else self.fin(n.dt, v, e, z, True)
        if op == "cred":  # a column reduction, transpose(row_sum(transpose(t))): runs of the tile's rows
            T = bk.T
            v, e = self.ev(n.args[0])
            v, e = self.red(n, T(v), T(e), p.TM)
            return T(v), T(e)
        if op == "scan":  # cumsum: bounded as the sum of the whole run
            v, e = self.ev(n.args[0])
            return self.fin(n.dt, bk.scan(v, p.W), bk.scan(e, p.W), SUMERR(p.W) * bk.segred(abs(v), "sum", p.W), False)
        if op == "red":
            v, e = self.ev(n.args[0])
            return self.red(n, v, e, p.W)
        if len(n.args) == 2:
            return self.binop(op, self.ev(n.args[0]), self.ev(n.args[1]), n.dt)
        return self.unop(op, self.ev(n.args[0]), n.dt)

    def red(self, n, v, e, W):  # a row reduction over runs of W columns
        bk = self.bk
        if n.attr == "sum":
            return self.fin(n.dt, bk.segred(v, "sum", W), bk.segred(e, "sum", W), SUMERR(W) * bk.segred(abs(v), "sum", W), False)
        return bk.segred(v, n.attr, W), bk.segred(e, "max", W)

    def binop(self, op, A, B, dt):
        bk = self.bk
        (a, ea), (b, eb) = A, B
        if op in ("add", "sub"):
            v = a + b if op == "add" else a - b
            return self.fin(dt, v, ea + eb, 2 * U * abs(v), True)
        if op == "mul":
            v = a * b
            return self.fin(dt, v, abs(a) * eb + abs(b) * ea + ea * eb, 2 * U * abs(v), True)
        if op == "div":  # tile / column goes by the reciprocal (2 ulp): allow 4
            v = a / b
            return self.fin(dt, v, (ea + abs(v) * eb) / (abs(b) - eb), 8 * U * abs(v), False)
        f = bk.maximum if op == "max" else bk.minimum
        return self.fin(dt, f(a, b), bk.maximum(ea, eb), self.z, True)

    def unop(self, op, A, dt):
        bk, z = self.bk, self.z
        a, ea = A
        if op == "neg":
            return self.fin(dt, -a, ea, z, True)
        if op == "abs":
            return self.fin(dt, abs(a), ea, z, True)
        if op == "exp":  # ex2.approx of x log2(e): the product's rounding grows with |x|
            v = bk.f("exp", a)
            return self.fin(dt, v, v * bk.f("expm1", bk.minimum(ea, 10.0)), v * (abs(a) + 8) * 2 * U + 2.0 ** -126, False)
        if op == "log":  # arguments are >= 1
            v = bk.f("log", a)
            return self.fin(dt, v, ea / (a - ea), 4 * U * abs(v) + 2 * U, False)
        if op == "sqrt":
            v = bk.f("sqrt", a)
            return self.fin(dt, v, bk.minimum(bk.f("sqrt", ea), ea / (2 * v + 1e-300)), 2 * U * v, False)
        if op == "rsqrt":  # arguments are >= 1: |d/dx| <= 1/2
            v = 1.0 / bk.f("sqrt", a)
            return self.fin(dt, v, 0.5 * ea, 4 * U * v, False)
        if op == "square":  # powf: a few ulp
            v = a * a
            return self.fin(dt, v, 2 * abs(a) * ea + ea * ea, 8 * U * v, False)
        if op in ("tanh", "sin", "cos"):
            v = bk.f(op, a)
            return self.fin(dt, v, ea, 4 * U * abs(v) + 2 * U, False)
        if op in ("sigmoid", "silu"):  # 1 / (1 + exp_ftz(-x)) by __fdividef
            s = 0.5 + 0.5 * bk.f("tanh", 0.5 * a)
            de = s * (1.0 - s) * (abs(a) + 8) * 2 * U  # exp's relative error, through d s / d log(exp)
            if op == "sigmoid":
                return self.fin(dt, s, 0.25 * ea, de + 4 * U * s + 2.0 ** -120, False)
            v = a * s
            return self.fin(dt, v, 1.1 * ea, abs(a) * de + 4 * U * abs(v) + 2.0 ** -120, False)
        if op == "gelu":
            v = 0.5 * a * (1.0 + bk.f("tanh", 0.7978845608 * (a + 0.044715 * a * a * a)))
        else:
            v = 0.5 * a * (1.0 + bk.f("erf", a * 0.7071067811865476))
        return self.fin(dt, v, 1.13 * ea, abs(a) * 8 * U + 4 * U * abs(v) + 2 * U, False)


def reference(prog, bk, inputs):
    """[(value, bound)] per output, each cropped to [R, C] (lists of rows or tensors)."""
    return Ev(prog, bk, inputs).run()


def py_inputs(prog, rng):
    """Inputs for the pure-Python reference: uniform in [-2, -0.1] u [0.1, 2], rounded to their type."""
    def val(dt):
        v = rng.uniform(0.1, 2.0) * rng.choice([-1, 1])
        return PyBackend.ROUND[dt](v)
    out = {n: [[val(dt) for _ in range(prog.C)] for _ in range(prog.R)] for n, dt in prog.inputs}
    if prog.vec:
        out[prog.vec] = [val("f32") for _ in range(prog.C)]
    return out


# ---------------------------------------------------------------------------------------------
# Multi-rank programs (--ranks): a collective between optional compute phases, tile traffic into
# peers (a ring or permutation store, row blocks stored into owners, store_add into owners), or
# rank-dependent element-wise math. Shapes follow the world size W (the host allocates them),
# each phase is a tile2d Program generated and evaluated as the single-rank ones are, with rank()
# and world_size() among its scalars; the reference evaluates every rank and moves the values.

OWNERS = [("next_rank()", lambda i, j, q, W: (q + 1) % W), ("prev_rank()", lambda i, j, q, W: (q - 1) % W),
          ("world_size() - 1 - rank()", lambda i, j, q, W: W - 1 - q), ("rank()", lambda i, j, q, W: q),
          ("0", lambda i, j, q, W: 0), ("(m / {BM}) % world_size()", lambda i, j, q, W: i % W),
          ("(m / {BM} + n / {BN}) % world_size()", lambda i, j, q, W: (i + j) % W)]  # the first 4 permute ranks
REDUCING = ("all_reduce", "reduce_scatter", "reduce")


class RProgram:
    def spec(self):
        ps = [f"{k}<{dt}, 2> {n}" for n, k, dt in self.params] + (["index root"] if self.root else [])
        body = []
        for item in self.body:
            body += item.loop_lines() if isinstance(item, Program) else ["  " + item]
        return ("#include <pk/spec.h>\nusing namespace pk;\n\n"
                f"// diff_fuzz.py --ranks --seed {self.seed} --only {self.index}: {self.kind}, [{self.R}, {self.C}]\n"
                f"PK_KERNEL void {self.name}({', '.join(ps)}) {{\n" + "\n".join(body) + "\n}\n")


class RGen:
    def __init__(self, seed, index):
        self.rng = r = random.Random(f"ranks:{seed}:{index}")
        p = self.p = RProgram()
        p.seed, p.index, p.name, p.root, p.pre, p.post = seed, index, f"rz_{seed}_{index}", False, None, None
        p.R, p.C = r.choice([1, 3, 17, 37, 45, 64, 100]), r.choice([1, 5, 33, 64, 100, 130, 200, 259])
        R, C, dt = p.R, p.C, r.choice(["f32"] * 3 + ["bf16"])
        p.group = r.choice(["coll"] * 5 + ["store", "add", "math"])
        p.params, p.inputs, p.shape, p.body = [], set(), {}, []
        if p.group == "coll":
            c = p.coll = r.choice(["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce"])
            p.op = r.choice(["Sum", "Sum", "Max", "Min"]) if c in REDUCING else None
            p.dims = r.choice([(0, 0), (1, 1), (0, 1), (1, 0)]) if c == "all_to_all" else \
                (r.choice([0, 1]),) * 2 if c in ("all_gather", "reduce_scatter") else (0, 0)
            p.inplace, (s, d) = p.dims[0] == p.dims[1] and r.random() < 0.3, p.dims
            one, wide = lambda W: (R, C), lambda d: lambda W: (R * W, C) if d == 0 else (R, C * W)
            p.shape["x"], p.shape["y"] = {"all_gather": (wide(s) if p.inplace else one, wide(s)), "reduce_scatter":
                                          (wide(s), one), "all_to_all": (wide(s), wide(d))}.get(c, (one, one))
            p.root = c in ("broadcast", "reduce")
            if r.random() < 0.5:  # a compute phase writes x from a local a
                p.pre = self.phase("a", r.choice(["f32", "bf16"]), "x", dt)
                p.shape["a"] = p.shape["x"]
                p.params.append(("a", "Tensor", p.pre.inputs[0][1]))
            p.params.append(("x", "Sym", dt))
            p.inputs.add("a" if p.pre else "x")
            y = "x" if p.inplace else "y"
            p.written = {"x", y} if p.pre else {y}
            if not p.inplace:
                p.params.append(("y", r.choice(["Sym", "Tensor"]), dt))
            d = f", {p.dims[0]}" if p.dims[0] or p.dims[1] else ""
            d = f", {p.dims[0]}, {p.dims[1]}" if c == "all_to_all" and d else d
            p.body.append(f"{c}({p.op + ', ' if p.op else ''}x, {y}{d}{', root' if p.root else ''});")
            p.kind = f"{c}{'(' + p.op + ')' if p.op else ''}{d.replace(', ', '/')}{' in place' if p.inplace else ''}"
            p.full = c != "reduce" and not (p.inplace and c == "reduce_scatter")  # every element specified
            if p.full and r.random() < 0.5:  # a compute phase reads the output
                p.post = self.phase(y, dt, "o", r.choice(["f32", "bf16"]), inb=(p.pre.outputs[0][2].bound if p.pre else 2.0) * 4)
            p.body = ([p.pre] if p.pre else []) + p.body
        else:
            p.inputs.add("x")
            p.shape["x"] = p.shape["y"] = lambda W: (R, C)
            f = p.f = self.phase("x", r.choice(["f32", "bf16"]), "y" if p.group == "math" else "y.on(OWN)", dt)
            p.params += [("x", r.choice(["Tensor", "Sym"]), f.inputs[0][1]), ("y", "Tensor" if p.group == "math" else "Sym", dt)]
            p.kind, p.offset, p.written = p.group, False, {"y"}
            if p.group != "math":
                p.owner = r.randrange(4 if p.group == "store" and r.random() < 0.6 else len(OWNERS))
                p.offset = p.group == "store" and p.owner >= 4
                text = OWNERS[p.owner][0].format(BM=f.BM, BN=f.BN)
                f.outputs[0] = (f"y.on({text})", dt, f.outputs[0][2])
                p.kind += f" {text}"
                if p.offset:  # row blocks a whole number of tiles apart, as docs/language.md says
                    Rp = -(-R // f.BM) * f.BM
                    f.row, p.shape["y"] = f"rank() * ((x.rows() + {f.BM - 1}) / {f.BM} * {f.BM}) + m", lambda W: (W * Rp, C)
                if p.group == "add":
                    f.store_op = "store_add"
                    z = f"tiles(y.rows(), y.cols(), {{{f.BM}, {f.BN}}})) store(y, zeros<{dt}, {f.BM}, {f.BN}>(), m, n);"
                    p.body.append("for (auto [m, n] : " + z)
            p.body.append(f)
            if not p.offset and r.random() < 0.5:
                p.post = self.phase("y", dt, "o", r.choice(["f32", "bf16"]), inb=f.outputs[0][2].bound * (4 if p.group == "add" else 1))
        if p.post:
            p.written.add("o")
            p.params.append(("o", "Tensor", p.post.outputs[0][1]))
            p.shape["o"] = p.shape[p.post.inputs[0][0]]
            p.body.append(p.post)

    def phase(self, x, xdt, y, ydt, inb=2.0):  # a tile loop over x's shape storing f(load(x)) into y
        r, ph = self.rng, Program()
        ph.seed, ph.index, ph.kind, ph.ranked, ph.inb = self.p.seed, self.p.index, "tile2d", True, inb
        ph.BM, ph.BN = r.choice([16, 32, 64, 16, 32, 48]), r.choice([16, 32, 64, 128, 32, 96])
        ph.TM, ph.TN, ph.ni, ph.W = ph.BM, ph.BN, "n", ph.BN
        ph.inputs, ph.vec, ph.scalar, ph.stmts, ph.acc = [(x, xdt)], None, None, [], None
        g = Gen.__new__(Gen)
        g.rng, g.p, g.vars, g.no_let, g.ops = r, ph, [], False, r.randint(2, 7)
        g.fill([(y, ydt)])
        return ph


def run_phase(ph, bk, shape, q, W, ins, bounds=None):  # (value, bound) on the phase's padded grid
    ph.R, ph.C, ph.rank, ph.world = shape[0], shape[1], q, W
    ph.Rp, ph.Cp = -(-ph.R // ph.BM) * ph.BM, -(-ph.C // ph.BN) * ph.BN
    return Ev(ph, bk, ins, bounds).ev(ph.outputs[0][2])


def combine(bk, op, xs, dt):  # op over ranks in fp32, then rounded to dt once
    if op != "Sum":
        f = bk.maximum if op == "Max" else bk.minimum
        v, e = xs[0]
        for a, b in xs[1:]:
            v, e = f(v, a), bk.maximum(e, b)
        return v, e
    v, e, mag = sum(a for a, _ in xs), sum(b for _, b in xs), sum(abs(a) for a, _ in xs)
    e = e + SUMERR(len(xs)) * mag
    if dt == "f32":
        return v, e
    v = bk.round(v, dt)
    return v, e + REL16[dt] * abs(v) + TINY16[dt]


def blocks(bk, a, d, W):
    r, c = bk.shape(a)
    return [bk.part(a, i * r // W, (i + 1) * r // W, 0, c) if d == 0 else bk.part(a, 0, r, i * c // W, (i + 1) * c // W)
            for i in range(W)]


def coll_ref(p, bk, xs, W, root):
    c, (s, d), dt = p.coll, p.dims, dict((n, t) for n, _, t in p.params)["x"]
    both = lambda f: tuple(f(k) for k in range(2))  # the same move of the values and of the bounds
    if p.inplace and c == "all_gather":  # chunk q of x is rank q's input
        xs = [both(lambda k: blocks(bk, xs[q][k], s, W)[q]) for q in range(W)]
    if c == "all_reduce":
        return [combine(bk, p.op, xs, dt)] * W
    if c == "broadcast":
        return [xs[root]] * W
    if c == "all_gather":
        return [both(lambda k: bk.cat([x[k] for x in xs], s))] * W
    if c == "all_to_all":
        return [both(lambda k: bk.cat([blocks(bk, x[k], s, W)[q] for x in xs], d)) for q in range(W)]
    shp = bk.shape(xs[0][0])
    care = lambda a, b, sh: (bk.full(*sh, 0.0), bk.full(*sh, math.inf)) if not a else b
    if c == "reduce":
        return [care(q == root, combine(bk, p.op, xs, dt), shp) for q in range(W)]
    out = [combine(bk, p.op, [both(lambda k: blocks(bk, x[k], s, W)[q]) for x in xs], dt) for q in range(W)]
    if not p.inplace:
        return out
    return [both(lambda k: bk.cat([care(i == q, out[q], bk.shape(out[q][0]))[k] for i in range(W)], s)) for q in range(W)]


def rank_reference(p, bk, ins, W, root):
    """Per rank, {tensor: (value, bound)} of every tensor the kernel writes, in its shape: a NaN
    value with bound 0 where nothing may be stored, bound inf where the result is unspecified."""
    sh = {n: f(W) for n, f in p.shape.items()}
    crop = lambda ve, n: tuple(bk.part(a, 0, sh[n][0], 0, sh[n][1]) for a in ve)
    out = [{} for _ in range(W)]
    if p.group == "coll":
        if p.pre:
            xs = [crop(run_phase(p.pre, bk, sh["x"], q, W, ins[q]), "x") for q in range(W)]
        else:
            xs = [(ins[q]["x"], bk.full(*sh["x"], 0.0)) for q in range(W)]
        for q, y in enumerate(coll_ref(p, bk, xs, W, root)):
            out[q] = {"x": xs[q]} if p.pre else {}  # the collective's input, as the first phase wrote it
            out[q]["x" if p.inplace else "y"] = y
    else:
        f, dt = p.f, p.params[1][2]
        fs = [run_phase(f, bk, sh["x"], q, W, ins[q]) for q in range(W)]
        if p.group == "math":
            out = [{"y": crop(v, "y")} for v in fs]
        for t in range(W if p.group != "math" else 0):
            own = OWNERS[p.owner][1]
            mask = [bk.arr([[float(own(i // f.BM, j // f.BN, q, W) == t) for j in range(f.Cp)] for i in range(f.Rp)])
                    for q in range(W)]
            if p.group == "add":  # every rank's tiles owned by t, added into t's zeroed y
                v = sum(bk.where(mask[q], fs[q][0], 0.0 * fs[q][0]) for q in range(W))
                mag = sum(bk.where(mask[q], abs(fs[q][0]), 0.0 * fs[q][0]) for q in range(W))
                e = sum(bk.where(mask[q], fs[q][1], 0.0 * fs[q][1]) for q in range(W)) + SUMERR(W + 1) * mag
                e = e if dt == "f32" else e + W * REL16[dt] * mag + TINY16[dt]  # each red.add rounds
                out[t]["y"] = crop((v, e), "x")
                continue
            nan, z = bk.full(f.Rp, f.Cp, math.nan), bk.full(f.Rp, f.Cp, 0.0)
            vs = [(bk.where(mask[q], fs[q][0], nan), bk.where(mask[q], fs[q][1], z)) for q in range(W)]
            if p.offset:  # rank q's block at rows q Rp
                out[t]["y"] = tuple(bk.cat([bk.part(v[k], 0, f.Rp, 0, p.C) for v in vs], 0) for k in range(2))
            else:  # one rank stores each tile
                v, e = vs[0]
                for q in range(1, W):
                    v, e = bk.where(mask[q], vs[q][0], v), bk.where(mask[q], vs[q][1], e)
                out[t]["y"] = crop((v, e), "y")
    if p.post:
        y = p.post.inputs[0][0]
        for q in range(W):
            v, e = out[q][y]
            out[q]["o"] = crop(run_phase(p.post, bk, sh[y], q, W, {y: v}, {y: e}), "o")
    return out


def rank_inputs(p, W, rng):
    val = lambda dt: PyBackend.ROUND[dt](rng.uniform(0.1, 2.0) * rng.choice([-1, 1]))
    dts = {n: dt for n, _, dt in p.params}
    return [{n: PyBackend().arr([[val(dts[n]) for _ in range(p.shape[n](W)[1])] for _ in range(p.shape[n](W)[0])])
             for n in p.inputs} for _ in range(W)]


def check_ref_ranks(p):
    """The pure-Python reference at W = 1..4: shapes as allocated, finite values and bounds (but
    where nothing may be stored or the result is unspecified), invariants of the collectives."""
    bk, loose, total = PyBackend(), 0, 0
    for W in (1, 2, 3, 4):
        rng = random.Random(f"in:{p.seed}:{p.index}:{W}")
        ins, root = rank_inputs(p, W, rng), p.index % W
        ref = rank_reference(p, bk, ins, W, root)
        for q in range(W):
            if set(ref[q]) != p.written:
                return f"W={W}: reference of {sorted(ref[q])}, kernel writes {sorted(p.written)}"
            for n, (v, e) in ref[q].items():
                if bk.shape(v) != p.shape[n](W) or bk.shape(e) != p.shape[n](W):
                    return f"W={W} {n}: reference {bk.shape(v)}, allocated {p.shape[n](W)}"
                for x, b in zip(v.d, e.d):
                    if math.isinf(b) or (math.isnan(x) and b == 0):
                        continue
                    if not (math.isfinite(x) and math.isfinite(b)):
                        return f"W={W} {n}: non-finite reference ({x}, bound {b})"
                    total += 1
                    loose += 2 * b > 0.05 * (abs(x) + 0.01)
        if p.group == "coll" and p.coll in ("all_reduce", "all_gather", "broadcast"):
            y = "x" if p.inplace else "y"
            if any(ref[q][y][0].d != ref[0][y][0].d for q in range(W)):
                return f"W={W}: {p.coll} differs between ranks"
        if p.group == "coll" and p.coll == "all_to_all" and not p.pre:  # a permutation of the inputs
            if sorted(v for q in range(W) for v in ref[q]["x" if p.inplace else "y"][0].d) != sorted(v for q in range(W) for v in ins[q]["x"].d):
                return f"W={W}: all_to_all is not a permutation of the inputs"
        if p.group == "store" and not p.offset and p.owner < 4:  # every element stored exactly once
            if any(math.isnan(v) for q in range(W) for v in ref[q]["y"][0].d):
                return f"W={W}: a permutation store leaves elements unstored"
    return f"loose {100.0 * loose / max(total, 1):.1f}%"


# ---------------------------------------------------------------------------------------------
# Modes.

def compile_one(pkc, prog, work):
    path = os.path.join(work, prog.name + ".pk.cpp")
    with open(path, "w") as f:
        f.write(prog.spec())
    try:
        r = subprocess.run([pkc, path, "--emit=cubin", "--arch=sm_90a", "-o", path[:-7] + ".cubin"],
                           capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return "bad", "timeout (180 s)", path
    msg = r.stderr.strip()
    if r.returncode == 0:
        return "ok", "", path
    if r.returncode == 1 and re.search(r":\d+:\d+: error:", msg) and "Assertion" not in msg and "LLVM ERROR" not in msg:
        return "error", msg, path
    return "bad", f"exit {r.returncode}: {msg[-2000:]}", path


def check_ref(prog):
    """The pure-Python reference on random inputs: finite values and bounds, and how many output
    elements have a bound past 5% of their size (where a test says little)."""
    ins = py_inputs(prog, random.Random(f"in:{prog.seed}:{prog.index}"))
    loose = total = 0
    for v, e in reference(prog, PyBackend(), ins):
        for x, b in zip(sum(v, []), sum(e, [])):
            if not (math.isfinite(x) and math.isfinite(b)):
                return f"non-finite reference ({x}, bound {b})"
            total += 1
            loose += 2 * b > 0.05 * (abs(x) + 0.01)
    return f"loose {100.0 * loose / total:.1f}%"


def programs(args):
    idx = [args.only] if args.only is not None else range(args.count)
    for i in idx:
        yield RGen(args.seed, i).p if args.ranks else Gen(args.seed, i).p


def mode_compile(args):
    out = args.out or tempfile.mkdtemp(prefix="diff-fuzz-")
    os.makedirs(out, exist_ok=True)
    counts, msgs = {}, {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for prog, (cls, msg, path) in zip(programs(args), ex.map(lambda p: compile_one(args.pkc, p, out), programs(args))):
            counts[cls] = counts.get(cls, 0) + 1
            line = f"{cls.upper():5} {path}"
            if cls != "ok":
                first = msg.splitlines()[0] if msg else ""
                key = re.sub(r"^.*?:\d+:\d+: ", "", first)
                msgs.setdefault((cls, key), []).append(path)
                line += "  " + first[:300]
            if args.check_ref and cls == "ok":
                line += "  [" + (check_ref_ranks if args.ranks else check_ref)(prog) + "]"
            print(line, flush=True)
    print("\n| class | programs |\n|---|---|")
    for k in ("ok", "error", "bad"):
        print(f"| {k} | {counts.get(k, 0)} |")
    if msgs:
        print("\nDistinct messages:")
        for (cls, key), paths in sorted(msgs.items()):
            print(f"  {cls} x{len(paths)}: {key[:300]}\n    e.g. {paths[0]}")
    return 1 if counts.get("bad") else 0


def mode_check_ref(args):
    for prog in programs(args):
        t = time.time()
        res = (check_ref_ranks if args.ranks else check_ref)(prog)
        print(f"{prog.name} {prog.kind} [{prog.R}, {prog.C}]: {res} ({time.time() - t:.1f} s)", flush=True)
    return 0


def mode_run(args):
    import torch
    import pk_torch
    TDT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    out = args.out or os.environ.get("OUT") or "diff-fuzz-out"
    os.makedirs(os.path.join(out, "failing"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="diff-fuzz-specs-")
    start, rows, dev = time.time(), [], "cuda"

    def rnd(shape, g, dt):
        u = torch.rand(shape, generator=g, device=dev, dtype=torch.float64)
        sign = (torch.rand(shape, generator=g, device=dev) < 0.5).double() * 2 - 1
        return ((0.1 + 1.9 * u) * sign).to(TDT[dt])

    def one(ctx, prog):
        k, path, why = compile_program(args, prog, work)
        if k is None:
            return "ERROR", why, path, None
        g = torch.Generator(device=dev).manual_seed(prog.seed * 1000003 + prog.index)
        ins = {n: rnd((prog.R, prog.C), g, dt) for n, dt in prog.inputs}
        if prog.vec:
            ins[prog.vec] = rnd((prog.C,), g, "f32")
        outs = [torch.full((prog.R, prog.C), float("nan"), device=dev, dtype=torch.float32).to(TDT[dt])
                for _, dt, _ in prog.outputs]
        call = [ins[n] for n, _ in prog.inputs] + ([ins[prog.vec]] if prog.vec else []) + outs
        call += [prog.scalar[1]] if prog.scalar else []
        k(ctx, *call)
        ctx.check_errors()
        torch.cuda.current_stream().synchronize()
        ref = reference(prog, TorchBackend(torch, dev), {n: t.double() for n, t in ins.items()})
        worst, nbad, detail = 0.0, 0, ""
        for (name, _, _), got, (v, e) in zip(prog.outputs, outs, ref):
            if not bool(torch.isfinite(v).all() & torch.isfinite(e).all()):
                return "ERROR", "reference not finite", path, None
            got = got.double()
            err = (got - v).abs()
            bad = ~(err <= 2 * e + ATOL)  # NaN (an element never stored) is bad too
            nb = int(bad.sum())
            worst = max(worst, float(torch.nan_to_num(err, nan=float("inf")).max()))
            if nb and not detail:
                i = int(bad.flatten().nonzero()[0])
                detail = (f"{name}: {nb} of {got.numel()} wrong, first at ({i // prog.C}, {i % prog.C}): "
                          f"got {got.flatten()[i].item():.6g}, want {v.flatten()[i].item():.6g} +- {2 * e.flatten()[i].item():.3g}")
            nbad += nb
        if nbad:
            base = os.path.join(out, "failing", prog.name)
            with open(base + ".pk.cpp", "w") as f:
                f.write(prog.spec())
            torch.save({"inputs": {n: t.cpu() for n, t in ins.items()}, "scalar": prog.scalar,
                        "outputs": [o.cpu() for o in outs], "want": [v.cpu() for v, _ in ref],
                        "bound": [e.cpu() for _, e in ref]}, base + ".pt")
            return "FAIL", f"max err {worst:.3g}; {detail}", path, base
        return "PASS", f"max err {worst:.3g}", path, None

    # A context holds the flag regions of at most 31 kernels: a fresh one every 24 programs.
    todo = list(programs(args))
    stopped = [False]

    def body(ctx, chunk):
        for prog in chunk:
            if time.time() - start > args.budget:
                if not stopped[0]:
                    print(f"budget of {args.budget} s spent: stopping before {prog.name}", flush=True)
                stopped[0] = True
                break
            try:
                cls, msg, path, _ = one(ctx, prog)
            except Exception as e:  # noqa: BLE001 - one program's exception must not stop the others
                cls, msg, path = "ERROR", f"{type(e).__name__}: {str(e)[:300]}", prog.name
            rows.append((prog, cls))
            print(f"{cls:5} {prog.kind:7} {msg}  {path}", flush=True)

    for i in range(0, len(todo), 24):
        if stopped[0]:
            break
        pk_torch.run_shared_gpu(1, lambda ctx, chunk=todo[i:i + 24]: body(ctx, chunk))
    print("\n| kind | PASS | FAIL | ERROR |\n|---|---|---|---|")
    for kind in ("tile2d", "rows", "rowloop", "all"):
        sel = [c for p, c in rows if kind in ("all", p.kind)]
        print(f"| {kind} | {sel.count('PASS')} | {sel.count('FAIL')} | {sel.count('ERROR')} |")
    print(f"failing specs and inputs: {os.path.join(out, 'failing')}" if any(c == "FAIL" for _, c in rows) else "")
    return 1 if any(c == "FAIL" for _, c in rows) else 0


def compile_program(args, prog, work):
    """Writes prog's spec under `work` and JIT-compiles it: (kernel, path, None), or (None, path, why)."""
    import pk_torch
    path = os.path.join(work, prog.name + ".pk.cpp")
    with open(path, "w") as f:
        f.write(prog.spec())
    try:
        return pk_torch.compile(path, pkc=args.pkc, kernel=prog.name), path, None
    except Exception as e:  # noqa: BLE001 - a compile failure is this program's ERROR
        return None, path, f"compile: {str(e).splitlines()[-1][:300] if str(e) else type(e).__name__}"


def mode_run_ranks(args):
    """Each program at W = 1..4 ranks sharing this GPU (pk_torch.run_shared_gpu): fresh inputs per
    rank, every written tensor poisoned with NaN, all ranks' results against rank_reference."""
    import torch
    import pk_torch
    TDT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    out = args.out or os.environ.get("OUT") or "diff-fuzz-out"
    os.makedirs(os.path.join(out, "failing"), exist_ok=True)
    work, start, rows, dev = tempfile.mkdtemp(prefix="diff-fuzz-specs-"), time.time(), [], "cuda"

    def one(k, prog, W):
        g = torch.Generator(device=dev).manual_seed((prog.seed * 1000003 + prog.index) * 8 + W)
        sh, root = {n: f(W) for n, f in prog.shape.items()}, prog.index % W
        dts = {n: dt for n, _, dt in prog.params}
        ins = [{n: ((0.1 + 1.9 * torch.rand(sh[n], generator=g, device=dev, dtype=torch.float64)) *
                    ((torch.rand(sh[n], generator=g, device=dev) < 0.5).double() * 2 - 1)).to(TDT[dts[n]])
                for n in sorted(prog.inputs)} for _ in range(W)]
        torch.cuda.synchronize()

        def body(ctx):
            q, ts = ctx.rank, []
            for n, kind, dt in prog.params:
                t = ctx.empty(list(sh[n]), TDT[dt]) if kind == "Sym" else torch.empty(sh[n], device=dev, dtype=TDT[dt])
                t.copy_(ins[q][n]) if n in prog.inputs else t.fill_(float("nan"))
                ts.append(t)
            torch.cuda.current_stream().synchronize()
            ctx.barrier()  # every rank's inputs are written before any kernel reads them
            k(ctx, *ts, *([root] if prog.root else []))
            ctx.check_errors()
            torch.cuda.current_stream().synchronize()
            ctx.barrier()
            return {n: t.clone() for (n, _, _), t in zip(prog.params, ts)}

        got = pk_torch.run_shared_gpu(W, body)
        ref = rank_reference(prog, TorchBackend(torch, dev), [{n: t.double() for n, t in x.items()} for x in ins], W, root)
        worst, nbad, detail = 0.0, 0, ""
        for q in range(W):
            for n, (v, e) in sorted(ref[q].items()):
                g64 = got[q][n].double()
                ok = (~torch.isinf(e) & torch.isfinite(v) & torch.isfinite(e)) | torch.isinf(e) | (torch.isnan(v) & (e == 0))
                if not bool(ok.all()):
                    return "ERROR", f"W={W}: reference not finite ({n})", None
                err = (g64 - v).abs()
                bad = ~((err <= 2 * e + ATOL) | torch.isinf(e) | (torch.isnan(v) & torch.isnan(g64)))
                nb = int(bad.sum())
                worst = max(worst, float(torch.nan_to_num(torch.where(torch.isinf(e) | torch.isnan(v), 0 * err, err), nan=float("inf")).max()))
                if nb and not detail:
                    i, C = int(bad.flatten().nonzero()[0]), sh[n][1]
                    detail = (f"W={W} rank {q} {n}: {nb} of {g64.numel()} wrong, first at ({i // C}, {i % C}): got "
                              f"{g64.flatten()[i].item():.6g}, want {v.flatten()[i].item():.6g} +- {2 * e.flatten()[i].item():.3g}")
                nbad += nb
        if nbad:
            base = os.path.join(out, "failing", f"{prog.name}_W{W}")
            with open(base + ".pk.cpp", "w") as f:
                f.write(prog.spec())
            torch.save({"root": root, "inputs": [{n: t.cpu() for n, t in x.items()} for x in ins],
                        "outputs": [{n: t.cpu() for n, t in x.items()} for x in got],
                        "want": [{n: v.cpu() for n, (v, _) in x.items()} for x in ref],
                        "bound": [{n: e.cpu() for n, (_, e) in x.items()} for x in ref]}, base + ".pt")
            return "FAIL", f"max err {worst:.3g}; {detail}", base
        return "PASS", f"W={W} max err {worst:.3g}", None

    for prog in programs(args):
        if time.time() - start > args.budget:
            print(f"budget of {args.budget} s spent: stopping before {prog.name}", flush=True)
            break
        k, path, why = compile_program(args, prog, work)
        if k is None:
            rows.append((prog, "ERROR"))
            print(f"ERROR {prog.kind}: {why}  {path}", flush=True)
            continue
        for W in (1, 2, 3, 4):
            try:
                cls, msg, _ = one(k, prog, W)
            except Exception as e:  # noqa: BLE001 - one launch's exception must not stop the others
                cls, msg = "ERROR", f"W={W}: {type(e).__name__}: {str(e)[:300]}"
            rows.append((prog, cls))
            print(f"{cls:5} {prog.kind}: {msg}  {path}", flush=True)
    print("\n| group | PASS | FAIL | ERROR |\n|---|---|---|---|")
    for grp in ("coll", "store", "add", "math", "all"):
        sel = [c for p, c in rows if grp in ("all", p.group)]
        print(f"| {grp} | {sel.count('PASS')} | {sel.count('FAIL')} | {sel.count('ERROR')} |")
    return 1 if any(c == "FAIL" for _, c in rows) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    m = ap.add_mutually_exclusive_group(required=True)
    m.add_argument("--compile-only", action="store_true", help="compile each spec with pkc and classify")
    m.add_argument("--check-ref", action="store_true", help="run the pure-Python reference on random inputs")
    m.add_argument("--run", action="store_true", help="compile, launch on the GPU (pk_torch) and compare")
    m.add_argument("--print", action="store_true", help="print the specs")
    ap.add_argument("--ranks", action="store_true", help="multi-rank programs, run at W = 1..4 ranks sharing one GPU")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--only", type=int, help="just program ONLY of the seed")
    ap.add_argument("--pkc", default=os.environ.get("PKC"))
    ap.add_argument("--out", help="output folder (--run: also $OUT; failing specs and inputs go to OUT/failing)")
    ap.add_argument("--jobs", type=int, default=2, help="pkc processes at once (--compile-only)")
    ap.add_argument("--budget", type=float, default=480, help="seconds (--run): stop starting programs after")
    ap.add_argument("--with-ref", dest="with_ref", action="store_true", help="--compile-only: also check the reference")
    args = ap.parse_args()
    if args.print:
        for prog in programs(args):
            print(prog.spec())
        return 0
    if args.check_ref:
        return mode_check_ref(args)
    if not args.pkc:
        ap.error("--pkc (or $PKC) is required")
    args.check_ref = args.with_ref
    return mode_compile(args) if args.compile_only else mode_run_ranks(args) if args.ranks else mode_run(args)


if __name__ == "__main__":
    sys.exit(main())
