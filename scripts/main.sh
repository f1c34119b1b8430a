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
echo "Headline (Fig. 7b): how much slower than streaming batch each model is, ours beside the paper's:"
echo "ours with no system cost (ideal), with our executor's costs (sluice), and with the costs of the"
echo "paper's system it stands for (its profile, profiles/*.ini; Ray Data's streaming is the reference)"
awk -F'|' 'function t(v) { gsub(/^ +| +$/, "", v); return v }
  /^[|] [a-z].*[|] slowdown_vs_streaming [|]/ {
    k = t($2) " (" t($3) ")"; p = t($10)
    if (!(k in seen)) { seen[k] = 1; order[++n] = k; paper[k] = t($6) }
    if (p == "ideal" || p == "sluice") v[k, p] = t($5); else { v[k, "sys"] = t($5); sys[k] = p }
  }
  END {
    printf "  %-28s %7s %7s %18s %7s\n", "model (paper'"'"'s system)", "ideal", "sluice", "system profile", "paper"
    for (i = 1; i <= n; i++) {
      k = order[i]
      printf "  %-28s %6sx %6sx %6sx %-10s %6sx\n", k, v[k, "ideal"], v[k, "sluice"], v[k, "sys"], "(" sys[k] ")", paper[k]
    }
  }' runs/experiments/fig7b/report.md
echo
echo "Reports: runs/experiments/fig7b/report.md, runs/experiments/fig9/report.md"
echo "Figures: runs/experiments/fig7b/fig7b.png, runs/experiments/fig9/fig9.png"
