"""Weight-only quantised GEMMs from spec sets (test/specs/user_specs26.pk.cpp: w8a16_gemm_unpacked, int8
weights held as i32 [N, K] with per-channel scales, on the general tile path; fp8_weight_only_gemm, e4m3 weights
[N, K], scales and a bias; test/specs/weight_only_gemm.pk.cpp: wo_e4m3_bf16, the plain product;
test/specs/int8.pk.cpp: i8_weight_only_gemm, the same int8 weights stored as i8 with per-channel scales, and
i8_w8a8_s32, int8 activations too on the int8 tensor cores, against torch._int_mm plus the scales) through
pk_torch, against PyTorch doing the same job unfused (the weights cast to bf16, then torch.matmul, then the
scale) and against the bf16 GEMM alone (cuBLAS), in the same run. The e4m3 and i8 kernels take the GEMM
template, which widens the weights in its ring; small M shows the fused kernel reading one byte a weight.
Every pk output is first checked against the float32 result (fresh random inputs, output poisoned). Prints a
markdown table and appends it to the file named by the first argument.

  PYTHONPATH=python:tools/bench-attention PKC=.carry/pkc python3 tools/bench-gemm/bench_weight_only.py out.md
"""
import os
import sys

import torch

import pk_torch
from bench_attention import print_table, time_us

SPECS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test/specs")
SHAPES = [(4096, 4096, 4096), (2048, 8192, 8192), (128, 8192, 8192), (16, 8192, 8192)]  # M, K, N


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    set26 = os.path.join(SPECS, "user_specs26.pk.cpp")
    kernels = {k: pk_torch.compile(set26, kernel=k) for k in ("w8a16_gemm_unpacked", "fp8_weight_only_gemm")}
    kernels["wo_e4m3_bf16"] = pk_torch.compile(os.path.join(SPECS, "weight_only_gemm.pk.cpp"), kernel="wo_e4m3_bf16")
    kernels["i8_weight_only_gemm"] = pk_torch.compile(os.path.join(SPECS, "int8.pk.cpp"), kernel="i8_weight_only_gemm")
    kernels["i8_w8a8_s32"] = pk_torch.compile(os.path.join(SPECS, "int8.pk.cpp"), kernel="i8_w8a8_s32")
    rows, failures = [], 0

    def body(ctx):
        nonlocal failures
        gen = torch.Generator(device="cuda").manual_seed(7)
        for m, k, n in SHAPES:
            x = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
            wq = torch.randint(-128, 128, (n, k), device="cuda", generator=gen, dtype=torch.int32)
            wi8 = wq.to(torch.int8)
            w8 = (torch.randn(n, k, device="cuda", generator=gen) * 0.5).to(torch.float8_e4m3fn)
            ws = torch.rand(n, device="cuda", generator=gen) * 0.01 + 0.001
            bias = torch.randn(1, n, device="cuda", generator=gen).to(torch.bfloat16)
            y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            # W8A8: int8 activations with per-token scales beside the int8 weights.
            x8 = torch.randint(-128, 128, (m, k), device="cuda", generator=gen, dtype=torch.int32).to(torch.int8)
            sx = torch.rand(m, 1, device="cuda", generator=gen) * 0.01 + 0.001

            def int_mm():  # torch's int8 GEMM (cuBLASLt) where it takes the shape, then the scales
                acc = torch._int_mm(x8, wi8.t()) if m > 16 else torch.matmul(x8.float(), wi8.float().t())
                return (acc.float() * sx * ws).to(torch.bfloat16)
            cases = {
                "w8a16_gemm_unpacked": (
                    lambda: kernels["w8a16_gemm_unpacked"](ctx, x, wq, ws, y),
                    lambda: torch.matmul(x, wq.to(torch.bfloat16).t()) * ws,
                    lambda: torch.matmul(x.float(), wq.float().t()) * ws),
                "i8_weight_only_gemm": (
                    lambda: kernels["i8_weight_only_gemm"](ctx, x, wi8, ws, y),
                    lambda: torch.matmul(x, wi8.to(torch.bfloat16).t()) * ws,
                    lambda: torch.matmul(x.float(), wi8.float().t()) * ws),
                "i8_w8a8_s32": (
                    lambda: kernels["i8_w8a8_s32"](ctx, x8, wi8, sx, ws, y),
                    int_mm,
                    lambda: (torch.matmul(x8.double(), wi8.double().t()) * sx.double() * ws.double()).float()),
                "fp8_weight_only_gemm": (
                    lambda: kernels["fp8_weight_only_gemm"](ctx, x, w8, ws.view(1, n), bias, y),
                    lambda: torch.matmul(x, w8.to(torch.bfloat16).t()) * ws + bias,
                    lambda: torch.matmul(x.float(), w8.float().t()) * ws + bias.float()),
                "wo_e4m3_bf16": (
                    lambda: kernels["wo_e4m3_bf16"](ctx, x, w8, y),
                    lambda: torch.matmul(x, w8.to(torch.bfloat16).t()),
                    lambda: torch.matmul(x.float(), w8.float().t())),
            }
            w_bf16 = w8.to(torch.bfloat16)
            t_gemm = time_us(lambda: torch.matmul(x, w_bf16.t()))
            for name, (pk_call, torch_call, reference) in cases.items():
                y.fill_(float("nan"))
                pk_call()
                ctx.check_errors()
                torch.cuda.synchronize()
                want = reference()
                err = ((y.float() - want).abs() / (1 + want.abs())).max().item()
                if not err < 2e-2:
                    print(f"MISMATCH {name} {m}x{k}x{n}: max rel err {err}", flush=True)
                    failures += 1
                t_pk = time_us(pk_call)
                t_torch = time_us(torch_call)
                flops = 2.0 * m * n * k
                rows.append((name, f"{m} x {k} x {n}", t_pk, flops / t_pk / 1e6, t_torch, t_gemm, t_torch / t_pk,
                             t_gemm / t_pk, err))
        return 0

    pk_torch.run_shared_gpu(1, body)
    lines = ["| kernel | M x K x N | pkc us | pkc TF/s | torch unfused us | bf16 GEMM alone us | torch unfused / pkc "
             "| GEMM alone / pkc | max rel err |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]:.0f} | {r[3]:.0f} | {r[4]:.0f} | {r[5]:.0f} | {r[6]:.3f} | {r[7]:.3f} "
                     f"| {r[8]:.4f} |")
    print_table(lines, out_path)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
