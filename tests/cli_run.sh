#!/usr/bin/env bash
# sluice run from the command line: usage errors, a short real run with its
# three output files, and an interrupted run that leaves a summary marked
# incomplete and exits non-zero.
set -u
sluice=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

check "run --help exits 0" exits 0 "$sluice" run --help
check "unknown model exits 2" exits 2 "$sluice" run fig9-small --cluster fig9 --model sparkish
check "bad --memory exits 2" exits 2 "$sluice" run fig9-small --cluster fig9 --memory lots
check "bad --fail exits 2" exits 2 "$sluice" run fig9-small --cluster fig9 --fail explode@3s
check "--fail on an unknown node exits 2" exits 2 "$sluice" run fig9-small --cluster fig9 --fail lose:7@1s
check "--on-full takes spill or oom" exits 2 "$sluice" run fig9-small --cluster fig9 --on-full maybe

cp "$src/tests/fixtures/tiny.ini" tiny.ini # a small two-stage run of a second or two
"$sluice" run tiny.ini --cluster "$src/workloads/clusters/fig9.ini" --out out >run.log 2>&1
check "a short run exits 0" test $? -eq 0
check "summary, timeline and tasks are written" test -s out/summary.csv -a -s out/timeline.csv -a -s out/tasks.csv
check "the summary says complete" bash -c "awk -F, 'NR==1{for(i=1;i<=NF;i++)h[\$i]=i} NR==2{exit !(\$h[\"complete\"]==1 && \$h[\"rows\"]==64)}' out/summary.csv"
tasks=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["tasks"]}' out/summary.csv)
check "one task row per attempt ($tasks)" test "$(($(wc -l <out/tasks.csv) - 1))" -eq "$tasks"
check "no temporary files left" bash -c "! ls -a out | grep -q tmp"
# the job's clock starts with the core: the engine's own start is reported
# apart (startup_s), and the first task starts within a few ms of 0
startup=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["startup_s"]}' out/summary.csv)
first=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} NR==2||$h["start_s"]<m{m=$h["start_s"]} END{print m}' out/tasks.csv)
check "the engine's start is reported ($startup s) and the first task starts at $first s" \
  awk -v s="$startup" -v f="$first" 'BEGIN{exit !(s > 0 && s < 5 && f >= 0 && f < 0.05)}'

# a done attempt whose own finish gave its slot the next task says how long
# that took (handoff_s): the next attempt on the slot was launched then
handoffs=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["status"]=="done"{print $h["node"], $h["slot"], $h["start_s"], $h["end_s"], $h["dispatch_s"], $h["handoff_s"]}' \
  out/tasks.csv | sort -k1,1n -k2,2n -k3,3g |
  awk '$1==n && $2==s && h!="" {d = ($3 - $5) - (e + h); bad += d > 1e-5 || d < -1e-5; k++}
       {n=$1; s=$2; e=$4; h=$6} END{print k + 0, bad + 0}')
check "handoffs are measured (${handoffs% *}) and each ends at its slot's next launch (${handoffs#* } off)" \
  bash -c "[ '${handoffs% *}' -gt 0 ] && [ '${handoffs#* }' = 0 ]"

# real kernels take their own time: the run's bound comes from its own
# tasks' costs (the spec's estimates put the images pipeline at 436% of
# its bound here); sleep kernels keep the spec's
printf '[cluster]\nname = two\n[group local]\ncpu = 2\ngpu = 1\nmemory = 8GB\n' >two.ini
"$sluice" run "$src/workloads/images.ini" --cluster two.ini --out images --quiet >images.log 2>&1
costs=$(summary_field images bound_costs) pct=$(summary_field images pct_of_bound)
check "a run of real kernels is bound by its measured costs ($costs, $pct%)" \
  bash -c "[ '$costs' = measured ] && awk -v p='$pct' 'BEGIN{exit !(p > 20 && p <= 105)}'"
check "... and says so" grep -q 'bound of its measured costs' images.log
check "a run of sleep kernels keeps the spec's bound" test "$(summary_field out bound_costs)" = spec

# On a terminal a run shows its progress, with the time left; not in a log.
if command -v script >/dev/null; then
  script -qec "'$sluice' run '$src/workloads/fig11-small.ini' --cluster '$src/workloads/clusters/fig11.ini' \
    --time-scale 0.3 --out tty" /dev/null >tty.log 2>&1
  check "on a terminal: rows done of all, and the time left" grep -Eq "rows [0-9]+/240 ~[0-9]+s left" tty.log
  script -qec "'$sluice' run '$src/workloads/fig11-small.ini' --cluster '$src/workloads/clusters/fig11.ini' \
    --time-scale 0.3 --out tty --quiet" /dev/null >quiet.log 2>&1
  check "and nothing under --quiet" bash -c "! grep -q 'rows/s mem' quiet.log"
fi
"$sluice" run tiny.ini --cluster "$src/workloads/clusters/fig9.ini" --out notty >notty.log 2>&1
check "no progress line when stderr is not a terminal" bash -c "! grep -q 'rows/s mem' notty.log"

"$sluice" run "$src/workloads/fig11-small.ini" --cluster "$src/workloads/clusters/fig11.ini" --out int >int.log 2>&1 &
pid=$!
sleep 1.5
kill -INT $pid
wait $pid
code=$?
check "an interrupted run exits non-zero ($code)" test $code -ne 0 -a $code -ne 2
check "it leaves a summary marked incomplete" bash -c "awk -F, 'NR==1{for(i=1;i<=NF;i++)h[\$i]=i} NR==2{exit !(\$h[\"complete\"]==0)}' int/summary.csv"
exit $((fails > 0))
