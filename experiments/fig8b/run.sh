#!/usr/bin/env bash
# Fig. 8b (§5.2.2): one epoch of Stable Diffusion pre-training, three setups,
# simulated with the built-in workloads/sd.ini (its comments derive every
# cost from the paper's table) under our streaming model:
#   dataloader  4 x p4de.24xlarge; the encoders pinned to the A100s beside
#               the UNet (accelerator = a100), as a single-node loader runs
#               them inside the training loop on the trainer's GPUs
#   staged      4 x p4de.24xlarge; two jobs one after the other: read,
#               decode and encode into embeddings (the sink stands for the
#               S3 write), then read the embeddings back and train
#   streaming   4 x p4de.24xlarge + 40 x g5.2xlarge (workloads/clusters/
#               sd.ini); encoders pinned to the A10Gs, UNet to the A100s
#
# Scale: 1.127 B images are too many tasks to simulate, so each job runs a
# fixed fraction of the epoch (1/500: 2,254 read tasks of 1,000 images;
# QUICK 1/7000) with the paper's partition and batch sizes, and the epoch
# is scaled up from the run's steady throughput: hours = 1.127e9 / rows per
# second between 10% and 90% of the run. Pipeline fill and drain take
# seconds at any scale; multiplying them by 500 would overstate the epoch.
# The raw simulated JCTs are in results.csv too. Dollars = hours x the
# cluster's price per hour (the specs' price_per_hour).
#
# A larger fraction is no more faithful here: from about 1/150 of the epoch
# on, the decoded images fill the g5.2xlarge nodes' small stores and our
# streaming run crawls (see report.md). 1/500 stays well below that.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
sl_begin fig8b "Stable Diffusion pre-training: encoders on cheap A10Gs, UNet on A100s (paper Fig. 8b, §5.2.2)"

sd=$SLUICE_SRC/workloads/sd.ini
streaming_cluster=$SLUICE_SRC/workloads/clusters/sd.ini
p4de_cluster=$SLUICE_SRC/workloads/clusters/sd-p4de.ini
epoch=1127000000
fraction=500
sl_quick && fraction=7000
tasks=$((1127000 / fraction))

