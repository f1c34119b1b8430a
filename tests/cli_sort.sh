#!/usr/bin/env bash
# The sort benchmark as a user runs it: `sluice run sort` sorts gensort's
# records through a range-partitioned all-to-all, spills past its store,
# and the sink checks the output like valsort, under every model and with
# a task killed; a sort that does not sort fails the check and the run; a
# check the source cannot back is refused with the file and line.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src" || exit 1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
col() { # summary.csv, column: its value (by name; quoted fields kept whole)
  python3 -c 'import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[0][sys.argv[2]])' "$1" "$2"
}

out=$("$sluice" run sort --cluster sort-local --out "$tmp/full" 2>&1)
check "sort runs and its output passes the check" bash -c "grep -q '^  output check passed' <<<\"\$1\"" _ "$out"
check "summary: passed, 1,200,000 records, spilled to disk" \
  test "$(col "$tmp/full/summary.csv" output_check),$(col "$tmp/full/summary.csv" rows),$(col "$tmp/full/summary.csv" spill_time)" \
  = "passed,1200000,real"

# the run is set against its disk and memory bound: 120 MB through a 40 MB
# store leaves 80 MB to write once and read back, at the disk it measured;
# the shuffle read every record once (simple: each reducer its share)
check "summary: the shuffle read every record once ($(col "$tmp/full/summary.csv" shuffle_bytes) of 120000000 bytes)" \
  test "$(col "$tmp/full/summary.csv" shuffle_bytes)" = 120000000
full_bound=$(col "$tmp/full/summary.csv" disk_bound_s) wbps=$(col "$tmp/full/summary.csv" disk_write_bps)
rbps=$(col "$tmp/full/summary.csv" disk_read_bps)
check "summary: disk bound $full_bound s = 80 MB written at $wbps B/s and read back at $rbps B/s" \
  awk -v t="$full_bound" -v w="$wbps" -v r="$rbps" 'BEGIN{e = 8e7 / w + 8e7 / r; exit !(w > 0 && r > 0 && t > 0.999 * e && t < 1.001 * e)}'
check "summary: the bound holds the disk's time ($(col "$tmp/full/summary.csv" bound_s) s)" \
  awk -v b="$(col "$tmp/full/summary.csv" bound_s)" -v t="$full_bound" 'BEGIN{exit !(b >= t)}'
check "the run prints the shuffle and its disk bound" \
  bash -c "grep -q '^  shuffle       120 MB read' <<<\"\$1\" && grep -q '^  disk bound .* this run measured' <<<\"\$1\"" _ "$out"

"$sluice" calibrate "$tmp/full" -o "$tmp/full.costs" >/dev/null
check "calibrate measures the spill disk the sort used" grep -q '^\[spill disk\]' "$tmp/full.costs"
spilled=$(python3 -c 'import csv,sys; print(sum(float(r["spill_write_bytes"]) for r in csv.DictReader(open(sys.argv[1]))))' \
  "$tmp/full/tasks.csv")
check "tasks.csv counts every spilled byte ($spilled of 80000000)" awk -v b="$spilled" 'BEGIN{exit !(b == 80000000)}'

# a reducer reads its block of each spilled input, not the whole file:
# each spilled byte comes back off the disk once (they read every file whole
# before, eight times the bytes)
sumcol() { # tasks.csv, column: its sum
  python3 -c 'import csv,sys; print(sum(float(r[sys.argv[2]]) for r in csv.DictReader(open(sys.argv[1]))))' "$1" "$2"
}
read_back=$(sumcol "$tmp/full/tasks.csv" spill_read_bytes)
check "reducers read each spilled byte once ($read_back of $spilled)" \
  awk -v r="$read_back" -v w="$spilled" 'BEGIN{exit !(r > 0 && r <= w)}'
printf '[cluster]\nname = disk\n[group local]\ncount = 1\ncpu = 2\nmemory = 4GB\nstore = 40MB\ndisk_bandwidth = 200MB/s\n' \
  >"$tmp/disk.ini"
sed 's/^disk_bandwidth = 200MB\/s$/&\ndisk_latency = 20ms/' "$tmp/disk.ini" >"$tmp/seek.ini"
"$sluice" sim sort --cluster "$tmp/disk.ini" --model batch --out "$tmp/sim-disk" --quiet >/dev/null 2>&1
"$sluice" sim sort --cluster "$tmp/seek.ini" --model batch --out "$tmp/sim-seek" --quiet >/dev/null 2>&1
check "simulated: disk bound 80 MB written and read back at the spec's 200 MB/s ($(col "$tmp/sim-disk/summary.csv" disk_bound_s) s)" \
  test "$(col "$tmp/sim-disk/summary.csv" disk_bound_s),$(col "$tmp/sim-disk/summary.csv" disk_write_bps)" = "0.8,0"
