#!/usr/bin/env python3
"""Time one GPT transformer layer, forward and backward, in bf16 on a GPU.

The layer is the one models::LayerOps describes for a GPT model (LayerNorm,
QKV projection, causal attention with dropout, output projection, dropout +
residual, LayerNorm, GELU MLP of 4h, dropout + residual), written in plain
PyTorch eager mode: cuBLAS GEMMs through nn.Linear / torch.matmul, PyTorch's
own element-wise kernels (no fusion), and attention either through
F.scaled_dot_product_attention (is_causal=True: a fused FlashAttention-type
kernel, "flash") or materialised (Q K^T, masked softmax, dropout, P V).

Each sample is one forward and one backward of the layer (input gradient and
every parameter gradient; gradients set to None before each sample so the
backward writes rather than accumulates), timed with CUDA events around the
two phases. Parameters and activations are bf16 (no fp32 master weights, no
optimizer). Output: one JSON document with the environment and, per shape and
attention mode, the per-sample times and their median / p10 / p90 / min.

usage: time_gpt_layer.py OUT.json [--reps N] [--warmups N]
"""

import json
import math
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F

# (batch, seq, hidden, heads): GPT layers of 1.3B, 6.7B, 30B-class and
# GPT-3 175B width, 2048-token sequences, 2048..8192 tokens per microbatch.
SHAPES = [(4, 2048, 2048, 16), (2, 2048, 4096, 32), (1, 2048, 8192, 64), (1, 2048, 12288, 96)]
DROPOUT = 0.1


class GptLayer(torch.nn.Module):
    def __init__(self, h, a, attention):
        super().__init__()
        self.h, self.a, self.d = h, a, h // a
        self.ln1 = torch.nn.LayerNorm(h)
        self.qkv = torch.nn.Linear(h, 3 * h)
        self.proj = torch.nn.Linear(h, h)
        self.ln2 = torch.nn.LayerNorm(h)
        self.up = torch.nn.Linear(h, 4 * h)
        self.down = torch.nn.Linear(4 * h, h)
        self.attention = attention

    def forward(self, x):
        b, s, h = x.shape
        qkv = self.qkv(self.ln1(x)).view(b, s, 3, self.a, self.d).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # [b, a, s, d]
        if self.attention == "flash":
            o = F.scaled_dot_product_attention(q, k, v, dropout_p=DROPOUT, is_causal=True)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.d))
            causal = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            probs = F.dropout(torch.softmax(scores.masked_fill(causal, float("-inf")), dim=-1), DROPOUT)
            o = torch.matmul(probs, v)
        o = o.transpose(1, 2).reshape(b, s, h)
        x = x + F.dropout(self.proj(o), DROPOUT)
        return x + F.dropout(self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh")), DROPOUT)


def summary(samples):
    s = sorted(samples)
    q = statistics.quantiles(s, n=10, method="inclusive") if len(s) > 1 else [s[0]] * 9
    return {"median_s": statistics.median(s), "p10_s": q[0], "p90_s": q[8], "min_s": s[0], "max_s": s[-1]}


def kernel_names(layer, x, dy):
    """Names of the GPU kernels of one forward + backward (which attention kernel ran)."""
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            y = layer(x)
            y.backward(dy)
            torch.cuda.synchronize()
        names = set()
        for e in prof.key_averages():
            if str(getattr(e, "device_type", "")).endswith("CUDA"):
                names.add(e.key)
        return sorted(names)
    except Exception as exc:  # the profiler is optional evidence only
        return ["profiler failed: %r" % (exc,)]


def time_shape(b, s, h, a, attention, reps, warmups):
    torch.manual_seed(0)
    layer = GptLayer(h, a, attention).to(device="cuda", dtype=torch.bfloat16)
    x = torch.randn(b, s, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(b, s, h, device="cuda", dtype=torch.bfloat16)
    for _ in range(warmups):
        layer.zero_grad(set_to_none=True)
        x.grad = None
        layer(x).backward(dy)
    torch.cuda.synchronize()
    fwd, bwd = [], []
    for _ in range(reps):
        layer.zero_grad(set_to_none=True)
        x.grad = None
        e0, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        e0.record()
        y = layer(x)
        e1.record()
        y.backward(dy)
        e2.record()
        torch.cuda.synchronize()
        fwd.append(e0.elapsed_time(e1) / 1e3)
        bwd.append(e1.elapsed_time(e2) / 1e3)
        del y
    kernels = kernel_names(layer, x, dy) if attention == "flash" and h == SHAPES[0][2] else []
    row = {"batch": b, "seq": s, "hidden": h, "heads": a, "ffn": 4 * h, "dropout": DROPOUT,
           "attention": attention, "dtype": "bf16", "reps": reps, "warmups": warmups,
           "forward": summary(fwd), "backward": summary(bwd),
           "forward_samples_s": fwd, "backward_samples_s": bwd,
           "peak_memory_bytes": torch.cuda.max_memory_allocated()}
    if kernels:
        row["kernels_flash_fwd_bwd"] = kernels
    del layer, x, dy
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return row


def main():
    out = sys.argv[1]
    reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 30
    warmups = int(sys.argv[sys.argv.index("--warmups") + 1]) if "--warmups" in sys.argv else 5
    prop = torch.cuda.get_device_properties(0)
    doc = {"schema": "orrery.gpu_layer.v1",
           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "device": torch.cuda.get_device_name(0), "sm_count": prop.multi_processor_count,
           "memory_bytes": prop.total_memory, "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "python": platform.python_version(),
           "command_line": " ".join(sys.argv), "rows": []}
    for attention in ("flash", "materialized"):
        for (b, s, h, a) in SHAPES:
            t0 = time.time()
            try:
                row = time_shape(b, s, h, a, attention, reps, warmups)
            except Exception as exc:  # keep what was measured
                row = {"batch": b, "seq": s, "hidden": h, "heads": a, "attention": attention, "error": repr(exc)}
                torch.cuda.empty_cache()
            doc["rows"].append(row)
            with open(out, "w") as f:
                json.dump(doc, f, indent=1)
            if "error" in row:
                print("%s b%d s%d h%d a%d: %s" % (attention, b, s, h, a, row["error"]), flush=True)
            else:
                print("%s b%d s%d h%d a%d: fwd %.3f ms, bwd %.3f ms (median of %d; %.1f s)" %
                      (attention, b, s, h, a, row["forward"]["median_s"] * 1e3,
                       row["backward"]["median_s"] * 1e3, reps, time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
