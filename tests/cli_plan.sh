#!/usr/bin/env bash
# sluice plan says what will run: the tasks of every operator as the chosen
# model's engines size them, checked against what the simulator runs, and a
# note wherever the size or the count is decided at run time.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src" || exit 1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check "plan --help names --model" bash -c "'$sluice' plan --help | grep -q -- '--model MODEL'"
check "an unknown --model exits 2" exits 2 "$sluice" plan video --model fastest
check "and says which it is" bash -c "'$sluice' plan video --model fastest 2>&1 | grep -q \"unknown model 'fastest'\""

# The tasks of a map_batches operator follow its input partitions, not its
# batch size: video's classify takes six 5-row partitions, 30 rows a task.
out=$("$sluice" plan video)
# columns from the right: rows/task, row size (two words), tasks
rows=$(awk '$2 == "classify" { print $(NF - 3) }' <<<"$out")
tasks=$(awk '$2 == "classify" { print $NF }' <<<"$out")
check "classify runs 30 rows a task (plan: $rows)" test "$rows" = 30
check "and 2152 tasks, marked (plan: $tasks)" test "$tasks" = "2152*"
check "the note says why" bash -c "grep -q 'classify: takes whole partitions of read->decode, 5 rows' <<<\"\$1\" &&
  grep -q 'whole batches of 32: 30 rows' <<<\"\$1\"" _ "$out"
check "the header names the model" bash -c "grep -q '^model streaming: tasks as its engines size them' <<<\"\$1\"" _ "$out"

# What the plan says is what the simulator runs, under every model.
for m in streaming batch streaming-nopart stream; do
  planned=$("$sluice" plan video --model "$m" | awk '$2 == "classify" { sub(/\*$/, "", $NF); print $NF }')
  "$sluice" sim video --model "$m" --out "$tmp/$m" --quiet
  ran=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
                 $h["op_name"] == "classify" && $h["attempt"] == 0 { n++ } END { print n }' "$tmp/$m/tasks.csv")
  check "$m: the plan's $planned classify tasks are the $ran the simulator runs" test "$planned" = "$ran"
done

# A plain map gathers what is queued when it starts: a range, and why.
cat >"$tmp/gathers.ini" <<'INI'
[workload]
name = gathers
target_partition = 100kB
[read]
kind = source
cpu = 1
tasks = 200
rows_per_task = 3
row_bytes = 10kB
time_per_task = 10ms
[work]
kind = map
cpu = 0.5
time_per_row = 5ms
[sink]
kind = sink
INI
out=$("$sluice" plan "$tmp/gathers.ini")
check "a gathering map's count is a range" test "$(awk '$2 == "work" { print $NF }' <<<"$out")" = "67-200*"
check "decided at run time, and between which bounds" \
  bash -c "grep -q 'the count is decided' <<<\"\$1\" && grep -q 'from 67 tasks (every task full) to 200 (one partition each)' <<<\"\$1\"" _ "$out"
out=$("$sluice" plan "$tmp/gathers.ini" --model batch)
check "batch keeps one partition per task" test "$(awk '$2 == "work" { print $NF }' <<<"$out")" = 200
check "and needs no note" bash -c "! grep -q 'how the tasks are sized' <<<\"\$1\"" _ "$out"
exit $((fails > 0))
