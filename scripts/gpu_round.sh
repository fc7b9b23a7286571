#!/usr/bin/env bash
# GPU round for the pk runtime: configure (no compiler, no LLVM) into build-gpu, build, run the
# GPU tests, the collectives benchmark and the calibration, and copy logs, the benchmark table
# and the measured profile to $OUT. Pass the prebuilt pkc as PKC_EXECUTABLE=<path> (env) so the
# collective specs are compiled into the GPU test and the benchmark.
# Run from anywhere on the GPU machine:
#   scripts/gpu_round.sh [tests|torch|bench|gemm|gemm-jit|gemm-specs|tiles|moe|attention|phases|fuzz|all]
# (default all; OUT defaults to ./gpu-round-out; PK_CTEST_ARGS adds ctest arguments). Each part
# fits one 10-minute device call; a second call on a warm machine reuses build-gpu.
# PK_CALIBRATE=1 also measures a machine profile; PK_UNIT=0 skips the CPU unit tests and
# PK_TORCH=0 the pk_torch tests of the tests and all parts.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_env.sh"

step() { echo "== $*"; }
status_of() { case "$1" in 0) echo ok ;; 77) echo skipped ;; *) echo "FAILED($1)" ;; esac; }

# pkc itself needs LLVM, which the GPU machine lacks: use a statically linked pkc carried in
# .carry/pkc (or PKC_EXECUTABLE) to generate the kernels the GPU tests run.
PKC_BIN="${PKC_EXECUTABLE:-$ROOT/.carry/pkc}"
PKC_ARGS=()
[ -x "$PKC_BIN" ] && PKC_ARGS=(-DPKC_EXECUTABLE="$PKC_BIN")

PART="${1:-all}"
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')  # the torchrun parts need two
CONF=77 BUILT=77 GPU=77 UNIT=77 TORCH=77 BENCH=77 GEMM=77 CAL=77 FUZZ=77

step configure
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DPKC_BUILD_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release -DPKC_GPU_TEST_HOST_OPT=-O3 \
  -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DPKC_GPU_BINARY_ARCH=90a -DPKC_BUILD_GPU_TESTS=ON "${NCCL_ARGS[@]}" "${PKC_ARGS[@]}" >"$OUT/configure.log" 2>&1
CONF=$?
step build
# PK_BUILD_TARGETS narrows the build (e.g. the libraries pk_torch links, for the fuzz part alone).
# shellcheck disable=SC2086
cmake --build "$BUILD" -j "$(nproc)" ${PK_BUILD_TARGETS:+--target $PK_BUILD_TARGETS} >"$OUT/build.log" 2>&1
BUILT=$?
[ $BUILT -eq 0 ] || tail -30 "$OUT/build.log"

if [ "$PART" = tests ] || [ "$PART" = all ]; then
  step "ctest -L gpu"
  [ "$GPUS" -lt 2 ] && echo "one GPU: multi-rank tests run as 2, 3 and 4 ranks sharing it (shared GPU, not NVLink)"
  # PK_CTEST_ARGS narrows or splits the tier across device calls (e.g. "-E collectives_test").
  # shellcheck disable=SC2086
  ctest --test-dir "$BUILD" -L gpu --output-on-failure ${PK_CTEST_ARGS:-} >"$OUT/ctest-gpu.log" 2>&1
  GPU=$?
  grep -E "Test +#|tests passed|FAIL|fail|error" "$OUT/ctest-gpu.log" | head -60
  if [ "${PK_UNIT:-1}" = 1 ]; then  # PK_UNIT=0 leaves the CPU unit tests to CI
    step "ctest -L unit"
    ctest --test-dir "$BUILD" -L unit --output-on-failure >"$OUT/ctest-unit.log" 2>&1
    UNIT=$?
  fi
fi

