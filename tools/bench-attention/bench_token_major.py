"""Token-major attention on one GPU: q, k, v, o [S, H, D] (flash-attn's layout;
test/specs/attention_token_major.pk.cpp) on pkc's attention template, against the same template on
head-major [H, S, D] tensors (templates/specs/attention_heads.pk.cpp) and cuDNN SDPA on the
token-major tensors viewed as [1, H, S, D] (strided, as a flash-attn caller passes them), all in
this run. Outputs are checked against cuDNN first (fresh random inputs, outputs poisoned). Prints
a markdown table and appends it to the file named by the first argument.

  PYTHONPATH=python:tools/bench-attention PKC=.carry/pkc python3 tools/bench-attention/bench_token_major.py out.md
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import pk_torch
from bench_attention import print_table, time_us

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN_MAJOR = os.path.join(HERE, "../../test/specs/attention_token_major.pk.cpp")
HEADS = os.path.join(HERE, "../../templates/specs/attention_heads.pk.cpp")
SHAPES = [(32, 4096, 128), (32, 16384, 128), (16, 4096, 64)]


def cudnn(q, k, v, causal, scale):
    """SDPA on [S, H, D] tensors viewed as [1, H, S, D]: the [S, H, D] output."""
    view = lambda t: t.permute(1, 0, 2)[None]  # noqa: E731
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return F.scaled_dot_product_attention(view(q), view(k), view(v), is_causal=causal, scale=scale)[0].permute(1, 0, 2)


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    kernels = {}
    for causal in (False, True):
        for d in (64, 128):
            c = "_causal" if causal else ""
            kernels[(causal, d, "tm")] = pk_torch.compile(TOKEN_MAJOR, kernel=f"token_major{c}_d{d}")
            kernels[(causal, d, "hm")] = pk_torch.compile(HEADS, kernel=f"attention_heads{c}_d{d}")
    rows, failures = [], 0

    def body(ctx):
        nonlocal failures
        gen = torch.Generator(device="cuda").manual_seed(11)
        for causal in (False, True):
            for h, s, d in SHAPES:
                scale = d ** -0.5
                q, k, v = (torch.randn(s, h, d, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(3))
                o = torch.full((s, h, d), float("nan"), device="cuda", dtype=torch.bfloat16)
                lse = torch.full((s, h, 1), float("nan"), device="cuda")
                qh, kh, vh = (t.permute(1, 0, 2).contiguous() for t in (q, k, v))
                oh = torch.full((h, s, d), float("nan"), device="cuda", dtype=torch.bfloat16)
                lseh = torch.full((h, s, 1), float("nan"), device="cuda")
                tm, hm = kernels[(causal, d, "tm")], kernels[(causal, d, "hm")]
                tm(ctx, q, k, v, o, lse, scale)
                hm(ctx, qh, kh, vh, oh, lseh, scale)
                ctx.check_errors()
                torch.cuda.synchronize()
                want = cudnn(q, k, v, causal, scale).float()
                err = (o.float() - want).abs().max().item()
                err_lse = (lse[..., 0].float() - lseh[..., 0].t()).abs().max().item()
                if not (err < 2e-2 and err_lse < 1e-3):
                    print(f"MISMATCH causal={causal} H={h} S={s} D={d}: o {err}, lse vs head-major {err_lse}", flush=True)
                    failures += 1
                flops = 4 * h * s * s * d / (2 if causal else 1)
                t_tm = time_us(lambda: tm(ctx, q, k, v, o, lse, scale))
                t_hm = time_us(lambda: hm(ctx, qh, kh, vh, oh, lseh, scale))
                t_cu = time_us(lambda: cudnn(q, k, v, causal, scale))
                rows.append((f"{'causal' if causal else 'full'} H{h} S{s} D{d}", t_tm, flops / t_tm / 1e6, t_hm,
                             t_cu, t_hm / t_tm, t_cu / t_tm, err))
        return 0

    pk_torch.run_shared_gpu(1, body)
    lines = ["| B1, bf16 | pkc token-major us | TF/s | pkc head-major us | cuDNN on [S, H, D] us "
             "| head-major / token-major | cuDNN / token-major | max abs err |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]:.0f} | {r[2]:.0f} | {r[3]:.0f} | {r[4]:.0f} | {r[5]:.3f} | {r[6]:.3f} | {r[7]:.4f} |")
    print_table(lines, out_path)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
