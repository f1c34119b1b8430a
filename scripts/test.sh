#!/usr/bin/env bash
# Sets up and builds sluice (scripts/setup.sh), then runs the whole test suite.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$here/scripts/setup.sh"
ctest --test-dir "${SLUICE_BUILD_DIR:-$here/build}" --output-on-failure -j"$(nproc)" "$@"
