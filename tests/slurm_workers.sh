#!/usr/bin/env bash
# `sluice run --launch slurm` inside a real Slurm allocation: a three-node
# Slurm (slurmctld on a head test host, slurmd on three others, munge for
# its credentials) on test hosts that are network namespaces joined by a
# bridge, nothing written under /etc. `salloc -N3` runs the head on the
# head host; it starts one worker per allocated node with srun, and the
# run must complete with the sink of the run in one process. Skipped
# (exit 77) without root, namespaces or Slurm and munge (Debian:
# slurm-wlm, munge), which the test suite does not install.
#
# usage: tests/slurm_workers.sh SLUICE SRC
set -uo pipefail
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
skip() { echo "slurm_workers: skipped: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
for c in ip slurmctld slurmd salloc munged; do
  command -v "$c" >/dev/null || [ -x "/usr/sbin/$c" ] || skip "no $c (Debian: slurm-wlm, munge)"
done
[ -r /etc/munge/munge.key ] || skip "no munge key"
source "$src/tests/lib.sh"

source "$src/tests/netns_lib.sh"

tag=s$$
names=(sl-head sl-n1 sl-n2 sl-n3)
net=10.79.$(($$ % 200 + 20))
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  pkill -KILL -f "worker --head tcp://$net.1" 2>/dev/null
  pkill -f "slurmd -D -f $tmp/" 2>/dev/null
  pkill -f "slurmctld -D -f $tmp/" 2>/dev/null
  [ -n "${munge_pid:-}" ] && kill "$munge_pid" 2>/dev/null
  sleep 0.5
  netns_remove
  rm -rf "$tmp"
}
trap cleanup EXIT
netns_hosts "$tag" "$net" 4 || skip "$netns_why"
hosts=("${netns_host[@]}")

# munge: its own socket and state, so a munged of the machine is not touched
chmod 755 "$tmp" # munge runs as its own user
mkdir -p "$tmp/munge" "$tmp/slurm/ctld"
chown munge:munge "$tmp/munge"
runuser -u munge -- /usr/sbin/munged --socket="$tmp/munge/sock" --pid-file="$tmp/munge/pid" \
  --log-file="$tmp/munge/log" --seed-file="$tmp/munge/seed" -f 2>/dev/null || skip "munged would not start"
munge_pid=$(cat "$tmp/munge/pid")
cat >"$tmp/cgroup.conf" <<CG
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
CgroupAutomount=no
CG
cat >"$tmp/slurm.conf" <<CONF
ClusterName=sluicetest
SlurmctldHost=sl-head($net.1)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/slurm/ctld
SlurmdSpoolDir=$tmp/slurm/d-%n
SlurmctldPidFile=$tmp/slurm/ctld.pid
SlurmdPidFile=$tmp/slurm/d-%n.pid
SlurmctldLogFile=$tmp/slurm/ctld.log
SlurmdLogFile=$tmp/slurm/d-%n.log
SlurmctldPort=$((6817 + $$ % 1000 * 2))
SlurmdPort=$((6818 + $$ % 1000 * 2))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=5
MessageTimeout=5
InactiveLimit=0
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
NodeName=sl-n1 NodeAddr=$net.2 CPUs=2 State=UNKNOWN
NodeName=sl-n2 NodeAddr=$net.3 CPUs=2 State=UNKNOWN
NodeName=sl-n3 NodeAddr=$net.4 CPUs=2 State=UNKNOWN
PartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
on() { # HOST-INDEX CMD: runs CMD on that test host, under its Slurm name
  local i=$1
  shift
  ip netns exec "${hosts[$i]}" unshare --uts sh -c "hostname ${names[$i]}; $*"
}
on 0 "exec slurmctld -D -f $tmp/slurm.conf" >"$tmp/ctld.out" 2>&1 &
pids+=($!)
for i in 1 2 3; do
  mkdir -p "$tmp/slurm/d-${names[$i]}"
  on "$i" "exec slurmd -D -f $tmp/slurm.conf -N ${names[$i]}" >"$tmp/d$i.out" 2>&1 &
  pids+=($!)
