#!/usr/bin/env bash
# The workload zoo under every execution model: generates COUNT seeded
# cases (sluice zoo), simulates each under every model, and writes
#   OUTDIR/zoo.csv     one row per case and model: case, model, jct_s,
#                      bound_s, pct_of_bound, peak_store, spilled_bytes,
#                      complete, budget_parts_per_node, tasks, exit,
#                      cpu_time and gpu_time ("BUSY%;REASON:IDLE%": the
#                      share busy and the largest idle reason, summary.csv's
#                      capacity account)
#   OUTDIR/zoo.png/.svg the distribution of % of bound, one curve per model
# and prints per model the median and 10th percentile of % of bound, the
# runs that beat their bound (pct > 100.5: the bound is then NOT a lower
# bound, which is a bug of models/bound.c or of an engine) and the cases
# where another model beats every streaming variant by more than 2 points.
# The cases are in OUTDIR/cases (index.csv describes them), the runs in
# OUTDIR/sims/CASE/MODEL.
#
# usage: bench/zoo.sh [COUNT] [SEED] [OUTDIR]     (defaults 200, 1, runs/zoo)
# environment: MODELS (default: all seven), JOBS (parallel sims, default 2),
#              STORE_FACTOR (every store and memory this many times the
#              case's, default 1),
#              SLUICE (the binary, default build/sluice), SIM_TIMEOUT (wall
#              seconds per sim, default 120), SIM_ARGS (options for every
#              sim; default "--spill-bandwidth 500MB/s", a local SSD a node:
#              a spill that takes no simulated time flatters the models that
#              spill, batch above all; SIM_ARGS="" leaves spill free),
#              ZOO_ARGS (options for sluice zoo: --setups gives the
#              operators on a GPU or taking batches a set-up per slot)
# exit: 0 done (even if some runs beat the bound: read the output), 1 the
#       zoo could not be written, 2 bad usage.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: bench/zoo.sh [COUNT] [SEED] [OUTDIR]"
if [ $# -gt 3 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  echo "$usage" >&2
  [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] && exit 0
  exit 2
fi
count=${1:-200}
seed=${2:-1}
out=${3:-runs/zoo}
case "$count$seed" in
  '' | *[!0-9]*) echo "bench/zoo.sh: COUNT and SEED are whole numbers" >&2; echo "$usage" >&2; exit 2 ;;
esac
sluice=${SLUICE:-$here/build/sluice}
models=${MODELS:-"streaming streaming-plus streaming-noadapt streaming-nopart static batch stream"}
jobs=${JOBS:-2}
tmo=${SIM_TIMEOUT:-120}
sim_args=${SIM_ARGS---spill-bandwidth 500MB/s}
[ -x "$sluice" ] || { echo "bench/zoo.sh: no sluice binary at $sluice (build it first)" >&2; exit 2; }

t0=$(date +%s.%N)
rm -rf "$out/cases" "$out/sims" "$out/cdf"
mkdir -p "$out/sims" "$out/cdf"
# A copy of the binary: a rebuild of build/ while the sims run (a shared
# build folder) must not make half of them fail to start.
cp "$sluice" "$out/.sluice.tmp" && mv "$out/.sluice.tmp" "$out/sluice"
sluice=$out/sluice
# ZOO_ARGS: more options of sluice zoo (--setups: actor-like operators pay a set-up)
# shellcheck disable=SC2086
"$sluice" zoo --seed "$seed" --count "$count" --out "$out/cases" --quiet ${ZOO_ARGS:-} || exit 1
# STORE_FACTOR=F: every node's store and memory F times the case's, the
# rest the same (bench/zoo_memory.sh: more memory must not make a run slower)
factor=${STORE_FACTOR:-1}
if [ "$factor" != 1 ]; then
  for f in "$out"/cases/case-*.cluster.ini; do
    awk -v k="$factor" '
      BEGIN { u["B"] = 1; u["KB"] = 1e3; u["MB"] = 1e6; u["GB"] = 1e9; u["TB"] = 1e12
              u["KiB"] = 1024; u["MiB"] = 1024 ^ 2; u["GiB"] = 1024 ^ 3; u["TiB"] = 1024 ^ 4 }
      /^(store|memory) *= *[0-9.]+ *[A-Za-z]+ *$/ {
        key = $1; v = $0; sub(/^[^=]*= */, "", v); n = v; sub(/[A-Za-z]+ *$/, "", n); unit = v; sub(/^[0-9. ]+/, "", unit)
        if (unit in u) { printf "%s = %.0fB\n", key, n * u[unit] * k; next }
      }
      { print }' "$f" >"$f.tmp" && mv "$f.tmp" "$f"
  done
