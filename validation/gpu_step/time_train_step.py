#!/usr/bin/env python3
"""Time whole training steps of small Llama-shaped models on one GPU.

Where ../gpu_layer/ times one GPT layer, this times what a training step
spends beyond the layers too: the embedding, the output projection over a
128K vocabulary and the cross entropy, gradient accumulation over
microbatches, gradient-norm clipping and the AdamW update. The model is
written the way torchtitan's Llama code of 2024 runs it in eager mode
(torchtitan/models/llama/model.py, norms.py): RMSNorm computed in fp32
(_norm(x.float()).type_as(x) * weight), the rotary embedding applied in
fp32 complex arithmetic, grouped-query attention through
F.scaled_dot_product_attention(is_causal=True), SwiGLU as
w2(silu(w1(x)) * w3(x)), the loss as F.cross_entropy on logits upcast to
fp32. Parameters and AdamW states are fp32; the forward and backward run
under torch.autocast(bfloat16) (one GPU: no data parallelism, nothing to
all-gather). Optionally every transformer block is wrapped in activation
checkpointing (torch.utils.checkpoint, non-reentrant), or the blocks are
compiled with torch.compile (fused element-wise kernels).

A step = grad_accum microbatches of forward + backward, then
clip_grad_norm_(1.0) and a fused AdamW step, timed with CUDA events; the
optimizer part (clip + step + zero_grad) is timed on its own too. One step is
run under the PyTorch profiler and its GPU kernel time summed per kernel
name, so that GEMMs, attention, element-wise kernels, the loss and the
optimizer can be told apart. Output: one JSON document per run.

usage: time_train_step.py OUT.json CONFIG [--steps N] [--warmups N]
CONFIG: one of the names in CONFIGS below.
"""

import json
import math
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F
import torch.utils.checkpoint

# name: (layers, hidden, heads, kv_heads, ffn, vocab, tied, seq, micro_batch, grad_accum, mode)
# Llama 3.2 1B and 3B shapes (meta-llama/Llama-3.2-{1B,3B} config.json:
# hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
# intermediate_size, vocab_size 128256, tie_word_embeddings true).
CONFIGS = {
    "llama1b_eager": (16, 2048, 32, 8, 8192, 128256, True, 4096, 2, 4, "eager"),
    "llama1b_ckpt": (16, 2048, 32, 8, 8192, 128256, True, 4096, 4, 2, "checkpoint"),
    "llama3b_eager": (28, 3072, 24, 8, 8192, 128256, True, 4096, 1, 8, "eager"),
    "llama1b_compile": (16, 2048, 32, 8, 8192, 128256, True, 4096, 2, 4, "compile"),
    # The same 1B model and 32,768 tokens a step in shorter sequences (more,
    # shorter rows: attention's share falls, the GEMMs' and element-wise
    # kernels' rises), the regime where llm-foundry's published H100 rows at
    # 512-2048 tokens are predicted 10-15 % fast and those at 16k-65k within
    # 2 % (validation/training_runs.csv).
    "llama1b_s1024": (16, 2048, 32, 8, 8192, 128256, True, 1024, 8, 4, "eager"),
    "llama1b_s512": (16, 2048, 32, 8, 8192, 128256, True, 512, 16, 4, "eager"),
    # A narrower model of MPT-760M's width and depth (llm-foundry
    # scripts/train/yamls/pretrain/mpt-760m.yaml: d_model 1536, 24 layers,
    # 12 heads, vocabulary 50,368) written as this Llama (SwiGLU of 4096 =
    # 8/3 x 1536, all heads with their own K/V, tied embeddings), at 2,048
    # tokens and micro batch 16, 65,536 tokens a step.
    "w1536_s2048": (24, 1536, 12, 12, 4096, 50368, True, 2048, 16, 2, "eager"),
}


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        # the weight in the activations' datatype, as torchtitan's bf16 FSDP
        # parameters are (here fp32 parameters under autocast: cast it)
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight.type_as(x)


def rotary(x, freqs):  # x: [b, s, heads, d]; freqs: complex [s, d/2]
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * freqs[None, :, None, :]).flatten(3)
    return out.type_as(x)


class Block(torch.nn.Module):
    def __init__(self, h, a, kv, ffn):
        super().__init__()
        self.a, self.kv, self.d = a, kv, h // a
        self.attention_norm = RMSNorm(h)
        self.wq = torch.nn.Linear(h, a * self.d, bias=False)
        self.wk = torch.nn.Linear(h, kv * self.d, bias=False)
        self.wv = torch.nn.Linear(h, kv * self.d, bias=False)
        self.wo = torch.nn.Linear(a * self.d, h, bias=False)
        self.ffn_norm = RMSNorm(h)
        self.w1 = torch.nn.Linear(h, ffn, bias=False)
        self.w2 = torch.nn.Linear(ffn, h, bias=False)
        self.w3 = torch.nn.Linear(h, ffn, bias=False)

    def forward(self, x, freqs):
        b, s, _ = x.shape
        y = self.attention_norm(x)
        q = rotary(self.wq(y).view(b, s, self.a, self.d), freqs)
        k = rotary(self.wk(y).view(b, s, self.kv, self.d), freqs)
        v = self.wv(y).view(b, s, self.kv, self.d)
        rep = self.a // self.kv  # torchtitan repeat_kv: expand the kv heads
        k = k[:, :, :, None, :].expand(b, s, self.kv, rep, self.d).reshape(b, s, self.a, self.d)
        v = v[:, :, :, None, :].expand(b, s, self.kv, rep, self.d).reshape(b, s, self.a, self.d)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.wo(o.transpose(1, 2).reshape(b, s, -1))
        y = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(y)) * self.w3(y))


