"""Structured mutation fuzzer for pkc (a developer tool, not part of CI).

Where mutate_specs.py (the lit test beside it) edits random tokens, this one makes the edits a
user makes: integer literals, tile extents and step lists, element types, tensor kinds and
ranks, swapped arguments, one spec.h call for another, dropped or repeated statements,
repeated collectives, nested loops, a missing brace. Seeds are single kernels cut out of every
`*.pk.cpp` under templates/specs and test/specs, and the `.mlir` specs under templates/specs.

Each mutant runs through pkc (mostly `--emit=cubin`, sometimes `--emit=device-mlir`,
`--explain` or `--roofline`) and gets a class:
  ok       pkc exited 0
  error    exit 1 with a `file:line:col: error:` message that names no internal op
  CRASH    a signal, another exit status, a stack dump, an assertion, UNREACHABLE, LLVM ERROR
  HANG     past the time limit
  BADMSG   an error without a location, one naming internal ops (`pk.tile.`, `'scf.`, `%12`),
           or an NVRTC / ptxas failure of a spec pkc accepted
Each distinct CRASH / HANG / BADMSG is minimised (lines deleted while the class and message
stay the same) and written to OUTDIR/findings/.

Usage: python3 test/Fuzz/fuzz_specs.py --pkc build/bin/pkc --out /tmp/fuzz --count 500 --seed 1
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ELEM_TYPES = ["bf16", "f16", "f32", "i32", "i64", "f8e4m3", "f8e5m2"]
INTS = ["0", "1", "-1", "3", "7", "17", "100", "4096", "1048576", "(1 << 20)",
        "9223372036854775807", "4294967296", "-4096"]
# spec.h calls of one arity and similar argument types, so a swap mostly still parses.
CALL_FAMILIES = [
    ["exp", "sqrt", "rsqrt", "log", "tanh", "sigmoid", "silu", "gelu", "gelu_erf", "sin", "cos",
     "abs", "row_sum", "row_max", "row_min", "cumsum", "transpose", "-"],
    ["max", "min"],
    ["all_reduce", "reduce_scatter"],
    ["all_gather", "all_to_all", "broadcast", "gather", "scatter"],
    ["reduce", "all_reduce"],
    ["load", "load_smem", "prim::load_peer"],
    ["store", "store_add", "store_rows"],
    ["load_rows", "claim"],
    ["mma", "mma_t"],
    ["rank", "world_size", "next_rank", "prev_rank"],
    ["rows", "cols", "size"],
    ["row_index", "col_index"],
    ["Sum", "Max", "Min"],
    ["prim::signal", "prim::wait"],
    ["prim::signal_all", "prim::barrier"],
    ["Ldst", "Tma", "Multimem"],
    ["Block", "Grid"],
]
KINDS = ["Tensor", "Sym", "Scratch"]
COLLECTIVE = re.compile(r"^\s*(pk::)?(all_reduce|reduce_scatter|all_gather|all_to_all|broadcast|"
                        r"reduce|gather|scatter)\(.*;\s*$")
INTERNAL = re.compile(r"\bpk\.(tile|comm|coll|sync|kernel|prim|tensor|sym|scalar|load|store|"
                      r"flag|return|launch|cast|seq)\b|'(scf|arith|func|memref|math|builtin)\.|"
                      r"\bscf\.(for|yield|if)\b|%[0-9]+\b|%arg[0-9]+")
LOCATED = re.compile(r"^[^\s:][^:]*:\d+:\d+: (fatal )?error: ", re.M)
CRASH_MARKS = ["Stack dump", "PLEASE submit", "Assertion", "UNREACHABLE", "LLVM ERROR",
               "Segmentation fault", "terminate called"]
NVRTC_MARKS = ["NVRTC", "nvrtc", "ptxas"]


# ---- seeds ----

def kernel_spans(text):
    """(start, end) of each top-level PK_KERNEL function, braces matched outside comments."""
    spans = []
    for m in re.finditer(r"^PK_KERNEL\b", text, re.M):
        i = text.find("{", m.end())
        depth, j = 0, i
        while j < len(text):
            c = text[j]
            if text.startswith("//", j):
                j = text.find("\n", j)
                if j < 0:
                    break
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    spans.append((m.start(), j + 1))
                    break
            j += 1
    return spans


def seeds():
    """(name, extension, text) for each single-kernel seed."""
    out = []
    for d in ("templates/specs", "test/specs"):
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            path = os.path.join(ROOT, d, f)
            if f.endswith(".mlir") and d == "templates/specs":
                out.append((f, ".mlir", open(path).read()))
            if not f.endswith(".pk.cpp"):
                continue
            text = open(path).read()
            spans = kernel_spans(text)
            for k, (s, e) in enumerate(spans):
                # Keep the prelude (includes, usings, helpers) and this one kernel.
                prelude = text[:spans[0][0]]
                out.append((f"{f}#{k}", ".pk.cpp", prelude + text[s:e] + "\n"))
    return out


def pass_test_seeds():
    """The pass tests' .mlir cases (split at `// -----`): IR the spec-level pipeline does not
    expect (device-level ops, attributes the passes set), which pkc must refuse cleanly."""
    out = []
    d = os.path.join(ROOT, "test", "Passes")
    for f in sorted(os.listdir(d)):
        if f.endswith(".mlir"):
            text = open(os.path.join(d, f)).read()
            for k, case in enumerate(text.split("// -----")):
                case = "\n".join(l for l in case.split("\n") if not l.lstrip().startswith("//"))
                if "pk.kernel" in case:
                    out.append((f"{f}#{k}", ".mlir", case))
    return out


# ---- mutations ----

def body_range(text):
    """Offsets of the first kernel's body (between its outer braces), or the whole text."""
    spans = kernel_spans(text)
    if not spans:
        return 0, len(text)
    s, e = spans[0]
    return text.find("{", s) + 1, e - 1


