#!/usr/bin/env bash
# End-to-end checks of `sluice sim` and `sluice calibrate`: help and exit
# codes, FILE:LINE errors, the outputs' schema, the golden run, and a
# calibration round trip through the command line.
#
# The golden run (tests/golden/sim/) is compared byte for byte. After an
# intended change of the core or the simulator, regenerate it with
#   SLUICE_UPDATE_GOLDEN=1 bash tests/cli_sim.sh build/sluice .
# and review the diff before committing.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
field() { # file, column name: the value in the first data row
  awk -F, -v col="$2" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h[col]}' "$1"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- help and usage errors ---------------------------------------------------
check "sim --help exits 0" exits 0 "$sluice" sim --help
check "calibrate --help exits 0" exits 0 "$sluice" calibrate --help
check "sim listed in sluice --help" bash -c "'$sluice' --help | grep -q '^  sim '"
check "sim without workload exits 2" exits 2 "$sluice" sim
check "sim with a bad option exits 2" exits 2 "$sluice" sim fig9-small --bogus
check "sim with two workloads exits 2" exits 2 "$sluice" sim fig9-small fig9
check "unknown workload exits 2" exits 2 "$sluice" sim nosuchworkload
check "unknown model exits 2" exits 2 "$sluice" sim fig9-small --model fastest
check "bad --memory exits 2" exits 2 "$sluice" sim fig9-small --memory lots
check "bad --on-full exits 2" exits 2 "$sluice" sim fig9-small --on-full panic
check "bad --mtbf exits 2" exits 2 "$sluice" sim fig9-small --mtbf often
check "bad --seed exits 2" exits 2 "$sluice" sim fig9-small --seed -3
check "bad --spill-bandwidth exits 2" exits 2 "$sluice" sim fig9-small --spill-bandwidth 10
check "bad --flow-solver exits 2" exits 2 "$sluice" sim fig9-small --flow-solver fast
check "--flow-solver full completes the same job" bash -c "'$sluice' sim fig9-small --flow-solver full --quiet \
  --out '$tmp/full-solver' && grep -q ',1,simulated,' '$tmp/full-solver/summary.csv'"
# Flows keep to their links: reads into nodes whose NICs differ took 192 s
# under SimGrid's lazy solver, the default until then, where the NICs
# allow no less than 240 s (the bound); the full solver gives 340 s.
for m in streaming static; do
  "$sluice" sim tests/fixtures/nic-reads.ini --cluster tests/fixtures/nic-reads.cluster.ini --model $m \
    --out "$tmp/nic-$m" --quiet
  pct=$(field "$tmp/nic-$m/summary.csv" pct_of_bound)
  check "$m: reads through unequal NICs do not beat their bound ($pct%)" awk -v v="$pct" 'BEGIN{exit !(v > 0 && v <= 100)}'
done
check "--flow-solver lazy is still accepted" exits 0 "$sluice" sim tests/fixtures/nic-reads.ini \
  --cluster tests/fixtures/nic-reads.cluster.ini --flow-solver lazy --out "$tmp/nic-lazy" --quiet
check "--cluster with --platform exits 2" exits 2 "$sluice" sim fig9-small --cluster fig9 --platform x.xml
for bad in "explode:1@5s" "lose:1" "lose:7@5s" "kill:nosuchop@1s" "join:0@soon" "lose:cpu.9@1s" ","; do
  check "bad --fail '$bad' exits 2" exits 2 "$sluice" sim fig9-small --fail "$bad" --out "$tmp/never"
done
out=$("$sluice" sim fig9-small --fail "lose:3@1s" 2>&1)
check "bad --fail says what and points at --help" bash -c "grep -q 'node index' <<<\"\$1\" && grep -q \"^Try 'sluice sim --help'\" <<<\"\$1\"" _ "$out"
check "a refused run writes nothing" test ! -e "$tmp/never"
check "budget below one partition with --on-full oom exits 2" \
  exits 2 "$sluice" sim fig9-small --memory 500kB --on-full oom --out "$tmp/never"

# --- a run and its outputs -----------------------------------------------------
check "fig9-small runs" exits 0 "$sluice" sim fig9-small --memory 100MB --out "$tmp/run" --quiet
for f in summary.csv timeline.csv tasks.csv; do
  check "$f written" test -s "$tmp/run/$f"
