#!/bin/bash
# One device call: environment, clocks, then each configuration of
# time_train_step.py in its own process. usage: run_on_device.sh OUT_DIR
out=$1
cd "$(dirname "$0")/../.." || exit 1
{ date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > "$out/environment.txt" 2>&1
nvidia-smi dmon -s pc -d 1 > "$out/dmon.txt" 2>&1 &
dmon=$!
for c in llama1b_eager llama1b_ckpt llama3b_eager; do
  timeout 150 python3 validation/gpu_step/time_train_step.py "$out/$c.json" $c
done
timeout 300 python3 validation/gpu_step/time_train_step.py "$out/llama1b_compile.json" llama1b_compile
kill $dmon
{ date -u; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; } > "$out/nvidia_smi_after.txt" 2>&1
