#!/usr/bin/env bash
# Exploration round on 2 GPUs, after `scripts/gpu_round.sh bench` has built build-gpu: the
# small-message latency probe (tools/calibrate/latency_probe.cu), then large-message sweeps of
# hand-varied copies of the generated bf16 collectives (grid size, tile size, copy unroll depth)
# through bench-collectives. Findings feed the pk-select-algorithm defaults; the tables go to
# $OUT. Usage: scripts/gpu_sweep.sh [probe|sweep|all]
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_env.sh"
PART="${1:-all}"

if [ "$PART" = probe ] || [ "$PART" = all ]; then
  nvcc -O2 -arch=sm_90a -std=c++17 -o "$BUILD/latency-probe" "$ROOT/tools/calibrate/latency_probe.cu" &&
    timeout 120 "$BUILD/latency-probe" | tee "$OUT/latency-probe.txt"
fi

if [ "$PART" = sweep ] || [ "$PART" = all ]; then
  BENCH="$BUILD/tools/bench-collectives/bench-collectives"
  GEN="$BUILD/collectives"
  # variant: name:blocks:tile_elems:unroll[:MACRO] (MACRO is #defined before the pk headers)
  VARIANTS="${PK_SWEEP_VARIANTS:-base:66:8192:4 b132:132:8192:4 b132t32k:132:32768:4 b132t32ku8:132:32768:8 b66t32ku8:66:32768:8}"
  COLLS="${PK_SWEEP_COLLS:-all_to_all all_gather gather all_reduce reduce_scatter}"
  : > "$OUT/sweep.txt"
  for v in $VARIANTS; do
    IFS=: read -r name blocks tile unroll macro <<<"$v"
    dir="$BUILD/sweep/$name"
    mkdir -p "$dir"
    for f in "$GEN"/*_bf16.cu "$GEN"/*_bf16_sum.cu; do
      # The kernel's own tile size, from its decision comment ("tiles of N elements").
      base="$(grep -o 'tiles of [0-9]* elements' "$f" | head -1 | awk '{print $3}')"
      base="${base:-8192}"
      { echo "#define PK_COPY_UNROLL $unroll"
        [ -n "$macro" ] && echo "#define $macro 1"
        sed -E -e "s/kBlocks = [0-9]+;/kBlocks = $blocks;/" -e "s/ blocks=[0-9]+ / blocks=$blocks /" \
          -e "s/\b$((base - 1))\b/$((tile - 1))/g" -e "s/\b$base(LL)?\b/$tile\1/g" "$f"; } > "$dir/$(basename "$f")"
    done
    for c in $COLLS; do
      PK_COLLECTIVES_DIR="$dir" timeout 120 "$BENCH" "$dir/$c.md" --only "$c" \
        --min-bytes "${PK_SWEEP_MIN:-67108864}" --max-bytes "${PK_SWEEP_MAX:-1073741824}" > "$dir/$c.log" 2>&1
      grep -E "^\| $c " "$dir/$c.md" | sed "s/^/| $name /" | tee -a "$OUT/sweep.txt"
    done
  done
fi
