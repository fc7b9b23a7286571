"""pk kernels from PyTorch: compile a spec, allocate symmetric tensors, launch on the current
CUDA stream. One process per GPU (torchrun); the exchange runs over torch.distributed."""
import os
import shutil

import torch
import torch.distributed as dist

from . import _C


def _gather_bytes(data: bytes) -> bytes:
    # all_gather_object keeps rank order; the runtime checks every piece has the same size.
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, data)
    return b"".join(out)


class Context(_C.Context):
    """The pk context of this rank. Collective: every rank creates one, after
    torch.cuda.set_device and dist.init_process_group."""

    def __init__(self):
        super().__init__(dist.get_rank(), dist.get_world_size(), torch.cuda.current_device(),
                         _gather_bytes)


def compile(spec: str, pkc: str = None, arch: str = ""):
    """Compiles a spec file with the pkc executable ($PKC, else pkc on PATH), NVRTC-compiles it
    for the current GPU and caches the binary on disk ($PK_CACHE_DIR)."""
    pkc = pkc or os.environ.get("PKC") or shutil.which("pkc")
    if not pkc:
        raise RuntimeError("pk_torch.compile: no pkc; pass pkc= or set $PKC")
    return _C.compile(spec, pkc, arch)