if [ "$PART" = torch ] || { [ "${PK_TORCH:-1}" = 1 ] && { [ "$PART" = tests ] || [ "$PART" = all ]; }; }; then
  # pk_torch: ranks sharing one GPU as threads (any GPU count); torchrun with a GPU per rank
  # (two GPUs); on one GPU, torchrun's two processes must be refused with a reason, not hang.
  step "pytorch"
  if python3 -c 'import torch' 2>/dev/null && [ -x "$PKC_BIN" ]; then
    (cd "$ROOT/python" && PK_BUILD_DIR="$BUILD" python3 setup.py build_ext --inplace) \
      >"$OUT/pytorch-build.log" 2>&1
    TORCH=$?
    [ $TORCH -eq 0 ] || tail -n 20 "$OUT/pytorch-build.log"
    run_py() {  # name, then the command; appends to pytorch.log, keeps the first failure
      local name=$1; shift
      echo "-- $name" >>"$OUT/pytorch.log"
      PYTHONPATH="$ROOT/python" PKC="$PKC_BIN" timeout 240 "$@" >>"$OUT/pytorch.log" 2>&1
      local rc=$?
      echo "$name: $(status_of $rc)"
      [ $TORCH -ne 0 ] || TORCH=$rc
    }
    if [ $TORCH -eq 0 ]; then
      run_py shared_gpu_all_reduce python3 "$ROOT/python/tests/shared_gpu_all_reduce.py"
      run_py gemm_jit python3 "$ROOT/python/tests/gemm_jit.py"
      run_py attention_jit python3 "$ROOT/python/tests/attention_jit.py"
      if [ "$GPUS" -ge 2 ]; then
        run_py torchrun_all_reduce torchrun --nproc_per_node=2 "$ROOT/python/tests/torchrun_all_reduce.py"
      else
        run_py torchrun_one_gpu_refused torchrun --nproc_per_node=2 \
          "$ROOT/python/tests/torchrun_one_gpu_refused.py"
      fi
    fi
    tail -n 12 "$OUT/pytorch.log"
  else
    echo "skipped: no torch or no pkc" | tee "$OUT/pytorch.log"
  fi
fi

if [ "$PART" = gemm-jit ] || [ "$PART" = gemm ] || [ "$PART" = all ]; then
  # The GEMM template through the JIT's launch description against its nvcc plan (one GPU).
  step bench-gemm-jit
  JIT_BIN="$BUILD/tools/bench-gemm/pk-bench-gemm-jit"
  if [ -x "$JIT_BIN" ]; then
    timeout 120 "$JIT_BIN" "$OUT/gemm-jit.md" >"$OUT/bench-gemm-jit.log" 2>&1
    GEMM=$?
    cat "$OUT/gemm-jit.md" 2>/dev/null || tail -n 20 "$OUT/bench-gemm-jit.log"
  fi
fi

# A one-GPU benchmark binary of the build: name, binary, timeout, table; sets GEMM or BENCH.
one_gpu_bench() {
  local name=$1 bin=$2 limit=$3 table=$4
  step "$name"
  [ -x "$bin" ] || return 77
  timeout "$limit" "$bin" "$OUT/$table" >"$OUT/$name.log" 2>&1
  local rc=$?
  cat "$OUT/$table" 2>/dev/null || tail -n 20 "$OUT/$name.log"
  return $rc
}

if [ "$PART" = gemm-specs ] || [ "$PART" = gemm ] || [ "$PART" = all ]; then
  # GEMM specs (layouts, f16, a fused epilogue) through the JIT against cuBLAS (one GPU).
  one_gpu_bench bench-gemm-specs "$BUILD/tools/bench-gemm/pk-bench-gemm-specs" 240 gemm-specs.md
  GEMM=$?
  # Batched GEMMs from a spec against torch.bmm / matmul (cuBLAS), through pk_torch.
  step bench-gemm-batched
  if python3 -c 'import torch' 2>/dev/null && [ -x "$PKC_BIN" ]; then
    [ -n "$(ls "$ROOT"/python/pk_torch/_C*.so 2>/dev/null)" ] ||
      (cd "$ROOT/python" && PK_BUILD_DIR="$BUILD" python3 setup.py build_ext --inplace) \
        >"$OUT/pytorch-build.log" 2>&1
    PYTHONPATH="$ROOT/python:$ROOT/tools/bench-attention" PKC="$PKC_BIN" timeout 240 \
      python3 "$ROOT/tools/bench-gemm/bench_batched.py" "$OUT/gemm-batched.md" >"$OUT/bench-gemm-batched.log" 2>&1 || GEMM=1
    tail -n 12 "$OUT/bench-gemm-batched.log"
  else
    echo "skipped: no torch or no pkc"
  fi
