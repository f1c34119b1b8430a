# Shared helpers of the tests/cli_*.sh scripts, sourced after `set -u`.
# `check WHAT CMD...` prints ok/FAIL and counts failures in $fails;
# `exits CODE CMD...` succeeds when CMD exits with CODE;
# `summary_field DIR FIELD` prints one column of DIR/summary.csv;
# `zoo_case_reaches CASE MODEL PCT OUT` simulates zoo case CASE (the path
# without .ini) under MODEL, spill at 500 MB/s, into OUT, and checks that it
# completes at PCT% of its bound or more (needs $sluice).
fails=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi
}
exits() {
  local want=$1
  shift
  "$@" >/dev/null 2>&1
  [ $? -eq "$want" ]
}
summary_field() {
  awk -F, -v f="$2" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h[f]}' "$1/summary.csv"
}
zoo_case_reaches() {
  local w=$1 model=$2 want=$3 out=$4 name
  name="$(basename "$(dirname "$w")") $(basename "$w") under $model"
  "$sluice" sim "$w.ini" --cluster "$w.cluster.ini" --model "$model" --spill-bandwidth 500MB/s \
    --no-tasks --quiet --out "$out" >/dev/null 2>&1
  local done_ pct
  done_=$(summary_field "$out" complete 2>/dev/null)
  pct=$(summary_field "$out" pct_of_bound 2>/dev/null)
  echo "$name: complete ${done_:-none}, ${pct:-none}% of the bound"
  check "$name completes" test "${done_:-0}" = 1
  check "$name reaches $want% of its bound" awk -v p="${pct:-0}" -v w="$want" 'BEGIN { exit !(p >= w) }'
}
# `said_nothing FILE`: FILE holds no message of sluice's. Under AddressSanitizer
# a simulation's actor threads end by an exception on stacks ASan did not
# make, and ASan notes it on stderr (three lines each); those notes are the
# sanitizer's, not sluice's, and are not counted.
said_nothing() {
  ! grep -v -e "WARNING: ASan is ignoring requested __asan_handle_no_return" \
    -e "^False positive error reports may follow" \
    -e "^For details see https://github.com/google/sanitizers/issues/189" "$1" | grep -q .
}
