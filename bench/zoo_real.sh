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
# usage: bench/zoo_real.sh [COUNT] [SEED] [OUTDIR]   (defaults 20, 1, runs/zoo-real)
# environment: MODELS (default "streaming streaming-plus batch"), SLUICE
#              (the binary, default build/sluice)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
count=${1:-20}
seed=${2:-1}
out=${3:-runs/zoo-real}
sluice=${SLUICE:-$here/build/sluice}
models=${MODELS:-streaming streaming-plus batch}
mkdir -p "$out/runs"
"$sluice" zoo --small --seed "$seed" --count "$count" --out "$out/cases" --quiet

field() { awk -F, -v f="$2" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h[f]}' "$1/summary.csv"; }

csv="$out/zoo_real.csv"
echo "case,model,real_jct_s,sim_jct_s,error_pct,real_pct_of_bound,sim_pct_of_bound" >"$csv.tmp"
for w in "$out"/cases/case-*[0-9].ini; do
  name=$(basename "$w" .ini)
  c="$out/cases/$name.cluster.ini"
  for m in $models; do
    d="$out/runs/$name-$m"
    if ! "$sluice" run "$w" --cluster "$c" --model "$m" --out "$d-real" --quiet >"$d.log" 2>&1 ||
      ! "$sluice" calibrate "$d-real" -o "$d.costs" >>"$d.log" 2>&1 ||
      ! "$sluice" sim "$w" --cluster "$c" --model "$m" --costs "$d.costs" --out "$d-sim" --quiet >>"$d.log" 2>&1; then
      echo "$name,$m,,,,," >>"$csv.tmp"
      echo "bench/zoo_real.sh: $name under $m failed (see $d.log)" >&2
      continue
    fi
    rj=$(field "$d-real" jct_s) sj=$(field "$d-sim" jct_s)
    echo "$name,$m,$rj,$sj,$(awk -v a="$sj" -v b="$rj" 'BEGIN{printf "%.1f", 100*(a-b)/b}'),$(field "$d-real" pct_of_bound),$(field "$d-sim" pct_of_bound)" >>"$csv.tmp"
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
