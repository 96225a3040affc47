#!/usr/bin/env bash
# Installs the Debian packages Orrery needs (only those missing), configures,
# builds, and runs `orrery estimate` on a shipped example.
#   scripts/setup.sh            install + build (Release) + example
#   scripts/setup.sh --no-run   install + build only
# Environment: BUILD_DIR (default build), CMAKE_ARGS (extra configure flags).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config libyaml-cpp-dev libboost-program-options-dev libeigen3-dev
          nlohmann-json3-dev liblbfgspp-dev libsqlite3-dev libgtest-dev libbenchmark-dev
          libopenmpi-dev openmpi-bin
          # the sanitizer build and the fuzz targets (scripts/test.sh --sanitize, scripts/fuzz.sh)
          clang libclang-rt-14-dev clang-tidy
          # the desktop GUI and its screenshots
          qt6-base-dev qt6-charts-dev qt6-svg-dev xvfb xauth
          # orrery report: charts inlined into the HTML; PDF and the page test
          libjs-chart.js chromium)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
else
  echo "setup: all ${#packages[@]} Debian packages already installed"
fi

build=${BUILD_DIR:-build}
# The GUI is on by default; naming it here also turns it on in a build folder
# configured before it existed (CMAKE_ARGS may still say OFF).
# shellcheck disable=SC2086
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DORRERY_BUILD_GUI=ON ${CMAKE_ARGS:-}
cmake --build "$build" -j"$(nproc)"

if [ "${1:-}" != "--no-run" ]; then
  echo
  echo "\$ $build/cli/orrery estimate configs/scenarios/gpt3-175b-a100.yaml"
  "$build/cli/orrery" estimate configs/scenarios/gpt3-175b-a100.yaml
fi
