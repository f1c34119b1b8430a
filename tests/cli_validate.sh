#!/usr/bin/env bash
# The simulator agrees with the real executor: run for real, calibrate,
# simulate with the calibrated costs, compare JCT. The tolerance (15%) is
# looser than the 5% the benchmark reaches (bench/validate.sh) because this
# machine's noise lands on the real run.
set -u
sluice=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
for m in streaming static; do
  "$sluice" run "$src/workloads/fig11-small.ini" --cluster "$src/workloads/clusters/fig11.ini" --model $m \
    --time-scale 0.2 --out "$tmp/real-$m" --quiet >/dev/null 2>&1
  "$sluice" calibrate "$tmp/real-$m" -o "$tmp/$m.costs" >/dev/null 2>&1
  "$sluice" sim "$src/workloads/fig11-small.ini" --cluster "$src/workloads/clusters/fig11.ini" --model $m \
    --costs "$tmp/$m.costs" --out "$tmp/sim-$m" --quiet >/dev/null 2>&1
  real=$(summary_field "$tmp/real-$m" jct_s)
  sim=$(summary_field "$tmp/sim-$m" jct_s)
  if awk -v r="$real" -v s="$sim" 'BEGIN{d=(s-r)/r; if(d<0)d=-d; exit !(r>0 && d<=0.15)}'; then
    echo "ok   fig11-small $m: real $real s, simulated $sim s"
  else
    echo "FAIL fig11-small $m: real $real s, simulated $sim s"
    fails=$((fails + 1))
  fi
done
exit $((fails > 0))
