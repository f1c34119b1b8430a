#!/usr/bin/env bash
# The simulator against runs across processes on test hosts: network
# namespaces joined by a bridge (tests/netns_lib.sh), the head on one host
# and a worker on each other, started with --launch ssh through
# tests/ns_ssh.sh, so that partitions cross real (virtual) links, spills
# go to the real disk and a lost node is a process killed. For each case
# and repetition: the real run, `sluice calibrate` on it, and the
# simulation of the same plan with those costs. Prints a table and writes
# OUT/validation_dist.csv (the columns of bench/validate.sh).
#
# Cases:
#   netbound-*   two CPU hosts feed a GPU host across its 1 Gbit/s link
#                (tbf), 192 MB in all: the network is the bottleneck
#   membound-*   two hosts whose 8 MB stores overflow: spills to disk
#   loss-*       netbound with cpu.0's worker killed at 0.5 s (lost after
#                --node-timeout 300 ms) and a new one at 1.2 s
#
# Needs root (network namespaces). usage: [REPS=N] [ONLY=REGEX]
#   bench/validate_dist.sh [OUT_DIR] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mkdir -p "${1:-runs/validate-dist}" && cd "${1:-runs/validate-dist}" && pwd)
sluice=$(cd "${2:-$here/build}" && pwd)/sluice
reps=${REPS:-3}
source "$here/tests/netns_lib.sh"
tag=v$$
net=10.78.$(($$ % 200 + 20))
cleanup() {
  pkill -KILL -f "worker --head tcp://$net.1" 2>/dev/null || true
  netns_remove
}
trap cleanup EXIT
netns_hosts "$tag" "$net" 4 || { echo "validate_dist: $netns_why" >&2; exit 2; }
netns_shape "$tag" 4 1gbit || { echo "validate_dist: $netns_why" >&2; exit 2; }
export SLUICE_SSH="$here/tests/ns_ssh.sh"
head_ns=${netns_host[0]}

csv="$out/validation_dist.csv"
echo "case,model,real_jct_s,sim_jct_s,error_pct,real_rows_s,sim_rows_s,reps,real_range_s,sim_range_s" >"$csv"
field() { awk -F, -v f="$2" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h[f]}' "$1/summary.csv"; }
median() { sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "-" hi}'; }
over_reps() { local k; for ((k = 1; k <= reps; k++)); do field "$out/$1-$k-$2" "$3"; done; }
# the specs, with the test hosts' addresses
sed "s/10\.78\.0\./$net./g" "$here/tests/fixtures/netbound.cluster.ini" >"$out/netbound.cluster.ini"
sed "s/10\.78\.0\./$net./g" "$here/bench/validate/dist-membound.cluster.ini" >"$out/membound.cluster.ini"

run_only=() sim_only=() # options of one engine alone
one() { # name workload cluster model [extra args for both engines...]
  local name=$1 w=$2 c=$3 m=$4 k d
  shift 4
  [[ $name =~ ${ONLY:-.} ]] || return 0
  for ((k = 1; k <= reps; k++)); do
    d="$out/$name-$k"
    (cd "$out" && ip netns exec "$head_ns" "$sluice" run "$w" --cluster "$c" --model "$m" --launch ssh \
      --listen "tcp://$net.1:*" --seed "$k" --out "$d-real" --quiet "${run_only[@]}" "$@" >/dev/null)
    "$sluice" calibrate "$d-real" -o "$d.costs" >/dev/null
    "$sluice" sim "$w" --cluster "$c" --model "$m" --costs "$d.costs" --seed "$k" --out "$d-sim" --quiet "${sim_only[@]}" "$@" \
      >/dev/null
  done
  local rj sj rt st
  rj=$(over_reps "$name" real jct_s | median) sj=$(over_reps "$name" sim jct_s | median)
  rt=$(over_reps "$name" real throughput_rows_s | median) st=$(over_reps "$name" sim throughput_rows_s | median)
  echo "$name,$m,$rj,$sj,$(awk -v a="$sj" -v b="$rj" 'BEGIN{printf "%.1f", 100*(a-b)/b}'),$rt,$st,$reps,$(over_reps "$name" real jct_s | range),$(over_reps "$name" sim jct_s | range)" >>"$csv"
  tail -1 "$csv"
}
for m in streaming batch; do
  one "netbound-$m" "$here/tests/fixtures/netbound.ini" "$out/netbound.cluster.ini" "$m"
done
for m in streaming-plus batch; do
  one "membound-$m" "$here/bench/validate/membound.ini" "$out/membound.cluster.ini" "$m"
done
run_only=(--node-timeout 300ms) sim_only=(--node-timeout 300ms)
one loss-streaming "$here/tests/fixtures/netbound.ini" "$out/netbound.cluster.ini" streaming \
  --fail lose:cpu.0@0.5s,join:cpu.0@1.2s

echo
column -s, -t "$csv"
awk -F, 'NR > 1 {n++; e = $5 < 0 ? -$5 : $5; within += e <= 5; if (e > max) max = e}
  END {printf "%d of %d cases within 5%%, max error %.1f%%\n", within, n, max}' "$csv"