done
check "engine is sim" test "$(field "$tmp/run/summary.csv" engine)" = sim
check "accelerator is simulated" test "$(field "$tmp/run/summary.csv" accelerator)" = simulated
check "run is complete" test "$(field "$tmp/run/summary.csv" complete)" = 1
check "800 rows delivered" test "$(field "$tmp/run/summary.csv" rows)" = 800
pct=$(field "$tmp/run/summary.csv" pct_of_bound)
check "streaming within 10% of the bound ($pct%)" awk -v v="$pct" 'BEGIN{exit !(v >= 90 && v <= 100)}'
# where the capacity went: busy and idle add up to the cluster's capacity
# over the run, for CPUs and GPUs alike, within the rounding of the CSV's
# six significant digits (five fields of up to half a unit in the sixth)
for k in cpu gpu; do
  check "$k time adds up to its capacity" awk -F, -v k="$k" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i }
    NR == 2 { cap = $h[k "_capacity_s"]; sum = $h[k "_busy_s"]
      split("admission backpressure input transfer failure packing", r, " ")
      for (j = 1; j <= 6; j++) { v = $h[k "_idle_" r[j] "_s"]; if (v < 0) exit 1; sum += v }
      exit !(cap > 0 && sum > 0.99999 * cap && sum < 1.00001 * cap) }' "$tmp/run/summary.csv"
done
check "the console says where the time went" bash -c \
  "'$sluice' sim fig9-small --memory 100MB --out '$tmp/run2' | grep -Eq '^  CPU time +[0-9.]+% busy; idle: '"
check "one tasks.csv row per attempt" \
  test "$(($(wc -l <"$tmp/run/tasks.csv") - 1))" -eq "$(field "$tmp/run/summary.csv" tasks)"
check "--no-tasks leaves tasks.csv empty" bash -c \
  "'$sluice' sim fig9-small --no-tasks --quiet --out '$tmp/nt' && test \$(wc -l <'$tmp/nt/tasks.csv') -eq 1"
check "default output folder" bash -c "cd '$tmp' && '$sluice' sim fig9-small --quiet && test -s runs/sim-fig9-small-streaming/summary.csv"
summary=$("$sluice" sim fig9-small --memory 100MB --out "$tmp/run2")
check "human summary has JCT, bound, store, tasks" bash -c \
  "grep -q 'JCT' <<<\"\$1\" && grep -q 'of bound' <<<\"\$1\" && grep -q 'peak store' <<<\"\$1\" && grep -q 'retried' <<<\"\$1\"" _ "$summary"
check "--quiet prints nothing" test -z "$("$sluice" sim fig9-small --quiet --out "$tmp/q")"
check "failures: nothing lost" bash -c "'$sluice' sim fig9-small --cluster tests/golden/sim/cluster.ini \
  --fail 'kill:transform@2s,lose:1@4s,join:1@6s' --quiet --out '$tmp/f' && test \$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[\$i]=i} NR==2{print \$h[\"complete\"]}' '$tmp/f/summary.csv') = 1"
check "stream model with checkpoints" exits 0 "$sluice" sim fig9-small --model stream --checkpoint-interval 3s \
  --checkpoint-cost 100ms --restart-cost 1s --fail kill@5s --quiet --out "$tmp/st"
check "stream model rolled back once" test "$(field "$tmp/st/summary.csv" rollbacks)" = 1
check "random losses complete" exits 0 "$sluice" sim fig9-small --cluster tests/golden/sim/cluster.ini \
  --mtbf 10s --repair 1s --seed 3 --quiet --out "$tmp/mtbf"
check "the batch model spills under 60MB" bash -c "'$sluice' sim fig9-small --model batch --memory 60MB --quiet \
  --out '$tmp/b' && awk -F, 'NR==1{for(i=1;i<=NF;i++)h[\$i]=i} NR==2 && \$h[\"spilled_bytes\"] > 0 {ok=1} END{exit !ok}' '$tmp/b/summary.csv'"

# --- mixed clusters and spills: each node's peak against its own budget --------
mixed=tests/fixtures/mixed.cluster.ini
out=$("$sluice" sim fig9-small --cluster "$mixed" --model batch --out "$tmp/mixed")
check "mixed: the peak is read against its node's budget" \
  bash -c "grep -q '^  peak store .* of 200 MB budget on gpu.0' <<<\"\$1\"" _ "$out"
check "mixed: every group's budget and peak node" \
  bash -c "grep -q '^  by group      cpu: .* of 20 MB per node, most on cpu\.[01] (2 nodes)' <<<\"\$1\" &&
           grep -q '^                gpu: .* of 200 MB per node, most on gpu.0 (1 node)' <<<\"\$1\"" _ "$out"
check "mixed: summary names the peak node and its budget" \
  test "$(field "$tmp/mixed/summary.csv" peak_store_node),$(field "$tmp/mixed/summary.csv" peak_node_budget_bytes)" \
  = "gpu.0,200000000"
check "spilled without a disk: the output says spill time is not modelled" \
  bash -c "grep -q '^  spill time    not modelled: the .* spilled on nodes with no disk cost no time' <<<\"\$1\" &&
           grep -q -- '--spill-bandwidth' <<<\"\$1\"" _ "$out"