class Llama(torch.nn.Module):
    def __init__(self, layers, h, a, kv, ffn, vocab, tied, seq):
        super().__init__()
        self.tok_embeddings = torch.nn.Embedding(vocab, h)
        self.layers = torch.nn.ModuleList([Block(h, a, kv, ffn) for _ in range(layers)])
        self.norm = RMSNorm(h)
        self.output = torch.nn.Linear(h, vocab, bias=False)
        if tied:
            self.output.weight = self.tok_embeddings.weight
        d = h // a
        inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2).float() / d))
        self.register_buffer("freqs", torch.polar(torch.ones(seq, d // 2), torch.outer(torch.arange(seq).float(), inv)),
                             persistent=False)
        self.checkpoint = False

    def forward(self, tokens):
        # bf16 activations from the embedding on, as with torchtitan's bf16
        # parameters (an fp32 embedding table would carry an fp32 residual)
        x = self.tok_embeddings(tokens).to(torch.bfloat16)
        for layer in self.layers:
            if self.checkpoint:
                x = torch.utils.checkpoint.checkpoint(layer, x, self.freqs, use_reentrant=False)
            else:
                x = layer(x, self.freqs)
        return self.output(self.norm(x))


def summary(samples):
    s = sorted(samples)
    return {"median_s": statistics.median(s), "min_s": s[0], "max_s": s[-1]}


def run(name, steps, warmups):
    layers, h, a, kv, ffn, vocab, tied, seq, mb, accum, mode = CONFIGS[name]
    torch.manual_seed(0)
    model = Llama(layers, h, a, kv, ffn, vocab, tied, seq).cuda()
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.02) if p.dim() > 1 else None
    model.checkpoint = mode == "checkpoint"
    if mode == "compile":
        for i, layer in enumerate(model.layers):
            model.layers[i] = torch.compile(layer)
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    batches = [torch.randint(0, vocab, (mb, seq + 1), device="cuda") for _ in range(accum)]

    def step(events=None):
        for tok in batches:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(tok[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1).float(), tok[:, 1:].flatten()) / accum
            loss.backward()
            del logits
        if events:
            events[1].record()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    t_warm = time.time()
    for _ in range(warmups):
        step()
    torch.cuda.synchronize()
    t_warm = time.time() - t_warm
    torch.cuda.reset_peak_memory_stats()
    total, optim = [], []
    for _ in range(steps):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        ev[0].record()
        step(ev)
        ev[2].record()
        torch.cuda.synchronize()
        total.append(ev[0].elapsed_time(ev[2]) / 1e3)
        optim.append(ev[1].elapsed_time(ev[2]) / 1e3)
    peak = torch.cuda.max_memory_allocated()
    reserved = torch.cuda.max_memory_reserved()

    kernels = {}
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        for e in prof.key_averages():
            if str(getattr(e, "device_type", "")).endswith("CUDA"):
                t = getattr(e, "device_time_total", None)
                if t is None:
                    t = getattr(e, "cuda_time_total", 0)
                kernels[e.key] = {"us": t, "calls": e.count}
    except Exception as exc:  # the profile is evidence only
        kernels = {"profiler failed": repr(exc)}

    tokens = mb * seq * accum
    row = {"config": name, "layers": layers, "hidden": h, "heads": a, "kv_heads": kv, "ffn": ffn, "vocab": vocab,
           "tied_embeddings": tied, "seq": seq, "micro_batch": mb, "grad_accum": accum, "mode": mode,
           "params": params, "tokens_per_step": tokens, "steps": steps, "warmups": warmups,
           "warmup_wall_s": t_warm, "step": summary(total), "optimizer": summary(optim),
           "step_samples_s": total, "optimizer_samples_s": optim,
           "peak_allocated_bytes": peak, "peak_reserved_bytes": reserved, "kernels_one_step": kernels}
    med = row["step"]["median_s"]
    print("%s: %.1f M params, step %.4f s (optimizer %.4f s), %.0f tokens/s, peak %.1f GB; warm-up %.0f s" %
          (name, params / 1e6, med, row["optimizer"]["median_s"], tokens / med, peak / 1e9, t_warm), flush=True)
    return row


def main():
    out, name = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 6
    warmups = int(sys.argv[sys.argv.index("--warmups") + 1]) if "--warmups" in sys.argv else 2
    prop = torch.cuda.get_device_properties(0)
    doc = {"schema": "orrery.gpu_step.v1", "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "device": torch.cuda.get_device_name(0), "sm_count": prop.multi_processor_count,
           "memory_bytes": prop.total_memory, "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "python": platform.python_version(),
           "command_line": " ".join(sys.argv[1:])}
    try:
        doc["row"] = run(name, steps, warmups)
    except Exception as exc:  # keep the environment and the reason
        doc["error"] = repr(exc)
        print("%s: %r" % (name, exc), flush=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
