#!/usr/bin/env bash
# The seam between the core and the engines: a run records the events it fed
# its core (--record-events), and a core alone, fed them again
# (--replay-events), must make the very same decisions (the decision hash
# the run ended with). In both engines, on a workload that expands rows, one
# with an all-to-all operator, and one with failures; a different model or a
# file cut short must not pass.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
v=bench/validate
c=$v/expand.cluster.ini

# name engine workload [options...]: record, then replay with the same options
round_trip() {
  local name=$1 engine=$2 w=$3
  shift 3
  local extra=()
  [ "$engine" = run ] && extra=(--time-scale 0.1)
  check "$engine $name: records its events" exits 0 "$sluice" "$engine" "$w" --cluster "$c" "$@" "${extra[@]}" \
    --record-events "$tmp/$name.events" --out "$tmp/$name" --quiet
  check "$engine $name: the core alone decides the same" exits 0 "$sluice" "$engine" "$w" --cluster "$c" "$@" "${extra[@]}" \
    --replay-events "$tmp/$name.events"
}

round_trip expand run $v/expand.ini
round_trip expand-sim sim $v/expand.ini
round_trip shuffle run $v/shuffle.ini --model streaming
round_trip shuffle-sim sim $v/shuffle.ini --fail kill:shuffle@2s,lose:1@2.5s,join:1@4s
round_trip oddrows-kill run $v/oddrows.ini --model stream --checkpoint-interval 0.3s --fail kill:clean@0.4s,lose:2@0.6s
round_trip oddrows-sim sim $v/oddrows.ini --model static --fail kill:clean@2s,lose:2@3s,join:2@5s
check "the events of a failed run name what struck" grep -q '^failed ' "$tmp/oddrows-kill.events"

check "a run's time scale is its core's too: replayed without it, other decisions (exit 1)" exits 1 \
  "$sluice" run $v/expand.ini --cluster "$c" --replay-events "$tmp/expand.events"
check "another model decides otherwise (exit 1)" exits 1 "$sluice" sim $v/shuffle.ini --cluster "$c" --model static \
  --replay-events "$tmp/shuffle-sim.events"
head -20 "$tmp/expand.events" >"$tmp/cut.events"
check "a file cut short is refused (exit 2)" exits 2 "$sluice" run $v/expand.ini --cluster "$c" \
  --replay-events "$tmp/cut.events"
check "...naming the file and line" bash -c "'$sluice' run $v/expand.ini --cluster '$c' \
  --replay-events '$tmp/cut.events' 2>&1 | grep -q 'cut.events:20: no .decisions HASH. line'"
check "recording and replaying at once is a usage error" exits 2 "$sluice" sim $v/expand.ini --cluster "$c" \
  --record-events "$tmp/x" --replay-events "$tmp/expand.events"
echo "$fails failed"
exit $((fails > 0))
