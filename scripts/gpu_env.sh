# Sourced by the GPU-machine scripts (gpu_round.sh, gpu_sweep.sh, gemm_soak.sh): multicast off
# for every process, the paths they share, and where NCCL is. Sets ROOT, OUT, BUILD, NCCL_ARGS.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
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
