"""Grouped-query attention on one GPU: test/specs/attention_gqa.pk.cpp's kernels (K and V read at
head h / G on pkc's attention template) through pk_torch, against PyTorch's SDPA in the same run:
cuDNN on K and V expanded to the query heads (the expansion not timed), FlashAttention-2 with
enable_gqa=True, and pkc's own per-head kernel (attention_heads.pk.cpp) on the expanded K and V.
Every pk output is checked first against SDPA's math backend in float32 (fresh random inputs,
outputs poisoned). Prints a markdown table and appends it to the file named by the first argument.

  PYTHONPATH=python PKC=.carry/pkc python3 tools/bench-attention/bench_gqa.py out.md
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import pk_torch
from bench_attention import print_table, time_us, worse

HERE = os.path.dirname(os.path.abspath(__file__))
GQA = os.path.join(HERE, "../../test/specs/attention_gqa.pk.cpp")
HEADS = os.path.join(HERE, "../../templates/specs/attention_heads.pk.cpp")

# (query heads, K/V heads, sequence, head dim, causal): Llama-style groups of 4 and 8.
SHAPES = [(32, 8, 4096, 128, True), (32, 4, 4096, 128, True), (64, 8, 2048, 64, False), (32, 8, 8192, 128, True)]


def sdpa(backend, q, k, v, causal, scale, gqa=False):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal, scale=scale,
                                              enable_gqa=gqa)[0]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    gqa_d64 = pk_torch.compile(GQA, kernel="gqa_d64")
    gqa_causal_d128 = pk_torch.compile(GQA, kernel="gqa_causal_d128")
    mha = {(True, 128): pk_torch.compile(HEADS, kernel="attention_heads_causal_d128"),
           (False, 64): pk_torch.compile(HEADS, kernel="attention_heads_d64")}
    rows, failures = [], 0

    def body(ctx):
        nonlocal failures
        gen = torch.Generator(device="cuda").manual_seed(11)
        for hq, hkv, s, d, causal in SHAPES:
            scale = d ** -0.5
            g = hq // hkv
            q = torch.randn(hq, s, d, device="cuda", generator=gen).to(torch.bfloat16)
            k, v = (torch.randn(hkv, s, d, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(2))
            ke, ve = k.repeat_interleave(g, 0), v.repeat_interleave(g, 0)
            o = torch.full((hq, s, d), float("nan"), device="cuda", dtype=torch.bfloat16)
            lse = torch.full((hq, s, 1), float("nan"), device="cuda")
            if d == 128:
                run = lambda: gqa_causal_d128(ctx, q, k, v, o, lse, g, scale)  # noqa: E731
            else:
                run = lambda: gqa_d64(ctx, q, k, v, o, lse, scale)  # noqa: E731
            run()
            ctx.check_errors()
            torch.cuda.synchronize()
            err = 0.0
            for h0 in range(0, hq, 8):  # float32 math, a few heads at a time
                want = sdpa(SDPBackend.MATH, q[h0:h0 + 8].float(), ke[h0:h0 + 8].float(), ve[h0:h0 + 8].float(),
                            causal, scale)
                err = worse(err, (o[h0:h0 + 8].float() - want).abs().max().item())
                del want
            if not err < 2e-2:
                print(f"MISMATCH Hq={hq} Hkv={hkv} S={s} D={d}: max |err| {err}", flush=True)
                failures += 1
            flops = 4 * hq * s * s * d / (2 if causal else 1)
            t_pk = time_us(run)
            o2 = torch.empty_like(o)
            t_mha = time_us(lambda: mha[(causal, d)](ctx, q, ke, ve, o2, lse, scale))
            t_cudnn = time_us(lambda: sdpa(SDPBackend.CUDNN_ATTENTION, q, ke, ve, causal, scale))
            try:
                t_fa2 = time_us(lambda: sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal, scale, gqa=True))
            except RuntimeError as e:  # a backend without enable_gqa
                print(f"FA2 with enable_gqa unavailable: {e}", flush=True)
                t_fa2 = None
            tf = lambda t: flops / t / 1e6  # noqa: E731
            rows.append((f"{'causal' if causal else 'full'} Hq{hq} Hkv{hkv} S{s} D{d}", t_pk, tf(t_pk), t_mha,
                         t_cudnn, tf(t_cudnn), t_fa2, t_cudnn / t_pk, t_mha / t_pk, err))
        return 0

    pk_torch.run_shared_gpu(1, body)
    lines = ["| B1, bf16 | pkc GQA us | TF/s | pkc per-head on expanded K/V us | cuDNN (expanded) us | TF/s "
             "| FA2 enable_gqa us | cuDNN / pkc | pkc per-head / pkc GQA | max abs err |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        fa2 = "-" if r[6] is None else f"{r[6]:.0f}"
        lines.append(f"| {r[0]} | {r[1]:.0f} | {r[2]:.0f} | {r[3]:.0f} | {r[4]:.0f} | {r[5]:.0f} | {fa2} | "
                     f"{r[7]:.3f} | {r[8]:.3f} | {r[9]:.4f} |")
    print_table(lines, out_path)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
