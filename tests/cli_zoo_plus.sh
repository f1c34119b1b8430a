#!/usr/bin/env bash
# streaming-plus on zoo cases where it once fell far from the bound, each
# for its own defect (seed 1 of `sluice zoo`; a change of the generator
# changes the cases, and this list must then be chosen again):
#   case 31  the store half full of an expanding map's queued inputs while
#            room was kept for operators with nothing to run: 4% of the bound
#   case 40  32 MB partitions of 11.6 MB rows: 10 of 64 sources ran: 27%
#   case 56  192 tiny partitions coalesced into one 14-minute task: 3%
#   case 120 full batches of 512 rows (no per-batch cost) for 84 GPUs: 5%
#   case 145 an expanding map idle with 190 partitions queued: 2%
#   case 45  partitions of 128 to 260 rows for a batch operator whose
#            tasks pay 57 s of fixed time and wanted 45 rows each: 38.8%
#   case 24  sources on 128 CPUs feeding a filter on GPUs, 32 at a time on
#            stores of 64 partitions: 58.2% where the static model reached
#            99.4% (this one must reach 90%)
# and seed 7's
#   case 18  a map whose rounded sizes "grew" its data by 0.12% waited for
#            store room its own queued input filled: 14.8% (the paper's
#            streaming, whose store check had the same defect: 9.9%)
# Each must now reach 40% of its bound, with spill charged at 500 MB/s.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$sluice" zoo --seed 1 --count 145 --out "$tmp/zoo" --quiet || { echo "FAIL zoo"; exit 1; }
for n in 031 040 045 056 120 145; do
  w=$tmp/zoo/case-$n
  "$sluice" sim "$w.ini" --cluster "$w.cluster.ini" --model streaming-plus --spill-bandwidth 500MB/s \
    --no-tasks --quiet --out "$tmp/run-$n" >/dev/null 2>&1
  pct=$(summary_field "$tmp/run-$n" pct_of_bound)
  echo "case $n: ${pct:-none}% of the bound"
  check "case $n reaches 40% of its bound" awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 40) }'
done
w=$tmp/zoo/case-024
"$sluice" sim "$w.ini" --cluster "$w.cluster.ini" --model streaming-plus --spill-bandwidth 500MB/s \
  --no-tasks --quiet --out "$tmp/run-024" >/dev/null 2>&1
pct=$(summary_field "$tmp/run-024" pct_of_bound)
echo "case 024: ${pct:-none}% of the bound"
check "case 024 reaches 90% of its bound" awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 90) }'

"$sluice" zoo --seed 7 --count 18 --out "$tmp/zoo7" --quiet || { echo "FAIL zoo seed 7"; exit 1; }
w=$tmp/zoo7/case-018
"$sluice" sim "$w.ini" --cluster "$w.cluster.ini" --model streaming-plus --spill-bandwidth 500MB/s \
  --no-tasks --quiet --out "$tmp/run7-018" >/dev/null 2>&1
pct=$(summary_field "$tmp/run7-018" pct_of_bound)
echo "seed 7 case 018: ${pct:-none}% of the bound"
check "seed 7 case 018 reaches 40% of its bound" awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 40) }'
# the paper's policy had the same defect in its store check: 9.9%
"$sluice" sim "$w.ini" --cluster "$w.cluster.ini" --model streaming --spill-bandwidth 500MB/s \
  --no-tasks --quiet --out "$tmp/run7-018s" >/dev/null 2>&1
pct=$(summary_field "$tmp/run7-018s" pct_of_bound)
echo "seed 7 case 018 under streaming: ${pct:-none}% of the bound"
check "seed 7 case 018 under streaming reaches 40% of its bound" awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 40) }'
exit $((fails > 0))
