#!/usr/bin/env bash
# End-to-end checks of the sluice binary: help, exit codes, the bound's two
# reference numbers, and the FILE:LINE errors of bad specs.
set -u
sluice=$1
src=$2
cd "$src"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check "sluice --help exits 0" exits 0 "$sluice" --help
check "no command exits 2" exits 2 "$sluice"
check "unknown command exits 2" exits 2 "$sluice" frobnicate
for cmd in plan bound; do
  check "$cmd --help exits 0" exits 0 "$sluice" "$cmd" --help
  check "$cmd without workload exits 2" exits 2 "$sluice" "$cmd"
  check "$cmd with a bad option exits 2" exits 2 "$sluice" "$cmd" fig9 --bogus
done

fig9=$("$sluice" bound fig9 --cluster fig9 --csv | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["area_s"]}')
check "fig9 area bound is 150 s (got $fig9)" awk -v v="$fig9" 'BEGIN{exit !(v>=149.999 && v<=150.001)}'
# and its last transform row still goes through inference: at most a row more
fig9=$("$sluice" bound fig9 --cluster fig9 --csv | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["jct_bound_s"]}')
check "fig9 bound is 150 s and a row (got $fig9)" awk -v v="$fig9" 'BEGIN{exit !(v>=150 && v<=151)}'
video=$("$sluice" bound video --csv | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["jct_bound_s"]}')
check "video bound is 511 +- 1 s (got $video)" awk -v v="$video" 'BEGIN{exit !(v>=510 && v<=512)}'
thr=$("$sluice" bound video --csv | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["throughput_bound_rows_s"]}')
check "video throughput bound is 126.28 rows/s (got $thr)" awk -v v="$thr" 'BEGIN{exit !(v>126.2 && v<126.4)}'
check "plan of every built-in" bash -c "for w in fig9 fig9-small video fig11 fig11-small images; do '$sluice' plan \$w >/dev/null || exit 1; done"

printf '[workload]\nname = bad\n\n[read]\nkind = source\ntasks = 4\nrows_per_task = 2\nrow_bytes = 12XB\n' >"$tmp/bad.ini"
out=$("$sluice" plan "$tmp/bad.ini" 2>&1)
code=$?
check "malformed unit exits 2" test $code -eq 2
check "malformed unit names FILE:LINE ($out)" bash -c "grep -q '$tmp/bad.ini:8:' <<<\"\$1\"" _ "$out"
check "missing file exits 2" exits 2 "$sluice" plan "$tmp/none.ini"
printf '\x00\x01\x02binary' >"$tmp/bin.ini"
check "binary file exits 2" exits 2 "$sluice" plan "$tmp/bin.ini"
printf '[workload]\n\n[infer]\nkind = source\ntasks = 1\nrows_per_task = 1\nrow_bytes = 1MB\n\n[m]\nkind = map\ngpu = 5\ntime_per_row = 1s\n' >"$tmp/gpu.ini"
check "unsatisfiable request exits 2" exits 2 "$sluice" bound "$tmp/gpu.ini" --cluster fig9
ls "$tmp" >"$tmp/.listing"
check "bad input writes nothing" test "$(wc -l <"$tmp/.listing")" -eq 3

echo "$((fails == 0 ? 1 : 0)) passed, $fails failed" | awk '{print}' >/dev/null
exit $((fails > 0))
