#!/usr/bin/env bash
# A run across processes (sluice run --launch, sluice worker) on loopback:
# the same sink as the run in one process, with and without failures that
# really happen (a worker SIGKILLed and lost at the node timeout, a new
# process for it, a task killed, a second loss during the recovery, a
# worker stopped and fenced, spills read by other nodes), workers started
# by hand, a head that dies, and never a worker left behind.
set -u
sluice=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
port=$((20000 + $$ % 20000))
endpoint="tcp://127.0.0.1:$port"
cleanup() {
  pkill -KILL -f "worker --head $endpoint" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"
cluster="$src/tests/fixtures/mixed.cluster.ini"
cp "$src/tests/fixtures/tiny.ini" tiny.ini
cp "$src/tests/fixtures/workers.ini" w.ini

# workers of this test still running: none may outlive a run
orphans() { pgrep -f "worker --head $endpoint" | wc -l; }
field() { summary_field "$1" "$2"; }

check "worker without --head exits 2" exits 2 "$sluice" worker
check "--launch ssh needs hosts (exit 2)" exits 2 "$sluice" run tiny.ini --cluster "$cluster" --launch ssh
check "worker --help exits 0" exits 0 "$sluice" worker --help

"$sluice" run w.ini --cluster "$cluster" --out one --quiet >one.log 2>&1
check "the run in one process completes" test "$(field one complete)" = 1
want=$(field one sink_checksum)

"$sluice" run w.ini --cluster "$cluster" --out multi --quiet --launch local --listen "$endpoint" >multi.log 2>&1
check "a run on three worker processes exits 0" test $? -eq 0
check "it completes with every row" test "$(field multi complete)/$(field multi rows)" = "1/384"
check "its sink is the one-process run's ($want)" test "$(field multi sink_checksum)" = "$want"
check "no worker outlives it" test "$(orphans)" -eq 0
moved=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["transfer_bytes"]>0{n++} END{print n+0}' multi/tasks.csv)
check "tasks.csv says what crossed between workers ($moved tasks fetched inputs)" test "$moved" -gt 0

# the head does not emulate the spec's links: a GPU node behind a 100 Mbit/s
# NIC in the spec (a bound of about 15 s, ten times what a sanitized build
# under load takes over loopback) is fed over loopback, and the run says
# why it beat its bound
sed 's/^nic = 1Gbps$/nic = 100Mbps/' "$src/tests/fixtures/netbound.cluster.ini" >slow-nic.cluster.ini
"$sluice" run "$src/tests/fixtures/netbound.ini" --cluster slow-nic.cluster.ini --out fast \
  --launch local --listen "$endpoint" >fast.log 2>&1
check "a run across processes on links faster than its spec completes" test "$(field fast complete)" = 1
check "and says it beat its bound because of them" grep -q "faster than the bound: it charges the cluster spec's links" \
  fast.log

# failures as they happen: a task killed, node cpu.0's process SIGKILLed
# (the head hears nothing more and loses it at the timeout), then a new
# process for it that joins with a new incarnation
"$sluice" run w.ini --cluster "$cluster" --out faults --quiet --launch local --listen "$endpoint" \
  --node-timeout 200ms --fail kill:work@0.1s,lose:0@0.2s,join:0@0.6s >faults.log 2>&1
check "a run with a kill, a loss and a rejoin exits 0" test $? -eq 0
check "it completes with every row" test "$(field faults complete)/$(field faults rows)" = "1/384"
check "its sink is the failure-free run's: 0 rows lost or doubled" test "$(field faults sink_checksum)" = "$want"
check "the three faults were applied" test "$(field faults faults_applied)" = 3
lose=$(awk -F, '$NF=="lose:cpu.0"{print $1}' faults/timeline.csv)
lost=$(awk -F, '$NF=="lost:cpu.0"{print $1}' faults/timeline.csv)
joined=$(awk -F, '$NF=="joined:cpu.0"{print $1}' faults/timeline.csv)
echo "killed at ${lose:-?} s, lost at ${lost:-?} s, joined at ${joined:-?} s (timeout 200 ms)"
# silence is counted from the last heartbeat (at most 40 ms before the kill);
# the upper end leaves a loaded host room to run the head late
check "the loss is seen at the timeout" awk -v a="${lose:-0}" -v b="${lost:-0}" 'BEGIN{d=b-a; exit !(d>=0.15 && d<=0.6)}'
check "the new process joins" test -n "$joined"
check "no worker outlives it" test "$(orphans)" -eq 0

# a loss during the recovery from another: cpu.1's worker killed while the
# partitions lost with cpu.0 are being made again, then both come back
"$sluice" run w.ini --cluster "$cluster" --out twice --quiet --launch local --listen "$endpoint" \
  --node-timeout 200ms --fail lose:0@0.2s,lose:1@0.45s,join:0@0.7s,join:1@0.8s >twice.log 2>&1
check "a run with a loss during the recovery from another exits 0" test $? -eq 0
check "it completes with the failure-free run's sink" test "$(field twice complete)/$(field twice sink_checksum)" = "1/$want"
check "both nodes were lost and joined again" test "$(grep -c -E 'lost:cpu|joined:cpu' twice/timeline.csv)" -eq 4
check "no worker outlives it" test "$(orphans)" -eq 0

# a worker that stops answering (SIGSTOP): lost at the timeout, its work
# done again elsewhere; let go again, it is fenced (its incarnation is no
# longer live: the head tells it BYE) and exits
"$sluice" run w.ini --cluster "$cluster" --out stopped --quiet --launch local --listen "$endpoint" \
  --node-timeout 200ms >stopped.log 2>&1 &
head_pid=$!
sleep 0.3
victim=$(pgrep -f "worker --head $endpoint --name cpu.1")
check "the worker of cpu.1 is found to be stopped" test -n "$victim"
kill -STOP $victim
sleep 0.5
kill -CONT $victim
wait $head_pid
check "a run with a worker stopped for 0.5 s exits 0" test $? -eq 0
check "it completes with the failure-free run's sink" test "$(field stopped complete)/$(field stopped sink_checksum)" = "1/$want"
check "the stopped node was lost" grep -q "lost:cpu.1" stopped/timeline.csv
sleep 0.3
check "the stopped worker, let go, was fenced and exited" test "$(orphans)" -eq 0

# spills: the batch model under a small store spills, and other nodes read
# the spilled partitions from the worker that wrote them
"$sluice" run w.ini --cluster "$cluster" --out spill --quiet --launch local --listen "$endpoint" \
  --model batch --memory 600KB >spill.log 2>&1
check "a run that spills exits 0" test $? -eq 0
check "it spilled" awk -v b="$(field spill spilled_bytes)" 'BEGIN{exit !(b > 0)}'
check "its sink is the one-process run's" test "$(field spill sink_checksum)" = "$want"

# backpressure: under streaming a small store holds outputs back (the head
# answers HOLD, then RESUME), the last output of a task among them, which
# tells the head the task ended only once the core took it
"$sluice" run w.ini --cluster "$cluster" --out held --quiet --launch local --listen "$endpoint" \
  --memory 300KB >held.log 2>&1
check "a run whose outputs wait for room exits 0" test $? -eq 0
held=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["waited_s"]>0{n++} END{print n+0}' held/tasks.csv)
check "tasks waited for room ($held of them)" test "$held" -gt 0
check "its sink is the one-process run's" test "$(field held complete)/$(field held sink_checksum)" = "1/$want"
check "every task is recorded once, done" test "$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} \
  {n[$h["task"]]++; if ($h["status"] != "done") bad++} END{for (t in n) if (n[t] != 1) bad++; print bad+0}' held/tasks.csv)" -eq 0
check "no worker outlives it" test "$(orphans)" -eq 0

# workers started by hand (any tool may start them: ssh, srun): the head waits for them
"$sluice" run tiny.ini --cluster "$cluster" --out hand --quiet --launch none --listen "$endpoint" >hand.log 2>&1 &
head_pid=$!
sleep 0.2
for i in 1 2 3; do "$sluice" worker --head "$endpoint" >"worker$i.log" 2>&1 & done
wait $head_pid
check "a head with workers started by hand exits 0" test $? -eq 0
check "it completes" test "$(field hand complete)/$(field hand rows)" = "1/64"
sleep 0.3
check "its workers exit when it ends" test "$(orphans)" -eq 0

# a lose fault on workers the head did not start: it cannot signal them,
# so it tells cpu.1's to SIGKILL itself, and hears of it at the timeout;
# a new worker started by hand for cpu.1 joins with a new incarnation
"$sluice" run w.ini --cluster "$cluster" --out handlose --quiet --launch none --listen "$endpoint" \
  --node-timeout 200ms --fail lose:cpu.1@0.2s >handlose.log 2>&1 &
head_pid=$!
sleep 0.2
for n in cpu.0 cpu.1 gpu.0; do "$sluice" worker --head "$endpoint" --name $n >"hl-$n.log" 2>&1 & done
victim=$(pgrep -f "worker --head $endpoint --name cpu.1")
# once its process is gone and the timeout has passed, a new one by hand
for _ in $(seq 150); do [ -z "$(ps -o pid= -p "${victim:-0}" 2>/dev/null)" ] && break; sleep 0.02; done
gone=$([ -z "$(ps -o pid= -p "${victim:-0}" 2>/dev/null)" ] && echo yes)
sleep 0.45
"$sluice" worker --head "$endpoint" --name cpu.1 >hl-again.log 2>&1 &
wait $head_pid
check "a run with a lose fault on workers started by hand exits 0" test $? -eq 0
check "it completes with the failure-free run's sink" \
  test "$(field handlose complete)/$(field handlose sink_checksum)" = "1/$want"
check "the worker of cpu.1 killed itself when told" test "$gone" = yes
check "the new worker by hand joined" grep -q "joined:cpu.1" handlose/timeline.csv
lose=$(awk -F, '$NF=="lose:cpu.1"{print $1}' handlose/timeline.csv)
lost=$(awk -F, '$NF=="lost:cpu.1"{print $1}' handlose/timeline.csv)
echo "told to die at ${lose:-?} s, lost at ${lost:-?} s (timeout 200 ms)"
check "and lost at the timeout" awk -v a="${lose:-0}" -v b="${lost:-0}" 'BEGIN{d=b-a; exit !(d>=0.15 && d<=0.6)}'
sleep 0.3
check "no worker outlives it" test "$(orphans)" -eq 0
"$sluice" run tiny.ini --cluster "$cluster" --launch none --fail join:cpu.0@1s >nojoin.log 2>&1
check "a join needs a head that starts workers (--launch none: exit 2)" test $? -eq 2
check "and it says how to start one by hand" grep -q "start the new one by hand" nojoin.log

# a head that dies: its local workers die with it, and workers started by
# hand give up after the timeout
"$sluice" run w.ini --cluster "$cluster" --out dead --quiet --launch local --listen "$endpoint" >dead.log 2>&1 &
head_pid=$!
sleep 0.3
kill -KILL $head_pid
wait $head_pid 2>/dev/null
sleep 0.3
check "local workers die with a killed head" test "$(orphans)" -eq 0
"$sluice" run w.ini --cluster "$cluster" --out dead2 --quiet --launch none --listen "$endpoint" \
  --node-timeout 300ms >dead2.log 2>&1 &
head_pid=$!
sleep 0.2
for i in 1 2 3; do "$sluice" worker --head "$endpoint" >"lone$i.log" 2>&1 & done
sleep 0.4
kill -KILL $head_pid
wait $head_pid 2>/dev/null
sleep 1
check "workers started by hand exit once the head is silent" test "$(orphans)" -eq 0
check "and say why" grep -q "head fell silent" lone1.log lone2.log lone3.log

exit $((fails > 0))
