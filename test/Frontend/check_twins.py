"""Every shipped X.mlir spec needs an X.pk.cpp twin lowering to the same device-level IR."""
import os
import re
import subprocess
import sys

DECISIONS = re.compile(r'pk\.decisions = \[(?:"(?:[^"\\]|\\.)*"(?:, )?)*\](?:, )?')
specs, pkc, scratch = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(scratch, exist_ok=True)
failures = []
mlirs = sorted(f for f in os.listdir(specs) if f.endswith(".mlir"))
for name in mlirs:
    stem = name[: -len(".mlir")]
    twin = os.path.join(specs, stem + ".pk.cpp")
    if not os.path.exists(twin):
        failures.append(f"{name}: no twin {stem}.pk.cpp")
        continue
    outs = []
    for src in (os.path.join(specs, name), twin):
        r = subprocess.run([pkc, src, "--emit=device-mlir"], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{src}: pkc failed:\n{r.stderr}")
        # Decisions quote the op's source location, which names each file: drop them.
        outs.append(DECISIONS.sub("", r.stdout))
    if outs[0] != outs[1]:
        failures.append(f"{name} and {stem}.pk.cpp lower to different IR")
if not mlirs:
    failures.append("no shipped .mlir specs found")
for f in failures:
    print(f)
print(f"checked {len(mlirs)} spec pairs")
sys.exit(1 if failures else 0)