# sections SRC NAME...: the sections NAME of the INI file SRC, in the order
# given, each with the comment lines above its header (a job made of some of
# a workload's operators).
sections() {
  local src=$1
  shift
  awk -v want="$*" '
    BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) order[w[i]] = i }
    /^[ \t]*([#;]|$)/ { pend = pend $0 "\n"; next }
    /^[ \t]*\[/ { h = $0; sub(/^[ \t]*\[/, "", h); sub(/\].*$/, "", h); cur = (h in order) ? h : ""
                   if (cur != "") body[cur] = pend; pend = "" }
    { if (cur != "") body[cur] = body[cur] pend $0 "\n"; pend = "" }
    END { for (i = 1; i <= n; i++) printf "%s\n", body[w[i]] }' "$src"
}

# The jobs, each cut to the fraction of the epoch.
spec=$OUT/specs
sl_spec "$sd" "$spec/sd-streaming.ini" workload name sd-streaming read tasks "$tasks"
sl_spec "$sd" "$spec/sd-dataloader.ini" workload name sd-dataloader read tasks "$tasks" \
  encode accelerator a100
sections "$sd" workload read decode encode sink >"$spec/.embed.ini"
sl_spec "$spec/.embed.ini" "$spec/sd-embed.ini" workload name sd-embed read tasks "$tasks" \
  encode accelerator a100
{
  sections "$sd" workload
  sections "$EXP_DIR/embeddings.ini" read_embeddings
  sections "$sd" train sink
} >"$spec/.train.ini"
sl_spec "$spec/.train.ini" "$spec/sd-train.ini" workload name sd-train read_embeddings tasks "$tasks"
rm -f "$spec/.embed.ini" "$spec/.train.ini"

# The whole epoch's specs, for the bounds (analytic: no tasks to run).
sl_spec "$sd" "$spec/sd-dataloader-epoch.ini" workload name sd-dataloader encode accelerator a100
sl_spec "$sd" "$spec/sd-unpinned-epoch.ini" workload name sd-unpinned train accelerator "a100, a10g"

# each job under the ideal profile and the profiles beside it: ours
# (sluice) and Ray Data's (raydata) for the Ray Data setups (staged and
# streaming); the DataLoader is not Ray Data and has no profile here
profiles=$(sl_profiles streaming)
jobs_of() { # PROFILE -> its jobs
  if [ "$1" = ideal ] || [ "$1" = sluice ]; then
    echo "dataloader:$p4de_cluster embed:$p4de_cluster train:$p4de_cluster streaming:$streaming_cluster"
  else
    echo "embed:$p4de_cluster train:$p4de_cluster streaming:$streaming_cluster"
  fi
}
runs=0
for p in ideal $profiles; do runs=$((runs + $(sl_words $(jobs_of "$p")))); done
sl_expect "$runs"
run_name() { if [ "$2" = ideal ]; then echo "$1"; else echo "$1-$2"; fi; } # JOB PROFILE
for p in ideal $profiles; do
  for job in $(jobs_of "$p"); do
    sl_exec sim "$OUT/runs/$(run_name "${job%%:*}" "$p")" "$spec/sd-${job%%:*}.ini" --cluster "${job#*:}" \
      --model streaming --no-tasks --profile "$p"
  done
done

# steady RUN: rows per second between 10% and 90% of the run, or what went
# wrong (fail, OOM...)
steady() {
  local d=$OUT/runs/$1 jct rate
  jct=$(sl_jct "$d")
  case $jct in '' | *[!0-9.eE+-]*) echo "${jct:-fail}"; return ;; esac
  rate=$(sl_mean_rate "$d/timeline.csv" "$(sl_calc "0.1 * $jct")" "$(sl_calc "0.9 * $jct")")
  echo "${rate:-fail}"
}
# epoch_hours RATE: the epoch at RATE images/s, in hours (RATE itself when
# it is not a number)
epoch_hours() { sl_div "$epoch" "$1" "$(sl_calc "1 / 3600")"; }
# price CLUSTER: dollars per hour, from the groups' count x price_per_hour
price() {
  awk -F= '/^[ \t]*\[/ { if (n) total += n * p; n = 0; p = 0; g = ($0 ~ /^[ \t]*\[group/) }
    g && $1 ~ /^[ \t]*count[ \t]*$/ { n = $2 + 0 }
    g && $1 ~ /^[ \t]*price_per_hour[ \t]*$/ { p = $2 + 0 }
    END { if (n) total += n * p; printf "%.6g\n", total }' "$1"
}
p4de_price=$(price "$p4de_cluster")
streaming_price=$(price "$streaming_cluster")

x_p4de="4 x p4de.24xlarge"
x_streaming="4 x p4de.24xlarge + 40 x g5.2xlarge"
add_setup() { # SERIES X RATE(training) HOURS PRICE JCT_SIM PROFILE
  sl_add "$1" "$2" throughput_img_s "$3" images/s sim "$7"
  sl_add "$1" "$2" hours "$4" h sim "$7"
  sl_add "$1" "$2" cost_usd "$(sl_div "$4" 1 "$5")" '$' sim "$7"
  sl_add "$1" "$2" sim_jct_s "$6" s sim "$7"
}
for p in ideal $profiles; do
  r_dl=fail
  if [ -d "$OUT/runs/$(run_name dataloader "$p")" ]; then
    r_dl=$(steady "$(run_name dataloader "$p")")
    add_setup dataloader "$x_p4de" "$r_dl" "$(epoch_hours "$r_dl")" "$p4de_price" \
      "$(sl_jct "$OUT/runs/$(run_name dataloader "$p")")" "$p"
  fi
  r_embed=$(steady "$(run_name embed "$p")")
  r_train=$(steady "$(run_name train "$p")")
  r_st=$(steady "$(run_name streaming "$p")")
  h_embed=$(epoch_hours "$r_embed")
  h_train=$(epoch_hours "$r_train")
  h_staged=fail
  case $h_embed$h_train in *[!0-9.eE+-]*) ;; *) h_staged=$(sl_calc "$h_embed + $h_train") ;; esac
  jct_staged=fail
  j_embed=$(sl_jct "$OUT/runs/$(run_name embed "$p")") j_train=$(sl_jct "$OUT/runs/$(run_name train "$p")")
  case $j_embed$j_train in *[!0-9.eE+-]*) ;; *) jct_staged=$(sl_calc "$j_embed + $j_train") ;; esac
  add_setup staged "$x_p4de" "$r_train" "$h_staged" "$p4de_price" "$jct_staged" "$p"
  sl_add staged "$x_p4de" preprocessing_hours "$h_embed" h sim "$p"
  add_setup streaming "$x_streaming" "$r_st" "$(epoch_hours "$r_st")" "$streaming_price" \
    "$(sl_jct "$OUT/runs/$(run_name streaming "$p")")" "$p"
  # the DataLoader's own rate under the same profile, or the ideal one's
  # where it has none (it is not Ray Data)
  [ "$r_dl" = fail ] && r_dl=$(steady dataloader)
  sl_add streaming "$x_streaming" streaming_vs_dataloader "$(sl_div "$r_st" "$r_dl")" x sim "$p"