check "and so does the summary" test "$(field "$tmp/mixed/summary.csv" spill_time)" = not_modelled
out=$("$sluice" sim fig9-small --cluster "$mixed" --model batch --spill-bandwidth 500MB/s --out "$tmp/mixed-disk")
check "with a spill disk, spill time is modelled and nothing is said" \
  bash -c "! grep -q 'spill time' <<<\"\$1\" && test \"\$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[\$i]=i} NR==2{print \$h[\"spill_time\"]}' '$tmp/mixed-disk/summary.csv')\" = modelled" _ "$out"
# disks in the node spec: the same disk as --spill-bandwidth gives the same run
sed 's/^nic = 10Gbps$/&\ndisk_bandwidth = 500MB\/s/' "$mixed" >"$tmp/mixed-disks.ini"
"$sluice" sim fig9-small --cluster "$tmp/mixed-disks.ini" --model batch --quiet --out "$tmp/mixed-spec-disk"
jd=$(field "$tmp/mixed-spec-disk/summary.csv" jct_s) jo=$(field "$tmp/mixed-disk/summary.csv" jct_s)
check "a group's disk_bandwidth charges spills as --spill-bandwidth does ($jd, $jo)" \
  test "$jd,$(field "$tmp/mixed-spec-disk/summary.csv" spill_time)" = "$jo,modelled"
check "and a disk costs time: slower than without ($(field "$tmp/mixed/summary.csv" jct_s))" awk \
  -v a="$(field "$tmp/mixed/summary.csv" jct_s)" -v b="$(field "$tmp/mixed-spec-disk/summary.csv" jct_s)" 'BEGIN{exit !(b > a)}'
sed 's/^nic = 10Gbps$/&\ndisk_bandwidth = 250MB\/s\ndisks = 2/' "$mixed" >"$tmp/mixed-2disks.ini"
"$sluice" sim fig9-small --cluster "$tmp/mixed-2disks.ini" --model batch --quiet --out "$tmp/mixed-2disks"
check "two disks of 250 MB/s are striped: as one of 500 MB/s" test \
  "$(field "$tmp/mixed-2disks/summary.csv" jct_s)" = "$(field "$tmp/mixed-spec-disk/summary.csv" jct_s)"
sed 's/^nic = 10Gbps$/&\ndisk_bandwidth = 500MB\/s\ndisk_write_bandwidth = 100MB\/s/' "$mixed" >"$tmp/mixed-slow-write.ini"
"$sluice" sim fig9-small --cluster "$tmp/mixed-slow-write.ini" --model batch --quiet --out "$tmp/mixed-slow-write"
check "a slower write bandwidth costs more time" awk -v a="$(field "$tmp/mixed-spec-disk/summary.csv" jct_s)" \
  -v b="$(field "$tmp/mixed-slow-write/summary.csv" jct_s)" 'BEGIN{exit !(b > a)}'
# the spill disk measured back: calibrate fits it from the tasks' spill
# columns, and a simulation with those costs gives it to nodes without one
"$sluice" calibrate "$tmp/mixed-disk" -o "$tmp/mixed-disk.costs" >/dev/null
wbw=$(awk -F' = ' '/^write_bandwidth/{sub("B/s$","",$2); print $2}' "$tmp/mixed-disk.costs")
rbw=$(awk -F' = ' '/^read_bandwidth/{sub("B/s$","",$2); print $2}' "$tmp/mixed-disk.costs")
check "calibrate measures the 500 MB/s spill disk within 15% (write $wbw, read $rbw)" awk -v w="$wbw" -v r="$rbw" \
  'BEGIN{exit !(w > 425e6 && w < 575e6 && r > 425e6 && r < 575e6)}'
"$sluice" sim fig9-small --cluster "$mixed" --model batch --costs "$tmp/mixed-disk.costs" --quiet --out "$tmp/mixed-cal-disk"
jc=$(field "$tmp/mixed-cal-disk/summary.csv" jct_s)
check "and the simulation with it spills in time, within 3% ($jc against $jo)" bash -c \
  "[ '$(field "$tmp/mixed-cal-disk/summary.csv" spill_time)' = modelled ] && awk -v a='$jo' -v b='$jc' 'BEGIN{exit !(b > 0.97 * a && b < 1.03 * a)}'"
printf '[produce]\ntime_per_row = 1s\n[spill disk]\nwrite_bandwidth = 1GB/s\n' >"$tmp/half-disk.costs"
out=$("$sluice" sim fig9-small --costs "$tmp/half-disk.costs" --out "$tmp/half" 2>&1)
check "a [spill disk] without read_bandwidth is refused with its line ($out)" \
  bash -c "grep -q 'half-disk.costs:3: .spill disk. needs read_bandwidth and write_bandwidth' <<<\"\$1\"" _ "$out"
