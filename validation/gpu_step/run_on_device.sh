#!/bin/bash
# One device call: environment, clocks, then each configuration of
# time_train_step.py in its own process.
# usage: run_on_device.sh OUT_DIR [CONFIG...]
# (default: the four configurations of the first run; a compiled one gets
# 300 s for its compilation, the others 150 s)
out=$1
shift
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(llama1b_eager llama1b_ckpt llama3b_eager llama1b_compile)
cd "$(dirname "$0")/../.." || exit 1
{ date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > "$out/environment.txt" 2>&1
nvidia-smi dmon -s pc -d 1 > "$out/dmon.txt" 2>&1 &
dmon=$!
for c in "${configs[@]}"; do
  limit=150
  [[ $c == *compile* ]] && limit=300
  timeout $limit python3 validation/gpu_step/time_train_step.py "$out/$c.json" "$c"
done
kill $dmon
{ date -u; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; } > "$out/nvidia_smi_after.txt" 2>&1