# push-star: the merges read every record once, then the reducers again
sed 's/^kind = all_to_all$/&\nstrategy = push-star/' workloads/sort.ini >"$tmp/push-star.ini"
"$sluice" sim "$tmp/push-star.ini" --cluster "$tmp/disk.ini" --out "$tmp/sim-push" --quiet >/dev/null 2>&1
check "simulated push-star: merges and reducers each read every record ($(col "$tmp/sim-push/summary.csv" shuffle_bytes))" \
  test "$(col "$tmp/sim-push/summary.csv" shuffle_bytes)" = 240000000
sim_read=$(sumcol "$tmp/sim-disk/tasks.csv" spill_read_bytes) sim_written=$(sumcol "$tmp/sim-disk/tasks.csv" spill_write_bytes)
check "simulated reducers read each spilled byte once ($sim_read of $sim_written)" \
  awk -v r="$sim_read" -v w="$sim_written" 'BEGIN{exit !(r > 0 && r <= w * (1 + 1e-9) && r >= w * (1 - 1e-9))}'
# 20 ms an access: 8 reducers each read a block of every spilled input, on
# top of the spills' own writes; the disk is busy that much longer
accesses=$(python3 -c 'import csv,sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(sum(1 for r in rows if float(r["spill_write_bytes"]) > 0) + sum(1 for r in rows if float(r["spill_read_bytes"]) > 0))' \
  "$tmp/sim-disk/tasks.csv")
check "a disk's access time is charged (jct $(col "$tmp/sim-disk/summary.csv" jct_s) -> $(col "$tmp/sim-seek/summary.csv" jct_s) s)" \
  awk -v a="$(col "$tmp/sim-disk/summary.csv" jct_s)" -v b="$(col "$tmp/sim-seek/summary.csv" jct_s)" -v n="$accesses" \
  'BEGIN{exit !(b >= a + 0.02 * n / 4)}'

# a smaller sort for the other models and the failures
sed 's/^rows_per_task = 50000/rows_per_task = 4000/' workloads/sort.ini >"$tmp/small.ini"
for m in streaming-plus batch stream static; do
  "$sluice" run "$tmp/small.ini" --cluster sort-local --model "$m" --out "$tmp/$m" --quiet >/dev/null 2>&1
  check "$m: the output passes the check" test "$(col "$tmp/$m/summary.csv" output_check)" = passed
done
"$sluice" run "$tmp/small.ini" --cluster sort-local --fail kill:sort@0.01s --out "$tmp/kill" --quiet >/dev/null 2>&1
check "a reducer killed: retried, and the output still passes" \
  test "$(col "$tmp/kill/summary.csv" output_check),$(col "$tmp/kill/summary.csv" complete),$(col "$tmp/kill/summary.csv" faults_applied)" \
  = passed,1,1
check "the killed reducer ran again" test "$(col "$tmp/kill/summary.csv" retried_tasks)" -ge 1

# a node lost mid-shuffle: its map outputs are made again from lineage and
# every reducer still reads its share (this hung: only the first reducer
# counted as the partitions' consumer, and it was running)
printf '[cluster]\nname = two\n[group n]\ncount = 2\ncpu = 1\nmemory = 4GB\nstore = 30MB\n' >"$tmp/two.ini"
# 96 MB: long enough (0.4-0.8 s here) for the faults below to strike mid-run
sed 's/^rows_per_task = 50000/rows_per_task = 40000/' workloads/sort.ini >"$tmp/mid.ini"
for run in "streaming lose:n.1@0.1s" "batch lose:n.1@0.1s" "streaming-plus lose:n.0@0.15s,join:n.0@0.4s" \
           "static lose:n.1@0.3s,join:n.1@0.5s" "stream lose:n.0@0.15s,join:n.0@0.4s"; do
  set -- $run
  timeout 120 "$sluice" run "$tmp/mid.ini" --cluster "$tmp/two.ini" --model "$1" --fail "$2" --out "$tmp/lost-$1" \
    --quiet >/dev/null 2>&1
  check "$1, $2: the output passes ($(col "$tmp/lost-$1/summary.csv" lost_partitions) partitions lost)" \
    test "$(col "$tmp/lost-$1/summary.csv" output_check),$(col "$tmp/lost-$1/summary.csv" faults_applied)" \
    = "passed,$(tr -cd , <<<"$2" | wc -c | awk '{print $1 + 1}')"
done

