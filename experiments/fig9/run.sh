#!/usr/bin/env bash
# Fig. 9 (§5.3.1): JCT of every execution model and ablation under a memory
# budget of 6 to 16 GB, the paper's memory-aware pipelining microbenchmark.
#
#   simulated at paper scale  workloads/fig9.ini on workloads/clusters/fig9.ini
#   real, scaled              workloads/fig9-small.ini at half its time: 1/20
#                             of the paper's time, 1/100 of its sizes; budgets
#                             60..160 MB standing for 6..16 GB
#
# Series are our model names; paper.csv names the paper's system for each:
# streaming = Ray Data, streaming-noadapt = Ray Data(-Adapt.),
# streaming-nopart = Ray Data(-Part.), stream ~ Flink, batch ~ Spark.
# static (fixed per-operator slots) has no counterpart in the figure.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
sl_begin fig9 "memory-aware pipelining under a memory budget (paper Fig. 9, §5.3.1)"

MODELS="streaming streaming-noadapt streaming-nopart static batch stream"
LIMITS="6 8 10 12 14 16"

# What a memory limit of L GB means for each model: "STORE_GB CPUS GPUS".
# The paper's limit is the machine's memory; our models account only for the
# partition store, so the limit is mapped to a store size the way the
# paper's artifact configured each system (paper-notes §5.6, [AE]). These are
# the paper's settings, not fitted to its results.
setup() {
  local model=$1 l=$2 cap
  cap=$((l < 12 ? l : 12)) # Ray Data's store: min(12 GB, limit)
  case $model in
    streaming | static)
      # Ray Data: store min(12, limit) with 8 CPUs, except at 6 GB, which
      # the artifact ran with a 4 GB store on 6 CPUs. static is our
      # ablation of the same system: the same setup, only the policy differs.
      if [ "$l" -eq 6 ]; then echo "4 6 4"; else echo "$cap 8 4"; fi ;;
    streaming-noadapt)
      # -Adapt.: 2.5 GB store, 4 CPUs, 4 GPUs at 6 GB; as Ray Data above.
      if [ "$l" -eq 6 ]; then echo "2.5 4 4"; else echo "$cap 8 4"; fi ;;
    streaming-nopart)
      # -Part.: store 2 GB up to 8 GB, 2.5 GB at 10, 4 GB at 12, then
      # min(12, limit). The notes also list "CPUs 2/4/8" without saying
      # which limit gets which, so we keep 8 CPUs throughout.
      case $l in
        6 | 8) echo "2 8 4" ;;
        10) echo "2.5 8 4" ;;
        12) echo "4 8 4" ;;
        *) echo "$cap 8 4" ;;
      esac ;;
    stream)
      # Flink: TaskManager memory = limit - 2 GB, 8 slots. The rest of the
      # limit is the JVM's own; the TaskManager's memory holds the buffers.
      echo "$((l - 2)) 8 4" ;;
    batch)
      # Spark: 8 executors x 1 core, 4 GPUs; the artifact gives no split of
      # the limit, so the whole limit holds the materialized stages.
      echo "$l 8 4" ;;
  esac
}

# The fig9 cluster with CPUS and GPUS slots (6 GB runs use fewer).
cluster() {
  local f=$OUT/specs/fig9-${1}cpu-${2}gpu.ini
  [ -f "$f" ] || sl_spec "$SLUICE_SRC/workloads/clusters/fig9.ini" "$f" \
    cluster name "fig9-${1}cpu" "group m6i.2xlarge" cpu "$1" "group m6i.2xlarge" gpu "$2"
  echo "$f"
}

# The same, simulated at paper scale with the disk a partition spills to.
# The paper does not give it. An m6i.2xlarge has no instance store: Ray and
# Spark spill into a folder of the root volume, which launches as EBS gp3 at
# its published baseline of 125 MiB/s (the instance's own EBS link, 2,500
# Mbps baseline, is wider). The same assumption as Fig. 7b's g5 nodes
# (workloads/clusters/video.ini). The real runs spill to this machine's disk.
sim_cluster() {
  local f=$OUT/specs/fig9-${1}cpu-${2}gpu-disk.ini
  [ -f "$f" ] || sl_spec "$(cluster "$1" "$2")" "$f" "group m6i.2xlarge" disk_bandwidth 125MiB/s
  echo "$f"
}

