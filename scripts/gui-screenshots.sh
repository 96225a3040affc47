#!/usr/bin/env bash
# Runs orrery-gui under a virtual X server and saves a PNG of each tab
# (training, timeline, search, sweep, network, inference, validation) on shipped presets.
#   scripts/gui-screenshots.sh [OUT_DIR]     default: docs/gui
# Environment: BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/gui}
gui=${BUILD_DIR:-build}/gui/orrery-gui
if [ ! -x "$gui" ]; then
  echo "gui-screenshots: $gui not built (needs Qt 6; run scripts/setup.sh)" >&2
  exit 1
fi
command -v xvfb-run >/dev/null || { echo "gui-screenshots: xvfb-run not found (apt-get install xvfb xauth)" >&2; exit 1; }
xvfb-run -a -s "-screen 0 1600x1000x24" "$gui" --screenshots "$out"
