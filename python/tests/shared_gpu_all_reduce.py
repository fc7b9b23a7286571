"""pk_torch's shared-GPU mode on one GPU: pkc's all-reduce at W = 2, 3, 4 ranks (threads of this
process, pk_torch.run_shared_gpu), on fresh random inputs with the output poisoned, against the
sum computed by torch in float64 from every rank's input. Also: a launch on the default stream
is refused (ranks sharing a GPU need their own streams), a wrong size fails at the call, and a
zero-size all-reduce is a no-op.
Exits non-zero on any mismatch."""
import os
import sys

import torch

import pk_torch

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../templates/specs/all_reduce.mlir")


def rank_input(rank, n):
    gen = torch.Generator(device="cuda").manual_seed(2000 + 31 * rank + n)
    return torch.randn(n, device="cuda", generator=gen).to(torch.bfloat16)


def run(world, kernel):
    def body(ctx):
        bad = 0
        for n in (1, 4097, 1 << 20):
            x = ctx.empty([n], torch.bfloat16)
            x.copy_(rank_input(ctx.rank, n))
            y = ctx.empty([n], torch.bfloat16)
            y.fill_(float("nan"))
            want = sum(rank_input(r, n).double() for r in range(world))
            torch.cuda.current_stream().synchronize()
            ctx.barrier()  # every rank's x is written before any kernel reads it
            kernel(ctx, x, y)
            ctx.check_errors()
            torch.cuda.current_stream().synchronize()
            err = (y.double() - want).abs()
            # The f32 sum of W bf16 inputs rounded to bf16: within one bf16 ulp.
            tol = want.abs() * 2.0 ** -7 + 1e-6
            wrong = int((~(err <= tol)).sum())
            print(f"W={world} rank {ctx.rank}: n={n}: {wrong} mismatches, max error {float(err.max()):.3g}",
                  flush=True)
            bad += wrong
        try:  # ranks sharing a GPU on one stream would deadlock: refused before any launch
            with torch.cuda.stream(torch.cuda.default_stream()):
                kernel(ctx, x, y)
            print(f"W={world} rank {ctx.rank}: a launch on the default stream was accepted", flush=True)
            bad += 1
        except RuntimeError as e:
            if "default stream" not in str(e):
                print(f"W={world} rank {ctx.rank}: refused without saying why: {e}", flush=True)
                bad += 1
        try:
            kernel(ctx, ctx.empty([1024], torch.bfloat16), ctx.empty([1000], torch.bfloat16))
            print(f"W={world} rank {ctx.rank}: a 1024 -> 1000 all-reduce was accepted", flush=True)
            bad += 1
        except RuntimeError as e:
            if "expected 1024, got 1000" not in str(e):
                print(f"W={world} rank {ctx.rank}: rejected without the sizes: {e}", flush=True)
                bad += 1
        # Zero elements: symmetric empty tensors are accepted and the all-reduce is a no-op.
        e_in, e_out = ctx.empty([0], torch.bfloat16), ctx.empty([0], torch.bfloat16)
        kernel(ctx, e_in, e_out)
        ctx.check_errors()
        return bad

    return sum(pk_torch.run_shared_gpu(world, body))


def main():
    kernel = pk_torch.compile(SPEC)
    failures = 0
    for world in (2, 3, 4):
        failures += run(world, kernel)
    print("shared_gpu_all_reduce:", "FAILED" if failures else "passed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
