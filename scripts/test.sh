#!/usr/bin/env bash
# Sets up and builds sluice (scripts/setup.sh), then runs, in order:
#   1. the whole test suite (CTest), in build/;
#   2. the suite again under AddressSanitizer and UndefinedBehaviorSanitizer,
#      in build-asan/ (leaks, overflows, use after free, UB), all but
#      cli_models: it runs the executor paths test_executor and
#      test_fault_matrix cover, at more sizes, and ASan's shadow mapping of
#      its large rows makes it take seven minutes there;
#   3. the executor's tests under ThreadSanitizer, in build-tsan/;
#   4. valgrind memcheck on a short run of each engine (tests/valgrind.sh);
#   5. the regression benchmarks against the committed bench/baseline.csv
#      (`sluice bench`): a simulated result that changed or a slower
#      scheduler fails here unless the baseline was updated with it.
# Arguments go to the first ctest (e.g. -R core). SLUICE_QUICK=1 stops
# after step 1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SLUICE_BUILD_DIR:-$here/build}
jobs=$(nproc)
"$here/scripts/setup.sh"

step() { echo; echo "== $*"; }

step "tests"
ctest --test-dir "$build" --output-on-failure -j"$jobs" "$@"
[ "${SLUICE_QUICK:-0}" = 1 ] && exit 0

# DIR SANITIZERS [TARGET]: configures and builds a sanitized tree.
sanitized_build() {
  cmake -S "$here" -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_WITH_CUDA=OFF \
    -DSLUICE_SANITIZE="$2" >/dev/null
  cmake --build "$1" -j"$jobs" ${3:+--target "$3"} >/dev/null
}

step "tests under AddressSanitizer and UndefinedBehaviorSanitizer"
sanitized_build "$here/build-asan" address,undefined
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$here/build-asan" --output-on-failure -j"$jobs" -E '^cli_models$' 

step "executor tests under ThreadSanitizer"
sanitized_build "$here/build-tsan" thread test_executor
(cd "$here/build-tsan/tests" && TSAN_OPTIONS=halt_on_error=1 ./test_executor)

step "valgrind memcheck: one run of each engine"
bash "$here/tests/valgrind.sh" "$build/sluice" "$here"

step "regression benchmarks (sluice bench)"
"$build/sluice" bench
