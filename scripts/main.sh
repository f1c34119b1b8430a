#!/usr/bin/env bash
# The main job: sets up and builds sluice, then reproduces the paper's
# headline result: video classification under each execution model
# (Fig. 7b, simulated at the paper's scale) and the memory microbenchmark
# (Fig. 9, simulated at paper scale and run for real, scaled). Prints the
# headline table; figures and reports are under runs/experiments/.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$here/scripts/setup.sh"
sluice="${SLUICE_BUILD_DIR:-$here/build}/sluice"
cd "$here"
"$sluice" experiment fig7b --out runs/experiments/fig7b
"$sluice" experiment fig9 --out runs/experiments/fig9
echo
echo "Headline (Fig. 7b): how much slower than streaming batch each model is, ours beside the paper's"
awk -F'|' '/^[|] [a-z].*[|] slowdown_vs_streaming [|]/ {gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3);
  printf "  %-8s (%-16s) ours %6s x   paper %6s x\n", $2, $3, $5, $6}' runs/experiments/fig7b/report.md
echo
echo "Reports: runs/experiments/fig7b/report.md, runs/experiments/fig9/report.md"
echo "Figures: runs/experiments/fig7b/fig7b.png, runs/experiments/fig9/fig9.png"