# A batch run past its budget spills to disk, as Spark does (the paper's
# Spark completes at 12-16 GB, spilling). We do not run it with --on-full
# oom: our store would then fail at every budget, since batch materializes
# all 80 GB of a stage; the paper's OOM cells at <= 10 GB come from memory
# outside the store (see gaps.csv).
# A real run that makes no progress for a minute is stopped (--stall-timeout):
# it then shows as a failed cell instead of hanging the experiment. One that
# runs past 5x its bound is stopped too and shows as "capped" (see below).

sim_dir() { echo "$OUT/runs/sim-$1-${2}GB"; }
real_dir() { echo "$OUT/runs/real-$1-${2}GB"; }

# --- simulated at paper scale: every model and budget (0.1 s each) ---------
# (the real runs below are counted here too: models x limits of each)
# Each also under the profiles beside the ideal (profiles/*.ini): ours
# (sluice) and that of the paper's system the model stands for (raydata
# for the Ray Data rows, spark for batch, flink for stream).
sim_runs=0
for m in $MODELS; do sim_runs=$((sim_runs + 1 + $(sl_profiles "$m" | wc -l))); done
sl_expect $((sim_runs * $(sl_words $LIMITS) + $(sl_words $MODELS) * $(sl_words $(sl_quick && echo 16 || echo $LIMITS))))
for m in $MODELS; do
  for l in $LIMITS; do
    read -r store cpus gpus < <(setup "$m" "$l")
    d=$(sim_dir "$m" "$l")
    sl_exec sim "$d" fig9 --cluster "$(sim_cluster "$cpus" "$gpus")" --model "$m" --memory "${store}GB"
    sl_add "$m" "${l}GB" jct_s "$(sl_jct "$d")" s sim
    for p in $(sl_profiles "$m"); do
      sl_exec sim "$d-$p" fig9 --cluster "$(sim_cluster "$cpus" "$gpus")" --model "$m" --memory "${store}GB" --profile "$p"
      sl_add "$m" "${l}GB" jct_s "$(sl_jct "$d-$p")" s sim "$p"
    done
  done
done

# --- real, scaled: 1/20 time, 1/100 size (1 GB of the paper = 10 MB) -------
# Why 1/20 of the time and not fig9-small's 1/10: 36 runs must fit in the
# few minutes `sluice experiment all` has, one real run at a time on this
# 2-core machine, and some cells run serially (streaming-nopart with the
# artifact's 2 GB store runs one producer at a time, 10x its bound). At
# 1/20 the shortest sleep is 25 ms, still long next to the executor's
# microseconds of dispatch. A run is stopped at 5x its bound (SL_TIME_LIMIT)
# and its cell reads "capped": the paper's slowest cell is 4.3x (Spark, 652 s).
# QUICK: 32 producers instead of 160 (a 1.5 s bound), every model at one
# budget, to keep the test short.
real_workload=$OUT/specs/fig9-real.ini
real_models=$MODELS
real_limits=$LIMITS
real_tasks=160
if sl_quick; then
  real_limits="16"
  real_tasks=32
fi
sl_spec "$SLUICE_SRC/workloads/fig9-small.ini" "$real_workload" workload name fig9-real \
  produce tasks "$real_tasks" produce time_per_task 250ms transform time_per_row 25ms \
  inference time_per_row 25ms
