"""Attention through pk_torch, as the README shows it: the shipped spec over heads
(templates/specs/attention_heads.pk.cpp, pkc's attention template) on ordinary torch tensors
[H, S, D], causal and not, head dims 64 and 128, a length that is not a multiple of the tile,
against torch's float64 softmax(Q K^T * scale) V; fresh random inputs, poisoned outputs; and
pkc's roofline for the same call (pk_torch.roofline) counts its FLOPs exactly. Exits non-zero on
any mismatch."""
import os
import sys

import torch

import pk_torch

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../templates/specs/attention_heads.pk.cpp")


def reference(q, k, v, scale, causal):
    s = (q.double() @ k.double().transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v.double(), torch.logsumexp(s, -1, keepdim=True)


def main():
    bad = 0

    def body(ctx):
        nonlocal bad
        gen = torch.Generator(device="cuda").manual_seed(3)
        for causal in (False, True):
            for d in (64, 128):
                attention = pk_torch.compile(SPEC, kernel=f"attention_heads{'_causal' if causal else ''}_d{d}")
                h, s = 4, 333
                q, k, v = (torch.randn(h, s, d, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(3))
                o = torch.full_like(q, float("nan"))
                lse = torch.full((h, s, 1), float("nan"), device="cuda")
                attention(ctx, q, k, v, o, lse, d ** -0.5)  # o = softmax(q k^T / sqrt(d)) v per head
                ctx.check_errors()
                torch.cuda.current_stream().synchronize()
                want_o, want_lse = reference(q, k, v, d ** -0.5, causal)
                wrong = int((~((o.double() - want_o).abs() <= 0.02 + 0.02 * want_o.abs())).sum())
                wrong += int((~((lse.double() - want_lse).abs() <= 1e-3 + 1e-4 * want_lse.abs())).sum())
                print(f"attention causal={causal} d={d} {h}x{s}: {wrong} mismatches", flush=True)
                bad += wrong
                bound = pk_torch.roofline(SPEC, (q, k, v, o, lse, d ** -0.5),
                                          kernel=f"attention_heads{'_causal' if causal else ''}_d{d}")
                if not causal and bound["flops"] != 4 * h * s * s * d:
                    print(f"roofline: {bound['flops']} FLOPs, want {4 * h * s * s * d}", flush=True)
                    bad += 1
                if not 0 < bound["overlap_us"] <= bound["serial_us"]:
                    print(f"roofline: bad bounds {bound}", flush=True)
                    bad += 1
        return 0

    pk_torch.run_shared_gpu(1, body)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
