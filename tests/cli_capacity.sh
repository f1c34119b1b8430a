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
check "shapes.csv has a header and a row per shape reached one by one" \
  bash -c "test \$(wc -l <a/shapes.csv) -gt 1 && test \$(wc -l <a/shapes.csv) -le 24"
check "every pruned shape says why" \
  bash -c "awk -F, 'NR>1 && \$7!=\"\\\"simulated\\\"\" && \$8==\"\"' a/shapes.csv | grep -q . && exit 1 || exit 0"
check "the Pareto front is written" test -s a/pareto.csv
check "the Pareto figure is a PNG" bash -c "head -c 8 a/pareto.png | od -An -c | grep -q 'P   N   G'"
check "and an SVG" test -s a/pareto.svg
check "no temporary file is left" bash -c "! ls -a a | grep -q tmp"
"$sluice" capacity "${search[@]}" --out b --quiet >/dev/null 2>&1
check "the same search gives the same shapes.csv" cmp -s a/shapes.csv b/shapes.csv
check "no progress line when stderr is not a terminal" said_nothing err.txt
if command -v script >/dev/null; then
  script -qec "'$sluice' capacity ${search[*]} --out t" /dev/null >tty.txt 2>&1
  check "on a terminal: which simulation, of how many shapes, and time left" \
    grep -Eq "simulation 2: [0-9]+ x .*\(streaming\); [0-9]+ of 23 shapes settled, [0-9]+ s; [0-9]+-[0-9]+ s left" tty.txt
fi

# a system's costs: Spark's Java-Python crossing of every 9.6 MB frame makes
# the GPUs' share of the work larger: 5 g5.xlarge, which reach 120/s with
# no system cost, stay near 100/s under spark (by the bound alone)
faster=(video --node-types aws --only g5.xlarge,m7i.2xlarge --max g5.xlarge=5 --max m7i.2xlarge=3
        --target-throughput 120)
check "120/s is in reach with no system cost" exits 0 "$sluice" capacity "${faster[@]}" --out i --quiet
"$sluice" capacity "${faster[@]}" --profile spark --out p >p.txt 2>&1
rc=$?
check "with --profile spark it is out of reach (exit $rc)" test $rc -eq 1
check "and the bound says so before any simulation" grep -q "the bound of every feasible one misses the target" p.txt
check "a bad profile exits 2" exits 2 "$sluice" capacity "${search[@]}" --profile nosuch --out q

check "an unreachable deadline exits 1" exits 1 "$sluice" capacity video --node-types aws \
  --only g5.xlarge --max g5.xlarge=2 --deadline 1s --out c
"$sluice" capacity video --node-types aws --only g5.xlarge --max g5.xlarge=2 --deadline 1s --out c >out.txt 2>err.txt
check "and says no shape meets the target" grep -q "no shape meets the target" out.txt
check "and the most any shape can do" \
  grep -q "the most any shape can do: .* rows/s by the bound, every type at its max (2 x g5.xlarge)" out.txt
check "and that none was simulated, and why" grep -q "no shape was simulated: the bound of every feasible one misses" out.txt
check "without a gnuplot message" said_nothing err.txt
check "or an empty figure" test ! -e c/pareto.png
check "and says there is no figure" grep -q "no figure: no shape was simulated to the end" out.txt

# Shapes that cannot run the job: CPU-only shapes cannot run the GPU
# classifier, and the output says so.
"$sluice" capacity video --node-types aws --only m7i.2xlarge,g5.xlarge --max m7i.2xlarge=2 --max g5.xlarge=2 \
  --target-throughput 50 --out d >out.txt 2>err.txt
check "infeasible shapes say why" \
  grep -q "infeasible shapes\?: operator 'classify' needs 1 GPU and no type in the shape has a GPU" out.txt
check "no gnuplot message leaks" said_nothing err.txt

# Disks that cannot hold what a shuffle must spill at once: the sort's 120
# MB through stores of 10 MB a node leaves 120 - 10n MB on disks of 20 MB a
# node, so 1 to 3 nodes cannot run it whatever a sample of it would show
printf '[cluster]\nname = small-disks\n[group t]\ncpu = 2\nmemory = 1GB\nstore = 10MB\ndisk_bandwidth = 200MB/s\ndisk_capacity = 20MB\nprice_per_hour = 1\nmax = 6\n' >disks.ini
"$sluice" capacity sort --node-types disks.ini --deadline 1h --sample 0.25 --top 1 --out s >out.txt 2>err.txt
check "a shape whose disks overflow is infeasible, sample or not" \
  grep -q "3 infeasible shapes: its disks hold 60 MB, less than the 90 MB a shuffle must spill at once" out.txt
