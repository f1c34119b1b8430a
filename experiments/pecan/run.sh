#!/usr/bin/env bash
# Pecan (USENIX ATC '24; paper-notes §9): who preprocesses for an
# accelerator, its host's CPUs or CPU workers rented by the second, and
# what an epoch then costs. The AE setup: ResNet-50 (ImageNet, batch 1,024)
# and RetinaNet (COCO, batch 64) on a TPU v2-8 or v3-8 VM, n2-standard-8
# workers at $0.42 an hour, simulated at full size over five epochs (the
# autoplacement policies settle within the first), under
#   collocated  tf.data on the TPU VM's host only
#   remote      Cachew: workers only, one more while each raises the rate
#   pecan       Pecan's AutoPlacement: workers up, the host's CPUs up in
#               fifths, workers down within 10%
#   bound       sluice's own: the fewest workers the bound says feed the
#               board, the host's CPUs first
# Costs per epoch: the whole run's bill over five. Preprocessing cost is
# the workers' share (pool_cost_usd); total adds the TPU VM.
# Every per-operator cost is our estimate, stated in the specs (Pecan
# publishes none), never fitted to the paper's results.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
sl_begin pecan "Pecan's AutoPlacement: preprocessing on the accelerator's host or on rented CPU workers, cost per epoch"

epochs=5
policies="collocated remote pecan bound"
pipelines="resnet50:1251 retinanet:1848"
tpus="v2-8 v3-8"
if sl_quick; then
  epochs=1 # and a tenth of it: the same shapes, a second to run
fi
# beside the ideal, our executor's costs (sluice); tf.data, Cachew and
# Pecan have no profile here
profiles="ideal $(sl_profiles pecan)"
sl_expect $((16 * $(sl_words $profiles)))
suffix() { [ "$1" = ideal ] || echo "-$1"; }
# last_epoch_workers DIR JCT EPOCHS: what the workers held during the last
# epoch cost, from the timeline's acquire and release marks ($0.42 an hour):
# the policy's settled choice, its search in the first epochs left out
last_epoch_workers() {
  awk -F, -v end="$2" -v from="$(sl_calc "$2 - $2 / $3")" '
    NR > 1 && $NF ~ /^acquire:/ { at[substr($NF, 9)] = $1 }
    NR > 1 && $NF ~ /^release:/ { n = substr($NF, 9); s += held(at[n], $1); delete at[n] }
    function held(a, b) { a = a > from ? a : from; return b > a ? b - a : 0 }
    END { for (n in at) s += held(at[n], end); printf "%.6g\n", s * 0.42 / 3600 }' "$1/timeline.csv"
}
label() { # PIPELINE TPU
  local name
  case $1 in resnet50) name=ResNet-50 ;; *) name=RetinaNet ;; esac
  echo "$name on $2"
}
for pt in $pipelines; do
  p=${pt%%:*} steps=${pt#*:}
  tasks=$((steps * epochs))
  sl_quick && tasks=$((steps / 10))
  spec=$OUT/specs/$p.ini
  sl_spec "$EXP_DIR/$p.ini" "$spec" read tasks "$tasks"
  for t in $tpus; do
    x=$(label "$p" "$t")
    for prof in $profiles; do
      for a in $policies; do
        d=$OUT/runs/$p-$t-$a$(suffix "$prof")
        sl_exec sim "$d" "$spec" --cluster "$EXP_DIR/tpu-$t.ini" --autoplace "$a" --no-tasks --profile "$prof"
        jct=$(sl_jct "$d")
        sl_add "$a" "$x" epoch_s "$(sl_div "$jct" "$epochs")" s sim "$prof"
        sl_add "$a" "$x" cost_per_epoch_usd "$(sl_div "$(sl_field "$d" instance_cost_usd)" "$epochs")" '$' sim "$prof"
        sl_add "$a" "$x" preprocessing_cost_per_epoch_usd "$(sl_div "$(sl_field "$d" pool_cost_usd)" "$epochs")" '$' \
          sim "$prof"
        sl_add "$a" "$x" workers_at_most "$(sl_field "$d" pool_peak_nodes)" nodes sim "$prof"
        sl_add "$a" "$x" last_epoch_preprocessing_cost_usd "$(last_epoch_workers "$d" "$jct" "$epochs")" '$' sim "$prof"
        sl_add "$a" "$x" pct_of_bound "$(sl_field "$d" pct_of_bound)" % sim "$prof"
      done
    done
  done
done

# The paper's headline numbers are relative: ours, the same way.
change() { # VALUE BASE: the change from BASE, in %
  awk -v v="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.4g\n", 100 * (v - b) / b; else print "NaN" }'
}
for prof in $profiles; do
  for a in pecan bound; do
    sum_pre=0 sum_coll=0 best=0 n=0
    for pt in $pipelines; do
      for t in $tpus; do
        x=$(label "${pt%%:*}" "$t")
        r=$OUT/runs/${pt%%:*}-$t
        s=$(suffix "$prof")
        pre=$(change "$(sl_field "$r-$a$s" pool_cost_usd)" "$(sl_field "$r-remote$s" pool_cost_usd)")
        tot=$(change "$(sl_field "$r-$a$s" instance_cost_usd)" "$(sl_field "$r-remote$s" instance_cost_usd)")
        col=$(change "$(sl_field "$r-$a$s" instance_cost_usd)" "$(sl_field "$r-collocated$s" instance_cost_usd)")
        sl_add "$a" "$x" preprocessing_cost_vs_cachew_pct "$pre" % sim "$prof"
        sl_add "$a" "$x" total_cost_vs_cachew_pct "$tot" % sim "$prof"
        sl_add "$a" "$x" total_cost_vs_collocated_pct "$col" % sim "$prof"
        sum_pre=$(sl_calc "$sum_pre + $pre") sum_coll=$(sl_calc "$sum_coll + $col")
        best=$(awk -v b="$best" -v v="$tot" 'BEGIN { print (v < b ? v : b) }')
        n=$((n + 1))
      done
    done
    sl_add "$a" average preprocessing_cost_vs_cachew_pct "$(sl_calc "$sum_pre / $n")" % sim "$prof"
    sl_add "$a" average total_cost_vs_collocated_pct "$(sl_calc "$sum_coll / $n")" % sim "$prof"
    sl_add "$a" best total_cost_vs_cachew_pct "$best" % sim "$prof"
  done
done
sl_results_done

{
  echo "label,collocated,remote (Cachew),pecan,bound (sluice)"
  for pt in $pipelines; do
    for t in $tpus; do
      x=$(label "${pt%%:*}" "$t")
      line="\"$x\""
      for a in $policies; do
        line="$line,$(sl_num "$(sl_ours "$a" "$x" cost_per_epoch_usd)")"
      done
      echo "$line"
    done
  done
} >"$OUT/bars.csv"
sl_plot bars.gp pecan "data=$(sl_gp_str "$OUT/bars.csv");
  title='Pecan: cost per epoch (TPU VM and CPU workers) by who preprocesses'; ylabel='dollars per epoch'"
sl_note "Cost per epoch is the run's bill over its $epochs epochs: the TPU VM for the whole run and each \
n2-standard-8 worker from its request to its release. The first epoch carries the policies' search \
(a worker takes a minute to serve and a measure 10 s), which the paper's long runs amortise further."
sl_finish
