#!/usr/bin/env python3
"""How fast GEMMs run under the power cap when memory-bound kernels share the step.

The CUDA probe times GEMMs back to back, the board at its power limit the
whole time; a training step interleaves them with element-wise kernels that
draw less power, so the clock the GEMMs see depends on the mix
(validation/gpu_step/README.md: 1724-1763 MHz in whole steps against 1562
MHz under back-to-back GEMMs). This times one bf16 GEMM shape of a training
step (8192 tokens x 4096 -> 14336, Llama 3 8B's MLP up projection, 0.96 TFLOP)
in repeating blocks of G GEMMs followed by memory-bound kernels (a bf16
add over 512 MiB tensors) taking about the time share 1 - f of the block,
for several GEMM time shares f, each held for `--seconds` seconds so that
the power management settles. CUDA events time every GEMM block and every
memory block; a thread reads the SM clock and the board power through NVML
every 50 ms. Output: one JSON document; per share f, the GEMM TFLOP/s and
the memory kernels' GB/s (medians over the blocks of the last half of the
hold), and the mean SM clock and power over that half.

usage: gemm_power_mix.py OUT.json [--seconds S]
"""

import json
import statistics
import sys
import threading
import time

import torch

M, K, N = 8192, 4096, 14336
SHARES = [1.0, 0.8, 0.6, 0.4, 0.2, 1.0]  # the last again: drift


def sampler(stop, out):
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        while not stop.is_set():
            out.append((time.time(), pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                        pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0))
            time.sleep(0.05)
    except Exception as exc:  # clocks are evidence only
        out.append(("nvml failed", repr(exc)))


def main():
    out = sys.argv[1]
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 12.0
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(256 * 1024 * 1024, device="cuda", dtype=torch.bfloat16)
    y = torch.randn_like(x)
    z = torch.empty_like(x)
    gemm_flop = 2.0 * M * N * K
    mem_bytes = 3.0 * x.numel() * 2
    # the times of one GEMM and one add, for the block sizes
    for _ in range(20):
        torch.matmul(a, b, out=c)
        torch.add(x, y, out=z)
    torch.cuda.synchronize()
    e0, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
    e0.record()
    for _ in range(10):
        torch.matmul(a, b, out=c)
    e1.record()
    for _ in range(10):
        torch.add(x, y, out=z)
    e2.record()
    torch.cuda.synchronize()
    t_gemm, t_mem = e0.elapsed_time(e1) / 10, e1.elapsed_time(e2) / 10
    samples, stop = [], threading.Event()
    th = threading.Thread(target=sampler, args=(stop, samples), daemon=True)
    th.start()
    doc = {"schema": "orrery.gemm_power_mix.v1", "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "gemm_mnk": [M, N, K],
           "add_elements": x.numel(), "warm_gemm_ms": t_gemm, "warm_add_ms": t_mem, "seconds_per_share": seconds,
           "command_line": " ".join(sys.argv[1:]), "shares": []}
    g = 8  # GEMMs per block (~10 ms)
    for f in SHARES:
        n_mem = 0 if f >= 1.0 else max(1, round(g * t_gemm * (1 - f) / f / t_mem))
        blocks = []
        t_start = time.time()
        while time.time() - t_start < seconds:
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
            ev[0].record()
            for _ in range(g):
                torch.matmul(a, b, out=c)
            ev[1].record()
            for _ in range(n_mem):
                torch.add(x, y, out=z)
            ev[2].record()
            blocks.append((time.time(), ev))
            if len(blocks) % 20 == 0:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        t_end = time.time()
        half = t_start + (t_end - t_start) / 2
        late = [ev for (t, ev) in blocks if t >= half]
        gemm_tf = [g * gemm_flop / (ev[0].elapsed_time(ev[1]) / 1e3) / 1e12 for ev in late]
        mem_gbs = [n_mem * mem_bytes / (ev[1].elapsed_time(ev[2]) / 1e3) / 1e9 for ev in late] if n_mem else []
        gshare = [ev[0].elapsed_time(ev[1]) / ev[0].elapsed_time(ev[2]) for ev in late]
        win = [s for s in samples if isinstance(s[0], float) and half <= s[0] <= t_end]
        row = {"target_gemm_share": f, "gemms_per_block": g, "adds_per_block": n_mem, "blocks": len(blocks),
               "measured_gemm_share": statistics.median(gshare),
               "gemm_tflops_median": statistics.median(gemm_tf), "gemm_tflops_min": min(gemm_tf),
               "gemm_tflops_max": max(gemm_tf),
               "add_gbs_median": statistics.median(mem_gbs) if mem_gbs else None,
               "sm_clock_mhz_mean": statistics.mean(s[1] for s in win) if win else None,
               "power_w_mean": statistics.mean(s[2] for s in win) if win else None, "nvml_samples": len(win)}
        doc["shares"].append(row)
        print("GEMM share %.2f (measured %.3f): GEMM %.0f TFLOP/s (%.0f-%.0f), add %s GB/s, SM %s MHz, %s W" %
              (f, row["measured_gemm_share"], row["gemm_tflops_median"], row["gemm_tflops_min"],
               row["gemm_tflops_max"], "%.0f" % row["add_gbs_median"] if mem_gbs else "-",
               "%.0f" % row["sm_clock_mhz_mean"] if win else "?", "%.0f" % row["power_w_mean"] if win else "?"),
              flush=True)
        with open(out, "w") as fh:
            json.dump(doc, fh, indent=1)
    stop.set()
    doc["nvml_note"] = [s for s in samples if not isinstance(s[0], float)]
    with open(out, "w") as fh:
        json.dump(doc, fh, indent=1)


if __name__ == "__main__":
    main()
