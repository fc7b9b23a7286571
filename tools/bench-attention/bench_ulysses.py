"""Ulysses sequence-parallel attention (templates/specs/ulysses_attention.pk.cpp) through
pk_torch, against the sequential PyTorch form measured in the same run: all-to-all of q, k, v
(dist.all_to_all_single over NCCL), scaled_dot_product_attention (cuDNN backend) on this rank's
heads, all-to-all of the output back. One process per GPU under torchrun; without torchrun, one
GPU at world size 1, where the all-to-alls are local copies and the baseline is SDPA alone
(what pkc's three launches cost over the attention itself). Every pk output is first checked
against SDPA on the whole sequence (fresh random inputs, outputs poisoned). Prints a markdown
table ("pkc / roofline": the fraction of pkc's own bound for the call reached, pk_torch.roofline)
and appends it to the file named by the first argument.

  PYTHONPATH=python PKC=.carry/pkc python3 tools/bench-attention/bench_ulysses.py out.md
  PYTHONPATH=python PKC=.carry/pkc torchrun --nproc-per-node=2 tools/bench-attention/bench_ulysses.py out.md
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import pk_torch
from bench_attention import run_ranks, start_ranks, time_us  # the same timing as the attention benchmark

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../templates/specs/ulysses_attention.pk.cpp")
SHAPES = [(32, 4096, 128), (32, 16384, 128)]  # (heads, whole sequence, head dim)


def sdpa(q, k, v, causal, scale):
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal, scale=scale)[0]


def torch_ulysses(q, k, v, causal, scale, world):
    """[H, S/W, D] per rank -> all-to-all -> SDPA on H/W heads -> all-to-all back."""
    if world == 1:
        return sdpa(q, k, v, causal, scale)
    h, rows, d = q.shape

    def to_heads(x):  # [H, S/W, D] -> [H/W, S, D]: chunk j of the heads goes to rank j
        out = torch.empty(world, h // world, rows, d, device=x.device, dtype=x.dtype)
        dist.all_to_all_single(out, x.contiguous())
        return out.permute(1, 0, 2, 3).reshape(h // world, world * rows, d)

    oh = sdpa(to_heads(q), to_heads(k), to_heads(v), causal, scale)
    send = oh.reshape(h // world, world, rows, d).permute(1, 0, 2, 3).contiguous()
    out = torch.empty_like(send)
    dist.all_to_all_single(out, send)
    return out.reshape(h, rows, d)


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    distributed = start_ranks()
    kernels = {c: pk_torch.compile(SPEC, kernel=f"ulysses_attention{'_causal' if c else ''}_d128") for c in (False, True)}
    rows, failures = [], 0

    def body(ctx):
        nonlocal failures
        world, me = ctx.world, ctx.rank
        gen = torch.Generator(device="cuda").manual_seed(11)  # the same whole tensors on every rank
        for causal in (False, True):
            for h, s, d in SHAPES:
                n = s // world
                scale = d ** -0.5
                full = [torch.randn(h, s, d, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(3)]
                mine = [ctx.empty((h, n, d), torch.bfloat16) for _ in range(3)]
                for dst, src in zip(mine, full):
                    dst.copy_(src[:, me * n:(me + 1) * n])
                o = ctx.empty((h, n, d), torch.bfloat16)
                scratch = [ctx.empty((h // world, s, d), torch.bfloat16) for _ in range(4)]
                lse = torch.empty((h // world, s, 1), device="cuda")
                o.fill_(float("nan"))
                kern = kernels[causal]
                args = (*mine, o, *scratch, lse, scale)
                kern(ctx, *args)
                ctx.check_errors()
                torch.cuda.synchronize()
                want = sdpa(*full, causal, scale)[:, me * n:(me + 1) * n].float()
                err = (o.float() - want).abs().max().item()
                if not err < 2e-2:
                    print(f"MISMATCH rank {me} causal={causal} H={h} S={s}: max |err| {err}", flush=True)
                    failures += 1
                t_pk = time_us(lambda: kern(ctx, *args), batch=5)
                local = [x.clone() for x in mine]
                t_torch = time_us(lambda: torch_ulysses(*local, causal, scale, world), batch=5)
                flops = 4 * h * s * s * d / (2 if causal else 1) / world
                bound = pk_torch.roofline(SPEC, args, world=world,
                                          kernel=f"ulysses_attention{'_causal' if causal else ''}_d128")
                rows.append((f"{'causal' if causal else 'full'} H{h} S{s} D{d}", world, t_pk, flops / t_pk / 1e6,
                             t_torch, t_torch / t_pk, err, bound["overlap_us"] / t_pk))
        return 0

    run_ranks(body, distributed)
    lines = ["| bf16, per rank | W | pkc us | TF/s per GPU | PyTorch (NCCL all-to-all + cuDNN SDPA) us "
             "| PyTorch / pkc | max abs err | pkc / roofline |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]:.0f} | {r[3]:.0f} | {r[4]:.0f} | {r[5]:.3f} | {r[6]:.4f} | {r[7]:.3f} |")
    table = "\n".join(lines)
    if not distributed or dist.get_rank() == 0:
        print(table, flush=True)
        if out_path:
            with open(out_path, "a") as f:
                f.write(table + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
