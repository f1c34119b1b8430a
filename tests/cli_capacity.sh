#!/usr/bin/env bash
# sluice capacity: the video pipeline on a small g5/m7i search finds shapes,
# writes every shape it considered and the Pareto figure, is deterministic,
# and refuses bad input with exit 2 (a node-types error names FILE:LINE).
set -u
sluice=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

search=(video --node-types aws --only g5.xlarge,m7i.2xlarge --max g5.xlarge=5 --max m7i.2xlarge=3
        --target-throughput 100)
"$sluice" capacity "${search[@]}" --out a >out.txt 2>err.txt
rc=$?
check "a reachable target exits 0" test $rc -eq 0
check "it says how many shapes were searched, simulated and pruned" \
  grep -Eq "searched 23 shapes of 2 node types .*: [0-9]+ simulated .* [0-9]+ pruned" out.txt
check "the cheapest shape has 4 GPUs (the GPU is the bottleneck)" \
  grep -Eq "^  1 +4 x g5.xlarge" out.txt
check "shapes.csv has a header and one row per shape" \
  test "$(wc -l <a/shapes.csv)" -eq 24
check "every pruned shape says why" \
  bash -c "awk -F, 'NR>1 && \$7!=\"\\\"simulated\\\"\" && \$8==\"\"' a/shapes.csv | grep -q . && exit 1 || exit 0"
check "the Pareto front is written" test -s a/pareto.csv
check "the Pareto figure is a PNG" bash -c "head -c 8 a/pareto.png | od -An -c | grep -q 'P   N   G'"
check "and an SVG" test -s a/pareto.svg
check "no temporary file is left" bash -c "! ls -a a | grep -q tmp"
"$sluice" capacity "${search[@]}" --out b --quiet >/dev/null 2>&1
check "the same search gives the same shapes.csv" cmp -s a/shapes.csv b/shapes.csv

check "an unreachable deadline exits 1" exits 1 "$sluice" capacity video --node-types aws \
  --only g5.xlarge --max g5.xlarge=2 --deadline 1s --out c
"$sluice" capacity video --node-types aws --only g5.xlarge --max g5.xlarge=2 --deadline 1s --out c >out.txt 2>&1
check "and says no shape meets the target" grep -q "no shape meets the target" out.txt

check "--help exits 0" exits 0 "$sluice" capacity --help
check "no --node-types exits 2" exits 2 "$sluice" capacity video --deadline 1h
check "no target exits 2" exits 2 "$sluice" capacity video --node-types aws
check "two targets exit 2" exits 2 "$sluice" capacity video --node-types aws --deadline 1h --target-throughput 5
check "an unknown type in --only exits 2" exits 2 "$sluice" capacity video --node-types aws --only g9.huge \
  --deadline 1h
check "a bad --max exits 2" exits 2 "$sluice" capacity video --node-types aws --max g5.xlarge --deadline 1h
check "an unknown model exits 2" exits 2 "$sluice" capacity video --node-types aws --deadline 1h --model fast
check "too many shapes exits 2" exits 2 "$sluice" capacity video --node-types aws --deadline 1h
printf '[group a]\ncpu = 4\nmemory = 8GB\nmin = 3\nmax = 2\n' >bad.ini
"$sluice" capacity video --node-types bad.ini --deadline 1h >out.txt 2>&1
rc=$?
check "min above max exits 2" test $rc -eq 2
check "and names the file and line" grep -q "bad.ini:4: min (3) is larger than max (2)" out.txt
check "nothing is written for bad input" test ! -e runs

[ "$fails" -eq 0 ]
