#!/usr/bin/env bash
# sluice run when things go wrong: a corrupt input row (named, or skipped
# and counted), a store too small for one partition, a disk that refuses
# spill files, a spec value out of range, and a run killed with SIGKILL at
# any moment, which must leave no summary or a whole one marked incomplete,
# never a half file or an older run's summary that looks like its result.
set -u
sluice=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fig9=(--cluster "$src/workloads/clusters/fig9.ini" --quiet)

# --- a corrupt JPEG ------------------------------------------------------------
# The images pipeline on 4 splits of 16 images, every 10th corrupt: rows 9,
# 19, 29, 39, 49, 59, in splits (partitions of the source) 0, 1, 1, 2, 3, 3.
sed -e 's/^tasks = 64$/tasks = 4/' -e 's/^quality = 90$/quality = 90\ncorrupt_every = 10/' \
  "$src/workloads/images.ini" >images.ini
images=(images.ini --cluster "$src/workloads/clusters/local.ini" --quiet)
"$sluice" run "${images[@]}" --out bad >bad.log 2>&1
check "a corrupt row fails the run with exit 1" test $? -eq 1
msg=$(grep "rejected row" bad.log)
row=$(sed -n "s/.*operator 'decode' rejected row \([0-9]*\) (partition \([0-9]*\) of source 'images', task [0-9]*): corrupt JPEG.*/\1 \2/p" <<<"$msg")
check "the message names operator, row, partition ($msg)" test -n "$row"
check "... the right partition for that row ($row)" awk -v r="${row% *}" -v p="${row#* }" 'BEGIN{exit !(r % 10 == 9 && int(r / 16) == p)}'
check "... and the summary says incomplete" test "$(summary_field bad complete)" = 0

"$sluice" run "${images[@]}" --out skip --max-errored-rows 6 >skip.log 2>&1
check "--max-errored-rows 6 skips the 6 bad rows and exits 0" test $? -eq 0
check "... complete" test "$(summary_field skip complete)" = 1
check "... errored_rows counts them" test "$(summary_field skip errored_rows)" = 6
check "... the sink got the other 58" test "$(summary_field skip rows)" = 58
check "--max-errored-rows 5 is one too few" exits 1 "$sluice" run "${images[@]}" --out few --max-errored-rows 5

sed 's/^corrupt_every = 10$/corrupt_every = -1/' images.ini >range.ini
out=$("$sluice" run range.ini --cluster "$src/workloads/clusters/local.ini" --out range 2>&1)
check "a kernel parameter out of range exits 2" test $? -eq 2
check "... names FILE:LINE ($out)" grep -q "range.ini:[0-9]*: operator 'images'" <<<"$out"
check "... and writes nothing" test ! -e range

# --- a store too small for one partition ------------------------------------------
for mode in spill oom; do
  out=$("$sluice" run fig9-small "${fig9[@]}" --memory 100KB --on-full $mode --out small 2>&1)
  code=$?
  check "--memory below one partition ($mode) exits 1" test $code -eq 1
  check "... naming the operator ($out)" grep -q "operator 'produce'" <<<"$out"
  check "... before the run starts: nothing written" test ! -e small
done

# --- a full disk while spilling ------------------------------------------------------
# ulimit -f stands for a full disk, as root too: past it write() fails with
# EFBIG (sluice ignores SIGXFSZ). Spill files are 5 MB, the CSVs a few KB.
(ulimit -f 1000 && exec "$sluice" run fig9-small "${fig9[@]}" --model batch --memory 10MB \
  --time-scale 0.1 --out full) >full.log 2>&1
check "a refused spill fails the run with exit 1" test $? -eq 1
check "... says why ($(tail -1 full.log))" grep -q "cannot spill partition.*File too large" full.log
check "... the summary says incomplete" test "$(summary_field full complete)" = 0
check "... no spill files or temporaries left" test -z "$(ls -A full | grep -v -x -e summary.csv -e timeline.csv -e tasks.csv)"

# --- SIGKILL at any moment --------------------------------------------------------------
# whole_csv FILE: every line has the header's number of fields (quoted
# fields may hold commas) and the file ends with a newline.
whole_csv() {
  [ -z "$(tail -c 1 "$1")" ] && awk '
    function fields(s,   n, q, i, c) {
      n = 1; q = 0
      for (i = 1; i <= length(s); i++) { c = substr(s, i, 1); if (c == "\"") q = !q; else if (c == "," && !q) n++ }
      return n
    }
    NR == 1 { want = fields($0) } fields($0) != want { bad = 1 } END { exit bad || NR < 2 }' "$1"
}
# after_kill DIR: no summary, or a whole one marked incomplete; whole CSVs
# and nothing else visible.
after_kill() {
  local dir=$1 f
  if [ -e "$dir/summary.csv" ]; then
    whole_csv "$dir/summary.csv" && [ "$(summary_field "$dir" complete)" = 0 ] || return 1
  fi
  for f in timeline.csv tasks.csv; do
    [ ! -e "$dir/$f" ] || whole_csv "$dir/$f" || return 1
  done
  [ ! -d "$dir" ] || [ -z "$(ls "$dir" | grep -v -x -e summary.csv -e timeline.csv -e tasks.csv -e spill)" ]
}
# fig9-small at a tenth of its time: a bound of 1.5 s, so never done by 1.2 s.
for at in 0.05 0.3 0.7 1.2; do
  "$sluice" run fig9-small "${fig9[@]}" --time-scale 0.1 --memory 20MB --out "kill-$at" >/dev/null 2>&1 &
  pid=$!
  sleep "$at"
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  check "SIGKILL at ${at}s: no summary or a whole one marked incomplete" after_kill "kill-$at"
done
check "a killed run's summary says it had started" grep -q "started; not finished" kill-0.7/summary.csv

# An older, complete run in the same folder must not pass for the killed one.
"$sluice" run fig9-small "${fig9[@]}" --time-scale 0.1 --out again >/dev/null 2>&1
check "a complete run first" test "$(summary_field again complete)" = 1
"$sluice" run fig9-small "${fig9[@]}" --time-scale 0.1 --out again >/dev/null 2>&1 &
pid=$!
# killed once it has begun (its summary says so), however slow its start
# (a sanitized build on a loaded machine took over 0.5 s to get there)
for _ in $(seq 100); do
  [ "$(summary_field again complete 2>/dev/null)" = 0 ] && break
  sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null
check "killed over it: the summary is the new run's, incomplete" after_kill again
check "... and its older timeline and tasks are gone" test ! -e again/tasks.csv -a ! -e again/timeline.csv

exit $((fails > 0))
