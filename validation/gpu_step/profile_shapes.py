#!/usr/bin/env python3
"""One microbatch of a time_train_step.py configuration under the PyTorch
profiler with input shapes recorded: per ATen operator and input shapes,
the calls and the GPU time of the kernels it launched (self device time),
so that each element-wise kernel of the eager step can be matched to the
tensors it reads and writes. Writes OUT.json (the table) and OUT.trace.json
(the Chrome trace of the same microbatch).

usage: profile_shapes.py OUT.json CONFIG
"""

import json
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import time_train_step as t  # noqa: E402


def main():
    out, name = sys.argv[1], sys.argv[2]
    layers, h, a, kv, ffn, vocab, tied, seq, mb, accum, mode = t.CONFIGS[name]
    torch.manual_seed(0)
    model = t.Llama(layers, h, a, kv, ffn, vocab, tied, seq).cuda()
    model.checkpoint = mode == "checkpoint"
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    tok = torch.randint(0, vocab, (mb, seq + 1), device="cuda")

    def micro():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tok[:, :-1])
        F.cross_entropy(logits.flatten(0, 1).float(), tok[:, 1:].flatten()).backward()

    for _ in range(2):  # warm-up; the second microbatch accumulates into .grad
        micro()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        micro()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        opt.step()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages(group_by_input_shape=True):
        dev = getattr(e, "self_device_time_total", None)
        if dev is None:
            dev = getattr(e, "self_cuda_time_total", 0)
        if dev <= 0:
            continue
        rows.append({"op": e.key, "input_shapes": str(e.input_shapes), "calls": e.count, "self_device_us": dev})
    rows.sort(key=lambda r: -r["self_device_us"])
    with open(out, "w") as f:
        json.dump({"config": name, "what": "one microbatch (the third: .grad accumulates) + clip + AdamW step",
                   "torch": torch.__version__, "rows": rows}, f, indent=1)
    prof.export_chrome_trace(out.replace(".json", ".trace.json"))
    for r in rows[:40]:
        print("%9.0f us %5d  %-40s %s" % (r["self_device_us"], r["calls"], r["op"][:40], r["input_shapes"][:110]))


if __name__ == "__main__":
    main()