check "the cheapest is the fewest nodes whose disks hold it" grep -Eq "^  1 +4 x t " out.txt
# a sample cuts the reducers with the maps: 6 of 24 maps, 2 of 8 reducers
check "a sample simulates that fraction of the rows" grep -q "simulating 300000 of 1200000 source rows" out.txt

# The whole catalogue, default maxima: searched without listing its
# 607,256 shapes, in a few seconds.
start=$SECONDS
"$sluice" capacity video --node-types aws --target-throughput 120 --out e >out.txt 2>err.txt
check "the whole aws catalogue is searched (exit 0)" test $? -eq 0
check "all 607256 shapes" grep -q "searched 607256 shapes of 5 node types" out.txt
check "in under a minute ($((SECONDS - start)) s)" test $((SECONDS - start)) -lt 60
check "its answer: 2 x g5.xlarge + 2 x g5.2xlarge" grep -Eq "^  1 +2 x g5.xlarge \+ 2 x g5.2xlarge " out.txt
check "shapes.csv lists only the shapes reached one by one" test "$(wc -l <e/shapes.csv)" -lt 1000

# Six types of up to 100,000 nodes: more shapes than a counter holds, yet
# each type's count is found by bisection, not one bound per count.
{
  printf '[group a]\ncpu = 4\ngpu = 1\nmemory = 8GB\nprice_per_hour = 1\nmax = 100000\n'
  for t in b c d e f; do printf '[group %s]\ncpu = 4\nmemory = 8GB\nprice_per_hour = 0.5\nmax = 100000\n' $t; done
} >huge.ini
start=$SECONDS
"$sluice" capacity video --node-types huge.ini --target-throughput 60 --top 2 --out h >out.txt 2>err.txt
check "a space of over 9.2e18 shapes is searched (exit 0)" test $? -eq 0
check "and says how big it is" grep -q "searched over 9.2e18 shapes of 6 node types" out.txt
check "in seconds ($((SECONDS - start)) s)" test $((SECONDS - start)) -lt 30
check "its answer: 2 GPUs and a CPU node" grep -Eq "^  1 +2 x a \+ 1 x [b-f] " out.txt

# --max-simulations stops a search only simulations settle, and says so
"$sluice" capacity video --node-types aws --only g5.xlarge,g5.2xlarge --max g5.xlarge=4 --max g5.2xlarge=4 \
  --target-throughput 120 --max-simulations 1 --out f >out.txt 2>&1
check "a stopped search says its answer is not proven" grep -q "not proven the cheapest" out.txt
check "a bad --max-simulations exits 2" exits 2 "$sluice" capacity video --node-types aws --deadline 1h \
  --max-simulations many

check "--help exits 0" exits 0 "$sluice" capacity --help
check "no --node-types exits 2" exits 2 "$sluice" capacity video --deadline 1h
check "no target exits 2" exits 2 "$sluice" capacity video --node-types aws
check "two targets exit 2" exits 2 "$sluice" capacity video --node-types aws --deadline 1h --target-throughput 5
check "an unknown type in --only exits 2" exits 2 "$sluice" capacity video --node-types aws --only g9.huge \
  --deadline 1h
check "a bad --max exits 2" exits 2 "$sluice" capacity video --node-types aws --max g5.xlarge --deadline 1h
check "an unknown model exits 2" exits 2 "$sluice" capacity video --node-types aws --deadline 1h --model fast
printf '[group a]\ncpu = 4\nmemory = 8GB\nmin = 3\nmax = 2\n' >bad.ini
"$sluice" capacity video --node-types bad.ini --deadline 1h >out.txt 2>&1
rc=$?
check "min above max exits 2" test $rc -eq 2
check "and names the file and line" grep -q "bad.ini:4: min (3) is larger than max (2)" out.txt
check "nothing is written for bad input" test ! -e runs

[ "$fails" -eq 0 ]