real_bound=$(sl_bound "$real_workload" "$(cluster 8 4)")
SL_TIME_LIMIT=$(sl_calc "int($real_bound * 5 + 1)")
for m in $real_models; do
  for l in $real_limits; do
    read -r store cpus gpus < <(setup "$m" "$l")
    d=$(real_dir "$m" "$l")
    store_mb=$(sl_calc "$store * 10")
    sl_exec run "$d" "$real_workload" --cluster "$(cluster "$cpus" "$gpus")" --model "$m" \
      --memory "${store_mb}MB" --stall-timeout 60s
    sl_add "$m" "${l}GB" jct_x_bound "$(sl_div "$(sl_jct "$d")" "$real_bound")" "x bound" real
  done
done
SL_CAP_LABEL=$(printf '%.0f' "$(sl_calc "$real_bound * 5")")
SL_TIME_LIMIT= # the simulated and later runs have no cap
sl_results_done

# --- the figure: three heat maps, paper | simulated | real ------------------
# Colour = JCT / bound (150 s at paper scale, the scaled bound for the real
# runs) so the three share one scale; the label is the JCT itself.
paper_name() {
  case $1 in
    streaming) echo "Ray Data" ;; streaming-noadapt) echo "Ray Data(-Adapt.)" ;;
    streaming-nopart) echo "Ray Data(-Part.)" ;; batch) echo "Spark" ;;
    stream) echo "Flink" ;; *) echo "($1: none)" ;;
  esac
}
heat() { # heat SOURCE -> CSV for plots/heatmap.gp
  local src=$1 row=0 col m l v label color oom
  echo "col,row,xlabel,ylabel,color,label,oom"
  for m in $MODELS; do
    col=0
    for l in $LIMITS; do
      case $src in
        paper) v=$(awk -F, -v s="$m" -v x="${l}GB" '$3 == s && $4 == x && $5 == "jct_s" { print $6 }' \
          "$EXP_DIR/paper.csv") ;;
        sim) v=$(sl_jct "$(sim_dir "$m" "$l")") ;;
        real) v=$(sl_jct "$(real_dir "$m" "$l")") ;;
      esac
      oom=0
      case $v in
        '') label="—" color=NaN ;;
        OOM | fail) label=$v color=NaN oom=1 ;;
        capped) label=">$SL_CAP_LABEL" color=4.5 ;;
        *)
          if [ "$src" = real ]; then
            label=$(printf '%.1f' "$v") color=$(sl_calc "$v / $real_bound")
          else
            label=$(printf '%.0f' "$v") color=$(sl_calc "$v / 150")
          fi ;;
      esac
      [ "$src" = real ] && ! [ -d "$(real_dir "$m" "$l")" ] && label="" color=NaN oom=0
      ylabel=$m
      [ "$src" = paper ] && ylabel=$(paper_name "$m")
      echo "$col,$row,${l}GB,$ylabel,$color,$label,$oom"
      col=$((col + 1))
    done
    row=$((row + 1))
  done
}
heat paper >"$OUT/heat-paper.csv"
heat sim >"$OUT/heat-sim.csv"
heat real >"$OUT/heat-real.csv"
sl_plot heatmap.gp fig9 "n=3; cbmax=4.5; cblabel='JCT / bound';
  title='Fig. 9: JCT (s) by memory limit; grey = OOM or failed, >N = real run stopped at 5x its bound';
  data1=$(sl_gp_str "$OUT/heat-paper.csv"); ptitle1='paper (s)';
  data2=$(sl_gp_str "$OUT/heat-sim.csv"); ptitle2='ours, simulated (s)';
  data3=$(sl_gp_str "$OUT/heat-real.csv"); ptitle3='ours, real at 1/20 time, 1/100 size (s)'"

# --- headline numbers for the report ----------------------------------------
sim_best=$(sl_jct "$(sim_dir streaming 8)")
sl_note "Bound: 150 s at paper scale (the paper's exact optimum is 153 s), $real_bound s for the real runs. \
Simulated streaming at 8 GB: $sim_best s ($(sl_div "$sim_best" 150) x the bound; the paper: 199 s, 1.33x). \
The real runs use stores of 1/100 the paper's (a 12 GB store is 120 MB) and report JCT / bound, the same ratio as the paper's JCT / 150 s."
sl_finish
