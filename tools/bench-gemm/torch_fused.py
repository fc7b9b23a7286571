"""PyTorch's AG + GEMM on 2 GPUs, for the same shapes as pk-bench-gemm, beside pkc's figures.

Run under torchrun --nproc_per_node=2 (scripts/gpu_round.sh gemm does, after pk-bench-gemm):
    torch_fused.py <pkc gemm.md> <out.md>
For M x N x K (A sharded by rows over the ranks, B [K, N] on every rank) it times, per call
with CUDA events (median of 15 after 3 warm-ups, slower rank):
  - sequential: all_gather_into_tensor of A, then torch.matmul;
  - fused: torch.ops.symm_mem.fused_all_gather_matmul (multicast off:
    TORCH_SYMM_MEM_DISABLE_MULTICAST=1), checked against the sequential result;
and adds pkc's ag_gemm time from pk-bench-gemm's table of the same device call with the
ratios PyTorch time / pkc time (> 1: pkc faster).
"""
import os
import re
import statistics
import sys

import torch
import torch.distributed as dist

SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (16384, 4096, 8192)]


def timed_us(fn, warm=3, runs=15):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    slowest = torch.tensor([statistics.median(times)], device="cuda")
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return slowest.item()


def pkc_times(path):
    """pk-bench-gemm's ag_gemm rows: {(M, N, K): pkc us}."""
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[1] == "ag_gemm":
            m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", cells[2])
            if m:
                out[tuple(int(v) for v in m.groups())] = float(cells[3])
    return out


def main():
    pkc_md, out_md = sys.argv[1], sys.argv[2]
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    group = dist.group.WORLD
    rank, world = dist.get_rank(), dist.get_world_size()
    fused_error = None
    try:
        from torch.distributed._symmetric_memory import enable_symm_mem_for_group

        enable_symm_mem_for_group(group.group_name)
    except Exception as e:  # newer PyTorch enables it on first use
        print(f"rank {rank}: enable_symm_mem_for_group: {e}", flush=True)
    pkc = pkc_times(pkc_md)
    rows = []
    for m, n, k in SHAPES:
        gen = torch.Generator(device="cuda").manual_seed(17 + rank)
        a_shard = torch.randn(m // world, k, device="cuda", generator=gen).to(torch.bfloat16)
        gen_b = torch.Generator(device="cuda").manual_seed(99)  # the same B on every rank
        b = torch.randn(n, k, device="cuda", generator=gen_b).to(torch.bfloat16).t()
        a_full = torch.empty(m, k, device="cuda", dtype=torch.bfloat16)

        def sequential():
            dist.all_gather_into_tensor(a_full, a_shard)
            return torch.matmul(a_full, b)

        want = sequential()
        seq_us = timed_us(sequential)
        fused_us, err = None, None
        try:
            def fused():
                return torch.ops.symm_mem.fused_all_gather_matmul(
                    a_shard, [b], gather_dim=0, group_name=group.group_name)

            _, outs = fused()
            got = outs[0]
            err = ((got.float() - want.float()).abs().max() /
                   want.float().abs().max().clamp_min(1e-6)).item()
            fused_us = timed_us(fused)
        except Exception as e:
            fused_error = f"{type(e).__name__}: {e}"
            print(f"rank {rank}: fused_all_gather_matmul failed: {fused_error}", flush=True)
        rows.append((m, n, k, seq_us, fused_us, err, pkc.get((m, n, k))))
        dist.barrier()

    if rank == 0:
        lines = [
            "| M x N x K | PyTorch sequential us | PyTorch fused us | fused max rel err | "
            "pkc ag_gemm us | sequential / pkc | fused / pkc |",
            "|---|---|---|---|---|---|---|",
        ]
        for m, n, k, seq_us, fused_us, err, pkc_us in rows:
            f = lambda v, fmt: (fmt % v) if v is not None else "-"
            ratio = lambda t: f"{t / pkc_us:.3f}x" if (t and pkc_us) else "-"
            lines.append(f"| {m}x{n}x{k} | {seq_us:.1f} | {f(fused_us, '%.1f')} | "
                         f"{f(err, '%.2e')} | {f(pkc_us, '%.1f')} | {ratio(seq_us)} | "
                         f"{ratio(fused_us)} |")
        if fused_error:
            lines.append(f"\nfused_all_gather_matmul: {fused_error}")
        text = "\n".join(lines) + "\n"
        print(text, flush=True)
        with open(out_md, "w") as fh:
            fh.write(text)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
