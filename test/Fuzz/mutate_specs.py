"""Mutation fuzzer for pkc: random small edits of the shipped specs and the lit inputs.

Each mutant gets one to three edits (delete, duplicate or swap tokens; change a number, an
element type, a reduction kind, an operand). pkc must never crash or hang on a mutant; a mutant
it rejects must say why with an `error:` line; a mutant it accepts must also compile to an
sm_90a cubin. Usage: mutate_specs.py PKC OUTDIR COUNT SEED FILE_OR_DIR... (a directory
stands for its .mlir and .cpp files).
"""
import os
import random
import re
import subprocess
import sys

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|%[A-Za-z0-9_]+|\d+|<<|>>|::|->|\S")
NUMBERS = ["0", "1", "2", "3", "7", "16", "63", "64", "127", "128", "255", "256", "4096",
           "1099511627776"]
SWAPS = [["bf16", "f16", "f32", "f8e4m3", "f8e5m2"], ["Sum", "Max", "Min"], ["sum", "max", "min"],
         ["Tensor", "Sym", "Scratch"], ["!pk.tensor", "!pk.sym"], ["mma", "mma_t"],
         ["load", "load_smem"], ["store", "store_add"], ["rows", "cols"],
         ["all_reduce", "reduce_scatter", "all_gather", "all_to_all"],
         ["divui", "remui", "addi", "muli"], ["transpose_b", "transpose_a"]]


def tokens(text):
    return [(m.start(), m.end()) for m in TOKEN.finditer(text)]


def mutate(text, rng):
    for _ in range(rng.randint(1, 3)):
        toks = tokens(text)
        if not toks:
            return text
        i = rng.randrange(len(toks))
        s, e = toks[i]
        tok = text[s:e]
        kind = rng.randrange(6)
        if kind == 0:      # delete
            new = ""
        elif kind == 1:    # duplicate
            new = tok + " " + tok
        elif kind == 2 and i + 1 < len(toks):  # swap with the next token
            s2, e2 = toks[i + 1]
            text = text[:s] + text[s2:e2] + text[e:s2] + tok + text[e2:]
            continue
        elif kind == 3 and tok.isdigit():
            new = rng.choice(NUMBERS)
        elif kind == 4:    # a same-family word
            family = next((f for f in SWAPS if tok in f), None)
            new = rng.choice(family) if family else tok
        else:              # another identifier or value name of the file
            names = [text[a:b] for a, b in toks if text[a] in "%_" or text[a].isalpha()]
            new = rng.choice(names) if names else tok
        text = text[:s] + new + text[e:]
    return text


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def main():
    pkc, outdir, count, seed, files = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
    os.makedirs(outdir, exist_ok=True)
    rng = random.Random(seed)
    paths = []
    for f in files:
        if os.path.isdir(f):
            paths += sorted(os.path.join(f, n) for n in os.listdir(f) if n.endswith((".mlir", ".cpp")))
        else:
            paths.append(f)
    sources = [(f, open(f).read()) for f in paths]
    counts = {"accepted": 0, "rejected": 0}
    failures = []
    for n in range(count):
        path, text = rng.choice(sources)
        ext = ".mlir" if path.endswith(".mlir") else ".pk.cpp"
        mutant = os.path.join(outdir, f"m{n}{ext}")
        with open(mutant, "w") as f:
            f.write(mutate(text, rng))
        what = f"mutant {n} of {os.path.basename(path)} ({mutant})"
        rc, out = run([pkc, mutant, "-o", mutant + ".cu"], 60)
        crashed = rc == "timeout" or (isinstance(rc, int) and (rc < 0 or rc > 1)) or \
            "PLEASE submit a bug report" in out or "LLVM ERROR" in out or "Assertion" in out
        if crashed:
            failures.append(f"{what}: pkc crashed or hung (status {rc}):\n{out[-2000:]}")
        elif rc == 1:
            counts["rejected"] += 1
            if "error:" not in out:
                failures.append(f"{what}: rejected without an error message:\n{out[-2000:]}")
        else:
            counts["accepted"] += 1
            rc2, out2 = run([pkc, mutant, "--emit=cubin", "--arch=sm_90a", "-o", mutant + ".cubin"], 300)
            if rc2 != 0:
                failures.append(f"{what}: accepted, but its cubin failed (status {rc2}):\n{out2[-2000:]}")
    print(f"{count} mutants (seed {seed}): {counts['accepted']} accepted and compiled to cubins "
          f"checked, {counts['rejected']} rejected with an error, {len(failures)} failures")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