fi

if [ "$PART" = tiles ] || [ "$PART" = all ]; then
  # Memory-bound spec kernels on the general tile path against the device copy (one GPU).
  one_gpu_bench bench-tiles "$BUILD/tools/bench-tiles/pk-bench-tiles" 240 tiles.md
  BENCH=$?
fi

if [ "$PART" = moe ] || [ "$PART" = all ]; then
  # The shipped MoE dispatch and combine against the device copy (one GPU, world size 1).
  one_gpu_bench bench-moe "$BUILD/tools/bench-moe/pk-bench-moe" 240 moe.md
  BENCH=$?
fi

if [ "$PART" = attention ] || [ "$PART" = all ]; then
  # The attention spec on pkc's template against PyTorch SDPA (cuDNN, FlashAttention-2), one GPU.
  step bench-attention
  if python3 -c 'import torch' 2>/dev/null && [ -x "$PKC_BIN" ]; then
    [ -n "$(ls "$ROOT"/python/pk_torch/_C*.so 2>/dev/null)" ] ||
      (cd "$ROOT/python" && PK_BUILD_DIR="$BUILD" python3 setup.py build_ext --inplace) \
        >"$OUT/pytorch-build.log" 2>&1
    PYTHONPATH="$ROOT/python" PKC="$PKC_BIN" timeout 300 \
      python3 "$ROOT/tools/bench-attention/bench_attention.py" "$OUT/attention.md" >"$OUT/bench-attention.log" 2>&1
    BENCH=$?
    tail -n 12 "$OUT/bench-attention.log"
    # Ulysses (all-to-alls around the attention template, three launches) against PyTorch's
    # all_to_all_single + SDPA: one process per GPU when several are present, else W = 1.
    step bench-ulysses
    if [ "$GPUS" -gt 1 ]; then
      PYTHONPATH="$ROOT/python" PKC="$PKC_BIN" timeout 300 torchrun --nproc-per-node="$GPUS" \
        "$ROOT/tools/bench-attention/bench_ulysses.py" "$OUT/ulysses.md" >"$OUT/bench-ulysses.log" 2>&1
    else
      PYTHONPATH="$ROOT/python" PKC="$PKC_BIN" timeout 300 \
        python3 "$ROOT/tools/bench-attention/bench_ulysses.py" "$OUT/ulysses.md" >"$OUT/bench-ulysses.log" 2>&1
    fi
    [ $? -eq 0 ] || BENCH=1
    tail -n 8 "$OUT/bench-ulysses.log"
    # Ring attention (K/V round the ring, a host loop of launches) against pkc's plain attention
    # and cuDNN at W = 1; against NCCL all-gather + SDPA with several GPUs.
    step bench-ring
    if [ "$GPUS" -gt 1 ]; then
      PYTHONPATH="$ROOT/python" PKC="$PKC_BIN" timeout 300 torchrun --nproc-per-node="$GPUS" \
        "$ROOT/tools/bench-attention/bench_ring.py" "$OUT/ring.md" >"$OUT/bench-ring.log" 2>&1
    else
      PYTHONPATH="$ROOT/python" PKC="$PKC_BIN" timeout 300 \
        python3 "$ROOT/tools/bench-attention/bench_ring.py" "$OUT/ring.md" >"$OUT/bench-ring.log" 2>&1
    fi
    [ $? -eq 0 ] || BENCH=1
    tail -n 8 "$OUT/bench-ring.log"
  else
    echo "skipped: no torch or no pkc"
  fi
