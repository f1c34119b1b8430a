#!/usr/bin/env bash
# sluice bench: --update writes a baseline; the same code matches it exactly;
# a changed simulated result, a slower micro-benchmark or a metric missing
# from the baseline fails with a table; a malformed baseline exits 2 naming
# FILE:LINE.
set -u
sluice=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

check "--help exits 0" exits 0 "$sluice" bench --help
check "an unknown option exits 2" exits 2 "$sluice" bench --fast
check "--update with --filter exits 2" exits 2 "$sluice" bench --update --filter sim

check "--update writes a baseline" exits 0 "$sluice" bench --update --baseline b.csv --runs 1
check "with the header and every metric" \
  bash -c "head -1 b.csv | grep -qx 'metric,kind,value,band,unit' && test \$(wc -l <b.csv) -gt 100"
check "the same code matches it" exits 0 "$sluice" bench --baseline b.csv --filter sim/fig11
"$sluice" bench --baseline b.csv --filter sim/fig11 >out.txt 2>err.txt
check "no progress line when stderr is not a terminal" said_nothing err.txt
check "no carriage return on stdout either" bash -c "! grep -q \$'\\r' out.txt"
if command -v script >/dev/null; then
  script -qec "'$sluice' bench --baseline b.csv --filter sim/fig11" /dev/null >tty.txt 2>&1
  check "on a terminal: the step, how many of how many" grep -q "bench: step 1 of 2: sim/fig11-small/streaming" tty.txt
  check "and the time left" grep -Eq "bench: step 2 of 2: sim/fig11-small/static; .* elapsed, about .* left" tty.txt
fi

# A simulated result that moves, however little, is a regression.
awk -F, -v OFS=, '$1=="sim/fig11-small/streaming/jct_s"{$3=$3*1.001} {print}' b.csv >moved.csv
"$sluice" bench --baseline moved.csv --filter sim/fig11 >out.txt 2>&1
rc=$?
check "a changed simulated result exits 1" test $rc -eq 1
check "and the table names it" grep -q "sim/fig11-small/streaming/jct_s .*REGRESSION (result changed)" out.txt

# A wall-clock ratio far over its band: the baseline claims a 1000x faster simulator.
awk -F, -v OFS=, '$1=="micro/sim_cost_per_task"{$3=$3/1000} {print}' b.csv >fast.csv
"$sluice" bench --baseline fast.csv --filter micro/sim --runs 1 >out.txt 2>&1
rc=$?
check "a slower micro-benchmark exits 1" test $rc -eq 1
check "and says it is slower" grep -q "micro/sim_cost_per_task .*REGRESSION (slower)" out.txt

grep -v '^sim/fig11-small/static/' b.csv >missing.csv
"$sluice" bench --baseline missing.csv --filter sim/fig11 >out.txt 2>&1
rc=$?
check "a metric missing from the baseline exits 1" test $rc -eq 1
check "and asks for --update" grep -q "not in the baseline: run --update" out.txt

sed '3s/,exact,/,fuzzy,/' b.csv >bad.csv
"$sluice" bench --baseline bad.csv --filter sim/fig11 >out.txt 2>&1
rc=$?
check "a malformed baseline exits 2" test $rc -eq 2
check "naming the file and line" grep -q "bad.csv:3: kind 'fuzzy' is neither exact nor ratio" out.txt
check "a missing baseline exits 2" exits 2 "$sluice" bench --baseline nothing.csv

[ "$fails" -eq 0 ]