sed 's/^nic = 10Gbps$/&\ndisk_bandwidth = 500MB\/s\ndisk_capacity = 100MB/' "$mixed" >"$tmp/mixed-small-disk.ini"
out=$("$sluice" sim fig9-small --cluster "$tmp/mixed-small-disk.ini" --model batch --quiet --out "$tmp/mixed-small-disk" 2>&1)
check "disks too small: the job fails out of memory and disk ($(head -c 160 <<<"$out"))" \
  bash -c "grep -q 'out of memory and disk' <<<\"\$1\" && [ \"\$2\" = 0 ]" _ "$out" \
  "$(field "$tmp/mixed-small-disk/summary.csv" complete)"
out=$("$sluice" sim fig9-small --memory 100MB --out "$tmp/nospill")
check "nothing spilled: no spill line, one store line for one group" \
  bash -c "! grep -q 'spill time' <<<\"\$1\" && ! grep -q 'by group' <<<\"\$1\"" _ "$out"

# --- golden ------------------------------------------------------------------
golden=tests/golden/sim
grun=("$sluice" sim "$golden/workload.ini" --cluster "$golden/cluster.ini"
  --fail kill:transform@1s,lose:cpu.1@2s,join:cpu.1@3s --quiet)
if [ "${SLUICE_UPDATE_GOLDEN:-0}" = 1 ]; then
  "${grun[@]}" --out "$tmp/golden" && cp "$tmp/golden/"*.csv "$golden/" && echo "golden files updated"
fi
check "golden run completes" exits 0 "${grun[@]}" --out "$tmp/golden"
for f in summary.csv timeline.csv tasks.csv; do
  check "golden $f matches byte for byte" cmp -s "$golden/$f" "$tmp/golden/$f"
done
"${grun[@]}" --out "$tmp/golden2"
check "two runs are byte-identical" bash -c "cmp -s '$tmp/golden/tasks.csv' '$tmp/golden2/tasks.csv' && \
  cmp -s '$tmp/golden/timeline.csv' '$tmp/golden2/timeline.csv' && cmp -s '$tmp/golden/summary.csv' '$tmp/golden2/summary.csv'"

# --- calibration ---------------------------------------------------------------
check "calibrate writes costs.ini" exits 0 "$sluice" calibrate "$tmp/run"
check "costs.ini names every operator" bash -c \
  "grep -q '^\[produce\]' '$tmp/run/costs.ini' && grep -q '^\[transform\]' '$tmp/run/costs.ini' && grep -q '^\[inference\]' '$tmp/run/costs.ini'"
tpr=$(awk -F' = ' '/^\[transform\]/{t=1} t && /^time_per_row/{sub("s$","",$2); print $2; exit}' "$tmp/run/costs.ini")
check "transform time_per_row is 50 ms ($tpr)" awk -v v="$tpr" 'BEGIN{exit !(v > 0.0495 && v < 0.0505)}'
infl=$(awk -F' = ' '/^\[inference\]/{t=1} t && /^inflation/{print $2; exit}' "$tmp/run/costs.ini")
tinfl=$(awk -F' = ' '/^\[transform\]/{t=1} t && /^inflation/{print $2; exit}' "$tmp/run/costs.ini")
check "inflation measured: inference 1e-05 ($infl), transform 1 ($tinfl)" bash -c "[ '$infl' = 1e-05 ] && [ '$tinfl' = 1 ]"
check "a source reads no partitions: no inflation" bash -c \
  "! awk '/^\[produce\]/{t=1; next} /^\[/{t=0} t' '$tmp/run/costs.ini' | grep -q '^inflation'"
check "calibrate -o - prints to stdout" bash -c "'$sluice' calibrate '$tmp/run' -o - | grep -q '^time_per_row'"
check "sim with calibrated costs" exits 0 "$sluice" sim fig9-small --memory 100MB --costs "$tmp/run/costs.ini" \
  --quiet --out "$tmp/cal"
jct1=$(field "$tmp/run/summary.csv" jct_s)
jct2=$(field "$tmp/cal/summary.csv" jct_s)
check "calibrated JCT within 2% ($jct1 vs $jct2)" awk -v a="$jct1" -v b="$jct2" 'BEGIN{exit !(b > 0.98 * a && b < 1.02 * a)}'
check "sim --plan-with-costs with calibrated costs" exits 0 "$sluice" sim fig9-small --memory 100MB \
  --costs "$tmp/run/costs.ini" --plan-with-costs --quiet --out "$tmp/calp"
