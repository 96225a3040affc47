#!/usr/bin/env bash
# Captures the JSON output of the README examples of network, plan, fit,
# validate and calibrate into tests/golden/. Run from the repository root
# with a built orrery: tests/golden/capture.sh [build/cli/orrery]
# golden_verbs_test.cpp runs the same commands (golden_commands.txt) and compares
# every number within a tight relative tolerance, so a refactoring that
# changes the output in substance fails. Re-capture only when a change of
# the numbers is intended, and say why in the commit.
set -euo pipefail
orrery=${1:-build/cli/orrery}
here=tests/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while IFS='|' read -r name args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  args=${args//@TMP@/$tmp}
  # shellcheck disable=SC2086
  eval "\"$orrery\" $args" > "$here/$name.json" || {
    rc=$?
    # validate and check-layer exit 1 on a failed tolerance, an infeasible plan 3; the JSON still counts.
    [[ $rc -eq 1 || $rc -eq 3 ]] || { echo "capture: $name exited $rc" >&2; exit 1; }
  }
  # No machine's path in the tree: the scratch folder is written as @TMP@.
  sed -i "s|$tmp|@TMP@|g" "$here/$name.json"
  echo "captured $name"
done < "$here/golden_commands.txt"
