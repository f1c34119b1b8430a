#!/usr/bin/env bash
# Elastic pools as a user meets them: a cluster spec with `elastic = true`,
# `sluice sim` and `sluice run` with --autoplace, the pool's bill in the
# summary, and the refusals (a model with static placement, a bad policy).
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src" || exit 1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# read and preprocess on CPUs (2.4 CPU-seconds), train on the GPU (0.6 s):
# a host of 2 CPUs alone leaves its GPU idle most of the time
cat >"$tmp/train.ini" <<'EOF'
[workload]
name = train
target_partition = 1MB

[read]
kind = source
tasks = 40
rows_per_task = 4
row_bytes = 100KB
time_per_task = 20ms

[preprocess]
kind = map
cpu = 1
out_row_bytes = 200KB
time_per_row = 10ms

[train]
kind = map_batches
gpu = 1
batch_size = 8
time_per_row = 4ms

[sink]
kind = sink
EOF
cp "$src/tests/fixtures/pool.cluster.ini" "$tmp/pool.ini"

for p in collocated remote pecan bound; do
  "$sluice" sim "$tmp/train.ini" --cluster "$tmp/pool.ini" --autoplace "$p" --autoplace-interval 200ms \
    --out "$tmp/sim-$p" >"$tmp/sim-$p.out" 2>&1
  check "sim --autoplace $p completes" test "$(summary_field "$tmp/sim-$p" complete)" = 1
  check "its summary names the policy" test "$(summary_field "$tmp/sim-$p" autoplace)" = "$p"
  check "and the printout splits the bill" grep -q "hosts \$.*, pool \$.*--autoplace $p" "$tmp/sim-$p.out"
done
check "collocated acquires no pool node" test "$(summary_field "$tmp/sim-collocated" pool_acquired)" = 0
for p in remote pecan bound; do
  check "$p acquires pool nodes" awk -v n="$(summary_field "$tmp/sim-$p" pool_acquired)" 'BEGIN { exit !(n >= 1) }'
  check "$p bills them: pool and hosts make the nodes' cost" awk \
    -v i="$(summary_field "$tmp/sim-$p" instance_cost_usd)" -v p="$(summary_field "$tmp/sim-$p" pool_cost_usd)" \
    -v h="$(summary_field "$tmp/sim-$p" host_cost_usd)" 'BEGIN { d = i - p - h; exit !(p > 0 && d * d < 1e-8 * i * i) }'
done
jb=$(summary_field "$tmp/sim-bound" jct_s)
jc=$(summary_field "$tmp/sim-collocated" jct_s)
check "bound finishes sooner than collocated ($jb s against $jc s)" awk -v b="$jb" -v c="$jc" 'BEGIN { exit !(b < c) }'
check "the timeline marks acquisitions and releases" bash -c \
  "grep -q 'acquire:worker.0' '$tmp/sim-bound/timeline.csv' && grep -q 'release:worker.0' '$tmp/sim-bound/timeline.csv'"

# the executor does the same with threads: a pool node serves once provisioned
"$sluice" run "$tmp/train.ini" --cluster "$tmp/pool.ini" --autoplace bound --autoplace-interval 200ms --quiet \
  --out "$tmp/run" >/dev/null 2>&1
check "run --autoplace bound completes" test "$(summary_field "$tmp/run" complete)" = 1
# (how many more it adds rests on measured rates, which real threads vary)
check "and acquires pool nodes" awk -v n="$(summary_field "$tmp/run" pool_acquired)" 'BEGIN { exit !(n >= 1) }'
check "its joins come after the provisioning delay" awk -F, \
  '$NF ~ /^join:worker/ { seen = 1; if ($1 < 0.1) bad = 1 } END { exit !(seen && !bad) }' "$tmp/run/timeline.csv"

# and across processes (--launch local): a pool node's worker process
# starts when the core acquires the node, serves once provisioned, and is
# dismissed when the node is given back
"$sluice" run "$tmp/train.ini" --cluster "$tmp/pool.ini" --autoplace bound --autoplace-interval 200ms --quiet \
  --out "$tmp/procs" --launch local >"$tmp/procs.out" 2>&1
