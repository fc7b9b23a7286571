"""GEMM template kernels through pk_torch (pkc compiles the spec, the JIT launches it from its
launch description): the plain GEMM at W = 1 and gemm_rs at W = 1, 2, 3 ranks sharing this GPU
(pk_torch.run_shared_gpu), with tails in M, N and K, fresh random inputs and poisoned outputs,
against torch's float64 product. A K that is not a multiple of 8 fails at the call.
Exits non-zero on any mismatch."""
import os
import sys

import torch

import pk_torch

SPECS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../templates/specs")


def rand(shape, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", generator=gen).to(torch.bfloat16)


def mismatches(got, want, k):
    # bf16 output of an f32 sum: a few bf16 ulps of the result plus a term for the sum's spread.
    tol = want.abs() / 64 + 0.02 * k ** 0.5
    return int((~((got.double() - want).abs() <= tol)).sum())


def run(world, gemm, gemm_rs):
    def body(ctx):
        bad = 0
        r = ctx.rank
        if world == 1:
            M, N, K = 300, 264, 200
            a, b = rand((M, K), 1), rand((N, K), 2)
            c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            gemm(ctx, a, b, c)
            ctx.check_errors()
            torch.cuda.current_stream().synchronize()
            wrong = mismatches(c, a.double() @ b.double().T, K)
            print(f"gemm {M}x{N}x{K}: {wrong} mismatches", flush=True)
            bad += wrong
            try:
                gemm(ctx, rand((M, K - 4), 3), rand((N, K - 4), 4), c)
                print("gemm with K = 196 was accepted", flush=True)
                bad += 1
            except RuntimeError as e:
                if "K % 8" not in str(e):
                    print(f"K = 196 refused without saying why: {e}", flush=True)
                    bad += 1
        rows, N, K = 150, 264, 136
        M = world * rows
        a, b = rand((M, K), 10 + r), rand((N, K), 20 + r)
        c = ctx.empty([rows, N], torch.bfloat16)
        c.fill_(float("nan"))
        torch.cuda.current_stream().synchronize()
        ctx.barrier()
        gemm_rs(ctx, a, b, c)
        ctx.check_errors()
        torch.cuda.current_stream().synchronize()
        ctx.barrier()  # every rank's adds have landed
        want = sum(rand((M, K), 10 + q).double() @ rand((N, K), 20 + q).double().T for q in range(world))
        wrong = mismatches(c, want[r * rows:(r + 1) * rows], K * world)
        print(f"W={world} rank {r}: gemm_rs {M}x{N}x{K}: {wrong} mismatches", flush=True)
        bad += wrong
        return bad

    return sum(pk_torch.run_shared_gpu(world, body))


def main():
    gemm = pk_torch.compile(os.path.join(SPECS, "gemm.pk.cpp"))
    gemm_rs = pk_torch.compile(os.path.join(SPECS, "gemm_rs.pk.cpp"))
    failures = sum(run(world, gemm, gemm_rs) for world in (1, 2, 3))
    print("gemm_jit:", "FAILED" if failures else "passed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
