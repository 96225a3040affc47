#!/usr/bin/env python3
"""Sustained bf16 GEMM throughput by reduction depth K, in the three layouts
a linear layer's training step runs, on one GPU.

hardware::GemmDepthFactor prices a GEMM of depth K < 4096 at
(K / (K + K0)) / (4096 / (4096 + K0)) of the device curve, with K0 = 214
taken from OpenXLA's sm_90 cuBLAS table (short runs below the power cap, TN
only). This measures the same ratio on the device itself, sustained at its
power limit, for each layout of a linear layer's three GEMMs (Narayanan et
al. 2021, Sec. 5.1; PyTorch's F.linear and autograd):

  fwd    Y = X W^T    X [M, K] row-major, W [N, K] row-major   (reduces over K = the input width)
  dgrad  dX = dY W    dY [M, N], W [N, K]                      (reduces over the output width)
  wgrad  dW = dY^T X  dY [T, M] read transposed, X [T, N]      (reduces over the tokens)

For each layout, output shape and K the GEMM runs back to back for
--warm seconds, then for --seconds more timed with CUDA events; the board's
SM clock and power (NVML) are read at the end of each timed block. The K
values are taken in an interleaved order and K = 4096 is measured again at
the end of each layout as a drift check. Random normal bf16 operands.

usage: gemm_depth.py OUT.json [--seconds S] [--warm S]
"""

import json
import platform
import sys
import time

import torch

try:
    import pynvml
except ImportError:  # the clock readings are evidence only
    pynvml = None

KS = [4096, 1024, 2560, 512, 2048, 8192, 1536, 3072, 4096]
OUTPUTS = [(16384, 8192), (32768, 4096)]
LAYOUTS = ["fwd", "dgrad", "wgrad"]


def operands(layout, m, n, k):
    g = torch.Generator(device="cuda").manual_seed(1234)
    def r(*shape):
        return torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=g)
    if layout == "fwd":  # X [m, k] @ W[n, k]^T
        a, b = r(m, k), r(n, k)
        return lambda: torch.matmul(a, b.t())
    if layout == "dgrad":  # dY [m, k] @ W [k, n]: both row-major
        a, b = r(m, k), r(k, n)
        return lambda: torch.matmul(a, b)
    a, b = r(k, m), r(k, n)  # wgrad: dY^T [m, k] (a transposed view) @ X [k, n]
    return lambda: torch.matmul(a.t(), b)


def nvml_read(handle):
    if handle is None:
        return {}
    return {"sm_clock_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
            "power_w": pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0}


def measure(fn, flop, seconds, warm, handle):
    end = time.time() + warm
    while time.time() < end:
        for _ in range(8):
            fn()
        torch.cuda.synchronize()
    reps, elapsed_ms = 0, 0.0
    start_wall = time.time()
    while time.time() - start_wall < seconds:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(16):
            fn()
        e.record()
        e.synchronize()
        elapsed_ms += s.elapsed_time(e)
        reps += 16
    row = {"reps": reps, "ms_per_gemm": elapsed_ms / reps, "tflops": flop * reps / (elapsed_ms * 1e-3) / 1e12}
    row.update(nvml_read(handle))
    return row


def main():
    out = sys.argv[1]
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 1.5
    warm = float(sys.argv[sys.argv.index("--warm") + 1]) if "--warm" in sys.argv else 0.5
    handle = None
    if pynvml is not None:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
    rows = []
    for layout in LAYOUTS:
        for m, n in OUTPUTS:
            for k in KS:
                fn = operands(layout, m, n, k)
                r = measure(fn, 2.0 * m * n * k, seconds, warm, handle)
                r.update({"layout": layout, "m": m, "n": n, "k": k})
                rows.append(r)
                print(f"{layout:5s} {m}x{n} K={k:5d}: {r['tflops']:7.1f} TFLOP/s "
                      f"{r.get('sm_clock_mhz', 0):5} MHz {r.get('power_w', 0):6.1f} W", flush=True)
                del fn
                torch.cuda.empty_cache()
    doc = {"schema": "orrery.gemm_depth.v1", "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "python": platform.python_version(), "seconds": seconds, "warm": warm,
           "command_line": " ".join(sys.argv[1:]), "rows": rows}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
