#!/bin/bash
# One device call: the short-sequence configurations of time_train_step.py
# (run_on_device.sh with their names), then, on the same machine's idle CPU,
# `orrery bench` of a build carried in .benchbin/ (the binary and the shared
# libraries it links that the GPU image lacks).
# usage: run_short_seq.sh OUT_DIR
out=$1
cd "$(dirname "$0")/../.." || exit 1
bash validation/gpu_step/run_on_device.sh "$out" llama1b_s1024 llama1b_s512 w1536_s2048
if [ -x .benchbin/orrery ]; then
  { lscpu | grep -E "Model name|^CPU\(s\)|MHz"; uptime;
    for i in 1 2 3; do LD_LIBRARY_PATH=.benchbin .benchbin/orrery bench --seconds 4; done; } > "$out/bench.txt" 2>&1
fi
