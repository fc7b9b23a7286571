#!/usr/bin/env bash
# Diagnostic GPU round for the fused GEMMs at 8192^3: are they slower than the GEMM alone
# because the GPUs clock down (power) while the links are busy? Builds pk-bench-gemm, runs it
# for M = 8192 with PK_GEMM_SOAK=<n> (each job also n times back to back, with wall-clock
# stamps) while nvidia-smi samples SM clock and power every 20 ms, and prints each job's mean
# clock and power per GPU. Usage (GPU machine, after the pkc carry): scripts/gemm_soak.sh [n]
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_env.sh"
N="${1:-300}"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DPKC_BUILD_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc "${NCCL_ARGS[@]}" >"$OUT/configure.log" 2>&1 &&
  cmake --build "$BUILD" -j "$(nproc)" --target pk-bench-gemm >"$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }

nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw.instant,clocks_event_reasons.active \
  --format=csv,noheader,nounits -lms 20 >"$OUT/smi.csv" 2>&1 &
SMI=$!
sleep 1
PK_BENCH_M=8192 PK_GEMM_SOAK="$N" timeout 300 "$BUILD/tools/bench-gemm/pk-bench-gemm" \
  "$OUT/gemm.md" >"$OUT/bench-gemm.log" 2>"$OUT/soak.log"
RC=$?
sleep 0.5
kill $SMI 2>/dev/null
cat "$OUT/gemm.md" 2>/dev/null || tail -20 "$OUT/bench-gemm.log"
python3 - "$OUT/smi.csv" "$OUT/soak.log" <<'EOF'
import sys, datetime
samples = []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(',')]
    if len(f) < 5:
        continue
    try:
        t = datetime.datetime.strptime(f[0], '%Y/%m/%d %H:%M:%S.%f').timestamp()
        samples.append((t, int(f[1]), float(f[2]), float(f[3]), f[4]))
    except ValueError:
        pass
print('| job | us per run (back to back) | GPU0 SM MHz | GPU1 SM MHz | GPU0 W | GPU1 W | samples | throttle reasons |')
print('|---|---|---|---|---|---|---|---|')
for line in open(sys.argv[2]):
    if not line.startswith('soak '):
        continue
    name = line[5:line.index(':')]
    w = line.split('wall ')[1].split(',')[0]
    t0, t1 = (float(x) for x in w.split('-'))
    us = line.rsplit(', ', 1)[1].split(' us')[0]
    # Drop the first and last 10% of the window (ramp, sampling skew).
    a, b = t0 + 0.1 * (t1 - t0), t1 - 0.1 * (t1 - t0)
    row = [s for s in samples if a <= s[0] <= b]
    def avg(i, k):
        v = [s[k] for s in row if s[1] == i]
        return sum(v) / len(v) if v else float('nan')
    reasons = sorted({s[4] for s in row})
    print(f'| {name} | {us} | {avg(0, 2):.0f} | {avg(1, 2):.0f} | {avg(0, 3):.0f} | {avg(1, 3):.0f} | {len(row)} | {" ".join(reasons)} |')
EOF
exit $RC
