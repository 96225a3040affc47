#!/usr/bin/env bash
# Builds and runs the calibration probes on a GPU node, from the repository
# root, with nothing but the CUDA toolkit and a C++ compiler (CMake optional).
#   hardware/calibration/run_on_device.sh OUT_DIR [EIGEN_INCLUDE_DIR]
# Writes into OUT_DIR: environment.txt (nvidia-smi, versions, clocks before
# and after), cuda_quick.json, cuda_full.json, cpu_quick.json (when Eigen is
# found), probe.log (progress, build output) and dmon.txt (clocks and power,
# one line a second, while the CUDA probe runs).
set -u
out=${1:?usage: run_on_device.sh OUT_DIR [EIGEN_INCLUDE_DIR]}
eigen=${2:-/usr/include/eigen3}
mkdir -p "$out"
tmp=$(mktemp -d)   # probe binaries and the standalone build; removed at exit
trap 'rm -rf "$tmp"' EXIT
log="$out/probe.log"
env_txt="$out/environment.txt"
stamp() { echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $*" | tee -a "$log"; }

{
  echo "== date"; date -u
  echo "== host"; hostname; uname -a
  echo "== nvidia-smi"; nvidia-smi
  echo "== nvidia-smi -q (clocks, power, performance) before"; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE
  echo "== nvcc"; nvcc --version
  echo "== cmake"; cmake --version
  echo "== g++"; g++ --version
  echo "== cpu"; nproc; grep -m1 "model name" /proc/cpuinfo
} > "$env_txt" 2>&1

stamp "build cuda probe with nvcc"
nvcc -O2 -std=c++17 -gencode=arch=compute_90,code=[sm_90,compute_90] \
  -o "$tmp"/orrery_cuda_probe hardware/calibration/cuda_probe.cu -lcublasLt -lcublas >> "$log" 2>&1 \
  || { stamp "nvcc build FAILED"; exit 1; }

nvidia-smi dmon -s pc -d 1 > "$out/dmon.txt" 2>&1 &
dmon=$!
stamp "cuda probe --quick"
"$tmp"/orrery_cuda_probe --quick --out "$out/cuda_quick.json" 2>> "$log"
stamp "cuda probe --quick exit $?"
stamp "cuda probe --full"
"$tmp"/orrery_cuda_probe --full --out "$out/cuda_full.json" 2>> "$log"
stamp "cuda probe --full exit $?"
kill "$dmon" 2>/dev/null

{ echo "== nvidia-smi -q (clocks, power, performance) after"; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; } >> "$env_txt" 2>&1

if [ -f "$eigen/Eigen/Dense" ]; then
  stamp "build cpu probe with g++ (Eigen at $eigen)"
  if g++ -O3 -march=native -fopenmp -std=c++20 -I"$eigen" -Ihardware/calibration \
       hardware/calibration/cpu_probe.cpp hardware/calibration/cpu_probe_main.cpp \
       -o "$tmp"/orrery_cpu_probe >> "$log" 2>&1; then
    stamp "cpu probe --quick"
    "$tmp"/orrery_cpu_probe --quick --out "$out/cpu_quick.json" 2>> "$log"
    stamp "cpu probe --quick exit $?"
  else
    stamp "cpu probe build FAILED"
  fi
else
  stamp "no Eigen at $eigen; cpu probe skipped"
fi

if command -v cmake > /dev/null; then
  stamp "standalone CMake build check"
  timeout 120 cmake -S hardware/calibration/standalone -B "$tmp"/orrery_probe_build >> "$log" 2>&1 \
    && timeout 120 cmake --build "$tmp"/orrery_probe_build -j 8 >> "$log" 2>&1
  stamp "standalone CMake build exit $?"
fi
stamp "done"
