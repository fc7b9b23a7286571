"""Batched GEMMs from a spec (test/specs/gemm_batched.pk.cpp, the GEMM template's batched form)
through pk_torch, against PyTorch (cuBLAS) in the same run: bmm_t, C[z] = A[z] B[z]^T (torch.bmm),
and bmm_shared_weight, C[z] = A[z] W^T with one W for every batch (torch.matmul). bf16 in and out.
Every pk output is first checked against the float32 product (fresh random inputs, output
poisoned). Prints a markdown table and appends it to the file named by the first argument.
PK_BATCHED_SHAPES="Z,M,K,N;..." replaces the shapes.

  PYTHONPATH=python:tools/bench-attention PKC=.carry/pkc python3 tools/bench-gemm/bench_batched.py out.md
"""
import os
import sys

import torch

import pk_torch
from bench_attention import print_table, time_us

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test/specs/gemm_batched.pk.cpp")
SHAPES = [(8, 4096, 4096, 4096), (32, 2048, 2048, 2048), (64, 1024, 1024, 1024), (12, 4000, 4104, 3000)]  # Z, M, K, N
if os.environ.get("PK_BATCHED_SHAPES"):  # "Z,M,K,N;Z,M,K,N": other shapes, same table
    SHAPES = [tuple(int(v) for v in s.split(",")) for s in os.environ["PK_BATCHED_SHAPES"].split(";")]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    kernels = {k: pk_torch.compile(SPEC, kernel=k) for k in ("bmm_t", "bmm_shared_weight")}
    rows, failures = [], 0

    def body(ctx):
        nonlocal failures
        gen = torch.Generator(device="cuda").manual_seed(5)
        for z, m, k, n in SHAPES:
            a = torch.randn(z, m, k, device="cuda", generator=gen).to(torch.bfloat16)
            for name in ("bmm_t", "bmm_shared_weight"):
                shared = name == "bmm_shared_weight"
                b = torch.randn(*((n, k) if shared else (z, n, k)), device="cuda", generator=gen).to(torch.bfloat16)
                c = torch.full((z, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                kernels[name](ctx, a, b, c)
                ctx.check_errors()
                torch.cuda.synchronize()
                want = torch.matmul(a.float(), b.float().transpose(-1, -2))
                err = ((c.float() - want).abs() / (1 + want.abs())).max().item()
                if not err < 2e-2:
                    print(f"MISMATCH {name} {z}x{m}x{k}x{n}: max rel err {err}", flush=True)
                    failures += 1
                t_pk = time_us(lambda: kernels[name](ctx, a, b, c))
                t_torch = time_us(lambda: torch.matmul(a, b.transpose(-1, -2)))
                flops = 2.0 * z * m * n * k
                rows.append((name, f"{z} x {m} x {k} x {n}", t_pk, flops / t_pk / 1e6, t_torch, flops / t_torch / 1e6,
                             t_torch / t_pk, err))
        return 0

    pk_torch.run_shared_gpu(1, body)
    lines = ["| kernel | Z x M x K x N | pkc us | pkc TF/s | torch (cuBLAS) us | torch TF/s | torch / pkc | max rel err |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]:.0f} | {r[3]:.0f} | {r[4]:.0f} | {r[5]:.0f} | {r[6]:.3f} | {r[7]:.4f} |")
    print_table(lines, out_path)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
