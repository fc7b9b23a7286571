"""Forward attention on one GPU: the shipped attention spec over heads
(templates/specs/attention_heads.pk.cpp) through pk_torch, on pkc's attention template and (one
head of 4096) its general tile path, against PyTorch's scaled_dot_product_attention with the
cuDNN and FlashAttention-2 backends, all measured in this run. Before timing, every pk output is
checked against SDPA's math backend in float32 where that fits in memory, else against cuDNN
(fresh random inputs, outputs poisoned). Prints a markdown table (TF/s counts 4 S_q S_k D, half
when causal; "pkc / roofline" is the fraction of pkc's own bound, `pkc --roofline`, reached) and
appends it to the file named by the first argument.

  PYTHONPATH=python PKC=.carry/pkc python3 tools/bench-attention/bench_attention.py out.md
"""
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import pk_torch

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../templates/specs/attention_heads.pk.cpp")


def worse(err, e):
    """The larger of two errors, NaN if either is (Python's max would drop a NaN)."""
    return float("nan") if math.isnan(err) or math.isnan(e) else max(err, e)


def print_table(lines, out_path=None):
    """Prints a markdown table and appends it to out_path, if given."""
    table = "\n".join(lines)
    print(table, flush=True)
    if out_path:
        with open(out_path, "a") as f:
            f.write(table + "\n")


def start_ranks():
    """Under torchrun (WORLD_SIZE > 1): this process's GPU and NCCL process group; True then."""
    import torch.distributed as dist
    if "WORLD_SIZE" not in os.environ or int(os.environ["WORLD_SIZE"]) < 2:
        return False
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    dist.init_process_group("nccl")
    return True


def run_ranks(body, distributed):
    """body(ctx) on this process's rank under torchrun, else at world size 1 on one GPU."""
    if distributed:
        ctx = pk_torch.Context()
        body(ctx)
        ctx.close()
    else:
        pk_torch.run_shared_gpu(1, body)


def time_us(fn, reps=10, warm=3, batch=10):
    """Median over reps of the mean time of `batch` calls in a row: the host's work for one call
    (pk_torch builds the tensor maps, torch its own) overlaps the GPU's work on the previous."""
    for _ in range(warm):
        fn()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        start[i].record()
        for _ in range(batch):
            fn()
        end[i].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) * 1e3 / batch for s, e in zip(start, end))
    return times[len(times) // 2]


def sdpa(backend, q, k, v, causal, scale):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal, scale=scale)[0]


# (heads, sequence, head dim): the one-GPU shapes (B1 H32 S4096/16384 D128; B16 H16 S2048
# D64 as 256 heads), and one head alone.
SHAPES = [(1, 4096, 128), (1, 16384, 128), (32, 4096, 128), (32, 16384, 128), (256, 2048, 64)]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    kernels = {}
    pkc = os.environ.get("PKC", "pkc")
    for causal in (False, True):
        for d in (64, 128):
            name = f"attention_heads{'_causal' if causal else ''}_d{d}"
            kernels[(causal, d, True)] = pk_torch.compile(SPEC, kernel=name)
            kernels[(causal, d, False)] = pk_torch.compile(SPEC, kernel=name, templates=False)
    rows = []
    failures = 0

    def body(ctx):
        nonlocal failures
        gen = torch.Generator(device="cuda").manual_seed(7)
        for causal in (False, True):
            for h, s, d in SHAPES:
                scale = d ** -0.5
                q, k, v = (torch.randn(h, s, d, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(3))
                o = torch.full((h, s, d), float("nan"), device="cuda", dtype=torch.bfloat16)
                lse = torch.full((h, s, 1), float("nan"), device="cuda")
                tmpl = kernels[(causal, d, True)]
                tmpl(ctx, q, k, v, o, lse, scale)
                ctx.check_errors()
                torch.cuda.synchronize()
                # Against float32 math where it fits, else against cuDNN (itself a bf16 kernel).
                small = h * s * s <= 32 * 4096 * 4096
                want = (sdpa(SDPBackend.MATH, q.float(), k.float(), v.float(), causal, scale) if small
                        else sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal, scale).float())
                err = (o.float() - want).abs().max().item()
                if not err < 2e-2:
                    print(f"MISMATCH causal={causal} H={h} S={s} D={d}: max |err| {err}", flush=True)
                    failures += 1
                del want
                flops = 4 * h * s * s * d / (2 if causal else 1)
                t_pk = time_us(lambda: tmpl(ctx, q, k, v, o, lse, scale))
                t_gen = None
                if h * s <= 4096:
                    gen_k = kernels[(causal, d, False)]
                    t_gen = time_us(lambda: gen_k(ctx, q, k, v, o, lse, scale), reps=3, warm=1, batch=2)
                t_cudnn = time_us(lambda: sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal, scale))
                t_fa2 = time_us(lambda: sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal, scale))
                tf = lambda t: flops / t / 1e6  # noqa: E731
                bound = pk_torch.roofline(SPEC, (q, k, v, o, lse, scale), pkc=pkc,
                                          kernel=f"attention_heads{'_causal' if causal else ''}_d{d}")["overlap_us"]
                rows.append((f"{'causal' if causal else 'full'} H{h} S{s} D{d}", t_pk, tf(t_pk),
                             "-" if t_gen is None else f"{t_gen:.0f}", t_cudnn, tf(t_cudnn), t_fa2,
                             tf(t_fa2), t_cudnn / t_pk, t_fa2 / t_pk, err, bound / t_pk))
        return 0

    pk_torch.run_shared_gpu(1, body)
    lines = ["| B1, bf16 | pkc us | TF/s | pkc general path us | cuDNN us | TF/s | FA2 us | TF/s "
             "| cuDNN / pkc | FA2 / pkc | max abs err | pkc / roofline |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]:.0f} | {r[2]:.0f} | {r[3]} | {r[4]:.0f} | {r[5]:.0f} | {r[6]:.0f} | "
                     f"{r[7]:.0f} | {r[8]:.3f} | {r[9]:.3f} | {r[10]:.4f} | {r[11]:.3f} |")
    print_table(lines, out_path)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