# every strategy, for real: the merge stages move the records between
# partitions and lose or repeat none; on two nodes, one lost mid-shuffle
# (its maps' outputs and merged blocks are made again from lineage)
for st in merge push push-star; do
  sed "s/^tasks = 8$/tasks = 8\nstrategy = $st/" "$tmp/mid.ini" >"$tmp/$st.ini"
  for m in streaming batch; do
    "$sluice" run "$tmp/$st.ini" --cluster "$tmp/two.ini" --model "$m" --out "$tmp/$st-$m" --quiet >/dev/null 2>&1
    check "$st, $m: the output passes ($(col "$tmp/$st-$m/summary.csv" tasks) tasks)" \
      test "$(col "$tmp/$st-$m/summary.csv" output_check)" = passed
  done
  timeout 120 "$sluice" run "$tmp/$st.ini" --cluster "$tmp/two.ini" --model streaming --fail lose:n.1@0.2s,join:n.1@0.5s \
    --out "$tmp/$st-lost" --quiet >/dev/null 2>&1
  check "$st, a node lost mid-shuffle: the output passes ($(col "$tmp/$st-lost/summary.csv" lost_partitions) partitions lost)" \
    test "$(col "$tmp/$st-lost/summary.csv" output_check),$(col "$tmp/$st-lost/summary.csv" faults_applied)" = passed,2
done
check "the merge stage is an operator of its own in tasks.csv" grep -q ',sort.merge,' "$tmp/push-star-streaming/tasks.csv"

# a random shuffle of the same records: every record once, the same
# checksum as the sort's (the sink's sum does not depend on order)
sed -e 's/^kernel = sort_records/kernel = shuffle_rows/' -e 's/^check = sorted/check = none/' "$tmp/small.ini" \
  >"$tmp/shuffle.ini"
"$sluice" run "$tmp/shuffle.ini" --cluster sort-local --out "$tmp/shuffle" --quiet >/dev/null 2>&1
check "a random shuffle completes with the sort's records ($(col "$tmp/shuffle/summary.csv" sink_checksum))" \
  test "$(col "$tmp/shuffle/summary.csv" complete),$(col "$tmp/shuffle/summary.csv" sink_checksum)" \
  = "1,$(col "$tmp/streaming-plus/summary.csv" sink_checksum)"

# an all-to-all that does not sort: the check fails, and so does the run
sed 's/^kernel = sort_records/kernel = noop/' "$tmp/small.ini" >"$tmp/nosort.ini"
out=$("$sluice" run "$tmp/nosort.ini" --cluster sort-local --out "$tmp/nosort" --quiet 2>&1)
rc=$?
check "a sort that does not sort exits 1 ($rc)" test "$rc" = 1
check "and says why" bash -c "grep -q 'sort check: a partition is not sorted' <<<\"\$1\"" _ "$out"
check "summary: failed, incomplete" \
  test "$(col "$tmp/nosort/summary.csv" output_check),$(col "$tmp/nosort/summary.csv" complete)" = failed,0

# a check the source cannot back: refused before anything runs
sed 's/^kernel = gensort/kernel = generate/' "$tmp/small.ini" >"$tmp/nogensort.ini"
out=$("$sluice" run "$tmp/nogensort.ini" --cluster sort-local --out "$tmp/nogen" 2>&1)
rc=$?
check "check = sorted without gensort exits 2 ($rc)" test "$rc" = 2
check "naming the file and the sink's line" bash -c "grep -q 'nogensort.ini:[0-9]*: sink .sink. checks a sort' <<<\"\$1\"" _ "$out"
check "and writes nothing" test ! -e "$tmp/nogen"

# a simulation has no payloads: it runs the plan, and checks nothing
"$sluice" sim sort --cluster sort-local --out "$tmp/sim" --quiet >/dev/null 2>&1
check "sim sort completes with no output check" \
  test "$(col "$tmp/sim/summary.csv" complete),$(col "$tmp/sim/summary.csv" output_check)" = 1,none
# the reducers' outputs come when they end: the simulator emits them so,
# which holds the store longer than outputs spread over the task would
sed 's/^kernel = sort_records/&\noutputs = as_made/' workloads/sort.ini >"$tmp/asmade.ini"
"$sluice" sim "$tmp/asmade.ini" --cluster sort-local --out "$tmp/sim-asmade" --quiet >/dev/null 2>&1
check "simulated outputs at the end take longer than outputs as made ($(col "$tmp/sim/summary.csv" jct_s) > $(col "$tmp/sim-asmade/summary.csv" jct_s))" \
  awk -v a="$(col "$tmp/sim/summary.csv" jct_s)" -v b="$(col "$tmp/sim-asmade/summary.csv" jct_s)" 'BEGIN{exit !(a > b)}'
exit $((fails > 0))
