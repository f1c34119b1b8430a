#!/usr/bin/env bash
# AutoOrder as a user meets it: `sluice plan --auto-order` ranks the orders
# of a reorder group by the bound; `sim` and `run` take --auto-order and run
# the best; the real kernels of workloads/augment.ini make different bytes
# in different orders (the sink's checksum says so); bad groups are refused
# with the file and line.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src" || exit 1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$sluice" plan augment --cluster local --auto-order)
check "plan --auto-order ranks six orders" bash -c "grep -q '6 orders of its reorder groups' <<<\"\$1\"" _ "$out"
check "crop, augment, normalize is chosen" bash -c \
  "grep -q '^chosen: images > decode > crop > augment > normalize: bound' <<<\"\$1\"" _ "$out"
check "the spec's order is last, and marked" bash -c \
  "grep -E '^ +6 .*normalize > augment > crop +\(as written\)' <<<\"\$1\" >/dev/null" _ "$out"
check "the inflation factors are shown" bash -c "grep -q 'normalize 4 augment 1 crop 0.25' <<<\"\$1\"" _ "$out"
check "then the plan of the chosen order" bash -c "grep -q 'images->decode->crop->augment->normalize' <<<\"\$1\"" _ "$out"
top=$("$sluice" plan augment --cluster local --auto-order --top 1 | grep -cE '^ +[0-9]+ +[0-9.]+ ')
check "--top 1 lists the best and the spec's order (rows: $top)" test "$top" = 2
check "--auto-order without a group exits 2" exits 2 "$sluice" plan images --cluster local --auto-order
check "and says so" bash -c "'$sluice' plan images --cluster local --auto-order 2>&1 | grep -q 'has no reorder_group'"

# sim: the chosen order's plan is what runs
"$sluice" sim augment --cluster local --auto-order --out "$tmp/sa" >"$tmp/sa.out" 2>"$tmp/sa.err"
check "sim --auto-order says the order on stderr" grep -q -- '--auto-order: images > decode > crop > augment > normalize' "$tmp/sa.err"
"$sluice" sim augment --cluster local --out "$tmp/sw" --quiet
jw=$(awk -F, 'NR==2 {print $5}' "$tmp/sw/summary.csv")
ja=$(awk -F, 'NR==2 {print $5}' "$tmp/sa/summary.csv")
check "the reordered sim is faster ($ja s against $jw s)" awk -v a="$ja" -v w="$jw" 'BEGIN { exit !(a * 2 < w) }'

# run: real kernels, a small copy of the workload
sed -e 's/^tasks = 48/tasks = 4/' -e 's/^rows_per_task = 16/rows_per_task = 4/' workloads/augment.ini >"$tmp/aug.ini"
"$sluice" run "$tmp/aug.ini" --cluster local --quiet --out "$tmp/rw" >/dev/null 2>&1
"$sluice" run "$tmp/aug.ini" --cluster local --auto-order --quiet --out "$tmp/ra" >/dev/null 2>&1
cw=$(awk -F, 'NR==2 {print $23}' "$tmp/rw/summary.csv")
ca=$(awk -F, 'NR==2 {print $23}' "$tmp/ra/summary.csv")
rows=$(awk -F, 'NR==2 {print $24 "/" $25 "/" $21}' "$tmp/ra/summary.csv")
check "the reordered real run delivers every row (rows/expected/complete: $rows)" test "$rows" = "16/16/1"
check "and other bytes: checksums $cw and $ca differ" bash -c "[ -n '$cw' ] && [ -n '$ca' ] && [ '$cw' != '$ca' ]"
"$sluice" run "$tmp/aug.ini" --cluster local --auto-order --quiet --out "$tmp/ra2" >/dev/null 2>&1
ca2=$(awk -F, 'NR==2 {print $23}' "$tmp/ra2/summary.csv")
check "the same order gives the same checksum ($ca2)" test "$ca" = "$ca2"

# refusals, with the file and line
printf '[s]\nkind = source\ntasks = 1\nrows_per_task = 1\nrow_bytes = 1KB\n[a]\nkind = map\nreorder_group = g\n[b]\nkind = map\n' >"$tmp/one.ini"
check "a group of one is refused" exits 2 "$sluice" plan "$tmp/one.ini"
check "naming the file and line" bash -c "'$sluice' plan '$tmp/one.ini' 2>&1 | grep -q 'one.ini:6: reorder group .g. has only operator .a.'"
{ printf '[s]\nkind = source\ntasks = 1\nrows_per_task = 1\nrow_bytes = 1KB\n'
  for i in 1 2 3 4 5 6 7 8; do printf '[m%d]\nkind = map\ntime_per_row = %dms\nreorder_group = g\n' $i $i; done; } >"$tmp/big.ini"
check "eight operators that move (40320 orders) are refused" exits 2 "$sluice" plan "$tmp/big.ini" --cluster local --auto-order
check "with what to do" bash -c "'$sluice' plan '$tmp/big.ini' --cluster local --auto-order 2>&1 | grep -q 'pin operators with keep_position'"
exit $((fails > 0))