fi
t1=$(date +%s.%N)

# One line "CASE MODEL" per simulation; two at a time by default.
export sluice out tmo sim_args
run_one() {
  local name=$1 model=$2
  local dir="$out/sims/$name/$model" rc=0
  mkdir -p "$dir"
  # shellcheck disable=SC2086 # SIM_ARGS is a list of options
  timeout "$tmo" "$sluice" sim "$out/cases/$name.ini" --cluster "$out/cases/$name.cluster.ini" \
    --model "$model" --out "$dir" --no-tasks --quiet $sim_args >"$dir/log" 2>&1 || rc=$?
  echo "$rc" >"$dir/rc"
}
export -f run_one
for f in "$out"/cases/case-*.cluster.ini; do
  n=${f##*/}
  n=${n%.cluster.ini}
  for m in $models; do
    echo "$n $m"
  done
done >"$out/jobs.txt"
xargs -P "$jobs" -n 2 bash -c 'run_one "$@"' _ <"$out/jobs.txt"
t2=$(date +%s.%N)

# zoo.csv: the summary of each run (columns found by name), the case's budget.
awk -v out="$out" '
  FNR == 1 && FILENAME ~ /index\.csv$/ { for (i = 1; i <= NF; i++) ih[$i] = i; next }
  FILENAME ~ /index\.csv$/ { budget[$1] = $ih["budget_parts_per_node"]; next }
  {
    split($0, job, " "); name = job[1]; model = job[2]; dir = out "/sims/" name "/" model
    rc = ""; getline rc < (dir "/rc"); close(dir "/rc")
    f = dir "/summary.csv"; hdr = ""; row = ""
    if ((getline hdr < f) > 0) getline row < f
    close(f)
    if (row == "") {
      printf "%s,%s,,,,,,0,%s,,%s\n", name, model, budget[name], rc
      next
    }
    nh = split(hdr, h, ","); split(row, v, ",")
    for (i = 1; i <= nh; i++) col[h[i]] = v[i]
    printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", name, model, col["jct_s"], col["bound_s"],
           col["pct_of_bound"], col["peak_node_store_bytes"], col["spilled_bytes"], col["complete"],
           budget[name], col["tasks"], rc, where_time("cpu"), where_time("gpu")
  }
  # "busy%;top idle reason:%" of one resource class, empty when the cluster has none
  function where_time(k,   cap, r, top, best, i, n) {
    cap = col[k "_capacity_s"] + 0
    if (cap <= 0) return ""
    n = split("admission backpressure input transfer failure packing", r, " ")
    best = -1
    for (i = 1; i <= n; i++) if (col[k "_idle_" r[i] "_s"] + 0 > best) { best = col[k "_idle_" r[i] "_s"] + 0; top = r[i] }
    return sprintf("%.1f;%s:%.1f", 100 * col[k "_busy_s"] / cap, top, 100 * best / cap)
  }
  BEGIN { FS = ","; print "case,model,jct_s,bound_s,pct_of_bound,peak_store,spilled_bytes,complete,budget_parts_per_node,tasks,exit,cpu_time,gpu_time" }
' "$out/cases/index.csv" "$out/jobs.txt" >"$out/.zoo.csv.tmp"
mv "$out/.zoo.csv.tmp" "$out/zoo.csv"

# CDF data, one file per model: % of bound (0 for an incomplete run), sorted.
xmax=110
for m in $models; do
  awk -F, -v m="$m" 'NR > 1 && $2 == m { print ($8 == 1 && $5 != "") ? $5 : 0 }' "$out/zoo.csv" |
    sort -g | awk -v n="$(awk -F, -v m="$m" 'NR > 1 && $2 == m' "$out/zoo.csv" | wc -l)" \
      'BEGIN { print "pct_of_bound,fraction" } { printf "%s,%.6f\n", $1, NR / n }' >"$out/cdf/$m.csv"
  top=$(tail -1 "$out/cdf/$m.csv" | cut -d, -f1)
  xmax=$(awk -v a="$xmax" -v b="$top" 'BEGIN { print (b + 5 > a) ? int(b + 5) : a }')
done
# the axis stops at 150%: a run that far past its bound is in the report
off=$(awk -F, 'NR > 1 && $8 == 1 && $5 > 150' "$out/zoo.csv" | wc -l)
note=""
if [ "$xmax" -gt 150 ]; then
  xmax=150
  note=" (not shown: $off run(s) past 150%)"
fi
expr="title='workload zoo: $count cases of seed $seed, every model (simulated)$note'; xmax=$xmax; n=$(echo "$models" | wc -w)"
i=0
for m in $models; do
  i=$((i + 1))
  expr="$expr; data$i='$out/cdf/$m.csv'; ltitle$i='$m'"
done
plotted=""
if command -v gnuplot >/dev/null; then
  for term in png svg; do
    if gnuplot -e "$expr; term='$term'; out='$out/.zoo.$term.tmp'" "$here/plots/zoo.gp" 2>"$out/gnuplot.log" &&
      [ -s "$out/.zoo.$term.tmp" ]; then
      mv "$out/.zoo.$term.tmp" "$out/zoo.$term"
      plotted="$plotted $out/zoo.$term"
    else
      rm -f "$out/.zoo.$term.tmp"
      echo "bench/zoo.sh: gnuplot failed (see $out/gnuplot.log)" >&2
    fi
  done
else
  echo "bench/zoo.sh: no gnuplot: no figure" >&2
fi
t3=$(date +%s.%N)

# The report.
echo "workload zoo: $count cases of seed $seed under: $models"
awk -F, -v models="$models" '
  function pctl(arr, n, q,   k) { k = int(q * n + 0.999999); if (k < 1) k = 1; return arr[k] }
  NR == 1 { next }
  {
    c = $1; m = $2; ok = ($8 == 1 && $5 != ""); p = ok ? $5 + 0 : 0
    pct[c, m] = p; done[c, m] = ok
    if (!(c in seen)) { seen[c] = 1; cases[++nc] = c }
    n[m]++; if (!ok) inc[m]++
    if ($11 == "" || $11 >= 124) { norun[m]++; nnr++ }   # timeout, no binary, a crash
    if ($11 == 2) { refused[m]++; nrf++ }                   # the model refuses the case
    if (ok && p > 100.5) { beat[m]++; beats[++nb] = sprintf("  %-9s %-18s %6.1f%% of bound (JCT %s s, bound %s s)", c, m, p, $3, $4) }
  }
  END {
    nm = split(models, ms, " ")
    for (i = 1; i <= nm; i++) streaming[ms[i]] = (ms[i] ~ /^streaming/)
    printf "%-18s %5s %10s %8s %8s %11s %22s\n", "model", "runs", "incomplete", "median", "p10", "beat bound", "beats all streaming+2"
    for (i = 1; i <= nm; i++) {
      m = ms[i]; k = 0
      for (j = 1; j <= nc; j++) if ((cases[j], m) in pct) v[++k] = pct[cases[j], m]
      # insertion sort: a few hundred values
      for (a = 2; a <= k; a++) { x = v[a]; b = a - 1; while (b >= 1 && v[b] > x) { v[b + 1] = v[b]; b-- } v[b + 1] = x }
      med = k ? (k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2) : 0
      wins = "-"
      if (!streaming[m]) {
        wins = 0
        for (j = 1; j <= nc; j++) {
          c = cases[j]; best = -1
          for (s = 1; s <= nm; s++) if (streaming[ms[s]] && (c, ms[s]) in pct && pct[c, ms[s]] > best) best = pct[c, ms[s]]
          if (done[c, m] && best >= 0 && pct[c, m] > best + 2) { wins++; winlist[m] = winlist[m] " " substr(c, 6) }
        }
      }
      printf "%-18s %5d %10d %8.1f %8.1f %11d %22s\n", m, k, inc[m], med, k ? pctl(v, k, 0.10) : 0, beat[m], wins
    }
    print ""
    if (nnr > 0) {
      printf "!!! %d run(s) did not run at all (no summary: the binary could not start, a crash, or the sim timeout):", nnr
      for (i = 1; i <= nm; i++) if (norun[ms[i]]) printf " %s %d", ms[i], norun[ms[i]]
      print ""
      print "!!! They count as incomplete (0%) above; see OUTDIR/sims/CASE/MODEL/log."
    }
    if (nrf > 0) {
      printf "%d run(s) refused by their model (exit 2, e.g. static placement short of slots):", nrf
      for (i = 1; i <= nm; i++) if (refused[ms[i]]) printf " %s %d", ms[i], refused[ms[i]]
      print " (incomplete above; the reason is in OUTDIR/sims/CASE/MODEL/log)"
    }
    if (nb > 0) {
      print "!!! BOUND BEATEN: " nb " run(s) finished faster than the bound allows (pct > 100.5)."
      print "!!! The bound is NOT a lower bound for these (a case with task time spread may beat it by chance):"
      for (i = 1; i <= nb; i++) print "!!!" beats[i]
    } else {
      print "no run beat its bound (pct > 100.5): the bound held on every case."
    }
    for (i = 1; i <= nm; i++) if (!streaming[ms[i]] && winlist[ms[i]] != "")
      print "cases where " ms[i] " beats every streaming variant by > 2 points:" winlist[ms[i]]
  }' "$out/zoo.csv"

# sluice's policy (else the paper's) far below its bound: which cases, and
# what they are; nothing when neither ran.
focus=
for m in streaming-plus streaming; do
  case " $models " in *" $m "*) focus=$m; break ;; esac
