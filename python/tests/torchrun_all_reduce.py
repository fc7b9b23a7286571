"""Under torchrun --nproc_per_node=2: pkc's all-reduce through pk_torch, on symmetric tensors
allocated as torch tensors, launched on the current stream; compared with
torch.distributed.all_reduce. Then bad calls that must raise at the call (a float32 output, a
1024 -> 1000 all-reduce) and a zero-size all-reduce that must be a no-op. Exits non-zero on any
mismatch."""
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
    # A wrong size fails at the call (the kernel's own check, run on the host), not at the next
    # check_errors(); nothing is launched, so check_errors() stays clean.
    try:
        kernel(ctx, ctx.empty([1024], torch.bfloat16), ctx.empty([1000], torch.bfloat16))
        print(f"rank {rank}: a 1024 -> 1000 all-reduce was accepted at the call", flush=True)
        failures += 1
    except RuntimeError as e:
        if "expected 1024, got 1000" not in str(e):
            print(f"rank {rank}: rejected without the sizes: {e}", flush=True)
            failures += 1
        else:
            print(f"rank {rank}: rejected at the call as expected: {e}", flush=True)
    torch.cuda.synchronize()
    try:
        ctx.check_errors()
    except RuntimeError as e:
        print(f"rank {rank}: the refused call still left a device error: {e}", flush=True)
        failures += 1
    # Zero elements: symmetric empty tensors are accepted, and the all-reduce is a no-op.
    e_in, e_out = ctx.empty([0], torch.bfloat16), ctx.empty([0], torch.bfloat16)
    try:
        kernel(ctx, e_in, e_out)
        torch.cuda.synchronize()
        ctx.check_errors()
        print(f"rank {rank}: zero-size all-reduce: ok", flush=True)
    except RuntimeError as e:
        print(f"rank {rank}: zero-size all-reduce failed: {e}", flush=True)
        failures += 1
    ctx.close()
    dist.destroy_process_group()
    print(f"rank {rank}: {'FAILED' if failures else 'passed'}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
