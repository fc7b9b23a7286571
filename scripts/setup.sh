#!/usr/bin/env bash
# Installs what pkc needs on a fresh Debian 12 machine, builds it (LLVM/MLIR/Clang linked
# statically) and runs pkc's main job on the shipped all-reduce spec.
set -euo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

if [ ! -x /usr/local/cuda/bin/nvcc ] || [ ! -f /usr/local/cuda/include/nvrtc.h ] ||
   [ ! -f /usr/local/cuda/include/nccl.h ]; then
  echo "pkc setup: CUDA 13 with NVRTC and NCCL was not found in /usr/local/cuda." >&2
  echo "pkc setup: install the CUDA toolkit there (it is not a Debian package) and run again." >&2
  exit 1
fi

packages=(llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools libclang-22-dev clang-22 lld
          ninja-build cmake python3 libzstd-dev zlib1g-dev libgtest-dev)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "pkc setup: installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPKC_STATIC_LLVM=ON \
  -DLLVM_USE_LINKER=lld -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DPython3_EXECUTABLE=/usr/bin/python3
ninja -C build

mkdir -p build/out
echo
echo "pkc's main job: templates/specs/all_reduce.mlir -> CUDA C++"
build/bin/pkc templates/specs/all_reduce.mlir -o build/out/all_reduce.cu --explain
echo "The CUDA is in build/out/all_reduce.cu; build/bin/pkc ... --emit=cubin makes an sm_90a cubin."
