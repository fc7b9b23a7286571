"""Attention with score maps on one GPU: tools/bench-attention/score_maps.pk.cpp's sliding-window,
ALiBi and soft-capped causal kernels (pkc's attention template applying the spec's scores per
score) through pk_torch, against pkc's plain causal kernel (attention_heads.pk.cpp) and PyTorch's
SDPA in the same run: cuDNN plain causal (what the map costs against the best unmasked kernel),
and the memory-efficient backend with the map as an explicit bf16 bias [H, S, S] (how PyTorch
runs a window or ALiBi without FlexAttention; soft-capping has no SDPA form). Every pk output is
checked first against a float32 reference of the spec's scores (fresh random inputs, outputs
poisoned). Prints a markdown table and appends it to the file named by the first argument.

  PYTHONPATH=python PKC=.carry/pkc python3 tools/bench-attention/bench_score_maps.py out.md
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import pk_torch
from bench_attention import print_table, time_us, worse

HERE = os.path.dirname(os.path.abspath(__file__))
MAPS = os.path.join(HERE, "score_maps.pk.cpp")
HEADS = os.path.join(HERE, "../../templates/specs/attention_heads.pk.cpp")

H, S, WINDOW, CAP = 32, 4096, 1024, 20.0


def score_bias(kind, h, s, dev):
    """The map's additive part as a [h, s, s] float32 bias (-inf where masked)."""
    i = torch.arange(s, device=dev)[:, None]
    j = torch.arange(s, device=dev)[None, :]
    causal = j <= i
    if kind == "window":
        keep = causal & (j > i - WINDOW)
        return torch.where(keep, 0.0, float("-inf")).expand(h, s, s)
    slopes = torch.tensor([2.0 ** (-8.0 * (x + 1) / h) for x in range(h)], device=dev)[:, None, None]
    return torch.where(causal, -(i - j).float() * slopes, float("-inf"))


def reference(kind, q, k, v, scale, h0, h1):
    """float32 attention of heads h0:h1 with the spec's scores."""
    s = torch.matmul(q[h0:h1].float(), k[h0:h1].float().transpose(1, 2))
    n = q.shape[1]
    if kind == "softcap":
        s = CAP * torch.tanh(s * (scale / CAP))
        causal = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~causal, float("-inf"))
    else:
        s = s * scale + score_bias(kind, q.shape[0], n, q.device)[h0:h1]
    return torch.matmul(torch.softmax(s, -1), v[h0:h1].float())


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    plain = {d: pk_torch.compile(HEADS, kernel=f"attention_heads_causal_d{d}") for d in (64, 128)}
    rows, failures = [], 0

    def body(ctx):
        nonlocal failures
        gen = torch.Generator(device="cuda").manual_seed(7)
        for kind in ("window", "alibi", "softcap"):
            for d in (64, 128):
                kern = pk_torch.compile(MAPS, kernel=f"{kind}_causal_d{d}")
                scale = d ** -0.5
                q, k, v = (torch.randn(H, S, d, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(3))
                o = torch.full((H, S, d), float("nan"), device="cuda", dtype=torch.bfloat16)
                if kind == "window":
                    run = lambda: kern(ctx, q, k, v, o, WINDOW, scale)  # noqa: E731
                elif kind == "alibi":
                    run = lambda: kern(ctx, q, k, v, o, scale)  # noqa: E731
                else:
                    run = lambda: kern(ctx, q, k, v, o, scale, CAP)  # noqa: E731
                run()
                ctx.check_errors()
                torch.cuda.synchronize()
                err = 0.0
                for h0 in range(0, H, 4):
                    want = reference(kind, q, k, v, scale, h0, h0 + 4)
                    err = worse(err, (o[h0:h0 + 4].float() - want).abs().max().item())
                    del want
                if not err < 2e-2:
                    print(f"MISMATCH {kind} D{d}: max |err| {err}", flush=True)
                    failures += 1
                t_pk = time_us(run)
                lse = torch.empty(H, S, 1, device="cuda")
                o2 = torch.empty_like(o)
                t_plain = time_us(lambda: plain[d](ctx, q, k, v, o2, lse, scale))
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    t_cudnn = time_us(lambda: F.scaled_dot_product_attention(q[None], k[None], v[None],
                                                                             is_causal=True, scale=scale))
                t_bias = None
                if kind != "softcap":
                    bias = score_bias(kind, H, S, q.device).to(torch.bfloat16)[None]
                    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
                        t_bias = time_us(lambda: F.scaled_dot_product_attention(q[None], k[None], v[None],
                                                                                attn_mask=bias, scale=scale))
                    del bias
                flops = 4 * H * S * S * d / 2
                if kind == "window":  # the keys a row sees: about WINDOW of them
                    flops = 4 * H * S * min(WINDOW, S) * d
                rows.append((f"{kind} causal D{d}", t_pk, flops / t_pk / 1e6, t_plain, t_cudnn, t_bias,
                             t_plain / t_pk, t_cudnn / t_pk, None if t_bias is None else t_bias / t_pk, err))
        return 0

    pk_torch.run_shared_gpu(1, body)
    lines = [f"| B1 H{H} S{S} bf16 (window {WINDOW}, cap {CAP:g}) | pkc us | useful TF/s | pkc plain causal us "
             "| cuDNN plain causal us | SDPA efficient + bias us | plain / map | cuDNN plain / map "
             "| SDPA bias / map | max abs err |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f = lambda x, p=0: "-" if x is None else f"{x:.{p}f}"  # noqa: E731
        lines.append(f"| {r[0]} | {r[1]:.0f} | {r[2]:.0f} | {r[3]:.0f} | {r[4]:.0f} | {f(r[5])} | {r[6]:.3f} | "
                     f"{r[7]:.3f} | {f(r[8], 2)} | {r[9]:.4f} |")
    print_table(lines, out_path)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
