#!/usr/bin/env bash
# clang-tidy with the checked-in .clang-tidy on the library (core/, models/,
# hardware/, parallelism/, scaling_laws/; not tests, faces or probes). Any
# warning fails (WarningsAsErrors), so the library stays at zero.
#   scripts/tidy.sh            files changed against main (quick; before a commit)
#   scripts/tidy.sh --all      every library source, one clang-tidy per core
#                              (.ci/run runs this after the sanitizer build)
# Uses the compile commands of the clang build (build-asan/, written by
# `scripts/test.sh --sanitize`): a GCC build's flags confuse clang-tidy.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-asan}
[ -f "$build/compile_commands.json" ] || { echo "tidy: run scripts/test.sh --sanitize first (no $build/compile_commands.json)"; exit 2; }
dirs='^(core|models|hardware|parallelism|scaling_laws)/'
if [ "${1:-}" = "--all" ]; then
  mapfile -t files < <(git ls-files '*.cpp' | grep -E "$dirs" | grep -v -E '_test\.cpp$|/standalone/|cuda_probe')
else
  base=$(git merge-base HEAD "${TIDY_BASE:-main}" 2>/dev/null || echo HEAD)
  mapfile -t files < <(git diff --name-only --diff-filter=AM "$base" -- '*.cpp' | grep -E "$dirs" |
                       grep -v -E '_test\.cpp$|/standalone/|cuda_probe' || true)
fi
if ((${#files[@]} == 0)); then echo "tidy: no library sources to check"; exit 0; fi
# A .clang-tidy that does not parse makes clang-tidy fall back to its default
# checks and still exit 0: refuse it here.
if clang-tidy -p "$build" --dump-config "${files[0]}" 2>&1 >/dev/null | grep "Error parsing"; then
  echo "tidy: .clang-tidy does not parse (above)"; exit 2
fi
jobs=${TIDY_JOBS:-$(nproc)}
echo "tidy: ${#files[@]} files, $jobs at a time"
start=$SECONDS
# Each file's findings are printed whole (clang-tidy's own output, the file
# and line of each warning); the list of failing files comes last.
failed=$(printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -I{} sh -c 'out=$(clang-tidy -p "$1" --quiet "$2" 2>/dev/null) || { printf "%s\n" "$out" >&2; echo "$2"; }' _ "$build" {})
echo "tidy: $((SECONDS - start)) s"
if [ -n "$failed" ]; then
  echo "tidy: warnings in:"; printf '  %s\n' $failed; exit 1
fi
echo "tidy: no warnings"
