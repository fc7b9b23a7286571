"""pk kernels from PyTorch: compile a spec, allocate symmetric tensors, launch on the current
CUDA stream. One process per GPU (torchrun; the exchange runs over torch.distributed), or, for
testing on one GPU, W ranks as threads of one process sharing it (run_shared_gpu)."""
import json
import os
import shutil
import subprocess
import threading

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


def _pkc_path(pkc):
    pkc = pkc or os.environ.get("PKC") or shutil.which("pkc")
    if not pkc:
        raise RuntimeError("pk_torch: no pkc; pass pkc= or set $PKC")
    return pkc


def roofline(spec: str, args, world: int = 1, kernel: str = "", pkc: str = None, profile: str = ""):
    """pkc's lower bounds on a kernel's time for the sizes of `args` (the arguments as the kernel
    takes them: tensors give their shapes, scalars are skipped) at world size `world`, from the
    machine profile (`pkc --roofline=json`, docs/roofline.md): a dict with flops, hbm_bytes,
    link_bytes_per_rank, compute_us, hbm_us, link_us, fixed_us (a launch, and a flag hop between
    GPUs), overlap_us (the bound when compute and
    communication overlap perfectly), serial_us and binds (the limit that binds)."""
    shapes = ",".join(f"{i}:{'x'.join(str(d) for d in a.shape)}" for i, a in enumerate(args)
                      if isinstance(a, torch.Tensor))
    cmd = [_pkc_path(pkc), spec, "--roofline=json", f"--world-size={world}", "-o", "-"]
    if shapes:
        cmd.append(f"--shape={shapes}")
    if kernel:
        cmd.append(f"--kernel={kernel}")
    if profile:
        cmd.append(f"--profile={profile}")
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"pk_torch.roofline: pkc failed:\n{run.stderr}")
    kernels = json.loads(run.stdout)["kernels"]
    if len(kernels) != 1:
        raise RuntimeError(f"pk_torch.roofline: {spec} has {len(kernels)} kernels; choose one with kernel=")
    return kernels[0]


def compile(spec: str, pkc: str = None, arch: str = "", kernel: str = "", templates: bool = True,
            split_k: bool = True):
    """Compiles a spec file with the pkc executable ($PKC, else pkc on PATH), NVRTC-compiles it
    for the current GPU and caches the binary on disk ($PK_CACHE_DIR). `kernel` picks one kernel
    of a spec that has several; templates=False keeps loops a Hopper template would take on the
    general tile path (pkc --templates=false); split_k=False keeps every GEMM tile on one block
    (pkc --split-k=false), where few tiles would otherwise split K over several."""
    return _C.compile(spec, _pkc_path(pkc), arch, kernel, templates, split_k)


def run_shared_gpu(world: int, fn, device: int = 0):
    """Runs fn(ctx) for W ranks sharing one GPU, each in its own thread with its own pk context
    and its own current CUDA stream; returns the W results in rank order. A test mode: it checks
    protocols, tails and world sizes, not link speed. Ranks must make the same calls (context
    creation, empty(), launches, barrier(), close() are collective); the first exception any rank
    raises is re-raised here. Each context is closed when fn returns."""
    ranks = _C.SharedGpuRanks(world, device)
    results = [None] * world
    errors = [None] * world

    def body(rank):
        try:
            torch.cuda.set_device(device)
            with torch.cuda.stream(torch.cuda.Stream(device)):  # a stream per rank
                ctx = ranks.context(rank)
                results[rank] = fn(ctx)
                torch.cuda.current_stream().synchronize()
                ctx.close()
        except BaseException as e:  # noqa: B902 - handed to the caller below
            errors[rank] = e

    threads = [threading.Thread(target=body, args=(r,), name=f"pk-rank-{r}") for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        if e is not None:
            raise e
    return results
