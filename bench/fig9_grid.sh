#!/usr/bin/env bash
# Fig. 9 scaled, for real: every model and ablation at store budgets from
# 60 to 160 MB, JCT as a multiple of the 15 s bound. Writes grid.csv (one
# summary row per run) and prints the grid.
#
# usage: bench/fig9_grid.sh [OUT_DIR] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-runs/fig9-grid}
sluice=${2:-$here/build}/sluice
models=${MODELS:-"streaming streaming-noadapt streaming-nopart static batch stream"}
budgets=${BUDGETS:-"60 80 100 120 140 160"}
mkdir -p "$out"
grid="$out/grid.csv"
rm -f "$grid"
for m in $models; do
  for b in $budgets; do
    dir="$out/$m-${b}MB"
    # batch materializes every stage: past the budget it spills (the paper's
    # Spark spilled too); --on-full oom would turn those cells into OOM
    "$sluice" run "$here/workloads/fig9-small.ini" --cluster "$here/workloads/clusters/fig9.ini" \
      --memory "${b}MB" --model "$m" --out "$dir" --quiet >/dev/null 2>&1 || true
    if [ -f "$dir/summary.csv" ]; then
      [ -f "$grid" ] || head -1 "$dir/summary.csv" | sed 's/^/budget_mb,/' >"$grid"
      tail -1 "$dir/summary.csv" | sed "s/^/$b,/" >>"$grid"
    fi
  done
done
awk -F, -v budgets="$budgets" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next}
  { key=$h["model"]; b=$1
    v=($h["complete"]==1)?sprintf("%.2fx", $h["jct_s"]/$h["bound_s"]):($h["oom"]==1?"OOM":"fail")
    if ($h["spilled_bytes"]>0 && v!="OOM") v=v"*"
    cell[key","b]=v; if(!(key in seen)){seen[key]=1; order[++n]=key} }
  END { m=split(budgets, cols, " "); printf "%-18s", "model \\ budget"
        for(j=1;j<=m;j++) printf "%9s", cols[j]"MB"; print ""
        for(i=1;i<=n;i++){ printf "%-18s", order[i]; for(j=1;j<=m;j++) printf "%9s", cell[order[i]","cols[j]]; print "" }
        print "(JCT / 15 s bound; * = spilled to disk)" }' "$grid"
