#!/usr/bin/env bash
# Fig. 7a (§5.1.1): RAG batch inference, simulated at paper scale
# (rag.ini, cluster.ini: 100K prompts, 256 vCPUs, 1-8 GPUs). The pipelined
# run (streaming) on 1, 2, 4 and 8 GPUs against the staged baseline (batch,
# one stage after another) on 1 GPU. Its stage costs come from the paper's
# staged stage times (see rag.ini): the staged JCT is reproduced by
# construction; what the model adds is the overlap and the scaling.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
sl_begin fig7a "RAG batch inference: pipelining CPU and GPU stages, scaling the GPUs (paper Fig. 7a, §5.1.1)"

spec=$EXP_DIR/rag.ini
gpus="1 2 4 8"
if sl_quick; then
  # 1/10 of the prompts
  spec=$OUT/specs/rag-quick.ini
  sl_spec "$EXP_DIR/rag.ini" "$spec" workload name rag-quick questions tasks 10
fi
cluster_for() { # GPUS -> a copy of cluster.ini with that many
  local c=$OUT/specs/cluster-${1}gpu.ini
  [ -f "$c" ] || sl_spec "$EXP_DIR/cluster.ini" "$c" cluster name "rag-${1}gpu" group\ h200 gpu "$1"
  echo "$c"
}

# every run under the ideal profile, ours (sluice) and Ray Data's (raydata)
profiles=$(sl_profiles streaming)
sl_expect $((($(sl_words $gpus) + 1) * (1 + $(sl_words $profiles))))
suffix() { [ "$1" = ideal ] || echo "-$1"; }
for p in ideal $profiles; do
  for g in $gpus; do
    sl_exec sim "$OUT/runs/streaming-${g}gpu$(suffix "$p")" "$spec" --cluster "$(cluster_for "$g")" --model streaming \
      --no-tasks --profile "$p"
  done
  sl_exec sim "$OUT/runs/batch-1gpu$(suffix "$p")" "$spec" --cluster "$(cluster_for 1)" --model batch --no-tasks \
    --profile "$p"
done
for p in ideal $profiles; do
  one=$(sl_jct "$OUT/runs/streaming-1gpu$(suffix "$p")")
  for g in $gpus; do
    jct=$(sl_jct "$OUT/runs/streaming-${g}gpu$(suffix "$p")")
    sl_add streaming "$g GPU" jct_s "$jct" s sim "$p"
    sl_add streaming "$g GPU" speedup_vs_1gpu "$(sl_div "$one" "$jct")" x sim "$p"
  done
  staged=$(sl_jct "$OUT/runs/batch-1gpu$(suffix "$p")")
  sl_add batch "1 GPU" jct_s "$staged" s sim "$p"
  sl_add "batch vs streaming" "1 GPU" speedup "$(sl_div "$staged" "$one")" x sim "$p"
done
one=$(sl_jct "$OUT/runs/streaming-1gpu")
staged=$(sl_jct "$OUT/runs/batch-1gpu")
sl_results_done

{
  echo "GPUs,ours: simulated,linear,paper"
  for g in $gpus; do
    echo "$g,$(sl_num "$(sl_ours streaming "$g GPU" speedup_vs_1gpu)"),$g,$(sl_num "$(sl_paper streaming "$g GPU" speedup_vs_1gpu)")"
  done
} >"$OUT/xy.csv"
sl_plot xy.gp fig7a "data=$(sl_gp_str "$OUT/xy.csv"); paper=4; logx=2; logy=2;
  title='Fig. 7a: speedup of pipelined RAG inference over 1 GPU'; xlabel='GPUs (vLLM replicas)';
  ylabel='speedup over 1 GPU'"
sl_note "Staged (batch) on 1 GPU: $staged s; pipelined (streaming) on 1 GPU: $one s, \
$(sl_div "$staged" "$one")x faster (the paper: 1.32x)."
sl_finish
