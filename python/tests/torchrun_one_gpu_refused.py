"""Under torchrun --nproc_per_node=2 on ONE GPU: two processes cannot share a GPU as pk ranks
(without MPS their kernels never run at once, so their waits would time out). pk_torch.Context()
must raise at once with an error that says so and points at the shared-GPU mode; never hang.
Uses the gloo backend (NCCL refuses two ranks on one device before pk could)."""
import os
import sys

import torch
import torch.distributed as dist

import pk_torch


def main():
    torch.cuda.set_device(0)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    ok = False
    try:
        pk_torch.Context()
        print(f"rank {rank}: a second process on the same GPU was accepted", flush=True)
    except RuntimeError as e:
        ok = "different processes" in str(e) and "PK_SHARED_GPU_RANKS" in str(e)
        print(f"rank {rank}: refused{' as expected' if ok else ' without the reason'}: {e}", flush=True)
    dist.destroy_process_group()
    print(f"rank {rank}: {'passed' if ok else 'FAILED'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
