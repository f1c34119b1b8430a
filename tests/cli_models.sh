#!/usr/bin/env bash
# Every model on every scaled built-in gives the same sink checksum, and
# failures injected while every operator is in flight change nothing in the
# output. Modelled times run ten times faster (--time-scale 0.1) to keep the
# suite short; the real kernels of `images` run at their own speed.
set -u
sluice=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # name workload cluster model [extra...]
  local name=$1 w=$2 c=$3 m=$4
  shift 4
  "$sluice" run "$src/workloads/$w.ini" --cluster "$src/workloads/clusters/$c.ini" --model "$m" \
    --time-scale 0.1 --out "$tmp/$name" --quiet "$@" >"$tmp/$name.log" 2>&1
}
for spec in "fig9-small fig9 --memory 100MB" "fig11-small fig11" "images local"; do
  set -- $spec
  w=$1 c=$2
  shift 2
  ref=""
  for m in streaming streaming-noadapt streaming-nopart static batch stream; do
    run "$w-$m" "$w" "$c" "$m" "$@"
    sum=$(summary_field "$tmp/$w-$m" sink_checksum)
    complete=$(summary_field "$tmp/$w-$m" complete)
    [ -n "$ref" ] || ref=$sum
    check "$w $m completes with the reference checksum ($sum)" test "$complete" = 1 -a "$sum" = "$ref"
  done
  echo "$w $ref" >>"$tmp/refs"
done

# failures at several times, with every operator in flight (fig9-small at
# 1/10 time runs about 1.6 s): kill a worker of each operator, lose the
# node and bring it back, two failures close together, a failure during
# recovery
ref=$(awk '$1=="fig9-small"{print $2}' "$tmp/refs")
for m in streaming static batch stream; do
  for f in "kill:produce@0.3s" "kill:inference@0.9s" "lose:0@0.5s,join:0@0.7s" \
           "lose:0@0.3s,join:0@0.4s,kill:transform@0.45s"; do
    name="fail-$m-$(echo "$f" | tr ':@,' '___')"
    run "$name" fig9-small fig9 "$m" --memory 100MB --fail "$f" --checkpoint-interval 0.3s
    sum=$(summary_field "$tmp/$name" sink_checksum)
    check "$m with $f: same checksum, within budget" bash -c \
      "test '$sum' = '$ref' && awk -F, 'NR==1{for(i=1;i<=NF;i++)h[\$i]=i} NR==2{exit !(\$h[\"complete\"]==1 && \$h[\"peak_node_store_bytes\"]<=\$h[\"peak_node_budget_bytes\"])}' '$tmp/$name/summary.csv'"
  done
done
exit $((fails > 0))