def replace_match(text, matches, rng, new_fn):
    if not matches:
        return None
    m = rng.choice(matches)
    new = new_fn(m)
    return None if new is None else text[:m.start()] + new + text[m.end():]


def m_int(text, rng):
    ms = [m for m in re.finditer(r"(?<![\w.])\d+(?![\w.])", text)]
    return replace_match(text, ms, rng, lambda m: rng.choice(INTS))


def m_float(text, rng):
    ms = list(re.finditer(r"(?<![\w.])\d+\.\d*(e[-+]?\d+)?f\b|(?<![\w.])\d+e[-+]?\d+f\b", text))
    return replace_match(text, ms, rng, lambda m: rng.choice(
        ["0.0f", "-0.0f", "1e39f", "-1e30f", "1e-45f", "3.0f", "448.0f", "65504.0f"]))


def change_list(items, rng):
    items = list(items)
    op = rng.randrange(4)
    if op == 0 and items:
        items[rng.randrange(len(items))] = rng.choice(INTS + ["16", "64", "128", "256", "2", "5"])
    elif op == 1 and len(items) > 1:
        del items[rng.randrange(len(items))]
    elif op == 2:
        items.insert(rng.randrange(len(items) + 1), rng.choice(["1", "16", "64", "3"]))
    elif items:
        rng.shuffle(items)
    return items


def m_extents(text, rng):
    ms = list(re.finditer(r"\b(load|load_smem|zeros|load_rows|row_index|col_index|histogram|"
                          r"load_peer|reduce|all_reduce)<([^<>;()]*)>", text))

    def new(m):
        parts = [p.strip() for p in m.group(2).split(",")]
        head = [p for p in parts if p in ELEM_TYPES]
        nums = [p for p in parts if p not in ELEM_TYPES]
        return f"{m.group(1)}<{', '.join(head + change_list(nums, rng))}>"
    return replace_match(text, ms, rng, new)


def m_steps(text, rng):
    ms = list(re.finditer(r"\{([-\d\s,()<]+)\}", text))
    return replace_match(text, ms, rng, lambda m: "{" + ", ".join(
        change_list([p.strip() for p in m.group(1).split(",") if p.strip()], rng)) + "}")


def m_elem(text, rng):
    ms = list(re.finditer(r"\b(" + "|".join(ELEM_TYPES) + r")\b", text))
    return replace_match(text, ms, rng, lambda m: rng.choice(ELEM_TYPES))


