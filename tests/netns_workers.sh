#!/usr/bin/env bash
# A run across test hosts: network namespaces joined by a bridge in a
# third (nothing is added to the root namespace, no packet leaves the
# machine), the head on one, a worker on each of three others started
# with `--launch ssh` through tests/ns_ssh.sh. The GPU host's link is
# shaped to 1 Gbit/s with tbf, and the workload (tests/fixtures/netbound)
# moves 192 MB across it. Checks:
#   - the run completes with the sink of the run in one process, no faster
#     than the link allows, and prints its JCT beside the simulator's;
#   - a CPU host's link cut mid-run (no FIN, no RST): the head loses that
#     node at the timeout, the run completes with the same sink, and the
#     cut-off worker exits on its own once its head is silent;
#   - a worker SIGKILLed over "ssh" and a new one started for its node;
#   - no worker is left behind.
# Needs root and network namespaces; skipped (exit 77) where either is
# missing.
#
# usage: tests/netns_workers.sh SLUICE SRC
set -uo pipefail
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
source "$src/tests/lib.sh"
source "$src/tests/netns_lib.sh"

tag=w$$
net=10.78.$(($$ % 200 + 20))
tmp=$(mktemp -d)
cleanup() {
  pkill -KILL -f "worker --head tcp://$net.1" 2>/dev/null
  netns_remove
  rm -rf "$tmp"
}
trap cleanup EXIT
skip() { echo "netns_workers: skipped: $*" >&2; exit 77; }
# the head, cpu.0, cpu.1 and gpu.0; the GPU host takes in at 1 Gbit/s
netns_hosts "$tag" "$net" 4 && netns_shape "$tag" 4 1gbit || skip "$netns_why"
hosts=("${netns_host[@]}")

cd "$tmp"
cp "$src/tests/fixtures/netbound.ini" w.ini
sed "s/10\.78\.0\./$net./g" "$src/tests/fixtures/netbound.cluster.ini" >c.ini
export SLUICE_SSH="$src/tests/ns_ssh.sh"
orphans() { pgrep -f "worker --head tcp://$net.1" | wc -l; }
field() { summary_field "$1" "$2"; }
head_run() { ip netns exec "${hosts[0]}" "$sluice" run w.ini --cluster c.ini --launch ssh --listen "tcp://$net.1:*" --quiet "$@"; }

"$sluice" run w.ini --cluster c.ini --out one --quiet >one.log 2>&1
want=$(field one sink_checksum)
"$sluice" sim w.ini --cluster c.ini --out sim --quiet >sim.log 2>&1
sim=$(field sim jct_s)

head_run --out real >real.log 2>&1
check "a run across four test hosts exits 0" test $? -eq 0
check "it completes with every row" test "$(field real complete)/$(field real rows)" = "1/192"
check "its sink is the one-process run's ($want)" test "$(field real sink_checksum)" = "$want"
real=$(field real jct_s)
echo "netns_workers: 192 MB into a 1 Gbit/s host: real JCT $real s, simulated $sim s, ratio $(awk -v r="$real" -v s="$sim" 'BEGIN{printf "%.3f", s/r}')"
check "no faster than the link allows (192 MB at 125 MB/s)" awk -v r="$real" 'BEGIN{exit !(r >= 1.536 * 0.95)}'
moved=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} {b+=$h["transfer_bytes"]} END{printf "%.0f", b}' real/tasks.csv)
check "the GPU host fetched the 192 MB from the CPU hosts ($moved B)" test "$moved" -ge 192000000
check "no worker is left" test "$(orphans)" -eq 0

# a CPU host cut off mid-run: lost at the timeout, its partitions recomputed
head_run --out cut --node-timeout 300ms >cut.log 2>&1 &
pid=$!
sleep 0.6
netns_cut "$tag" 3 down
wait $pid
check "a run that loses a host's link exits 0" test $? -eq 0
check "it completes with the same sink" test "$(field cut complete)/$(field cut sink_checksum)" = "1/$want"
check "the head lost the cut-off node" grep -q "lost:cpu.1" cut/timeline.csv
netns_cut "$tag" 3 up
sleep 0.5
check "the cut-off worker exited on its own" test "$(orphans)" -eq 0

# a worker killed on its host, and a new one started there for its node
head_run --out kill --node-timeout 300ms --fail lose:cpu.0@0.4s,join:cpu.0@1s >kill.log 2>&1
check "a run with a worker killed over ssh and restarted exits 0" test $? -eq 0
check "it completes with the same sink" test "$(field kill complete)/$(field kill sink_checksum)" = "1/$want"
check "the node was lost and joined again" bash -c "grep -q lost:cpu.0 kill/timeline.csv && grep -q joined:cpu.0 kill/timeline.csv"
sleep 0.2
check "no worker is left" test "$(orphans)" -eq 0

exit $((fails > 0))
