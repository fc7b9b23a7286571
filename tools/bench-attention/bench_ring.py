"""Ring attention (templates/specs/ring_attention.pk.cpp) through pk_torch, against, in the same
run, pkc's plain attention over heads (attention_heads.pk.cpp: what the ring machinery costs
when idle, the issue's "within 5 % at W = 1") and cuDNN's SDPA on the same rows. Under torchrun
(one process per GPU) the baseline is PyTorch's sequential form: NCCL all-gather of K and V, then
SDPA of this rank's queries against all keys (with the striped causal mask as an explicit mask).
Every pk output is first checked against SDPA on the whole sequence (fresh random inputs, the
striped layout: rank r holds positions i W + r; outputs poisoned). Prints a markdown table and
appends it to the file named by the first argument.

  PYTHONPATH=python:tools/bench-attention PKC=.carry/pkc python3 tools/bench-attention/bench_ring.py out.md
  PYTHONPATH=python:tools/bench-attention PKC=.carry/pkc torchrun --nproc-per-node=2 tools/bench-attention/bench_ring.py out.md
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import pk_torch
from bench_attention import print_table, run_ranks, start_ranks, time_us

HERE = os.path.dirname(os.path.abspath(__file__))
RING = os.path.join(HERE, "../../templates/specs/ring_attention.pk.cpp")
PLAIN = os.path.join(HERE, "../../templates/specs/attention_heads.pk.cpp")
SHAPES = [(32, 4096, 128), (32, 16384, 128)]  # (heads, whole sequence, head dim)


def sdpa(q, k, v, causal, scale, mask=None):
    backend = SDPBackend.CUDNN_ATTENTION if mask is None else SDPBackend.EFFICIENT_ATTENTION
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask, is_causal=causal and mask is None,
                                              scale=scale)[0]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    distributed = start_ranks()
    name = lambda c: f"ring_attention{'_causal' if c else ''}_d128"
    ring = {c: pk_torch.compile(RING, kernel=name(c)) for c in (False, True)}
    plain = {c: pk_torch.compile(PLAIN, kernel=f"attention_heads{'_causal' if c else ''}_d128") for c in (False, True)}
    rows, failures = [], 0

    def body(ctx):
        nonlocal failures
        world, me = ctx.world, ctx.rank
        gen = torch.Generator(device="cuda").manual_seed(13)  # the same whole tensors on every rank
        for causal in (False, True):
            for h, s, d in SHAPES:
                n, scale = s // world, d ** -0.5
                full = [torch.randn(h, s, d, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(3)]
                q = full[0][:, me::world].contiguous()  # the striped layout: positions i W + me
                kr, vr = ctx.empty((2 * h, n, d), torch.bfloat16), ctx.empty((2 * h, n, d), torch.bfloat16)
                kr[:h].copy_(full[1][:, me::world])
                vr[:h].copy_(full[2][:, me::world])
                o, op = (torch.full((h, n, d), float("nan"), device="cuda", dtype=torch.bfloat16) for _ in range(2))
                lse, lp = (torch.empty((h, n, 1), device="cuda") for _ in range(2))
                args = (q, kr, vr, o, lse, op, lp, scale)
                ring[causal](ctx, *args)
                ctx.check_errors()
                torch.cuda.synchronize()
                want = sdpa(*full, causal, scale)[:, me::world].float()
                err = (o.float() - want).abs().max().item()
                if not err < 2e-2:
                    print(f"MISMATCH rank {me} causal={causal} H={h} S={s}: max |err| {err}", flush=True)
                    failures += 1
                t_ring = time_us(lambda: ring[causal](ctx, *args), batch=5)
                k_own, v_own = kr[:h].clone(), vr[:h].clone()
                if world == 1:
                    po, plse = torch.empty_like(o), torch.empty_like(lse)
                    t_plain = time_us(lambda: plain[causal](ctx, q, k_own, v_own, po, plse, scale), batch=5)
                    t_base = time_us(lambda: sdpa(q, k_own, v_own, causal, scale), batch=5)
                else:
                    t_plain = float("nan")
                    pos_q = torch.arange(n, device="cuda") * world + me
                    pos_k = torch.arange(s, device="cuda").view(world, n).t().reshape(-1)  # gathered order
                    mask = (pos_k[None, :] <= pos_q[:, None]) if causal else None

                    def gathered():
                        ks = torch.empty(world, h, n, d, device="cuda", dtype=torch.bfloat16)
                        vs = torch.empty_like(ks)
                        dist.all_gather_into_tensor(ks, k_own)
                        dist.all_gather_into_tensor(vs, v_own)
                        kk = ks.permute(1, 2, 0, 3).reshape(h, s, d)  # key j of rank p at j W + p
                        vv = vs.permute(1, 2, 0, 3).reshape(h, s, d)
                        return sdpa(q, kk, vv, False, scale, mask)
                    t_base = time_us(gathered, batch=5)
                flops = 4 * h * s * s * d / (2 if causal else 1) / world
                rows.append((f"{'causal' if causal else 'full'} H{h} S{s} D{d}", world, t_ring, flops / t_ring / 1e6,
                             t_plain, t_plain / t_ring, t_base, t_base / t_ring, err))
        return 0

    run_ranks(body, distributed)
    lines = ["| bf16, per rank | W | pkc ring us | TF/s per GPU | pkc plain attention us | plain / ring "
             "| baseline us (W = 1: cuDNN SDPA; else NCCL all-gather + SDPA) | baseline / ring | max abs err |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]:.0f} | {r[3]:.0f} | {r[4]:.0f} | {r[5]:.3f} | {r[6]:.0f} | {r[7]:.3f} | {r[8]:.4f} |")
    if not distributed or dist.get_rank() == 0:
        print_table(lines, out_path)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
