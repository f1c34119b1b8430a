#!/usr/bin/env bash
# sluice plot: draws a short real run (PNG and SVG beside each other, never a
# half file), and fails clearly: no timeline.csv exits 2, gnuplot failing or
# missing exits 1 and leaves no output behind.
set -u
sluice=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

cp "$src/tests/fixtures/tiny.ini" tiny.ini # a small two-stage run of a second or two
"$sluice" run tiny.ini --cluster "$src/workloads/clusters/fig9.ini" --out run --quiet >/dev/null 2>&1
check "a short run to draw" test -s run/timeline.csv

check "plot --help exits 0" exits 0 "$sluice" plot --help
check "plot exits 0" exits 0 "$sluice" plot run
check "the PNG is written and non-empty" test -s run/timeline.png
check "the SVG is written beside it" test -s run/timeline.svg
check "it is a PNG" bash -c "head -c 8 run/timeline.png | od -An -c | grep -q 'P   N   G'"
check "no temporary file is left" bash -c "! ls -a run | grep -q tmp"
mkdir figs
check "--out FILE.png writes FILE.png and FILE.svg" \
  bash -c "'$sluice' plot run --out figs/t.png >/dev/null 2>&1 && test -s figs/t.png -a -s figs/t.svg"

# under failures: markers for every fault and rollback, a bound line, and a
# GPU panel, with no gnuplot complaint on the way
"$sluice" sim fig9-small --cluster "$src/tests/golden/sim/cluster.ini" --model stream \
  --fail 'lose:cpu.1@6s,join:cpu.1@8s' --out failed --quiet >/dev/null 2>&1
check "a run with failures draws" bash -c "'$sluice' plot failed >out.txt 2>err.txt && test ! -s err.txt"
check "every fault has its marker" bash -c "grep -q 'lose:cpu.1' failed/timeline.svg && grep -q 'join:cpu.1' failed/timeline.svg"
check "a rollback's marker names the rows it took back" grep -q 'rows un-delivered' failed/timeline.svg
check "the bound is a line" grep -q 'bound (steady rate)' failed/timeline.svg
check "GPU operators get their own panel" grep -q 'running tasks, GPU operators' failed/timeline.svg
check "a mixed cluster's budgets are drawn per group" bash -c \
  "'$sluice' sim fig9-small --cluster '$src/tests/fixtures/mixed.cluster.ini' --out mixed --quiet &&
   '$sluice' plot mixed >/dev/null 2>&1 && grep -q 'cpu budget per node' mixed/timeline.svg &&
   grep -q 'gpu budget per node' mixed/timeline.svg"

mkdir empty
check "a folder without timeline.csv exits 2" exits 2 "$sluice" plot empty
check "a missing folder exits 2" exits 2 "$sluice" plot no-such-dir
check "the error is one line naming the folder" \
  bash -c "'$sluice' plot no-such-dir 2>&1 | head -1 | grep -q 'sluice plot: no-such-dir'"
check "--out must end in .png (exit 2)" exits 2 "$sluice" plot run --out figs/t.jpg
check "no RUN_DIR exits 2" exits 2 "$sluice" plot

# a gnuplot that fails, first on the PATH: exit 1, nothing left behind
mkdir fakebin
printf '#!/bin/sh\nexit 1\n' >fakebin/gnuplot
chmod +x fakebin/gnuplot
rm -f run/timeline.png run/timeline.svg
check "gnuplot failing exits 1" exits 1 env PATH="$tmp/fakebin:$PATH" "$sluice" plot run
check "and leaves no PNG" test ! -e run/timeline.png
check "and no temporary file" bash -c "! ls -a run | grep -q tmp"
check "gnuplot missing exits 1" exits 1 env PATH="$tmp/fakebin-none" "$sluice" plot run
exit $((fails > 0))