def m_kind(text, rng):
    ms = list(re.finditer(r"\b(Tensor|Sym|Scratch)<", text))
    return replace_match(text, ms, rng, lambda m: rng.choice(KINDS) + "<")


def m_rank(text, rng):
    ms = list(re.finditer(r"\b(Tensor|Sym|Scratch)<(\w+), (\d+)>", text))
    return replace_match(text, ms, rng, lambda m: f"{m.group(1)}<{m.group(2)}, "
                         f"{rng.choice(['0', '1', '2', '3', '4', '5', '6'])}>")


def params(text):
    return re.findall(r"(?:Tensor|Sym|Scratch)<[^>]*>\s+(\w+)", text)


def m_swap_args(text, rng):
    """Two tensor parameters swapped where one of them is used, or one renamed to another."""
    names = params(text)
    if len(names) < 2:
        return None
    a, b = rng.sample(names, 2)
    lo, hi = body_range(text)
    body = text[lo:hi]
    if rng.random() < 0.5:
        body = re.sub(rf"\b{a}\b", b, body, count=1)
    else:
        body = re.sub(rf"\b({a}|{b})\b", lambda m: b if m.group(1) == a else a, body)
    return text[:lo] + body + text[hi:]


def statement_lines(text):
    lo, hi = body_range(text)
    lines = text.split("\n")
    out, pos = [], 0
    for i, line in enumerate(lines):
        if lo <= pos < hi and line.strip() and not line.strip().startswith("//"):
            out.append(i)
        pos += len(line) + 1
    return lines, out


def m_drop_line(text, rng):
    lines, idx = statement_lines(text)
    if not idx:
        return None
    del lines[rng.choice(idx)]
    return "\n".join(lines)


def m_dup_line(text, rng):
    lines, idx = statement_lines(text)
    idx = [i for i in idx if lines[i].rstrip().endswith(";")]
    if not idx:
        return None
    i = rng.choice(idx)
    lines.insert(i, lines[i])
    return "\n".join(lines)


def m_dup_collective(text, rng):
    lines = text.split("\n")
    idx = [i for i, l in enumerate(lines) if COLLECTIVE.match(l)]
    if not idx:
        return None
    i = rng.choice(idx)
    lines.insert(i + rng.choice([0, 1]), lines[i])
    return "\n".join(lines)


def m_call(text, rng):
    fam = rng.choice(CALL_FAMILIES)
    names = "|".join(re.escape(n) for n in fam if n != "-")
    ms = list(re.finditer(rf"(?<![\w.:])({names})(?=[(<])|(?<=\.)(rows|cols|size)(?=\()|"
                          rf"(?<![\w])({names})(?=[,)])", text))
    ms = [m for m in ms if m.group(0) in fam]
    return replace_match(text, ms, rng, lambda m: rng.choice([n for n in fam if n != "-"] or ["-"]))


def m_nest(text, rng):
    """A statement wrapped in a range loop or a tile loop."""
    lines, idx = statement_lines(text)
    if not idx:
        return None
    i = rng.choice(idx)
    names = params(text) or ["x"]
    t = rng.choice(names)
    head = rng.choice([f"for (auto kk : range(0, {rng.choice(['2', '4', '0', '4000', t + '.size()'])}, "
                       f"{rng.choice(['1', '3', '16'])}))",
                       f"for (auto kk : tiles({t}.size(), {{16}}))",
                       f"for (auto [kk, jj] : tiles({t}.rows(), {t}.cols(), {{16, 64}}))"])
    lines.insert(i, head + " {")
    lines.insert(i + 2, "}")
    return "\n".join(lines)


def m_brace(text, rng):
    ms = list(re.finditer(r"[{}]", text))
    return replace_match(text, ms, rng, lambda m: rng.choice(["", m.group(0) * 2]))


def m_peer(text, rng):
    ms = list(re.finditer(r"\.on\(([^()]*(\([^()]*\))?[^()]*)\)", text))
    return replace_match(text, ms, rng, lambda m: ".on(" + rng.choice(
        ["rank()", "world_size()", "-1", "rank() + 5", "next_rank()", "0", "m", "(rank() + 1) % 3"]) + ")")