check "run --autoplace bound --launch local completes" test "$(summary_field "$tmp/procs" complete)" = 1
check "with the sink of the run in one process" \
  test "$(summary_field "$tmp/procs" sink_checksum)" = "$(summary_field "$tmp/run" sink_checksum)"
check "and acquires pool nodes" awk -v n="$(summary_field "$tmp/procs" pool_acquired)" 'BEGIN { exit !(n >= 1) }'
check "whose joins come after the provisioning delay" awk -F, \
  '$NF ~ /^acquire:worker/ { at[substr($NF, 9)] = $1 } $NF ~ /^join:worker/ { n = substr($NF, 6); seen = 1
   if (!(n in at) || $1 - at[n] < 0.099) bad = 1 } END { exit !(seen && !bad) }' "$tmp/procs/timeline.csv"
check "and whose workers ran tasks" awk -F, 'NR > 1 && $7 ~ /^worker\./ { n++ } END { exit !(n > 0) }' \
  "$tmp/procs/tasks.csv"
check "no pool worker outlives the run" test "$(pgrep -f -- '--name worker\.[0-9]' | wc -l)" -eq 0
# and over ssh: each pool node's worker is started on its host when the
# core acquires it, and killed there when it is given back. The hosts are
# this machine, reached through a stand-in for ssh (SLUICE_SSH) that runs
# the command here, as ssh would run it there.
printf '#!/bin/sh\n# ssh HOST COMMAND, for a host that is this machine; logs COMMAND\necho "$2" >>"%s"\nexec sh -c "$2"\n' \
  "$tmp/ssh.log" >"$tmp/ssh"
chmod +x "$tmp/ssh"
sed -e '/^\[group host\]/a hosts = 127.0.0.1' \
  -e '/^\[group worker\]/a hosts = 127.0.0.1, 127.0.0.1, 127.0.0.1' "$tmp/pool.ini" >"$tmp/pool-ssh.ini"
SLUICE_SSH="$tmp/ssh" "$sluice" run "$tmp/train.ini" --cluster "$tmp/pool-ssh.ini" --autoplace bound \
  --autoplace-interval 200ms --quiet --out "$tmp/ssh-run" --launch ssh --listen 'tcp://127.0.0.1:*' \
  >"$tmp/ssh-run.out" 2>&1
check "run --autoplace bound --launch ssh completes" test "$(summary_field "$tmp/ssh-run" complete)" = 1
check "with the sink of the run in one process" \
  test "$(summary_field "$tmp/ssh-run" sink_checksum)" = "$(summary_field "$tmp/run" sink_checksum)"
check "and acquires pool nodes" awk -v n="$(summary_field "$tmp/ssh-run" pool_acquired)" 'BEGIN { exit !(n >= 1) }'
check "whose workers, started over ssh, ran tasks" awk -F, 'NR > 1 && $7 ~ /^worker\./ { n++ } END { exit !(n > 0) }' \
  "$tmp/ssh-run/tasks.csv"
check "each pool node's worker was started through ssh" test "$(grep -c 'worker --head .* --name .*worker\.' "$tmp/ssh.log")" -ge 1
head_at=$(sed -n 's/.*worker --head \([^ ]*\) .*/\1/p' "$tmp/ssh.log" | head -1 | tr -d "'")
sleep 0.3
check "no worker started over ssh outlives the run" test -n "$head_at" -a "$(pgrep -f -- "worker --head $head_at" | wc -l)" -eq 0
"$sluice" run "$tmp/train.ini" --cluster "$tmp/pool.ini" --autoplace bound --launch none --out "$tmp/none" \
  >"$tmp/none.out" 2>&1
check "a pool needs a head that starts its workers (--launch none: exit 2)" test $? -eq 2
check "and says so" grep -q "which --launch none cannot do" "$tmp/none.out"

