#!/usr/bin/env bash
# The workload zoo for real: the simulator against the real executor on
# generated cases the paper never ran. Writes COUNT small cases
# (`sluice zoo --small`: a few nodes, sleep kernels, costs scaled to a run
# of about 10 s), runs each for real under every model in MODELS,
# calibrates a cost model from each real run, simulates the same case with
# it, and compares. Prints a table and writes
#   OUTDIR/zoo_real.csv  one row per case and model: case, model, real_jct_s,
#                        sim_jct_s, error_pct (sim - real) / real, real and
#                        simulated % of bound
#   OUTDIR/orderings.csv one row per case: the models from fastest to
#                        slowest, real and simulated, and whether they agree
#                        (models within 2% of each other count as tied)
# and a summary: cases within 5%, mean and largest |error|, orderings kept.
# Real runs are timed on this machine: run it on an otherwise idle machine.
#
# One run a side is a draw: a small case ends on a handful of long tasks,
# and which slot the longest lands on comes from the task time spreads,
# which the two engines draw apart (a real task's from its data). Case 5
# of seed 1 under streaming read 10.2 s for real and 13.8 s simulated,
# while the simulation over seeds 1-7 spread 8.7-11.1 s (median 10.1). So,
# as bench/validate.sh does, REPS=N runs each case and model with seeds
# 1..N (--seed k for the real run and its simulation alike) and compares
# the medians, adding two seeds at a time, up to MAX_REPS, while either
# engine's runs spread past SPREAD percent (max - min over the median).
#
# usage: [REPS=N] [SPREAD=PCT] [MAX_REPS=M] [ONLY=REGEX] bench/zoo_real.sh [COUNT] [SEED] [OUTDIR]
#        (defaults 1, 5, 3 x REPS, every case; 20, 1, runs/zoo-real)
# environment: MODELS (default "streaming streaming-plus batch"), SLUICE
#              (the binary, default build/sluice); ONLY keeps the cases
#              whose name (case-005) matches
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
count=${1:-20}
seed=${2:-1}
out=${3:-runs/zoo-real}
sluice=${SLUICE:-$here/build/sluice}
models=${MODELS:-streaming streaming-plus batch}
reps=${REPS:-1}
spread=${SPREAD:-5}
max_reps=${MAX_REPS:-$((3 * reps))}
case "$reps$spread$max_reps" in
  '' | *[!0-9.]*) echo "bench/zoo_real.sh: REPS, SPREAD and MAX_REPS are numbers" >&2; exit 2 ;;
esac
# the cases of an earlier, larger zoo in the same folder are not this one's
rm -rf "$out/cases" "$out/runs"
mkdir -p "$out/runs"
"$sluice" zoo --small --seed "$seed" --count "$count" --out "$out/cases" --quiet

field() { awk -F, -v f="$2" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h[f]}' "$1/summary.csv"; }
median() { sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "-" hi}'; }
spread_pct() { # JCTs on stdin: (max - min) / median, in percent
  sort -g | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", (m > 0 ? 100 * (v[NR] - v[1]) / m : 0)}'
}
over_reps() { # DIR real|sim COLUMN: the column over the repetitions done
  local k
  for ((k = 1; k <= done_reps; k++)); do field "$1-$k-$2" "$3"; done
}
scattered() { # DIR: whether either engine's JCTs so far spread past SPREAD
  local e
  for e in real sim; do
    awk -v s="$(over_reps "$1" "$e" jct_s | spread_pct)" -v lim="$spread" 'BEGIN {exit !(s > lim)}' && return 0
  done
  return 1
}
one_rep() { # DIR K WORKLOAD CLUSTER MODEL: a real run with seed K, its calibration, its simulation
  local d=$1-$2 seed=()
  ((reps > 1)) && seed=(--seed "$2")
  "$sluice" run "$3" --cluster "$4" --model "$5" --out "$d-real" --quiet "${seed[@]}" >"$d.log" 2>&1 &&
    "$sluice" calibrate "$d-real" -o "$d.costs" >>"$d.log" 2>&1 &&
    "$sluice" sim "$3" --cluster "$4" --model "$5" --costs "$d.costs" --out "$d-sim" --quiet "${seed[@]}" >>"$d.log" 2>&1
}