done
[ -z "$focus" ] || awk -F, -v m="$focus" '
  FILENAME ~ /index\.csv$/ { if (FNR > 1) { d = $0; sub(/^[^"]*"/, "", d); sub(/"$/, "", d); desc[$1] = d }; next }
  FNR > 1 && $2 == m && ($8 != 1 || $5 + 0 < 60) {
    low[++n] = sprintf("  %-9s %5.1f%%%s  %s\n            CPU %s%s", $1, ($8 == 1) ? $5 : 0, ($8 == 1) ? "" : " (incomplete)",
                       desc[$1], busy_idle($12), $13 == "" ? "" : ", GPU " busy_idle($13))
  }
  function busy_idle(f,   p) { split(f, p, ";"); return p[1] "% busy, most idle: " p[2] "%" }
  END {
    if (n == 0) { print m " reached 60% of the bound or more on every case."; exit }
    print n " case(s) where " m " is below 60% of its bound (or did not complete):"
    for (i = 1; i <= n; i++) print low[i]
  }' "$out/cases/index.csv" "$out/zoo.csv"

awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v n="$(wc -l <"$out/jobs.txt")" 'BEGIN {
  printf "wall: %.1f s in all (zoo %.1f s, %d sims %.1f s, report %.1f s)\n", d - a, b - a, n, c - b, d - c }'
echo "wrote $out/zoo.csv$plotted (cases in $out/cases, runs in $out/sims)"
