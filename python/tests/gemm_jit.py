"""GEMM template kernels through pk_torch (pkc compiles the spec, the JIT launches it from its
launch description): the plain GEMM at W = 1 and gemm_rs at W = 1, 2, 3 ranks sharing this GPU
(pk_torch.run_shared_gpu), with tails in M, N and K, fresh random inputs and poisoned outputs,
against torch's float64 product; a K that is not a multiple of 8 runs the general-path twin. Also a
user's GEMM variant (f16, B stored [K, N], a fused epilogue with a bias row and a float argument)
at W = 1. Exits non-zero on any mismatch."""
import os
import sys
import tempfile

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
            # K = 196 breaks the template's 16-byte TMA rows: the general-path twin runs.
            a2, b2 = rand((M, K - 4), 3), rand((N, K - 4), 4)
            c.fill_(float("nan"))
            gemm(ctx, a2, b2, c)
            ctx.check_errors()
            torch.cuda.current_stream().synchronize()
            wrong = mismatches(c, a2.double() @ b2.double().T, K - 4)
            print(f"gemm {M}x{N}x{K - 4} (general-path twin): {wrong} mismatches", flush=True)
            bad += wrong
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


VARIANT = """#include <pk/spec.h>
using namespace pk;
PK_KERNEL void linear_silu(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> bias, Tensor<f16, 2> c, float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(c, cast<f16>(silu(acc * alpha + load<1, 128>(bias, 0, n))), m, n);
  }
}
"""


def variant():
    with tempfile.NamedTemporaryFile("w", suffix=".pk.cpp", delete=False) as f:
        f.write(VARIANT)
    linear = pk_torch.compile(f.name)

    def body(ctx):
        M, N, K, alpha = 300, 264, 200, 0.25
        gen = torch.Generator(device="cuda").manual_seed(5)
        a = torch.randn(M, K, device="cuda", generator=gen).half()
        b = torch.randn(K, N, device="cuda", generator=gen).half()
        bias = torch.randn(1, N, device="cuda", generator=gen)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
        linear(ctx, a, b, bias, c, alpha)
        ctx.check_errors()
        torch.cuda.current_stream().synchronize()
        want = torch.nn.functional.silu(a.double() @ b.double() * alpha + bias.double())
        wrong = int((~((c.double() - want).abs() <= want.abs() / 256 + 0.01)).sum())
        print(f"f16 A*B + bias, silu {M}x{N}x{K}: {wrong} mismatches", flush=True)
        return wrong

    return sum(pk_torch.run_shared_gpu(1, body))


def main():
    gemm = pk_torch.compile(os.path.join(SPECS, "gemm.pk.cpp"))
    gemm_rs = pk_torch.compile(os.path.join(SPECS, "gemm_rs.pk.cpp"))
    failures = variant()
    failures += sum(run(world, gemm, gemm_rs) for world in (1, 2, 3))
    print("gemm_jit:", "FAILED" if failures else "passed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
