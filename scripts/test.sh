#!/usr/bin/env bash
# Runs every test tier this machine supports: lit (dialect, passes, emitter, driver, compile
# tier through NVRTC), unit tests, and the GPU tier (reported as skipped without 2 GPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
[ -d build ] || { echo "pkc test: run scripts/setup.sh first" >&2; exit 1; }
ninja -C build
ctest --test-dir build --output-on-failure -j2 "$@"
