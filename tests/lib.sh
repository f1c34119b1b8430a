# Shared helpers of the tests/cli_*.sh scripts, sourced after `set -u`.
# `check WHAT CMD...` prints ok/FAIL and counts failures in $fails;
# `exits CODE CMD...` succeeds when CMD exits with CODE;
# `summary_field DIR FIELD` prints one column of DIR/summary.csv.
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
# `said_nothing FILE`: FILE holds no message of sluice's. Under AddressSanitizer
# a simulation's actor threads end by an exception on stacks ASan did not
# make, and ASan notes it on stderr (three lines each); those notes are the
# sanitizer's, not sluice's, and are not counted.
said_nothing() {
  ! grep -v -e "WARNING: ASan is ignoring requested __asan_handle_no_return" \
    -e "^False positive error reports may follow" \
    -e "^For details see https://github.com/google/sanitizers/issues/189" "$1" | grep -q .
}
