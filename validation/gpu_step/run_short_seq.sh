#!/bin/bash
# One device call: the short-sequence configurations of time_train_step.py,
# each in its own process, with clocks and power beside them; then, on the
# same machine's idle CPU, `orrery bench` of a build carried in .benchbin/
# (the binary and the shared libraries it links that the GPU image lacks).
# usage: run_short_seq.sh OUT_DIR
out=$1
cd "$(dirname "$0")/../.." || exit 1
{ date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > "$out/environment.txt" 2>&1
nvidia-smi dmon -s pc -d 1 > "$out/dmon.txt" 2>&1 &
dmon=$!
for c in llama1b_s1024 llama1b_s512 w1536_s2048; do
  timeout 150 python3 validation/gpu_step/time_train_step.py "$out/$c.json" $c
done
kill $dmon
{ date -u; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; } > "$out/nvidia_smi_after.txt" 2>&1
if [ -x .benchbin/orrery ]; then
  { lscpu | grep -E "Model name|^CPU\(s\)|MHz"; uptime;
    for i in 1 2 3; do LD_LIBRARY_PATH=.benchbin .benchbin/orrery bench --seconds 4; done; } > "$out/bench.txt" 2>&1
fi