check "--plan-with-costs without --costs exits 2" exits 2 "$sluice" sim fig9-small --plan-with-costs
# a worker that woke late: the wait (dispatch_s) is the engine's, not the
# operator's, so calibration leaves the operator's time as it was
mkdir -p "$tmp/late"
awk -F, -v OFS=, 'NR==1{for(i=1;i<=NF;i++){if($i=="dispatch_s")c=i; if($i=="start_s")s=i}; print; next}
  {$c=($s < 0.01 ? $s : 0.01); print}' "$tmp/run/tasks.csv" >"$tmp/late/tasks.csv"
"$sluice" calibrate "$tmp/late" -o "$tmp/late.costs" >/dev/null
task_s() { # cost file, operator, rows: one task's time at speed 1
  awk -F' = ' -v op="[$2]" -v rows="$3" '$0==op{t=1; next} /^\[/{t=0} t && /^time_per_task/{sub("s$","",$2); a=$2}
    t && /^time_per_row/{sub("s$","",$2); b=$2} END{printf "%.6f", a + rows * b}' "$1"
}
trows=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["op_name"]=="transform"{print $h["rows_in"]; exit}' "$tmp/run/tasks.csv")
t0=$(task_s "$tmp/run/costs.ini" transform "$trows") t1=$(task_s "$tmp/late.costs" transform "$trows")
check "a late start is not charged to the operator: $t0 s = $t1 s" \
  awk -v a="$t0" -v b="$t1" 'BEGIN{d = b - a; exit !(d > -1e-5 && d < 1e-5)}'
# bursts: tasks launched together started 0, 2, 4, 6 ms after their LAUNCH
# (and 4, 0, 2 in a second burst); a task alone says nothing of spacing
mkdir -p "$tmp/burst"
{
  echo "op,op_name,start_s,end_s,rows_in,rows_out,bytes_out,status,dispatch_s"
  for d in 0 0.002 0.004 0.006; do echo "0,work,$d,$(awk -v d="$d" 'BEGIN{print d + 1}'),10,10,1000,done,$d"; done
  for d in 0.004 0 0.002; do echo "0,work,$(awk -v d="$d" 'BEGIN{print d + 2}'),$(awk -v d="$d" 'BEGIN{print d + 3}'),10,10,1000,done,$d"; done
  echo "0,work,5.009,6,10,10,1000,done,0.009"
} >"$tmp/burst/tasks.csv"
check "calibrate fits bursts" exits 0 "$sluice" calibrate "$tmp/burst" -o "$tmp/burst.costs"
spacing=$(awk -F' = ' '/^\[dispatch\]/{t=1} t && /^launch_spacing/{sub("s$","",$2); print $2}' "$tmp/burst.costs")
check "the launch spacing is 2 ms ($spacing)" awk -v v="$spacing" 'BEGIN{exit !(v > 0.00199 && v < 0.00201)}'
check "it rests on 2 bursts of 7 launches" bash -c "grep -q '^bursts = 2$' '$tmp/burst.costs' && grep -q '^launches = 7$' '$tmp/burst.costs'"
mkdir -p "$tmp/badd"
sed '2s/,0$/,0.5/' "$tmp/burst/tasks.csv" >"$tmp/badd/tasks.csv"
msg=$("$sluice" calibrate "$tmp/badd" -o - 2>&1 >/dev/null)
check "a dispatch_s past start_s is refused with its line" \
  bash -c "grep -q 'tasks.csv:2: dispatch_s must be' <<<\"\$1\"" _ "$msg"
check "... and exits non-zero" bash -c "! '$sluice' calibrate '$tmp/badd' -o - >/dev/null 2>&1"
# the simulator starts a burst that far apart, in a random order: the first
# wave of fig9-small (its source on 8 CPU slots) at 0, 10, ..., 70 ms after the LAUNCH
printf '[produce]\n[dispatch]\nlaunch_spacing = 10ms\n' >"$tmp/spaced.costs"
check "sim with a launch spacing" exits 0 "$sluice" sim fig9-small --memory 100MB --costs "$tmp/spaced.costs" \
  --quiet --out "$tmp/spaced"
waits=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["start_s"] - $h["dispatch_s"] < 1e-9 {print $h["dispatch_s"]}' \
  "$tmp/spaced/tasks.csv" | sort -g | tr '\n' ' ')
check "the first wave starts 10 ms apart ($waits)" bash -c "[ '$waits' = '0 0.01 0.02 0.03 0.04 0.05 0.06 0.07 ' ]"
by_task=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["start_s"] - $h["dispatch_s"] < 1e-9 {print $h["task"], $h["dispatch_s"]}' \
  "$tmp/spaced/tasks.csv" | sort -n | awk '{printf "%s ", $2}')
