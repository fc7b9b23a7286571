#!/usr/bin/env bash
# Nsight Compute on pkc's GEMM and cuBLAS's at one size, after `scripts/gpu_round.sh none` has
# built build-gpu: which kernel cuBLAS picks (its name gives tile and cluster shape), and both
# kernels' throughput and warp-stall sections, to $OUT/gemm-profile.txt. Clocks are left alone
# (--clock-control none). PK_BENCH_M picks the size (default 8192).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_env.sh"
BIN="${1:-$BUILD/tools/bench-gemm/pk-bench-gemm}"
PK_BENCH_M="${PK_BENCH_M:-8192}" timeout 300 ncu --clock-control none \
  -k 'regex:lcsc|nvjet|sm90|xmma|cutlass|gemm' --launch-skip 4 --launch-count 4 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section MemoryWorkloadAnalysis --section LaunchStats \
  "$BIN" "$OUT/gemm-profile-run.md" >"$OUT/gemm-profile.txt" 2>&1
echo "ncu exit $?"
grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Registers Per|Shared Memory Config|Cluster" \
  "$OUT/gemm-profile.txt" | head -60
