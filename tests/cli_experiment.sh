#!/usr/bin/env bash
# sluice experiment: usage errors; the report generator against a golden
# output; and every experiment's runner in quick mode (QUICK=1, reduced
# sizes) through `sluice experiment all --quick`: each leaves results.csv,
# its figure and report.md. The quick runs take about a minute in all.
set -u
sluice=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
golden=$src/tests/golden/experiment

check "experiment --help exits 0" exits 0 "$sluice" experiment --help
check "--help lists the experiments" bash -c "'$sluice' experiment --help | grep -q 'fig9'"
check "an unknown experiment exits 2" exits 2 "$sluice" experiment fig99
check "a path is not an experiment name (exit 2)" exits 2 "$sluice" experiment ../fig9
check "no NAME exits 2" exits 2 "$sluice" experiment

# the report generator on fixed inputs
awk -f "$src/experiments/report.awk" -v paper="$golden/paper.csv" -v results="$golden/results.csv" \
  -v gaps="$golden/gaps.csv" >report.md 2>report.err
check "report.awk exits 0 on the fixtures" test $? -eq 0
check "report.awk output matches the golden report" diff -u "$golden/report.md" report.md
check "a gap without an explanation says unexplained" grep -q 'unexplained' report.md
check "a paper number we did not measure is listed" grep -q 'not measured' report.md
check "each profile's comparisons are counted apart" \
  grep -q "^The paper's systems (profiles raydata, spark, flink): 3 compared with the paper's, 2 within 25%, 1 gaps" report.md
check "as the paper ran them: each system's number where it has one, else the ideal one" \
  grep -q "^As the paper ran them (each system's profile where it has one, else ideal): 10 compared, 7 within 25%, 3 gaps over 25% (0 unexplained)" report.md
check "a gaps.csv row of one profile explains that profile's gap only" \
  grep -q "profile spark): ours 900, paper OOM — the spark profile's own gap" report.md
awk -f "$src/experiments/report.awk" -v paper="$golden/paper.csv" -v results="$golden/results-noprofile.csv" \
  -v gaps="$golden/gaps.csv" >noprofile.md 2>&1
check "results.csv without a profile column reads as ideal" \
  grep -q "^10 of our 11 numbers compared with the paper's, 4 gaps over 25% (1 unexplained)" noprofile.md
awk -f "$src/experiments/report.awk" -v paper="$golden/paper.csv" -v results="$golden/gaps.csv" \
  >/dev/null 2>err.txt
check "a results file without a 'value' column exits 2" test $? -eq 2
check "and says which column is missing" grep -q "no column 'value'" err.txt

# every runner, reduced
"$sluice" experiment all --quick --out all >all.log 2>&1
code=$?
check "experiment all --quick exits 0 ($code)" test $code -eq 0
check "experiment all sums every report's comparisons, ideal and as the paper ran them" \
  grep -Eq "^within 25% of the paper: [0-9]+ of [0-9]+ numbers with no system cost; [0-9]+ of [0-9]+ as the paper ran them" all.log
[ $code -eq 0 ] || tail -20 all.log
check "every run.sh expects as many runs as it makes" bash -c "! grep -q 'where run.sh expects' all.log"
check "no progress line when stderr is not a terminal" bash -c "! grep -q \$'\\r' all.log"
# on a terminal: which run of how many, and the time left
if command -v script >/dev/null; then
  script -qec "'$sluice' experiment fig7a --quick --out tty" /dev/null >tty.log 2>&1
  check "on a terminal: which run of how many" grep -q "fig7a: run 1 of 15: sim specs/rag-quick.ini" tty.log
  check "and, from the second run, the time left" grep -Eq "fig7a: run 2 of 15: .* s left" tty.log
  script -qec "'$sluice' experiment fig7a --quick --out tty" /dev/null >tty2.log 2>&1
  check "a second time, the estimate comes from the first one's durations" \
    grep -Eq "fig7a: run 1 of 15: .*, about [0-9]+ s left" tty2.log
fi
for dir in "$src"/experiments/*/; do
  name=$(basename "$dir")
  [ -f "$dir/run.sh" ] || continue
  out=all/$name
  check "$name: results.csv has rows" bash -c "[ \$(wc -l <'$out/results.csv') -gt 1 ]"
  check "$name: results.csv has the schema's header" \
    bash -c "head -1 '$out/results.csv' | grep -qx 'series,x,metric,value,unit,engine,profile'"
  check "$name: no empty value in results.csv" \
    bash -c "! awk -F, 'NR > 1 && \$4 == \"\"' '$out/results.csv' | grep -q ."
  check "$name: the figure is drawn (PNG and SVG)" test -s "$out/$name.png" -a -s "$out/$name.svg"
  check "$name: report.md compares with the paper" grep -q '| series | x | metric | ours | paper' "$out/report.md"
  check "$name: paper.csv has the schema's header" \
    bash -c "head -1 '$dir/paper.csv' | grep -qx 'figure,section,series,x,metric,value,unit,source'"
  check "$name: no temporary file left" bash -c "! ls -a '$out' | grep -q '\\.tmp'"
  check "$name: the report counts the ideal profile's comparisons" grep -q '^Ideal (no system cost): ' "$out/report.md"
done
# the paper's systems' profiles, found in paper.csv: fig7b compares each model with its system
for p in ideal sluice raydata flink spark; do
  check "fig7b: results under the $p profile" grep -q ",sim,$p\$" all/fig7b/results.csv
done
check "fig7b: Flink's rows are under flink, not spark" bash -c "! grep -q '^stream,Flink,.*,spark\$' all/fig7b/results.csv"
check "fig8a: tf.data has no system profile" bash -c "! grep -q '^stream,.*,raydata\$' all/fig8a/results.csv"
exit $((fails > 0))