# capacity planning with a pool: how big a pool to allow, billed as the runs held it
"$sluice" capacity "$tmp/train.ini" --node-types "$tmp/pool.ini" --deadline 5s --top 2 --out "$tmp/cap" \
  >"$tmp/cap.out" 2>&1
check "capacity names pools as such" grep -q '1 x host + a pool of [0-9] x worker' "$tmp/cap.out"
check "and gives the pool's share of each run's cost" grep -q 'pool \$/run' "$tmp/cap.out"
check "shapes.csv has the pool's cost, never above the run's" awk -F, \
  'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "\"pool_cost_per_run\"") p = i; if (!p) exit 1; next }
   $p != "" && $(p - 1) != "" && ($p + 0 > $(p - 1) + 0 || $p + 0 < 0) { bad = 1 } END { exit bad }' "$tmp/cap/shapes.csv"

# a pool node joins once provisioned, even with a fault still scheduled
# (the simulator once waited for the fault's time or its next tick)
"$sluice" sim "$tmp/train.ini" --cluster "$tmp/pool.ini" --autoplace remote --fail 'kill:train@50s' \
  --out "$tmp/late" --quiet >/dev/null 2>&1
check "a join comes 100 ms after its acquisition" awk -F, \
  '$NF == "join:worker.0" { exit !($1 > 0.0999 && $1 < 0.1001) } END { }' "$tmp/late/timeline.csv"
check "(and there is one)" grep -q 'join:worker.0' "$tmp/late/timeline.csv"
# the accelerator host lost for good before any row: the job is stranded and
# says so at once (a wakeup for measures that never begin once hid it)
"$sluice" sim "$tmp/train.ini" --cluster "$tmp/pool.ini" --fail 'lose:host.0@10ms' --out "$tmp/lost" \
  >"$tmp/lost.out" 2>&1
check "losing the only GPU host fails the run as stranded" grep -q 'work is stranded' "$tmp/lost.out"
check "without running to the time limit" awk -v j="$(summary_field "$tmp/lost" jct_s)" 'BEGIN { exit !(j < 60) }'

# refusals
awk 'BEGIN { w = 0 } /^\[group worker\]/ { w = 1 } /^cpu = 2$/ && w { print; print "gpu = 1"; next } { print }' \
  "$tmp/pool.ini" >"$tmp/gpu.ini"
check "an elastic group with GPUs exits 2" exits 2 "$sluice" sim "$tmp/train.ini" --cluster "$tmp/gpu.ini" --out "$tmp/bad"
check "and says why" bash -c "'$sluice' sim '$tmp/train.ini' --cluster '$tmp/gpu.ini' --out '$tmp/bad' 2>&1 |
  grep -q \"node group 'worker': an elastic group rents CPU workers and may have no GPU\""
check "a shuffle with a pool exits 2 (but for collocated)" bash -c \
  "'$sluice' sim sort --cluster '$tmp/pool.ini' --out '$tmp/bad' 2>&1 | grep -q 'all-to-all operator places'"
check "a static placement with a pool exits 2" exits 2 "$sluice" sim "$tmp/train.ini" --cluster "$tmp/pool.ini" \
  --model stream --out "$tmp/bad"
check "and says why" bash -c "'$sluice' sim '$tmp/train.ini' --cluster '$tmp/pool.ini' --model static \
  --out '$tmp/bad' 2>&1 | grep -q 'an elastic node group needs a model that places tasks as they come'"
check "collocated runs under a static placement" exits 0 "$sluice" sim "$tmp/train.ini" --cluster "$tmp/pool.ini" \
  --model stream --autoplace collocated --out "$tmp/ok" --quiet
check "an unknown policy exits 2" exits 2 "$sluice" sim "$tmp/train.ini" --cluster "$tmp/pool.ini" --autoplace cachew
sed 's/^elastic = true/elastic = maybe/' "$tmp/pool.ini" >"$tmp/bad.ini"
check "a bad elastic value names the file and line" bash -c \
  "'$sluice' sim '$tmp/train.ini' --cluster '$tmp/bad.ini' 2>&1 | grep -q 'bad.ini:17: unknown elastic'"
exit $((fails > 0))