check "in no fixed order: neither by task nor against it ($by_task)" \
  bash -c "[ '$by_task' != '0 0.01 0.02 0.03 0.04 0.05 0.06 0.07 ' ] && [ '$by_task' != '0.07 0.06 0.05 0.04 0.03 0.02 0.01 0 ' ]"
printf '[produce]\n[dispatch]\nlaunch_spacing = 1ms\n[dispatch]\n' >"$tmp/dup.costs"
check "a second [dispatch] is refused with both lines" bash -c \
  "'$sluice' sim fig9-small --costs '$tmp/dup.costs' --quiet 2>&1 | grep -q 'dup.costs:4: duplicate section \[dispatch\] (first at line 2)'"
printf '[produce]\n[dispatch]\nspacing = 1ms\n' >"$tmp/key.costs"
check "an unknown key in [dispatch] is refused and the known ones named" bash -c \
  "'$sluice' sim fig9-small --costs '$tmp/key.costs' --quiet 2>&1 | grep -q \"key.costs:3: unknown key 'spacing' in \[dispatch\] (expected launch_spacing\""
# handoffs: after two of its tasks the executor gave the slot its next
# task 2 and 4 ms after the task ended; after the third, nothing (empty)
mkdir -p "$tmp/handoff"
{
  echo "op,op_name,start_s,end_s,rows_in,rows_out,bytes_out,status,handoff_s"
  echo "0,work,0,1,10,10,1000,done,0.002"
  echo "0,work,1.002,2,10,10,1000,done,0.004"
  echo "0,work,2.004,3,10,10,1000,done,"
} >"$tmp/handoff/tasks.csv"
check "calibrate fits handoffs" exits 0 "$sluice" calibrate "$tmp/handoff" -o "$tmp/handoff.costs"
handoff=$(awk -F' = ' '/^time_handoff/{sub("s$","",$2); print $2}' "$tmp/handoff.costs")
check "the handoff is their mean, 3 ms ($handoff), over the 2 measured" bash -c \
  "awk -v v='$handoff' 'BEGIN{exit !(v > 0.00299 && v < 0.00301)}' && grep -q '^handoffs_observed = 2$' '$tmp/handoff.costs'"
mkdir -p "$tmp/badh"
sed '3s/,0.004$/,-0.004/' "$tmp/handoff/tasks.csv" >"$tmp/badh/tasks.csv"
check "a negative handoff_s is refused with its line" bash -c \
  "'$sluice' calibrate '$tmp/badh' -o - 2>&1 >/dev/null | grep -q 'tasks.csv:3: handoff_s must be empty or a number'"
# A GPU classifier set up once per slot (300 ms), behind four CPU readers.
# Every model used to set it up a second time on another slot once a
# reader's freed slot was the last freed; the core now takes a slot that
# has set the operator up when one is free.
cat >"$tmp/setup.ini" <<'SPEC'
[workload]
name = setup-once
target_partition = 1MB
[read]
kind = source
kernel = generate
cpu = 1
tasks = 40
rows_per_task = 4
row_bytes = 256KB
time_per_task = 100ms
[classify]
kind = map_batches
kernel = sleep
gpu = 1
cpu = 0
batch_size = 8
time_per_batch = 20ms
time_setup = 300ms
out_row_bytes = 1KB
[sink]
kind = sink
SPEC
printf '[cluster]\nname = one\n[group local]\ncpu = 4\ngpu = 1\nmemory = 8GB\n' >"$tmp/one.cluster.ini"
for m in static stream streaming streaming-plus; do
  "$sluice" sim "$tmp/setup.ini" --cluster "$tmp/one.cluster.ini" --model "$m" --quiet --out "$tmp/setup-$m" >/dev/null
  fresh=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["op_name"]=="classify" && $h["fresh"]==1' \
    "$tmp/setup-$m/tasks.csv" | wc -l)
  check "$m sets the classifier up once on its one GPU ($fresh)" test "$fresh" = 1
done
# the simulator holds what a finish launches for its operator's handoff:
# batch runs the 20 classifier batches one after another, so 19 wait 10 ms
printf '[classify]\ntime_handoff = 10ms\n' >"$tmp/handoff10.costs"
"$sluice" sim "$tmp/setup.ini" --cluster "$tmp/one.cluster.ini" --model batch --quiet --out "$tmp/h0" >/dev/null
check "sim with a handoff" exits 0 "$sluice" sim "$tmp/setup.ini" --cluster "$tmp/one.cluster.ini" --model batch \
  --costs "$tmp/handoff10.costs" --quiet --out "$tmp/h10"