fi

if [ "$PART" = phases ] || [ "$PART" = all ]; then
  # In-place against out-of-place all-reduce, two phases in one kernel against two launches
  # (W = 2 ranks sharing one GPU, or a GPU each).
  one_gpu_bench bench-phases "$BUILD/tools/bench-phases/pk-bench-phases" 300 phases.md
  BENCH=$?
fi

if [ "$PART" = bench ] || [ "$PART" = all ] || [ "$PART" = gemm ]; then
 if [ "$PART" != gemm ]; then
  # pkc collectives vs NCCL (needs the pkc-generated kernels: -DPKC_EXECUTABLE=<pkc>).
  step bench-collectives
  if [ -x "$BUILD/tools/bench-collectives/bench-collectives" ]; then
    timeout 300 "$BUILD/tools/bench-collectives/bench-collectives" "$OUT/collectives.md" \
      >"$OUT/bench-collectives.log" 2>&1
    BENCH=$?
    cat "$OUT/collectives.md" 2>/dev/null || tail -20 "$OUT/bench-collectives.log"
  else
    echo "bench-collectives not built (configure with -DPKC_EXECUTABLE=<pkc>)"
  fi
 fi
  # GEMM templates: the SASS must use Hopper's tensor-core path (HGMMA); then the benchmark.
  step bench-gemm
  GEMM_BIN="$BUILD/tools/bench-gemm/pk-bench-gemm"
  if [ -x "$GEMM_BIN" ]; then
    cuobjdump --dump-sass "$GEMM_BIN" > "$OUT/bench-gemm.sass" 2>&1
    echo "HGMMA instructions in pk-bench-gemm: $(grep -c HGMMA "$OUT/bench-gemm.sass")"
    timeout 240 "$GEMM_BIN" "$OUT/gemm.md" >"$OUT/bench-gemm.log" 2>&1
    GEMM=$?
    cat "$OUT/gemm.md" 2>/dev/null || tail -n 30 "$OUT/bench-gemm.log"
  fi
  # PyTorch's sequential and fused (symm_mem) AG + GEMM for the same shapes, beside pkc's.
  if python3 -c 'import torch' 2>/dev/null && [ "$GPUS" -ge 2 ]; then
    step "torch fused_all_gather_matmul"
    timeout 240 torchrun --nproc_per_node=2 "$ROOT/tools/bench-gemm/torch_fused.py" \
      "$OUT/gemm.md" "$OUT/torch_fused.md" >"$OUT/torch-fused.log" 2>&1 || tail -n 20 "$OUT/torch-fused.log"
    cat "$OUT/torch_fused.md" 2>/dev/null
  fi
fi

