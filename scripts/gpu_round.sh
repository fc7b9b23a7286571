#!/usr/bin/env bash
# GPU round for the pk runtime: configure (no compiler, no LLVM) into build-gpu, build, run the
# GPU tests and the calibration, and copy logs and the measured profile to $OUT.
# Run from anywhere on the GPU machine: scripts/gpu_round.sh  (OUT defaults to ./gpu-round-out)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
set -u -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/gpu-round-out}"
BUILD="$ROOT/build-gpu"
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
export PK_CACHE_DIR="$BUILD/pk-cache"

# NCCL: next to CUDA if nccl.h is there, else PyTorch's pip wheel (include/ + lib/libnccl.so.2).
NCCL_ARGS=()
if [ ! -f /usr/local/cuda/include/nccl.h ]; then
  WHEEL="$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null || true)"
  if [ -n "$WHEEL" ]; then
    NCCL_ARGS=(-DNCCL_ROOT="$WHEEL")
    export LD_LIBRARY_PATH="$WHEEL/lib:${LD_LIBRARY_PATH:-}"
  fi
fi

step() { echo "== $*"; }
status_of() { [ "$1" -eq 0 ] && echo ok || echo "FAILED($1)"; }

# pkc itself needs LLVM, which the GPU machine lacks: use a statically linked pkc carried in
# .carry/pkc (or PKC_EXECUTABLE) to generate the kernels the GPU tests run.
PKC_BIN="${PKC_EXECUTABLE:-$ROOT/.carry/pkc}"
PKC_ARGS=()
[ -x "$PKC_BIN" ] && PKC_ARGS=(-DPKC_EXECUTABLE="$PKC_BIN")

step configure
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DPKC_BUILD_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc "${NCCL_ARGS[@]}" "${PKC_ARGS[@]}" 2>&1 | tee "$OUT/configure.log"
CONF=$?
step build
cmake --build "$BUILD" -j "$(nproc)" 2>&1 | tee "$OUT/build.log"
BUILT=$?

step "ctest -L gpu"
ctest --test-dir "$BUILD" -L gpu --output-on-failure 2>&1 | tee "$OUT/ctest-gpu.log"
GPU=$?
step "ctest -L unit"
ctest --test-dir "$BUILD" -L unit --output-on-failure 2>&1 | tee "$OUT/ctest-unit.log" >/dev/null
UNIT=$?

step calibrate
CAL_BUILD="$BUILD/calibrate"
CAL=1
if cmake -S "$ROOT/tools/calibrate" -B "$CAL_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc >"$OUT/calibrate-build.log" 2>&1 &&
   cmake --build "$CAL_BUILD" >>"$OUT/calibrate-build.log" 2>&1; then
  timeout 300 "$CAL_BUILD/pk-calibrate" "$OUT/h200.measured.profile" "$OUT/profile.md" \
    2>&1 | tee "$OUT/calibrate.log"
  CAL=$?
fi
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1 || true

# GEMM templates: the SASS must use the Hopper tensor-core path (HGMMA), then the benchmark
# (pkc's GEMM vs cuBLAS; fused AG+GEMM, GEMM+RS, GEMM+AR vs cuBLAS + NCCL), < 3 minutes.
step "bench-gemm"
BENCH_BIN="$BUILD/tools/bench-gemm/pk-bench-gemm"
HGMMA=0
if [ -x "$BENCH_BIN" ] && command -v cuobjdump >/dev/null; then
  cuobjdump --dump-sass "$BENCH_BIN" > "$OUT/bench-gemm.sass" 2>&1
  HGMMA=$(grep -c HGMMA "$OUT/bench-gemm.sass" || true)
fi
echo "HGMMA instructions in pk-bench-gemm: $HGMMA"
BENCH=1
if [ -x "$BENCH_BIN" ]; then
  timeout 300 "$BENCH_BIN" "$OUT/bench-gemm.md" 2>&1 | tee "$OUT/bench-gemm.log"
  BENCH=$?
fi

echo
echo "| step | result |"
echo "|---|---|"
echo "| configure | $(status_of $CONF) |"
echo "| build | $(status_of $BUILT) |"
echo "| unit tests | $(status_of $UNIT) |"
echo "| gpu tests | $(status_of $GPU) |"
grep -E "^ *[0-9]+/[0-9]+ Test" "$OUT/ctest-gpu.log" | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) [ .*]*([A-Za-z]+.*)$/| \1 | \2 |/'
echo "| calibrate | $(status_of $CAL) |"
grep -E "hand-off|GiB" "$OUT/calibrate.log" 2>/dev/null | sed 's/^/| /; s/$/ | |/'
echo "| bench-gemm | $(status_of $BENCH) (HGMMA in SASS: $HGMMA) |"
[ $CONF -eq 0 ] && [ $BUILT -eq 0 ] && [ $GPU -eq 0 ] && [ $CAL -eq 0 ] && [ $BENCH -eq 0 ]