def m_dim(text, rng):
    ms = list(re.finditer(r"\bdim\((-?\d+)\)", text))
    return replace_match(text, ms, rng, lambda m: f"dim({rng.choice(['-1', '0', '3', '4', '5'])})")


def m_token(text, rng):
    """The old fuzzer's edit: one token deleted, duplicated or replaced by another of the file."""
    toks = list(re.finditer(r"[A-Za-z_][A-Za-z0-9_.]*|%[A-Za-z0-9_]+|\d+|::|->|\S", text))
    m = rng.choice(toks)
    op = rng.randrange(3)
    new = "" if op == 0 else m.group(0) * 2 if op == 1 else rng.choice(toks).group(0)
    return text[:m.start()] + new + text[m.end():]


def m_mlir_shape(text, rng):
    ms = list(re.finditer(r"<([?\dx]+)x(\w+)>", text))
    return replace_match(text, ms, rng, lambda m: "<" + rng.choice(
        ["?", "?x?", "4x?", "0", "?x?x?x?x?x?", "17x5"]) + "x" + rng.choice(ELEM_TYPES + [m.group(2)]) + ">")


def m_mlir_kind(text, rng):
    ms = list(re.finditer(r"<(sum|max|min)>", text))
    return replace_match(text, ms, rng, lambda m: "<" + rng.choice(["sum", "max", "min", "prod"]) + ">")


CPP_MUTATORS = [(m_int, 6), (m_float, 2), (m_extents, 6), (m_steps, 4), (m_elem, 5), (m_kind, 3),
                (m_rank, 3), (m_swap_args, 4), (m_drop_line, 4), (m_dup_line, 3),
                (m_dup_collective, 2), (m_call, 6), (m_nest, 3), (m_brace, 1), (m_peer, 2),
                (m_dim, 2), (m_token, 2)]
MLIR_MUTATORS = [(m_int, 3), (m_elem, 4), (m_drop_line, 3), (m_dup_line, 3), (m_token, 4),
                 (m_mlir_shape, 4), (m_mlir_kind, 2), (m_swap_args, 1)]


def mutate(text, ext, rng):
    table = MLIR_MUTATORS if ext == ".mlir" else CPP_MUTATORS
    fns, weights = zip(*table)
    applied, want = [], rng.choice([1, 1, 1, 2, 2, 3, 5])
    for _ in range(10 * want):  # a mutator finds nothing to edit in some seeds: try another
        if len(applied) == want:
            break
        fn = rng.choices(fns, weights)[0]
        new = fn(text, rng)
        if new is not None and new != text:
            text = new
            applied.append(fn.__name__)
    return text, applied


# ---- running and classifying ----

def pick_mode(rng, ext):
    r = rng.random()
    if r < 0.6:
        return ["--emit=cubin"]
    if r < 0.72:
        return ["--emit=device-mlir"]
    if r < 0.82:
        return ["--explain", "--emit=cuda"]
    if r < 0.9 and ext != ".mlir":
        return ["--templates=false", "--emit=cubin"]
    if r < 0.93:
        return ["--world-size=" + rng.choice(["1", "3", "8", "17"]), "--emit=cubin"]
    if r < 0.97:
        # The pipeline's knobs: batching, block shape, ring depth, collective thresholds.
        if rng.random() < 0.2:
            return ["--emit=launcher-impl"]
        return [rng.choice(["--tile-batch=8", "--tile-threads=1024", "--tile-stages=4",
                            "--push-max-bytes=0", "--copy-engine-min-bytes=0", "--ll-max-bytes=0",
                            "--allow-multicast"]), "--emit=cubin"]
    return ["--roofline", "--shape=" + rng.choice(["0:4096x4096,1:4096x4096", "0:1x1", "0:0", "2:7x3x5"])]


