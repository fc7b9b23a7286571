"""Under torchrun --nproc_per_node=2: pkc's all-reduce through pk_torch, on symmetric tensors
allocated as torch tensors, launched on the current stream; compared with
torch.distributed.all_reduce. Exits non-zero on any mismatch."""
import os
import sys

import torch
import torch.distributed as dist

import pk_torch

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../templates/specs/all_reduce.mlir")


def main():
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank = dist.get_rank()
    ctx = pk_torch.Context()
    kernel = pk_torch.compile(SPEC)
    print(f"rank {rank}: compiled {kernel.name} (from cache: {kernel.from_cache})", flush=True)
    failures = 0
    stream = torch.cuda.Stream()
    for n in (1, 4097, 1 << 20):
        gen = torch.Generator(device="cuda").manual_seed(1000 + rank)
        x = ctx.empty([n], torch.bfloat16)
        x.copy_(torch.randn(n, device="cuda", generator=gen).to(torch.bfloat16))
        y = ctx.empty([n], torch.bfloat16)  # the spec's output is symmetric too
        y.fill_(float("nan"))
        want = x.clone()
        dist.all_reduce(want)  # torch's answer, from the same inputs
        torch.cuda.synchronize()
        ctx.barrier()  # every rank's x is written before any rank's kernel reads it
        with torch.cuda.stream(stream):  # the current stream is the one pk launches on
            kernel(ctx, x, y)
        stream.synchronize()
        ctx.check_errors()
        err = (y.float() - want.float()).abs()
        tol = want.float().abs() * 2.0 ** -7 + 1e-6
        bad = int((~(err <= tol)).sum())
        print(f"rank {rank}: n={n}: {bad} mismatches, max error {float(err.max()):.3g}", flush=True)
        failures += bad
    try:  # the host checks: a mismatched output is an error, not a fault
        kernel(ctx, ctx.empty([8], torch.bfloat16), torch.empty(8, dtype=torch.float32, device="cuda"))
        print(f"rank {rank}: a float32 output was accepted", flush=True)
        failures += 1
    except RuntimeError as e:
        print(f"rank {rank}: rejected as expected: {e}", flush=True)
    ctx.close()
    dist.destroy_process_group()
    print(f"rank {rank}: {'FAILED' if failures else 'passed'}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
