#!/usr/bin/env bash
# Exoshuffle (SIGCOMM '23; arXiv 2203.05072): the shuffle as a library on
# distributed futures, and its strategies against each other, simulated at
# the papers' scale.
#
#   1 TB on 10 nodes, HDD and SSD panels: simple, merge (Riffle), push
#   (Magnet) and push-star (Exoshuffle's pipelined two-stage), with 2,000,
#   1,000 and 500 input partitions (sort.ini, hdd.ini, ssd.ini);
#   10, 50 and 100 TB on 100 nodes with push-star (v1-100.ini): 2 GB input
#   partitions, 4 GB output ones. 5 million blocks cross the network at
#   100 TB: SimGrid's full solver (the default) takes about 4 s a TB
#   here, its lazy one twice as long; the 50 and 100 TB sorts run under the
#   ideal profile only (ten minutes between them).
#
# The papers' theoretical time is the disk-bound one: every byte read from
# and written to disk twice. Ours is `sluice bound`'s disk term for the
# same specs (input read, what the stores cannot hold spilled and read
# back, output written), which counts the stores' share as never spilled.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
sl_begin exoshuffle "Exoshuffle's shuffle strategies: 1 TB on 10 nodes (HDD, SSD) and 10, 50 and 100 TB on 100 nodes, simulated"

base=$EXP_DIR/sort.ini
panels="hdd ssd"
partitions="2000 1000 500"
strategies="simple merge push push-star"
sizes="10 50 100"
data=1000000000000 # bytes, the 10-node panels
big_per_tb=1       # TB per "TB" on 100 nodes
if sl_quick; then
  # 1/100 of the data and of the partitions: the same shapes, seconds to run
  partitions="20 10"
  sizes="10"
  data=10000000000
  big_per_tb=0.01
fi
model=streaming # Exoshuffle runs on Ray: the streaming batch model
# Beside the ideal, our executor's costs (sluice). Exoshuffle is plain Ray,
# not Ray Data: no system profile stands for it.
profiles="ideal $(sl_profiles push-star)"
# the larger sorts under the ideal profile alone
big_profiles() { if [ "$1" = 10 ]; then echo "$profiles"; else echo ideal; fi; }
big_runs=0
for tb in $sizes; do big_runs=$((big_runs + $(sl_words $(big_profiles "$tb")))); done
sl_expect $(($(sl_words $panels) * $(sl_words $partitions) * $(sl_words $strategies) * $(sl_words $profiles) + big_runs))

suffix() { [ "$1" = ideal ] || echo "-$1"; }

# sort_spec DST PARTS REDUCERS BYTES STRATEGY MERGE_FACTOR: the sort of BYTES
# in PARTS input partitions to REDUCERS, one output partition per map.
sort_spec() {
  local dst=$1 parts=$2 reducers=$3 bytes=$4 st=$5 mf=$6 rows part_mb
  rows=$(awk -v b="$bytes" -v p="$parts" 'BEGIN { printf "%.0f", b / 100 / p }')
  part_mb=$(awk -v b="$bytes" -v p="$parts" 'BEGIN { printf "%.0f", b / p / 1e6 }')
  sl_spec "$base" "$dst" workload name "$(basename "$dst" .ini)" workload target_partition "${part_mb}MB" \
    map tasks "$parts" map rows_per_task "$rows" reduce tasks "$reducers" reduce strategy "$st" \
    reduce merge_factor "$mf"
}

PANEL() { case $1 in hdd) echo HDD ;; ssd) echo SSD ;; esac; }
for panel in $panels; do
  cluster=$EXP_DIR/$panel.ini
  for p in $partitions; do
    for st in $strategies; do
      # merge pre-merges two of a node's map outputs; push and push-star
      # merge half a round's: 10 nodes x 4 maps / 2
      mf=2
      [ "$st" = merge ] || mf=20
      spec=$OUT/specs/$panel-$p-$st.ini
      sort_spec "$spec" "$p" "$p" "$data" "$st" "$mf"
      for prof in $profiles; do
        dir=$OUT/runs/$panel-$p-$st$(suffix "$prof")
        sl_exec sim "$dir" "$spec" --cluster "$cluster" --model "$model" --profile "$prof"
        sl_add "$st" "$(PANEL "$panel") $p" jct_s "$(sl_jct "$dir")" s sim "$prof"
      done
    done
  done
  sl_add theoretical "$(PANEL "$panel")" jct_s "$(sl_bound "$spec" "$cluster")" s analytic
done

for tb in $sizes; do
  bytes=$(awk -v t="$tb" -v s="$big_per_tb" 'BEGIN { printf "%.0f", t * s * 1e12 }')
  maps=$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 2e9 }')
  spec=$OUT/specs/v1-$tb.ini
  # a tenth of a round (100 nodes x 4 maps): merges of half a round's 200
  # maps take 4 GB from every node each and the maps waited for them
  # (10 TB: 2,947 s against 1,609 s)
  sort_spec "$spec" "$maps" $((maps / 2)) "$bytes" push-star 40
  bound=$(sl_bound "$spec" "$EXP_DIR/v1-100.ini")
  for prof in $(big_profiles "$tb"); do
    dir=$OUT/runs/v1-$tb-push-star$(suffix "$prof")
    sl_exec sim "$dir" "$spec" --cluster "$EXP_DIR/v1-100.ini" --model "$model" --profile "$prof" \
      --no-tasks
    jct=$(sl_jct "$dir")
    sl_add push-star "$tb TB" jct_s "$jct" s sim "$prof"
    sl_add push-star "$tb TB" pct_of_theoretical "$(sl_div "$bound" "$jct" 100)" % sim "$prof"
  done
done
sl_results_done

value() { # SERIES X: our JCT, NaN when none (a bar left out)
  local v
  v=$(sl_ours "$1" "$2" jct_s)
  echo "${v:-NaN}"
}
paper() { # SERIES X: the paper's JCT, NaN when none
  local v
  v=$(sl_paper "$1" "$2" jct_s)
  echo "${v:-NaN}"
}
mid=$(echo $partitions | awk '{ print $2 }')
{
  echo "strategy,ours HDD,ours SSD,paper HDD,paper SSD"
  for st in $strategies; do
    echo "$st,$(value "$st" "HDD $mid"),$(value "$st" "SSD $mid"),$(paper "$st" "HDD $mid"),$(paper "$st" "SSD $mid")"
  done
} >"$OUT/bars.csv"
sl_plot bars.gp exoshuffle "data=$(sl_gp_str "$OUT/bars.csv"); paper=4;
  title='Exoshuffle: 1 TB on 10 nodes, $mid partitions, JCT by strategy';
  ylabel='JCT (s)'"
sl_note "Our theoretical (the disk term of \`sluice bound\`): HDD $(value theoretical HDD) s, SSD $(value theoretical SSD) s \
(the papers': 339 and about 533 s, every byte spilled). On 100 nodes push-star reaches \
$(awk -F, '$3 == "pct_of_theoretical" && $7 == "ideal" { printf "%s%s: %.1f%%", sep, $2, $4; sep = ", " }' "$OUT/results.csv") of our bound."
sl_finish
