#!/usr/bin/env bash
# The simulator against the real executor: for each case, run it for real,
# calibrate a cost model from that run's tasks.csv, simulate the same plan
# with it, and compare JCT and throughput. Prints a table and writes
# OUT/validation.csv. Modelled times run at --time-scale (default 0.5) to
# keep the whole table to a few minutes on two cores. REPS=N (default 1)
# repeats each case and reports the run with the median real JCT, with its
# own calibration and simulation: one real run on this shared 2-core
# machine moves by a few percent.
#
# usage: [REPS=N] [ONLY=REGEX] bench/validate.sh [OUT_DIR] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-runs/validate}
sluice=${2:-$here/build}/sluice
scale=${TIME_SCALE:-0.5}
reps=${REPS:-1}
mkdir -p "$out"
csv="$out/validation.csv"
echo "case,model,real_jct_s,sim_jct_s,error_pct,real_rows_s,sim_rows_s" >"$csv"
field() { awk -F, -v f="$2" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h[f]}' "$1/summary.csv"; }
spec() { # NAME DIR: a built-in spec, or a path as it is
  case $1 in */*) echo "$here/$1" ;; *) echo "$here/$2/$1.ini" ;; esac
}
one_rep() { # dir workload cluster model [extra run args...]: real run, calibration, simulation
  local d=$1 w c m=$4
  w=$(spec "$2" workloads) c=$(spec "$3" workloads/clusters)
  shift 4
  "$sluice" run "$w" --cluster "$c" --model "$m" --time-scale "$scale" --out "$d-real" --quiet "$@" >/dev/null
  "$sluice" calibrate "$d-real" -o "$d.costs" >/dev/null
  "$sluice" sim "$w" --cluster "$c" --model "$m" --costs "$d.costs" --out "$d-sim" --quiet "$@" >/dev/null
}
one() { # name workload cluster model [extra run args...]
  local name=$1 m=$4
  [[ $name =~ ${ONLY:-.} ]] || return 0
  local k best
  for ((k = 1; k <= reps; k++)); do
    one_rep "$out/$name-$k" "${@:2}"
    echo "$(field "$out/$name-$k-real" jct_s) $k"
  done | sort -g | awk -v n="$reps" 'NR == int((n + 1) / 2) {print $2}' >"$out/$name.median"
  best=$(cat "$out/$name.median")
  local r="$out/$name-$best-real" s="$out/$name-$best-sim"
  local rj sj rt st
  rj=$(field "$r" jct_s) sj=$(field "$s" jct_s) rt=$(field "$r" throughput_rows_s) st=$(field "$s" throughput_rows_s)
  echo "$name,$m,$rj,$sj,$(awk -v a="$sj" -v b="$rj" 'BEGIN{printf "%.1f", 100*(a-b)/b}'),$rt,$st" >>"$csv"
}
for m in streaming streaming-noadapt streaming-nopart static batch stream; do
  for b in 80 120 160; do
    one "fig9-small-${b}MB-$m" fig9-small fig9 "$m" --memory "${b}MB"
  done
done
for m in streaming static; do
  one "fig11-small-$m" fig11-small fig11 "$m"
done
scale=1 one images-streaming images local streaming
# Beyond the paper, on three nodes of unequal speed (bench/validate/): a 1->16
# expansion cut at 4 MB, rows that do not divide the target with a filter
# and batches, and an all-to-all of four reducers.
for w in expand oddrows shuffle; do
  for m in streaming streaming-plus static batch stream; do
    one "$w-$m" "bench/validate/$w.ini" bench/validate/expand.cluster.ini "$m"
  done
done
# The sort benchmark's real kernels: a range-partitioned shuffle that spills
# past its store (workloads/sort.ini on sort-local).
for m in streaming batch; do
  scale=1 one "sort-$m" sort sort-local "$m"
done
column -t -s, "$csv"
awk -F, 'NR>1{e=$5<0?-$5:$5; if(e>m)m=e; s+=e; n++} END{printf "cases %d, mean |error| %.1f%%, max |error| %.1f%%\n", n, s/n, m}' "$csv"
