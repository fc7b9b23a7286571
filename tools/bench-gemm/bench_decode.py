"""Decode-sized GEMMs (M = 1 to 128 rows against a large weight) from specs through pk_torch, against PyTorch in
the same run: sk_bf16 (test/specs/gemm_split_k.pk.cpp, y = x w^T in bf16) against torch.matmul (cuBLAS);
wo_e4m3_bf16 (test/specs/weight_only_gemm.pk.cpp, e4m3 weights widened in the template's ring) against torch
casting the weights to bf16 then torch.matmul; i8_w8a8_s32 (test/specs/int8.pk.cpp, int8 activations and
weights on the int8 tensor cores, per-token and per-channel scales) against torch._int_mm plus the scales. Such
outputs have fewer tiles than the SMs, so the GEMM template splits K over several blocks at launch
(templates/include/pk/templates/split_k.cuh); each pkc kernel is also compiled with split_k=False (pkc
--split-k=false, one block per tile) and timed in the same run: the split's gain. GB/s counts the weight bytes
read once (what bounds a decode GEMM). Every pkc output is first checked against the float32 result (fresh
random inputs, output poisoned with NaN). Prints a markdown table and appends it to the file named by the
first argument.

  PYTHONPATH=python:tools/bench-attention PKC=.carry/pkc python3 tools/bench-gemm/bench_decode.py out.md

PK_DECODE_KERNELS (names, comma-separated) and PK_DECODE_WEIGHTS (KxN, comma-separated) run a subset.
"""
import os
import sys

import torch

import pk_torch
from bench_attention import print_table, time_us

SPECS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test/specs")
ROWS = (1, 16, 128)
WEIGHTS = ((8192, 8192), (8192, 28672), (28672, 8192))  # K, N
KERNELS = {"sk_bf16": "gemm_split_k.pk.cpp", "wo_e4m3_bf16": "weight_only_gemm.pk.cpp",
           "i8_w8a8_s32": "int8.pk.cpp"}
if os.environ.get("PK_DECODE_KERNELS"):
    KERNELS = {k: KERNELS[k] for k in os.environ["PK_DECODE_KERNELS"].split(",")}
if os.environ.get("PK_DECODE_WEIGHTS"):
    WEIGHTS = tuple(tuple(int(d) for d in w.split("x")) for w in os.environ["PK_DECODE_WEIGHTS"].split(","))


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    builds = {split: {k: pk_torch.compile(os.path.join(SPECS, f), kernel=k, split_k=split) for k, f in KERNELS.items()}
              for split in (True, False)}
    rows, failures = [], 0

    def body(ctx):
        nonlocal failures
        gen = torch.Generator(device="cuda").manual_seed(7)
        for k, n in WEIGHTS:
            w = (torch.randn(n, k, device="cuda", generator=gen) * 0.05).to(torch.bfloat16)
            w8 = (torch.randn(n, k, device="cuda", generator=gen) * 0.5).to(torch.float8_e4m3fn)
            wi8 = torch.randint(-128, 128, (n, k), device="cuda", generator=gen, dtype=torch.int32).to(torch.int8)
            ws = torch.rand(n, device="cuda", generator=gen) * 0.01 + 0.001
            for m in ROWS:
                x = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
                x8 = torch.randint(-128, 128, (m, k), device="cuda", generator=gen, dtype=torch.int32).to(torch.int8)
                sx = torch.rand(m, 1, device="cuda", generator=gen) * 0.01 + 0.001
                y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)

                def int_mm():  # cuBLASLt's int8 GEMM where it takes the shape (M > 16), then the scales
                    acc = torch._int_mm(x8, wi8.t()) if m > 16 else torch.matmul(x8.float(), wi8.float().t())
                    return (acc.float() * sx * ws).to(torch.bfloat16)
                cases = {  # name: (pkc arguments, torch's way, float32 reference, weight bytes)
                    "sk_bf16": ((x, w, y), lambda: torch.matmul(x, w.t()),
                                lambda: torch.matmul(x.float(), w.float().t()), 2 * n * k),
                    "wo_e4m3_bf16": ((x, w8, y), lambda: torch.matmul(x, w8.to(torch.bfloat16).t()),
                                     lambda: torch.matmul(x.float(), w8.float().t()), n * k),
                    "i8_w8a8_s32": ((x8, wi8, sx, ws, y), int_mm,
                                    lambda: (torch.matmul(x8.double(), wi8.double().t()) * sx.double()
                                             * ws.double()).float(), n * k),
                }
                for name, (args, torch_call, reference, wbytes) in cases.items():
                    if name not in KERNELS:
                        continue
                    times = {}
                    want = reference()
                    err = 0.0
                    for build, kernels in builds.items():
                        y.fill_(float("nan"))
                        kernels[name](ctx, *args)
                        ctx.check_errors()
                        torch.cuda.synchronize()
                        e = ((y.float() - want).abs() / (1 + want.abs())).max().item()
                        if not e < 2e-2:
                            print(f"MISMATCH {name} (split_k={build}) {m}x{k}x{n}: max rel err {e}", flush=True)
                            failures += 1
                        err = max(err, e)
                        times[build] = time_us(lambda: kernels[name](ctx, *args))
                    t_torch = time_us(torch_call)
                    t = times[True]
                    rows.append((name, f"{m} x {k} x {n}", t, wbytes / t / 1e3, times[False], t_torch,
                                 t_torch / t, err))
        return 0

    pk_torch.run_shared_gpu(1, body)
    lines = ["| kernel | M x K x N | pkc us | weight GB/s | pkc without split-K us | torch us | torch / pkc "
             "| split-K gain | max rel err |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:.0f} | {r[4]:.1f} | {r[5]:.1f} | {r[6]:.3f} | {r[4] / r[2]:.2f}x "
                     f"| {r[7]:.4f} |")
    print_table(lines, out_path)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