j0=$(summary_field "$tmp/h0" jct_s) j10=$(summary_field "$tmp/h10" jct_s)
check "19 handoffs of 10 ms: $j0 s -> $j10 s" awk -v a="$j0" -v b="$j10" 'BEGIN{d = b - a; exit !(d > 0.1899 && d < 0.1901)}'
handed=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["op_name"]=="classify" && $h["handoff_s"]==0.01' \
  "$tmp/h10/tasks.csv" | wc -l)
check "tasks.csv says which finishes handed over ($handed of 20)" test "$handed" = 19
# a batch operator whose first, fresh attempts took batches of 64, 48 and
# 32 rows and whose later ones all took 16: per-task and per-row cost come
# from all of them (174 ms a batch, 16 ms a row), not all of it per row
mkdir -p "$tmp/fresh16"
{
  echo "op,op_name,start_s,end_s,rows_in,rows_out,bytes_out,status,fresh"
  for r in 64 48 32 64; do echo "0,batch,0,$(awk -v r="$r" 'BEGIN{print 0.174 + 0.016 * r}'),$r,$r,1000,done,1"; done
  for k in 1 2 3; do echo "0,batch,2,$(awk 'BEGIN{print 2 + 0.174 + 0.016 * 16}'),16,16,1000,done,0"; done
} >"$tmp/fresh16/tasks.csv"
"$sluice" calibrate "$tmp/fresh16" -o "$tmp/fresh16.costs" >/dev/null
tpt=$(awk -F' = ' '/^time_per_task/{sub("s$","",$2); print $2}' "$tmp/fresh16.costs")
tpr=$(awk -F' = ' '/^time_per_row/{sub("s$","",$2); print $2}' "$tmp/fresh16.costs")
check "later attempts of one size: the fit takes every attempt ($tpt s a task, $tpr s a row)" \
  awk -v a="$tpt" -v b="$tpr" 'BEGIN{exit !(a > 0.1735 && a < 0.1745 && b > 0.01599 && b < 0.01601)}'
# set-up once per slot: charged to each slot's first task of the operator,
# told apart by calibrate (the 'fresh' attempts), on the bound's path
sed 's/^\[inference\]/&\ntime_setup = 1.5s/' workloads/fig9-small.ini >"$tmp/setup.ini"
check "a workload with time_setup simulates" exits 0 "$sluice" sim "$tmp/setup.ini" --memory 100MB \
  --out "$tmp/setup" --quiet
fresh=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["op_name"]=="inference" && $h["fresh"]==1' \
  "$tmp/setup/tasks.csv" | wc -l)
gpus=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["op_name"]=="inference"{print $h["node"] "/" $h["slot"]}' \
  "$tmp/setup/tasks.csv" | sort -u | wc -l)
check "one fresh inference attempt per slot that ran it ($fresh of $gpus)" test "$fresh" -eq "$gpus" -a "$fresh" -gt 0
"$sluice" calibrate "$tmp/setup" -o "$tmp/setup.costs" >/dev/null
setup=$(awk -F' = ' '/^\[inference\]/{t=1} t && /^time_setup/{sub("s$","",$2); print $2; exit}' "$tmp/setup.costs")
tsetup=$(awk -F' = ' '/^\[transform\]/{t=1} t && /^time_setup/{sub("s$","",$2); print $2; exit}' "$tmp/setup.costs")
check "calibrate tells the set-up apart: inference 1.5 s ($setup), transform 0 ($tsetup)" \
  awk -v v="$setup" -v w="$tsetup" 'BEGIN{exit !(v > 1.49 && v < 1.51 && w == 0)}'
check "sim with those costs" exits 0 "$sluice" sim "$tmp/setup.ini" --memory 100MB --costs "$tmp/setup.costs" \
  --quiet --out "$tmp/setup-cal"
jct1=$(field "$tmp/setup/summary.csv" jct_s)
jct2=$(field "$tmp/setup-cal/summary.csv" jct_s)
check "set-up calibrated JCT within 2% ($jct1 vs $jct2)" awk -v a="$jct1" -v b="$jct2" 'BEGIN{exit !(b > 0.98 * a && b < 1.02 * a)}'
cp0=$("$sluice" bound fig9-small --cluster fig9 --csv | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["critical_path_s"]}')
cp1=$("$sluice" bound "$tmp/setup.ini" --cluster fig9 --csv | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["critical_path_s"]}')
# a GPU slot may load the model while the CPUs make its first input, so
# the row goes on at the set-up's end (1.5 s), then one 50 ms row
check "the set-up is on the bound's critical path, beside the work before it ($cp0 without; 1.5 + 0.05 = $cp1)" \
  awk -v a="$cp0" -v b="$cp1" 'BEGIN{exit !(a < 1.5 && b > 1.5499 && b < 1.5501)}'