def classify(rc, out, ext, mode):
    """(class, key): key names the distinct bug (the message without locations and numbers)."""
    if rc == "timeout":
        return "HANG", "timeout " + " ".join(mode)
    for mark in CRASH_MARKS:
        if mark in out:
            line = next(l for l in out.splitlines() if mark in l)
            return "CRASH", re.sub(r"\d+", "N", line.strip())[:160]
    if rc < 0 or rc not in (0, 1):
        return "CRASH", f"exit status {rc}"
    if rc == 0:
        return "ok", ""
    errs = [l for l in out.splitlines() if "error:" in l]
    if not errs:
        return "BADMSG", "exit 1 without an error line"
    first = errs[0]
    msg = re.sub(r"^.*?error: ", "", first)
    norm = re.sub(r"\d+", "N", msg)[:160]
    if any(mk in out for mk in NVRTC_MARKS):
        return "BADMSG", "nvrtc: " + norm
    if not LOCATED.match(first):
        return "BADMSG", "no location: " + norm
    if ext != ".mlir" and INTERNAL.search("\n".join(l for l in out.splitlines() if "error:" in l or "note:" in l)):
        return "BADMSG", "internal name: " + norm
    return "error", norm


def run_pkc(pkc, path, mode, timeout):
    cmd = [pkc, path] + mode + ["-o", path + ".out"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, errors="replace")
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def outcome(pkc, path, text, ext, mode, timeout):
    with open(path, "w") as f:
        f.write(text)
    rc, out = run_pkc(pkc, path, mode, timeout)
    return classify(rc, out, ext, mode) + (out,)


def minimise(pkc, path, text, ext, mode, want, timeout):
    """Deletes lines (then single tokens of the remaining lines) while the class and key hold."""
    def same(t):
        c, k, _ = outcome(pkc, path, t, ext, mode, timeout)
        return (c, k) == want
    lines = text.split("\n")
    changed = True
    while changed:
        changed = False
        for i in range(len(lines) - 1, -1, -1):
            trial = lines[:i] + lines[i + 1:]
            if same("\n".join(trial)):
                lines, changed = trial, True
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pkc", default=os.path.join(ROOT, "build/bin/pkc"))
    ap.add_argument("--out", default="/tmp/pk-fuzz")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--no-minimise", action="store_true")
    ap.add_argument("--pass-tests", action="store_true",
                    help="also mutate the .mlir cases of test/Passes (device-level IR)")
    args = ap.parse_args()
    os.makedirs(os.path.join(args.out, "work"), exist_ok=True)
    os.makedirs(os.path.join(args.out, "findings"), exist_ok=True)
    pool = seeds() + (pass_test_seeds() if args.pass_tests else [])
    rng = random.Random(args.seed)
    jobs = []
    for n in range(args.count):
        name, ext, text = rng.choice(pool)
        mutant, applied = mutate(text, ext, rng)
        jobs.append((n, name, ext, mutant, applied, pick_mode(rng, ext)))

    counts, seen, lock = {}, {}, threading.Lock()
    log = open(os.path.join(args.out, f"log-{args.seed}.jsonl"), "a")

    def work(job):
        n, name, ext, mutant, applied, mode = job
        path = os.path.join(args.out, "work", f"s{args.seed}-m{n}{ext}")
        t0 = time.time()
        cls, key, out = outcome(args.pkc, path, mutant, ext, mode, args.timeout)
        with lock:
            counts[cls] = counts.get(cls, 0) + 1
            log.write(json.dumps({"n": n, "seed": name, "edits": applied, "mode": mode, "class": cls,
                                  "key": key, "s": round(time.time() - t0, 1)}) + "\n")
            log.flush()
            fresh = cls not in ("ok", "error") and (cls, key) not in seen
            if fresh:
                seen[(cls, key)] = path
        if fresh:
            # A hang costs the whole time limit per trial: keep it as found.
            small = mutant if args.no_minimise or cls == "HANG" else minimise(args.pkc, path + ".min" + ext, mutant, ext,
                                                             mode, (cls, key), args.timeout)
            base = os.path.join(args.out, "findings", f"{cls}-s{args.seed}-m{n}")
            with open(base + ext, "w") as f:
                f.write(small)
            _, _, out2 = outcome(args.pkc, path + ".min" + ext, small, ext, mode, args.timeout)
            with open(base + ".txt", "w") as f:
                f.write(f"seed: {name}\nedits: {applied}\nmode: {' '.join(mode)}\nkey: {key}\n\n{out2[-4000:]}")
            print(f"{cls}: {key}\n  {base}{ext} (from {name}, {' '.join(mode)})", flush=True)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        list(ex.map(work, jobs))
    print(f"{args.count} mutants (seed {args.seed}): " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
