"""Runs pkc on every hostile input (the corpus plus inputs generated here) and checks that
each ends with a diagnostic and a non-zero exit: no crash (signal), no hang, no output."""
import os
import random
import shutil
import subprocess
import sys

pkc, corpus, scratch = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
gen = os.path.join(scratch, "generated")
os.makedirs(gen)


def write(name, data):
    path = os.path.join(gen, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


inputs = sorted(os.path.join(corpus, f) for f in os.listdir(corpus))
rng = random.Random(4)
inputs += [
    write("empty.pk.cpp", b""),
    write("binary.pk.cpp", bytes(rng.randrange(256) for _ in range(65536))),
    write("all-nul.pk.cpp", b"\0" * 4096),
    # Tens of megabytes: mostly comments, then declarations, then an error at the end.
    write("huge.pk.cpp", b"// padding padding padding padding padding padding padding\n" * 400000
          + b"#include <pk/spec.h>\n"
          + b"".join(b"static const long c%d = %d;\n" % (i, i) for i in range(100000))
          + b"PK_KERNEL void k(pk::Sym<pk::f32, 1> x) { undefined_here(x); }\n"),
    write("huge-kernel-body.pk.cpp", b"#include <pk/spec.h>\nusing namespace pk;\n"
          b"PK_KERNEL void k(Sym<f32, 1> x) {\n" + b"  auto n = x.size() * 2;\n" * 50000
          + b"  while (1) {}\n}\n"),
    os.path.join(gen, "missing.pk.cpp"),
]
directory = os.path.join(gen, "a-directory.pk.cpp")
os.makedirs(directory)
inputs.append(directory)

failures = []
for i, path in enumerate(inputs):
    outdir = os.path.join(scratch, "out%d" % i)
    os.makedirs(outdir)
    out = os.path.join(outdir, "x.cu")
    try:
        # A 5 s parse limit (20 s by default) keeps the runaway inputs' share of the run small.
        r = subprocess.run(["timeout", "-s", "KILL", "60", pkc, path, "--emit=cuda", "--parse-seconds=5",
                            "-o", out],
                           capture_output=True, timeout=90)
    except subprocess.TimeoutExpired:
        failures.append(f"{path}: hang")
        continue
    err = r.stderr.decode("utf-8", "replace")
    name = os.path.basename(path)
    if r.returncode == 0:
        failures.append(f"{name}: exit 0")
    elif r.returncode < 0 or r.returncode >= 124:
        failures.append(f"{name}: crash or hang (exit {r.returncode})\n{err[-2000:]}")
    if "error" not in err:
        failures.append(f"{name}: no diagnostic on stderr")
    # Exponential macro expansion never finishes: it must end at the parse's time limit.
    if name.startswith("macro-blowup") and "parsing took longer than 5 s" not in err:
        failures.append(f"{name}: not stopped at the parse's time limit\n{err[-2000:]}")
    if os.listdir(outdir):
        failures.append(f"{name}: left files behind: {os.listdir(outdir)}")
for f in failures:
    print("FAIL:", f)
print(f"{len(inputs)} hostile inputs, {len(failures)} failures")
sys.exit(1 if failures or len(inputs) < 50 else 0)
