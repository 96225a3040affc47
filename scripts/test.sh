#!/usr/bin/env bash
# Builds with warnings as errors and runs the whole test suite (unit tests,
# spec and error-text tests, the fuzz corpus, and the validation against
# measured runs) through CTest.
#   scripts/test.sh              the suite CI runs
#   scripts/test.sh --sanitize   the same under AddressSanitizer + UBSan (build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--sanitize" ]; then
  export BUILD_DIR=build-asan
  export CMAKE_ARGS="-DORRERY_WERROR=ON -DORRERY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DORRERY_BUILD_CUDA_PROBE=OFF"
else
  export BUILD_DIR=${BUILD_DIR:-build}
  export CMAKE_ARGS="-DORRERY_WERROR=ON ${CMAKE_ARGS:-}"
fi
scripts/setup.sh --no-run
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)"
