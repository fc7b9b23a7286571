#!/usr/bin/env bash
# A/B runs of pkc's GEMM plans on a GPU machine, after `scripts/gpu_round.sh none` has built
# build-gpu: pk-bench-gemm once per (repetition, variant, size), variants rotated within each
# repetition so they share clock drift, then one line per variant and size with every run's
# pkc time / cuBLAS time (lower is better). Works on one GPU (GEMM-alone rows only).
#   PK_SWEEP_VARIANTS="name:ENV=v,ENV=v ..."  (default: the plan's defaults against 8-row groups)
#   PK_SWEEP_SIZES="4096 8192 16384"  (values of PK_BENCH_M)   PK_SWEEP_REPS=5
#   PK_SWEEP_BUILDS="name:DEF=v,DEF=v ..."  kernel variants compiled in: pk-bench-gemm is built
#     again in build-sweep-<name> with those -D defines, and a variant whose settings include
#     BUILD=<name> runs that binary (e.g. PK_SWEEP_VARIANTS="base: stm:BUILD=stm");
#     PK_SWEEP_TARGETS adds targets to those builds (e.g. fused_gemm_test).
#   PK_SWEEP_JOBS="gemm gemm_rs"  which rows to report (default gemm; the fused jobs need 2 GPUs):
#     each entry is the row's time over cuBLAS's GEMM alone in the same run.
# Knobs pk-bench-gemm reads: PK_GEMM_MAX_BLOCKS, PK_GEMM_GROUP_M.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_env.sh"
BENCH="$BUILD/tools/bench-gemm/pk-bench-gemm"
VARIANTS="${PK_SWEEP_VARIANTS:-default: g8:PK_GEMM_GROUP_M=8}"
SIZES="${PK_SWEEP_SIZES:-4096 8192 16384}"
for b in ${PK_SWEEP_BUILDS:-}; do
  name="${b%%:*}"
  defs="-D${b#*:}"
  cmake -S "$ROOT" -B "$ROOT/build-sweep-$name" -G Ninja -DPKC_BUILD_COMPILER=OFF \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
    -DCMAKE_CUDA_FLAGS="${defs//,/ -D}" "${NCCL_ARGS[@]}" >"$OUT/sweep-build-$name.log" 2>&1 &&
    cmake --build "$ROOT/build-sweep-$name" --target pk-bench-gemm ${PK_SWEEP_TARGETS:-} -j "$(nproc)" \
      >>"$OUT/sweep-build-$name.log" 2>&1 || { echo "build $name failed"; tail -20 "$OUT/sweep-build-$name.log"; } &
done
wait
: > "$OUT/gemm-sweep.txt"
for rep in $(seq "${PK_SWEEP_REPS:-5}"); do
  for v in $VARIANTS; do
    name="${v%%:*}"
    envs="${v#*:}"
    bin="$BENCH"
    case ",$envs," in *,BUILD=*)
      b="${envs#*BUILD=}"; b="${b%%,*}"
      bin="$ROOT/build-sweep-$b/tools/bench-gemm/pk-bench-gemm"
      envs="$(echo ",$envs," | sed -E "s/,BUILD=[^,]*//; s/^,//; s/,$//")" ;;
    esac
    for m in $SIZES; do
      # shellcheck disable=SC2086  # the variant's settings are words on purpose
      env ${envs//,/ } PK_BENCH_M="$m" timeout 120 "$bin" "$OUT/gemm-sweep-run.md" >/dev/null 2>&1 ||
        echo "failed: $name M=$m"
      for job in ${PK_SWEEP_JOBS:-gemm}; do
        grep "^| $job |" "$OUT/gemm-sweep-run.md" |
          awk -F'|' -v n="$name" -v j="$job" '{gsub(/ /, "", $3); c = $(NF - 1); gsub(/ /, "", c);
            print n (j == "gemm" ? "" : "/" j), $3, $8 + 0 (c == "ok" ? "" : "(" c ")")}' >> "$OUT/gemm-sweep.txt"
      done
    done
  done
done
awk '{k = $1 " " $2; r[k] = r[k] " " $3} END {for (k in r) print k ":" r[k]}' "$OUT/gemm-sweep.txt" | sort