if [ "$PART" = fuzz ]; then
  # The differential fuzzer (test/Fuzz/diff_fuzz.py) on this GPU: single-rank programs, then
  # multi-rank ones at W = 1-4 sharing it, each mode for FUZZ_BUDGET seconds (default 200).
  # FUZZ_FIRST runs one command first (a reproducer), under gdb when the machine has it.
  step fuzz
  if python3 -c 'import torch' 2>/dev/null && [ -x "$PKC_BIN" ]; then
    [ -n "$(ls "$ROOT"/python/pk_torch/_C*.so 2>/dev/null)" ] ||
      (cd "$ROOT/python" && PK_BUILD_DIR="$BUILD" python3 setup.py build_ext --inplace) \
        >"$OUT/pytorch-build.log" 2>&1
    fuzz() {  # log name, then diff_fuzz.py's arguments
      local name=$1; shift
      PYTHONPATH="$ROOT/python" PKC="$PKC_BIN" OUT="$OUT/fuzz" timeout $(( ${FUZZ_BUDGET:-200} + 90 )) \
        python3 -X faulthandler "$ROOT/test/Fuzz/diff_fuzz.py" --run --budget "${FUZZ_BUDGET:-200}" "$@" \
        >"$OUT/fuzz-$name.log" 2>&1
      local rc=$?
      echo "fuzz $name: rc $rc"; tail -n 9 "$OUT/fuzz-$name.log"
      [ $rc -eq 0 ] || FUZZ=$rc
      [ $FUZZ -ne 77 ] || FUZZ=0
    }
    if [ -n "${FUZZ_FIRST:-}" ]; then
      # shellcheck disable=SC2086
      if command -v gdb >/dev/null; then
        PYTHONPATH="$ROOT/python" PKC="$PKC_BIN" OUT="$OUT/fuzz" timeout 200 gdb -q -batch -ex run -ex bt \
          --args python3 "$ROOT/test/Fuzz/diff_fuzz.py" --run $FUZZ_FIRST >"$OUT/fuzz-first.log" 2>&1
        FIRST=$?
      else  # no gdb: the native stack from a preloaded SIGSEGV handler, frames of _C*.so as lines
        cc -shared -fPIC -o "$BUILD/segv_backtrace.so" "$ROOT/test/Fuzz/segv_backtrace.c"
        PYTHONPATH="$ROOT/python" PKC="$PKC_BIN" OUT="$OUT/fuzz" LD_PRELOAD="$BUILD/segv_backtrace.so" timeout 200 \
          python3 "$ROOT/test/Fuzz/diff_fuzz.py" --run $FUZZ_FIRST >"$OUT/fuzz-first.log" 2>&1
        FIRST=$?
        grep -o '_C[^ ]*\.so(+0x[0-9a-f]*)' "$OUT/fuzz-first.log" | sed 's/.*(+\(0x[0-9a-f]*\))/\1/' |
          addr2line -f -C -i -e "$(ls "$ROOT"/python/pk_torch/_C*.so | head -1)" >>"$OUT/fuzz-first.log" 2>&1
      fi
      echo "fuzz first ($FUZZ_FIRST): rc $FIRST"; tail -n 40 "$OUT/fuzz-first.log"
    fi
    [ "${FUZZ_SINGLE:-1}" = 0 ] || fuzz single --seed "${FUZZ_SEED:-1}" --count 100000
    [ "${FUZZ_RANKS:-1}" = 0 ] || fuzz ranks --ranks --seed "${FUZZ_SEED:-1}" --count 100000
  else
    echo "skipped: no torch or no pkc"
  fi
fi

if [ "${PK_CALIBRATE:-0}" = 1 ]; then
  step calibrate
  CAL=1
  if [ -x "$BUILD/tools/calibrate/pk-calibrate" ]; then
    timeout 120 "$BUILD/tools/calibrate/pk-calibrate" "$OUT/h200.measured.profile" \
      "$OUT/profile.md" >"$OUT/calibrate.log" 2>&1
    CAL=$?
  fi
fi
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1 || true

echo
echo "| step | result |"
echo "|---|---|"
echo "| configure | $(status_of $CONF) |"
echo "| build | $(status_of $BUILT) |"
echo "| unit tests | $(status_of $UNIT) |"
echo "| gpu tests | $(status_of $GPU) |"
echo "| pytorch (pk_torch tests) | $(status_of $TORCH) |"
echo "| bench-collectives | $(status_of $BENCH) |"
echo "| bench-gemm | $(status_of $GEMM) |"
echo "| calibrate | $(status_of $CAL) |"
echo "| fuzz | $(status_of $FUZZ) |"
grep -E "^ *[0-9]+/[0-9]+ Test" "$OUT/ctest-gpu.log" 2>/dev/null |
  sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) [ .*]*([A-Za-z]+.*)$/| \1 | \2 |/'
for v in $CONF $BUILT $GPU $UNIT $TORCH $BENCH $GEMM $CAL $FUZZ; do
  [ "$v" -eq 0 ] || [ "$v" -eq 77 ] || exit 1
done
