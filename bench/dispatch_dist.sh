#!/usr/bin/env bash
# The head's dispatch rate across processes: TASKS source tasks of one
# 8-byte row each, straight to the sink, on four worker processes of CPUS
# CPUs each (--launch local; default 4), RUNS times. Each run's JCT (summary.csv, from
# the first launch to the last output) gives tasks per second; prints
# every run and the median. No work, no transfers: what is measured is
# the cost of a task's messages between the head and its workers.
#
# The head's messages to a node go out together when several of its slots
# free at once, so more slots a worker means fewer wake-ups a task: on a
# machine with fewer cores than the processes and threads of the run, the
# rate grows with CPUS.
#
# usage: bench/dispatch_dist.sh [TASKS] [RUNS] [SLUICE]
#        (defaults 20000, 9, build/sluice)
# environment: CPUS, the CPUs (slots) of each worker (default 4)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tasks=${1:-20000}
runs=${2:-9}
sluice=${3:-$here/build/sluice}
cpus=${CPUS:-4}
case "$tasks$runs$cpus" in
  '' | *[!0-9]*) echo "usage: bench/dispatch_dist.sh [TASKS] [RUNS] [SLUICE] (CPUS a whole number)" >&2; exit 2 ;;
esac
[ -x "$sluice" ] || { echo "bench/dispatch_dist.sh: no sluice binary at $sluice (build it first)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/cluster.ini" <<EOF
[cluster]
name = four
[group n]
count = 4
cpu = $cpus
memory = 1GB
EOF
cat >"$dir/dispatch.ini" <<EOF
[workload]
name = dispatch
target_partition = 1MB

[src]
kind = source
tasks = $tasks
rows_per_task = 1
row_bytes = 8B

[sink]
kind = sink
EOF
rates=()
for r in $(seq 1 "$runs"); do
  if ! "$sluice" run "$dir/dispatch.ini" --cluster "$dir/cluster.ini" --launch local --out "$dir/run" --quiet \
    >"$dir/log" 2>&1; then
    echo "bench/dispatch_dist.sh: run $r failed:" >&2
    cat "$dir/log" >&2
    exit 1
  fi
  jct=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["jct_s"]}' "$dir/run/summary.csv")
  rate=$(awk -v n="$tasks" -v t="$jct" 'BEGIN{printf "%.0f", n / t}')
  echo "run $r: $tasks tasks in $jct s: $rate tasks/s"
  rates+=("$rate")
done
printf '%s\n' "${rates[@]}" | sort -n | awk -v n="$runs" -v c="$cpus" '{v[NR]=$1} END{
  m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  printf "median: %.0f tasks/s over %d runs (%.0f to %.0f) to four worker processes of %d CPUs\n", m, n, v[1], v[n], c}'
