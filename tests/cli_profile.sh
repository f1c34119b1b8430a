#!/usr/bin/env bash
# System cost profiles as a user meets them: `--profile NAME` of sim, run
# and bound reads profiles/NAME.ini and charges the system's costs beside
# the operators' work (summary.csv says which profile); a profile that
# charges per partition slows small partitions most (the left arm of the
# paper's Fig. 10a); a bad profile is refused with its file and line.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src" || exit 1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Fig. 10a's pipeline at 1/16 of its rows: partitions of 1 and of 64 rows
spec=experiments/fig10a/fig10a.ini
cluster=experiments/fig10a/cluster.ini
for k in 1 64; do
  sed -e "s/^target_partition = .*/target_partition = ${k}MB/" \
    -e "/^\[read\]/,/^\[/ s/^tasks = .*/tasks = $((512 / k))/" \
    -e "/^\[read\]/,/^\[/ s/^rows_per_task = .*/rows_per_task = $k/" "$spec" >"$tmp/f$k.ini"
  for p in ideal raydata; do
    "$sluice" sim "$tmp/f$k.ini" --cluster "$cluster" --profile $p --quiet --out "$tmp/f$k-$p" >/dev/null 2>&1
  done
done
check "summary.csv names the profile" test "$(summary_field "$tmp/f1-raydata" profile)" = raydata
check "and ideal when none is given" test "$(summary_field "$tmp/f1-ideal" profile)" = ideal
j1i=$(summary_field "$tmp/f1-ideal" jct_s) j1r=$(summary_field "$tmp/f1-raydata" jct_s)
j64i=$(summary_field "$tmp/f64-ideal" jct_s) j64r=$(summary_field "$tmp/f64-raydata" jct_s)
echo "1-row partitions: ideal $j1i s, raydata $j1r s; 64-row: ideal $j64i s, raydata $j64r s"
check "Ray's per-task and per-put costs slow 1-row partitions by over 10%" \
  awk -v a="$j1i" -v b="$j1r" 'BEGIN { exit !(b > 1.10 * a) }'
check "and 64-row ones by under 3%" awk -v a="$j64i" -v b="$j64r" 'BEGIN { exit !(b < 1.03 * a && b >= a) }'
check "the bound includes the profile's costs" awk -v a="$(summary_field "$tmp/f1-ideal" bound_s)" \
  -v b="$(summary_field "$tmp/f1-raydata" bound_s)" 'BEGIN { exit !(b > a) }'
check "no run beats its bound" awk -v j="$j1r" -v b="$(summary_field "$tmp/f1-raydata" bound_s)" \
  'BEGIN { exit !(j >= b * 0.999) }'
b0=$("$sluice" bound "$tmp/f1.ini" --cluster "$cluster" --csv | awk -F, 'NR==2 { print $4 }')
b1=$("$sluice" bound "$tmp/f1.ini" --cluster "$cluster" --csv --profile raydata | awk -F, 'NR==2 { print $4 }')
check "sluice bound --profile raydata is above the ideal bound ($b1 > $b0)" awk -v a="$b0" -v b="$b1" 'BEGIN { exit !(b > a) }'

# a real run: the executor charges the same plan
"$sluice" run "$tmp/f64.ini" --cluster local --profile sluice --time-scale 0.1 --quiet --out "$tmp/run" >/dev/null 2>&1
check "run --profile sluice completes" test "$(summary_field "$tmp/run" complete)" = 1
check "and names its profile" test "$(summary_field "$tmp/run" profile)" = sluice

# calibrating a run that charged a profile: the cost file says so, and a
# simulation that adds a profile to those costs warns (they would count twice)
"$sluice" calibrate "$tmp/run" -o "$tmp/run.costs" >/dev/null 2>&1
check "calibrate writes the run's profile" grep -q '^profile = sluice$' "$tmp/run.costs"
"$sluice" sim "$tmp/f64.ini" --cluster "$cluster" --costs "$tmp/run.costs" --profile raydata --quiet \
  --out "$tmp/twice" >/dev/null 2>"$tmp/twice.err"
check "sim --costs of such a run with --profile warns" grep -q 'fitted on a run that charged the sluice profile' "$tmp/twice.err"
"$sluice" sim "$tmp/f64.ini" --cluster "$cluster" --costs "$tmp/run.costs" --quiet --out "$tmp/once" >/dev/null 2>"$tmp/once.err"
check "and without --profile does not" bash -c "! grep -q warning '$tmp/once.err'"

# sluice plan shows the folded costs
check "plan --profile spark says the costs include it" \
  bash -c "'$sluice' plan fig9 --profile spark | grep -q 'costs include the spark profile'"
t0=$("$sluice" plan fig9 | awk '$2 == "transform" { print $7 }')
t1=$("$sluice" plan fig9 --profile spark | awk '$2 == "transform" { print $7 }')
check "and a transform task of a 100 MB row takes longer ($t0 -> $t1 s)" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b > a + 0.3) }'

# a profile file of one's own, and bad ones
printf '[profile]\nname = mine\ntask = 2ms\n' >"$tmp/mine.ini"
"$sluice" sim "$tmp/f64.ini" --cluster "$cluster" --profile "$tmp/mine.ini" --quiet --out "$tmp/mine" >/dev/null 2>&1
check "a profile file's own name" test "$(summary_field "$tmp/mine" profile)" = mine
check "an unknown profile exits 2" exits 2 "$sluice" sim "$tmp/f64.ini" --cluster "$cluster" --profile nosuch
check "and lists the shipped ones" bash -c "'$sluice' sim '$tmp/f64.ini' --cluster '$cluster' --profile nosuch 2>&1 | grep -q 'profiles/nosuch.ini.*raydata, spark, flink, sluice'"
printf '[profile]\ntask = 2\n' >"$tmp/bad.ini"
check "a value without a unit exits 2" exits 2 "$sluice" sim "$tmp/f64.ini" --cluster "$cluster" --profile "$tmp/bad.ini"
check "naming the file and line" bash -c "'$sluice' sim '$tmp/f64.ini' --cluster '$cluster' --profile '$tmp/bad.ini' 2>&1 | grep -q 'bad.ini:2: .*unit'"
check "and writes nothing" test ! -e "runs/sim-f64-streaming"
exit $((fails > 0))