csv="$out/zoo_real.csv"
echo "case,model,real_jct_s,sim_jct_s,error_pct,real_pct_of_bound,sim_pct_of_bound,reps,real_range_s,sim_range_s" \
  >"$csv.tmp"
for w in "$out"/cases/case-*[0-9].ini; do
  name=$(basename "$w" .ini)
  [[ $name =~ ${ONLY:-.} ]] || continue
  c="$out/cases/$name.cluster.ini"
  for m in $models; do
    d="$out/runs/$name-$m"
    failed=
    for ((k = 1; k <= reps; k++)); do one_rep "$d" "$k" "$w" "$c" "$m" || failed=$k; done
    done_reps=$reps
    while [ -z "$failed" ] && ((reps > 1 && done_reps + 2 <= max_reps)) && scattered "$d"; do
      for k in $((done_reps + 1)) $((done_reps + 2)); do one_rep "$d" "$k" "$w" "$c" "$m" || failed=$k; done
      done_reps=$((done_reps + 2))
    done
    if [ -n "$failed" ]; then
      echo "$name,$m,,,,,,,," >>"$csv.tmp"
      echo "bench/zoo_real.sh: $name under $m failed (see $d-$failed.log)" >&2
      continue
    fi
    rj=$(over_reps "$d" real jct_s | median) sj=$(over_reps "$d" sim jct_s | median)
    echo "$name,$m,$rj,$sj,$(awk -v a="$sj" -v b="$rj" 'BEGIN{printf "%.1f", 100*(a-b)/b}'),$(over_reps "$d" real pct_of_bound | median),$(over_reps "$d" sim pct_of_bound | median),$done_reps,$(over_reps "$d" real jct_s | range),$(over_reps "$d" sim jct_s | range)" >>"$csv.tmp"
  done
  printf '.' >&2
done
echo >&2
mv "$csv.tmp" "$csv"

# Orderings: models sorted by JCT, real and simulated. Two orderings agree
# when no pair of models is ordered one way for real and the other way in
# simulation by more than 2% on both sides.
awk -F, '
  NR == 1 { next }
  $3 != "" { c = $1; if (!(c in seen)) { seen[c] = 1; cases[++nc] = c }; k = ++n[c]; m[c, k] = $2; r[c, k] = $3; s[c, k] = $4 }
  function order(c, v,   i, j, t, idx, str) {
    for (i = 1; i <= n[c]; i++) idx[i] = i
    for (i = 2; i <= n[c]; i++) for (j = i; j > 1 && v[c, idx[j]] < v[c, idx[j - 1]]; j--) { t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t }
    str = ""
    for (i = 1; i <= n[c]; i++) str = str (i > 1 ? " < " : "") m[c, idx[i]]
    return str
  }
  END {
    print "case,real_order,sim_order,agree"
    for (x = 1; x <= nc; x++) {
      c = cases[x]; agree = 1
      for (i = 1; i <= n[c]; i++) for (j = 1; j <= n[c]; j++)
        if (r[c, i] < r[c, j] / 1.02 && s[c, i] > s[c, j] * 1.02) agree = 0
      print c "," order(c, r) "," order(c, s) "," agree
    }
  }' "$csv" >"$out/orderings.csv"

column -t -s, "$csv"
echo
column -t -s, "$out/orderings.csv"
echo
awk -F, 'NR > 1 && $5 != "" { e = $5 < 0 ? -$5 : $5; if (e > mx) mx = e; s += e; k++; if (e <= 5) ok++ }
         NR > 1 && $5 == "" { bad++ }
  END { printf "runs %d (%d failed), within 5%%: %d, mean |error| %.1f%%, largest %.1f%%\n", k + bad, bad, ok, k ? s / k : 0, mx }' "$csv"
awk -F, 'NR > 1 { n++; a += $4 } END { printf "cases %d, model orderings kept: %d\n", n, a }' "$out/orderings.csv"
echo "wrote $csv and $out/orderings.csv"
