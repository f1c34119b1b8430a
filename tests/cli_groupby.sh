#!/usr/bin/env bash
# A groupby as a user runs it: `sluice run groupby` groups gensort's
# records by their key's first byte through a combine and an all-to-all,
# and the sink checks each group's count, sum, min and max against the
# records regenerated from the seed, under every model, with a reducer
# killed and with a node lost mid-shuffle; reducers that cannot read the
# combines' rows fail the run; a check the pipeline cannot back is refused
# with the file and line; the same spec simulates.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src" || exit 1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$sluice" run groupby --cluster sort-local --out "$tmp/full" 2>&1)
check "groupby runs and its output passes the check" \
  bash -c "grep -q '^  output check passed: one row per group' <<<\"\$1\"" _ "$out"
check "summary: passed, 256 groups" \
  test "$(summary_field "$tmp/full" output_check),$(summary_field "$tmp/full" rows)" = "passed,256"

# two-byte keys: 65,536 groups, more than a task's records fill
sed -e 's/^key_bytes = 1/key_bytes = 2/' -e 's/^rows_per_task = 50000/rows_per_task = 20000/' \
  -e 's/^rows_out_per_row = 0.00512/rows_out_per_row = 0.6/' -e 's/^out_row_bytes = 33B/out_row_bytes = 34B/' \
  workloads/groupby.ini >"$tmp/two.ini"
"$sluice" run "$tmp/two.ini" --cluster sort-local --out "$tmp/two" --quiet >/dev/null 2>&1
check "two-byte keys: the output passes the check ($(summary_field "$tmp/two" rows) groups)" \
  test "$(summary_field "$tmp/two" output_check)" = passed

# the same without a check: a groupby makes the rows its data has (65,491
# groups where the spec estimates 12,000), and the run is not held to the
# estimate (it failed "the sink got 65491 rows of 12000")
sed 's/^check = grouped/check = none/' "$tmp/two.ini" >"$tmp/two-nocheck.ini"
"$sluice" run "$tmp/two-nocheck.ini" --cluster sort-local --out "$tmp/two-nocheck" --quiet >/dev/null 2>&1
check "without a check it completes with the groups it found ($(summary_field "$tmp/two-nocheck" rows))" \
  test "$(summary_field "$tmp/two-nocheck" complete),$(summary_field "$tmp/two-nocheck" rows)" = "1,$(summary_field "$tmp/two" rows)"

sed 's/^rows_per_task = 50000/rows_per_task = 4000/; s/^rows_out_per_row = 0.00512/rows_out_per_row = 0.064/' \
  workloads/groupby.ini >"$tmp/small.ini"
for m in streaming-plus batch stream static; do
  "$sluice" run "$tmp/small.ini" --cluster sort-local --model "$m" --out "$tmp/$m" --quiet >/dev/null 2>&1
  check "$m: the output passes the check" test "$(summary_field "$tmp/$m" output_check)" = passed
done
"$sluice" run "$tmp/small.ini" --cluster sort-local --fail kill:groupby@0.005s --out "$tmp/kill" --quiet >/dev/null 2>&1
check "a reducer killed: retried, and the output still passes" \
  test "$(summary_field "$tmp/kill" output_check),$(summary_field "$tmp/kill" complete),$(summary_field "$tmp/kill" retried_tasks)" \
  = passed,1,1

# a node lost mid-shuffle: the combines' partial rows are made again from
# lineage, and every reducer still reads its share
printf '[cluster]\nname = two\n[group n]\ncount = 2\ncpu = 1\nmemory = 4GB\nstore = 30MB\n' >"$tmp/two-nodes.ini"
sed 's/^rows_per_task = 50000/rows_per_task = 20000/; s/^rows_out_per_row = 0.00512/rows_out_per_row = 0.0128/' \
  workloads/groupby.ini >"$tmp/mid.ini"
for run in "streaming lose:n.1@0.02s" "batch lose:n.1@0.02s,join:n.1@0.1s"; do
  set -- $run
  timeout 120 "$sluice" run "$tmp/mid.ini" --cluster "$tmp/two-nodes.ini" --model "$1" --fail "$2" \
    --out "$tmp/lost-$1" --quiet >/dev/null 2>&1
  check "$1, $2: the output passes ($(summary_field "$tmp/lost-$1" faults_applied) faults applied)" \
    test "$(summary_field "$tmp/lost-$1" output_check),$(summary_field "$tmp/lost-$1" complete)" = passed,1
done

# an operator between the groupby and the sink: the check could not vouch
# for its rows, so the spec is refused; reducers that read another key
# size than the combines wrote fail the run
printf '[half]\nkind = map\nkernel = noop\nrows_out_per_row = 0.5\n' >"$tmp/filter.part"
awk -v part="$tmp/filter.part" '/^\[sink\]/ { while ((getline l < part) > 0) print l; print "" } { print }' \
  "$tmp/small.ini" >"$tmp/dropped.ini"
out=$("$sluice" run "$tmp/dropped.ini" --cluster sort-local --out "$tmp/dropped" --quiet 2>&1)
rc=$?
check "a groupby's output filtered after it is refused: the check needs the groupby last (exit $rc)" test "$rc" = 2
sed '/^\[groupby\]/,/^\[sink\]/ s/^key_bytes = 1/key_bytes = 2/' "$tmp/small.ini" \
  | sed '/^\[groupby\]/,/^\[sink\]/ s/^out_row_bytes = 33B/out_row_bytes = 34B/' >"$tmp/mixed.ini"
out=$("$sluice" run "$tmp/mixed.ini" --cluster sort-local --out "$tmp/mixed" --quiet 2>&1)
rc=$?
check "reducers of another key size than the combine's fail the run (exit $rc)" test "$rc" = 1
check "and say why" bash -c "grep -q 'groupby reads records of 100 bytes or partial groups of 34 bytes, not 33' <<<\"\$1\"" _ "$out"

# a check the source cannot back: refused before anything runs
sed 's/^kernel = gensort/kernel = generate/' "$tmp/small.ini" >"$tmp/nogensort.ini"
out=$("$sluice" run "$tmp/nogensort.ini" --cluster sort-local --out "$tmp/nogen" 2>&1)
rc=$?
check "check = grouped without gensort exits 2 ($rc)" test "$rc" = 2
check "naming the file and the sink's line" \
  bash -c "grep -q 'nogensort.ini:[0-9]*: sink .sink. checks a groupby' <<<\"\$1\"" _ "$out"

# the simulator runs the same spec from its costs
"$sluice" sim groupby --cluster sort-local --out "$tmp/sim" --quiet >/dev/null 2>&1
check "the simulation completes with the 256 groups" \
  test "$(summary_field "$tmp/sim" complete),$(summary_field "$tmp/sim" rows)" = 1,256
exit $((fails > 0))
