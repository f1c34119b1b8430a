#!/usr/bin/env bash
# docs/spec.md cannot drift from the binary: its reference is what `sluice
# spec` prints, its walk-through's specs load, its commands run, and the
# outputs and the error it quotes are what sluice prints.
#
# After a change of a key table, regenerate the reference with
#   SLUICE_UPDATE_DOCS=1 bash tests/cli_spec.sh build/sluice .
# and review the diff before committing.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
cd "$src"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
doc=docs/spec.md

# --- the command -----------------------------------------------------------------
"$sluice" spec --help >"$tmp/help"
check "spec --help starts with its usage" bash -c "head -1 '$tmp/help' | grep -q '^usage: sluice spec'"
"$sluice" spec >"$tmp/ref"
check "spec --help includes the reference" bash -c "tail -n +2 '$tmp/help' | grep -qF -f <(head -1 '$tmp/ref')"
check "the reference has every section" bash -c "for s in 'Values' 'Workload spec: \[workload\]' \
  'one section per operator' 'Kernels' 'Cluster spec: \[cluster\]' '\[group NAME\]' 'Cost file'; do
  grep -q \"^### .*\$s\" '$tmp/ref' || exit 1; done"

# --- the reference in the doc -------------------------------------------------------
generated() { # the lines of docs/spec.md between the markers
  awk '/^<!-- END sluice spec -->$/{on=0} on{print} /^<!-- BEGIN sluice spec -->$/{on=1}' "$doc"
}
if [ "${SLUICE_UPDATE_DOCS:-0}" = 1 ]; then
  awk -v ref="$tmp/ref" '
    /^<!-- END sluice spec -->$/ { while ((getline l < ref) > 0) print l; skip = 0 }
    !skip { print }
    /^<!-- BEGIN sluice spec -->$/ { skip = 1 }' "$doc" >"$tmp/doc" && cp "$tmp/doc" "$doc" && echo "$doc updated"
fi
generated >"$tmp/doc-ref"
check "docs/spec.md's reference is what 'sluice spec' prints" cmp -s "$tmp/ref" "$tmp/doc-ref"
if ! cmp -s "$tmp/ref" "$tmp/doc-ref"; then
  diff "$tmp/doc-ref" "$tmp/ref" | head -20
fi

# --- the walk-through ----------------------------------------------------------------
# Each ```ini block starts with "# NAME: ...": it goes to $tmp/NAME.
awk -v dir="$tmp" '
  /^```ini$/ { getline; split($2, n, ":"); out = dir "/" n[1]; print > out; next }
  /^```$/ { if (out) close(out); out = "" }
  out { print > out }' "$doc"
check "the walk-through has a workload and a cluster" test -s "$tmp/my-pipeline.ini" -a -s "$tmp/my-cluster.ini"
cd "$tmp"
# the plan it shows is the plan sluice prints
awk '/^workload my-pipeline:/{on=1} on && /^```$/{exit} on{print}' "$src/$doc" >quoted-plan
"$sluice" plan my-pipeline.ini >plan
check "the plan the doc quotes is sluice's" cmp -s quoted-plan plan
# the error it quotes is sluice's, for the mistake it describes
sed '/^\[decode\]/,/^\[augment\]/ s/^time_per_row = 8ms .*/time_per_row = 8/' my-pipeline.ini >typo.ini
"$sluice" plan typo.ini 2>&1 >/dev/null | sed 's/^typo.ini/my-pipeline.ini/' >error
check "the error the doc quotes is sluice's" grep -qxF -f error "$src/$doc"
# every command of its ```sh blocks runs (plot only where gnuplot is)
awk '/^```sh$/{on=1; next} /^```$/{on=0} on && /^sluice /{sub(/ +#.*/, ""); print}' "$src/$doc" >commands
check "the walk-through has commands" test "$(wc -l <commands)" -ge 6
while read -r -a cmd; do
  if [ "${cmd[1]}" = plot ] && ! command -v gnuplot >/dev/null; then
    continue
  fi
  check "doc: ${cmd[*]}" exits 0 "$sluice" "${cmd[@]:1}"
done <commands
check "the walk-through's runs wrote their outputs" test -s runs/sim-my-pipeline-streaming/summary.csv \
  -a -s runs/run-my-pipeline-streaming/summary.csv

exit $((fails > 0))