check "calibrate without a run exits 2" exits 2 "$sluice" calibrate "$tmp/nothing-here"
check "calibrate without RUN_DIR exits 2" exits 2 "$sluice" calibrate
printf 'task,op\n1,2\n' >"$tmp/bad-run.csv"
mkdir -p "$tmp/badrun" && mv "$tmp/bad-run.csv" "$tmp/badrun/tasks.csv"
out=$("$sluice" calibrate "$tmp/badrun" 2>&1)
check "calibrate on a foreign CSV exits 2 with FILE:LINE ($out)" bash -c \
  "'$sluice' calibrate '$tmp/badrun' >/dev/null 2>&1; [ \$? -eq 2 ] && grep -q 'tasks.csv:1:' <<<\"\$1\"" _ "$out"
printf '[transform]\ntime_per_row = 50ms\ntime_per_task = soon\n' >"$tmp/bad-costs.ini"
out=$("$sluice" sim fig9-small --costs "$tmp/bad-costs.ini" 2>&1)
code=$?
check "bad cost file exits 2" test $code -eq 2
check "bad cost file names FILE:LINE ($out)" bash -c "grep -q 'bad-costs.ini:3:' <<<\"\$1\"" _ "$out"
check "missing cost file exits 2" exits 2 "$sluice" sim fig9-small --costs "$tmp/none.ini"

# --- a hand-written platform ---------------------------------------------------
cat >"$tmp/platform.xml" <<'EOF'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Cluster">
    <host id="driver" speed="1Gf"><prop id="kind" value="driver"/></host>
    <host id="box" speed="1Gf" core="8"><prop id="kind" value="cpu"/><prop id="store" value="100MB"/></host>
    <host id="box-gpu" speed="1Gf" core="4"><prop id="kind" value="gpu"/><prop id="node" value="box"/></host>
    <link id="l" bandwidth="10GBps" latency="10us"/>
    <host_link id="driver" up="l" down="l"/><host_link id="box" up="l" down="l"/><host_link id="box-gpu" up="l" down="l"/>
  </zone>
</platform>
EOF
check "--platform XML runs" exits 0 "$sluice" sim fig9-small --platform "$tmp/platform.xml" --quiet --out "$tmp/px"
check "--platform matches the spec's JCT" test "$(field "$tmp/px/summary.csv" jct_s)" = "$(field "$tmp/run/summary.csv" jct_s)"
printf 'not xml\n' >"$tmp/bad.xml"
check "a broken platform exits 2" exits 2 "$sluice" sim fig9-small --platform "$tmp/bad.xml"

# The only node lost for good: the stall timeout ends the run and names the
# operator the core says holds it up, instead of waiting for the time limit.
"$sluice" sim fig9-small --cluster fig9 --fail lose:0@3s --stall-timeout 5s --quiet \
  --out "$tmp/stall" >"$tmp/stall.txt" 2>&1
rc=$?
check "a stalled simulation exits 1" test $rc -eq 1
check "and names the stuck operator" grep -q "stalled: no progress for 5 s; operator 'inference' is stuck" \
  "$tmp/stall.txt"
check "a zero --stall-timeout is a usage error" exits 2 "$sluice" sim fig9-small --stall-timeout 0s

# --- a set-up comes before the first row out ----------------------------------
# A map that loads a model for 1 s, then takes 0.1 s a row, emitting a
# partition a row: its first row leaves at 1.1 s in both engines (both
# paced its rows evenly over the whole 2 s before, set-up included, so the
# first left at 0.2 s, ahead of the set-up the bound charges).
cat >"$tmp/setup.ini" <<'INI'
[workload]
name = setup-first
target_partition = 1KB
[src]
kind = source
tasks = 1
rows_per_task = 10
row_bytes = 1KB
time_per_row = 1ms
[model]
kind = map
time_setup = 1s
time_per_row = 100ms
[sink]
kind = sink
INI
printf '[group one]\ncpu = 2\nmemory = 1GB\n' >"$tmp/one.ini"
"$sluice" sim "$tmp/setup.ini" --cluster "$tmp/one.ini" --quiet --out "$tmp/setup-sim" >/dev/null 2>&1
"$sluice" run "$tmp/setup.ini" --cluster "$tmp/one.ini" --time-scale 0.2 --quiet --out "$tmp/setup-run" >/dev/null 2>&1
first_sim=$(field "$tmp/setup-sim/summary.csv" first_output_s) first_run=$(field "$tmp/setup-run/summary.csv" first_output_s)
check "sim: the first row leaves after the set-up ($first_sim s)" awk -v t="$first_sim" 'BEGIN { exit !(t > 1.09 && t < 1.12) }'
check "run: the same at 1/5 time ($first_run s)" awk -v t="$first_run" 'BEGIN { exit !(t > 0.218 && t < 0.26) }'

echo "$fails failed"
exit $((fails > 0))