done
r_dl=$(steady dataloader)
r_embed=$(steady embed)
r_train=$(steady train)
r_st=$(steady streaming)
h_embed=$(epoch_hours "$r_embed")
h_train=$(epoch_hours "$r_train")

# The physical limits of the whole epoch (sluice bound, LP over node groups).
b_dl=$(sl_bound "$spec/sd-dataloader-epoch.ini" "$p4de_cluster")
b_st=$(sl_bound "$sd" "$streaming_cluster")
b_free=$(sl_bound "$spec/sd-unpinned-epoch.ini" "$streaming_cluster")
sl_add dataloader "$x_p4de" bound_hours "$(sl_calc "$b_dl / 3600")" h analytic
sl_add streaming "$x_streaming" bound_hours "$(sl_calc "$b_st / 3600")" h analytic
sl_results_done

{
  echo "setup,ours: hours,paper: hours,ours: dollars,paper: dollars"
  for s in dataloader staged streaming; do
    x=$x_p4de
    [ $s = streaming ] && x=$x_streaming
    echo "$s,$(sl_num "$(sl_ours $s "$x" hours)"),$(sl_num "$(sl_paper $s "$x" hours)"),$(sl_num "$(sl_ours $s "$x" cost_usd)"),$(sl_num "$(sl_paper $s "$x" cost_usd)")"
  done
} >"$OUT/bars.csv"
sl_plot fig8b.gp fig8b "data=$(sl_gp_str "$OUT/bars.csv");
  title='Fig. 8b: one epoch of Stable Diffusion pre-training (simulated, scaled to 1.127 B images)'"

sl_note "Each job simulated 1/$fraction of the epoch ($tasks read tasks of 1,000 images); hours are \
1.127 B images over the steady throughput. Staged: $h_embed h of preprocessing (the paper implies \
13.3 h) and $h_train h of training. Prices: $p4de_price \$/h for 4 x p4de.24xlarge, \
$streaming_price \$/h with the 40 g5.2xlarge."
sl_note "Bounds (sluice bound, whole epoch): DataLoader setup $(sl_calc "$b_dl / 3600") h, streaming \
setup $(sl_calc "$b_st / 3600") h (the 32 A100s at the UNet's 4,068 images/s). Were the UNet not \
pinned to the A100s (accelerator = a100, a10g), the bound would let it train on the A10Gs too: \
$(sl_calc "$b_free / 3600") h, a schedule the paper's FSDP job could not run."
sl_note "Staged matches the paper by construction: the encoders' and the UNet's costs are derived \
from its two phases (workloads/sd.ini). Streaming trains at $(sl_div "$r_st" 4068 100)% of the \
UNet's 4,068 images/s in steady state: a training task fetches its embeddings from an A10G node \
before it computes, and our model never overlaps the two."
sl_note "What the DataLoader number tests: the costs come from the staged setup, where each model \
owns its GPUs. Time-sharing the A100s between the encoders and the UNet then costs exactly the \
staged GPU time, so our DataLoader lands on the staged 90 h; the paper's 111.3 h adds GPU memory \
contention (the UNet runs smaller batches beside the encoders), which our cost model does not have."
sl_note "Scale: from about 1/150 of the epoch on, our streaming run stalls: read tasks on the \
g5.2xlarge nodes fill their 10 GB stores with decoded images, the encoders there cannot store \
their outputs, and our core lets a waiting emission through only when no task anywhere makes \
progress. The paper's Ray Data spills instead; our run at 1/500 never fills a store."
sl_finish
