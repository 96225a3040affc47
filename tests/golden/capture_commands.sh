#!/usr/bin/env bash
# Re-captures the golden JSON of commands.txt (estimate, infer, search, sweep,
# db) into tests/golden/. Run from the repository root with a built orrery:
#   tests/golden/capture_commands.sh [build/cli/orrery]
# Re-capture only when a change of the numbers is intended, and say why in
# the commit; tests/golden_test.cpp compares every field within 1e-9.
set -euo pipefail
orrery=${1:-build/cli/orrery}
here=tests/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/golden.sqlite"
while IFS=$'\t' read -r name args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  args=${args//@DB/$db}
  # shellcheck disable=SC2086
  "$orrery" $args > "$here/$name.json" || { rc=$?; [[ $rc -eq 3 ]] || { echo "capture: $name exited $rc" >&2; exit 1; }; }
  sed -i "s|$db|@DB|g" "$here/$name.json"
  echo "captured $name"
done < "$here/commands.txt"
