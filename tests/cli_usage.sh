#!/usr/bin/env bash
# The command line of every subcommand: --help prints the usage on stdout and
# exits 0; a wrong, missing or contradictory argument exits 2 with one line
# "sluice CMD: what is wrong" and one line pointing at `sluice CMD --help` on
# stderr (not the usage, which would bury the error), prints nothing on
# stdout and writes nothing.
set -u
sluice=$1
src=$2
cd "$src"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
never=$tmp/never # every refused command below is pointed here

# The subcommands, as `sluice --help` lists them: a new one is covered too.
commands=$("$sluice" --help | awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1}')
check "sluice --help lists subcommands ($(echo $commands))" test "$(wc -w <<<"$commands")" -ge 7

# help_ok CMD: usage on stdout, nothing on stderr, exit 0.
help_ok() {
  "$sluice" "$1" --help >"$tmp/out" 2>"$tmp/err"
  [ $? -eq 0 ] && head -1 "$tmp/out" | grep -q "^usage: sluice $1" && [ ! -s "$tmp/err" ]
}
# usage_error CMD ARGS...: exit 2, nothing on stdout, the error on the first
# line of stderr and the pointer at --help on the second and last.
usage_error() {
  local cmd=$1
  shift
  "$sluice" "$cmd" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && head -1 "$tmp/err" | grep -q "^sluice $cmd: ." &&
    sed -n 2p "$tmp/err" | grep -qx "Try 'sluice $cmd --help' for the options." && [ "$(wc -l <"$tmp/err")" -eq 2 ]
}
refused() { # CMD ARGS...: a usage error, as a check line
  check "$* refused" usage_error "$@"
}

for cmd in $commands; do
  check "$cmd --help" help_ok "$cmd"
  refused "$cmd" --no-such-option
done

# --- run ----------------------------------------------------------------------
run=(fig9-small --cluster fig9 --time-scale 0.01 --quiet --out "$never")
refused run
refused run fig9-small extra --out "$never"
refused run nosuch --out "$never"
refused run fig9-small --cluster nosuch --out "$never"
refused run "${run[@]}" --memory
refused run "${run[@]}" --memory lots
refused run "${run[@]}" --memory -5MB
refused run "${run[@]}" --memory 0
refused run "${run[@]}" --time-scale 0
refused run "${run[@]}" --time-scale -1
refused run "${run[@]}" --time-scale nan
refused run "${run[@]}" --fail lose:7@1s   # fig9 has one node: 0
refused run "${run[@]}" --fail kill:nosuchop@1s
refused run "${run[@]}" --fail ''
refused run "${run[@]}" --stall-timeout -1s
refused run "${run[@]}" --checkpoint-interval 0
refused run "${run[@]}" --max-errored-rows -1
refused run "${run[@]}" --max-errored-rows 1.5
refused run "${run[@]}" --model nosuch
refused run "${run[@]}" --on-full maybe
refused run "${run[@]}" --reservation-ratio 2
refused run "${run[@]}" --fail lose:0@100                 # seconds or milliseconds?
refused run "${run[@]}" --fail lose:0@2s,join:0@1s        # a join before its loss
refused run "${run[@]}" --stall-timeout 5
refused run "${run[@]}" --seed 99999999999999999999
: >"$tmp/file"
refused run fig9-small --cluster fig9 --out ''
refused run fig9-small --cluster fig9 --out "$tmp/file/below"

# --- sim ----------------------------------------------------------------------
sim=(fig9-small --quiet --out "$never")
refused sim
refused sim nosuch --out "$never"
refused sim "${sim[@]}" --cluster fig9 --platform x.xml
refused sim "${sim[@]}" --memory -1GB
refused sim "${sim[@]}" --time-limit 0
refused sim "${sim[@]}" --sample 0
refused sim "${sim[@]}" --mtbf 0
refused sim "${sim[@]}" --repair 5min      # without --mtbf
refused sim "${sim[@]}" --seed -3
refused sim "${sim[@]}" --spill-bandwidth 0
refused sim "${sim[@]}" --checkpoint-interval 0
refused sim "${sim[@]}" --fail lose:9@1s
refused sim "${sim[@]}" --fail kill:nosuchop@1s
refused sim "${sim[@]}" --model nosuch
refused sim "${sim[@]}" --fail kill@15
refused sim "${sim[@]}" --fail lose:0@100s,join:0@50s
refused sim "${sim[@]}" --checkpoint-interval 3
refused sim "${sim[@]}" --time-limit 10

# --- plan, bound --------------------------------------------------------------
for cmd in plan bound; do
  refused $cmd
  refused $cmd fig9 fig9
  refused $cmd nosuch
  refused $cmd fig9 --cluster nosuch
done

# --- calibrate, plot, experiment ----------------------------------------------
refused calibrate
refused calibrate "$tmp" extra
refused plot
refused plot "$tmp"                          # no timeline.csv there
refused experiment
refused experiment nosuch
refused experiment ../fig9
refused experiment fig9 fig7b
refused spec extra

# --- help ---------------------------------------------------------------------
check "sluice help CMD is CMD --help" bash -c "cmp -s <('$sluice' help sim) <('$sluice' sim --help)"
check "sluice help spec is spec --help" bash -c "cmp -s <('$sluice' help spec) <('$sluice' spec --help)"
check "sluice help with no command is sluice --help" bash -c "cmp -s <('$sluice' help) <('$sluice' --help)"
check "sluice help nosuch exits 2" exits 2 "$sluice" help nosuch
"$sluice" nosuch >"$tmp/out" 2>"$tmp/err"
rc=$?
check "an unknown command exits 2 and points at --help, in two lines" bash -c \
  "[ $rc -eq 2 ] && [ ! -s '$tmp/out' ] && [ \$(wc -l <'$tmp/err') -eq 2 ] && grep -q \"^Try 'sluice --help'\" '$tmp/err'"

# --- what run and sim share ---------------------------------------------------
# One parser: the same bad value of a shared option is refused by both with
# the same words (the command's name aside).
same_refusal() { # ARGS...: run's and sim's first error lines agree
  "$sluice" run "${run[@]}" "$@" 2>&1 >/dev/null | head -1 | sed 's/^sluice run: //' >"$tmp/run.err"
  "$sluice" sim fig9-small --quiet --out "$never" "$@" 2>&1 >/dev/null | head -1 | sed 's/^sluice sim: //' >"$tmp/sim.err"
  [ -s "$tmp/run.err" ] && cmp -s "$tmp/run.err" "$tmp/sim.err"
}
for bad in "--model nosuch" "--memory lots" "--on-full maybe" "--reservation-ratio 2" "--fail=" "--out=" \
  "--checkpoint-interval 0s" "--checkpoint-cost -1s" "--restart-cost 5" "--seed -3" "--stall-timeout 0s" \
  "--record-events=" "--replay-events=" "--record-events $tmp/a --replay-events $tmp/b"; do
  # shellcheck disable=SC2086 # the words of $bad are the arguments
  check "run and sim refuse $bad alike" same_refusal $bad
done

check "refused commands wrote nothing" test ! -e "$never"
check "an error with a spec file names FILE:LINE, not the usage" bash -c \
  "printf '[workload]\nname = x\n[a]\nkind = sauce\n' >'$tmp/bad.ini'; '$sluice' plan '$tmp/bad.ini' 2>&1 >/dev/null | grep -q '$tmp/bad.ini:4:'"

exit $((fails > 0))
