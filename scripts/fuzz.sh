#!/usr/bin/env bash
# Runs every libFuzzer target of fuzz/ for a bounded time under AddressSanitizer
# and UBSan, starting from the committed corpus (fuzz/README.md).
#   scripts/fuzz.sh              20 s per target (what CI runs)
#   scripts/fuzz.sh 600          10 minutes per target
#   scripts/fuzz.sh 600 scenario only the named targets
# Environment: BUILD_DIR (default build-asan: the clang sanitizer build of
# `scripts/test.sh --sanitize`, configured here when missing). Targets run one
# after another; for both cores start two runs with different targets. New inputs that add coverage go to
# $BUILD_DIR/fuzz-corpus/<target>/, never into the committed corpus; a failing
# input is saved as $BUILD_DIR/fuzz-findings/<target>-crash-* and the script
# exits 1. The executions of each run are appended to
# $BUILD_DIR/fuzz-executions.log. FUZZ_SEED fixes libFuzzer's seed (.ci/run
# sets it, so a CI run repeats the same mutations and a landing never fails
# on a new random draw; campaigns leave it unset and draw a fresh seed).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
build=${BUILD_DIR:-build-asan}
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(scenario set sweep training_csv inference_csv scaling probe_json law_file)
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" \
    -DORRERY_SANITIZE=ON -DORRERY_BUILD_FUZZ=ON -DORRERY_BUILD_CUDA_PROBE=OFF -DORRERY_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/orrery_fuzz_}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build/fuzz-findings"
status=0
for t in "${targets[@]}"; do
  work="$build/fuzz-corpus/$t"
  mkdir -p "$work"
  log="$build/fuzz-findings/$t.log"
  # -rss_limit_mb and -timeout make a blow-up or a hang a finding, not a stall.
  # The two measured-run targets do real work per input, and the limit is
  # wall time: training_csv fills each row's unstated plan fields with a
  # search (three rows of a 462B model on 6,144 GPUs: 0.23 s in a Release
  # build, 12 s under ASan at -O1); inference_csv simulates saturated
  # servers (a 20,000-token max-load row: 1.9 s under ASan, past 10 s wall
  # at nice 19 beside a build). Their limit is 60 s.
  limit=10
  case "$t" in training_csv | inference_csv) limit=60 ;; esac
  seed_arg=()
  [ -n "${FUZZ_SEED:-}" ] && seed_arg=(-seed="$FUZZ_SEED")
  if "$build/fuzz/orrery_fuzz_$t" "$work" "fuzz/corpus/$t" "${seed_arg[@]}" -max_total_time="$seconds" \
       -timeout="$limit" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
       -artifact_prefix="$build/fuzz-findings/$t-" > "$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    echo "fuzz $t: ${runs:-?} executions in ${seconds} s, no finding"
    echo "$(date -u +%FT%TZ) $t ${runs:-0}" >> "$build/fuzz-executions.log"
  else
    echo "fuzz $t: FINDING (see $log and $build/fuzz-findings/$t-*)"
    tail -30 "$log"
    status=1
  fi
done
exit $status