done
for _ in $(seq 50); do
  idle=$(on 0 "sinfo -h -N -o %T 2>/dev/null" | grep -c idle)
  [ "$idle" = 3 ] && break
  sleep 0.2
done
[ "${idle:-0}" = 3 ] || { tail -5 "$tmp/slurm/ctld.log" >&2; skip "the test Slurm did not come up (${idle:-0} of 3 nodes idle)"; }
echo "slurm_workers: a Slurm of 3 nodes is up"

cd "$tmp"
cp "$src/tests/fixtures/netbound.ini" w.ini
cp "$src/tests/fixtures/netbound.cluster.ini" c.ini
"$sluice" run w.ini --cluster c.ini --out one --quiet >one.log 2>&1
want=$(summary_field one sink_checksum)
on 0 "salloc -N3 --quiet $sluice run w.ini --cluster c.ini --launch slurm --listen tcp://$net.1:* --out slurm --quiet" \
  >slurm.log 2>&1
rc=$?
cat slurm.log
check "a run inside a Slurm allocation (salloc -N3, --launch slurm) exits 0" test $rc -eq 0
check "it completes with every row" test "$(summary_field slurm complete)/$(summary_field slurm rows)" = "1/192"
check "its sink is the one-process run's ($want)" test "$(summary_field slurm sink_checksum)" = "$want"
check "no worker is left" test "$(pgrep -f "worker --head tcp://$net.1" | wc -l)" -eq 0

# a loss and a rejoin inside the allocation: the head cannot signal srun's
# tasks, so it tells cpu.1's worker to SIGKILL itself, and the join is a
# new step of one task (srun --overlap) that registers as cpu.1 again
on 0 "salloc -N3 --quiet $sluice run w.ini --cluster c.ini --launch slurm --listen tcp://$net.1:* --out lose \
  --quiet --time-scale 3 --node-timeout 300ms --fail lose:cpu.1@0.3s,join:cpu.1@0.7s" >lose.log 2>&1
rc=$?
cat lose.log
check "a run with a loss and a rejoin under Slurm exits 0" test $rc -eq 0
check "it completes with the failure-free sink" \
  test "$(summary_field lose complete)/$(summary_field lose sink_checksum)" = "1/$want"
check "cpu.1 was lost and joined again" test "$(grep -c -E 'lost:cpu.1|joined:cpu.1' lose/timeline.csv)" -eq 2
grep -E 'lose:|lost:|join:|joined:' lose/timeline.csv | cut -d, -f1,15
check "no worker is left" test "$(pgrep -f "worker --head tcp://$net.1" | wc -l)" -eq 0

# an elastic pool inside the allocation: the fixed node's worker comes with
# the first step, each pool node's with a step of its own when the core
# acquires it, and leaves when it is given back
cp "$src/tests/fixtures/pool.cluster.ini" pool.ini
"$sluice" run "$src/tests/fixtures/netbound.ini" --cluster pool.ini --autoplace remote --out pool1 --quiet \
  >pool1.log 2>&1
on 0 "salloc -N1 --quiet $sluice run $src/tests/fixtures/netbound.ini --cluster pool.ini --autoplace remote \
  --launch slurm --listen tcp://$net.1:* --out pool --quiet" >pool.log 2>&1
rc=$?
grep -v '^srun' pool.log
check "a run with an elastic pool under Slurm exits 0" test $rc -eq 0
check "it completes with the sink of the run in one process" \
  test "$(summary_field pool complete)/$(summary_field pool sink_checksum)" = "1/$(summary_field pool1 sink_checksum)"
check "its pool nodes were acquired and ran tasks" awk -F, 'NR > 1 && $7 ~ /^worker\./ { n++ } END { exit !(n > 0) }' \
  pool/tasks.csv
check "no worker is left" test "$(pgrep -f "worker --head tcp://$net.1" | wc -l)" -eq 0
exit $((fails > 0))
