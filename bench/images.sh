#!/usr/bin/env bash
# The real-kernel pipeline (JPEG decode, resize and normalize, GEMM
# classifier): achieved rows/s against the bound computed from the kernel
# costs measured in the same run (busy slot-seconds per resource class over
# the slots of that class). Median of RUNS runs.
#
# usage: bench/images.sh [RUNS] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-3}
sluice=${2:-$here/build}/sluice
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$runs"); do
  "$sluice" run "$here/workloads/images.ini" --cluster "$here/workloads/clusters/local.ini" \
    --out "$out/r$r" --quiet >/dev/null
  # CPU slots 2, GPU slots 1 (workloads/clusters/local.ini); the plan's
  # operators: the fused CPU source and the GPU classifier
  awk -F, -v run="$r" '
    FNR==1 && FILENAME ~ /summary/ {for(i=1;i<=NF;i++)s[$i]=i; next}
    FILENAME ~ /summary/ {rows=$s["rows"]; jct=$s["jct_s"]; next}
    FNR==1 {for(i=1;i<=NF;i++)t[$i]=i; next}
    $t["status"]=="done" { busy[$t["op_name"]] += $t["end_s"]-$t["start_s"] }
    END {
      cpu = busy["images->decode->normalize"] / 2; gpu = busy["classify"] / 1
      bound = cpu > gpu ? cpu : gpu
      printf "run %d: %.1f rows/s achieved, bound from measured costs %.1f rows/s (cpu %.2f s, gpu %.2f s of work per slot): %.1f%%\n",
        run, rows/jct, rows/bound, cpu, gpu, 100*bound/jct }' "$out/r$r/summary.csv" "$out/r$r/tasks.csv"
done | tee "$out/all.txt"
sort -t: -k2 -n "$out/all.txt" | awk -v n="$runs" 'NR==int((n+1)/2){print "median " $0}'
