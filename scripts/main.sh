#!/usr/bin/env bash
# The main job: sets up and builds sluice, then shows the plan and the
# physical limit of each built-in workload on its cluster.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$here/scripts/setup.sh"
sluice="${SLUICE_BUILD_DIR:-$here/build}/sluice"
cd "$here"
for w in fig9 video fig11 images; do
  echo "== $w"
  "$sluice" plan "$w"
  "$sluice" bound "$w"
  echo
done
