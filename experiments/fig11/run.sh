#!/usr/bin/env bash
# Fig. 11 (Appendix A): fractional parallelism. Two CPU stages of 1 s and 2 s
# per partition share 8 CPUs. Our streaming model gives every free slot to an
# operator at each partition boundary; the static model fixes the split, here
# the paper's 4:4. The paper measures 19% lower JCT for dynamic (ideal 25%).
#
#   simulated at paper scale  workloads/fig11.ini (240 partitions)
#   real, scaled              workloads/fig11-small.ini (1/10 of the time)
# both on workloads/clusters/fig11.ini (one 8-CPU node).
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
sl_begin fig11 "fractional parallelism: dynamic against a static 4:4 split (paper Fig. 11, App. A)"

cluster=$SLUICE_SRC/workloads/clusters/fig11.ini
sim_workload=$SLUICE_SRC/workloads/fig11.ini
real_workload=$SLUICE_SRC/workloads/fig11-small.ini
if sl_quick; then
  # 48 partitions instead of 240: a 2 s real run instead of 10 s
  real_workload=$OUT/specs/fig11-quick.ini
  sl_spec "$SLUICE_SRC/workloads/fig11-small.ini" "$real_workload" workload name fig11-quick source tasks 48
fi

# The static model splits the slots evenly between the two stages (4:4 on
# 8 CPUs), which is the paper's static configuration.
# The simulated pair also runs under the profiles beside the ideal: ours
# (sluice) and Ray Data's (raydata: the paper ran both in Ray Data).
SL_SYSTEM=raydata
case_pair() { # COMMAND(sim|run) ENGINE(sim|real) WORKLOAD [PROFILE] -> results rows
  local cmd=$1 engine=$2 workload=$3 p=${4:-ideal} dyn sta suffix=""
  [ "$p" = ideal ] || suffix=-$p
  sl_exec "$cmd" "$OUT/runs/$engine-dynamic$suffix" "$workload" --cluster "$cluster" --model streaming --profile "$p"
  sl_exec "$cmd" "$OUT/runs/$engine-static$suffix" "$workload" --cluster "$cluster" --model static --profile "$p"
  dyn=$(sl_jct "$OUT/runs/$engine-dynamic$suffix")
  sta=$(sl_jct "$OUT/runs/$engine-static$suffix")
  sl_add dynamic "8 CPU" jct_s "$dyn" s "$engine" "$p"
  sl_add "static 4:4" "8 CPU" jct_s "$sta" s "$engine" "$p"
  sl_add "dynamic vs static 4:4" "8 CPU" jct_reduction_pct "$(sl_calc "(1 - $dyn / $sta) * 100")" % "$engine" "$p"
}
profiles=$(sl_profiles "dynamic vs static 4:4")
sl_expect $((4 + 2 * $(sl_words $profiles))) # two models, simulated and real, and simulated per profile
case_pair sim sim "$sim_workload"
for p in $profiles; do case_pair sim sim "$sim_workload" "$p"; done
case_pair run real "$real_workload"
# The ideal from the stage costs: static is bound by stage 2 on 4 slots
# (2 s / 4 per partition), dynamic by all the work on 8 ((1 + 2) s / 8).
sl_add ideal "8 CPU" jct_reduction_pct "$(sl_calc "(1 - (1 + 2) / 8 / (2 / 4)) * 100")" % analytic
sl_results_done

red() { awk -F, -v e="$1" '$3 == "jct_reduction_pct" && $6 == e && $7 == "ideal" { print $4 }' "$OUT/results.csv"; }
{
  echo "label,JCT reduction (%)"
  echo "paper,19"
  echo "ours: simulated,$(red sim)"
  echo "ours: real (1/10 time),$(red real)"
} >"$OUT/bars.csv"
sl_plot bars.gp fig11 "data=$(sl_gp_str "$OUT/bars.csv");
  title='Fig. 11: JCT reduction of dynamic allocation against a static 4:4 split';
  ylabel='JCT reduction (%)'; ymax=30; hline=25; hlabel='ideal (25%)'"
sl_note "Simulated: dynamic $(awk -F, '$1 == "dynamic" && $6 == "sim" { print $4 }' "$OUT/results.csv") s, \
static 4:4 $(awk -F, '$1 == "static 4:4" && $6 == "sim" { print $4 }' "$OUT/results.csv") s; \
real at 1/10 time: dynamic $(awk -F, '$1 == "dynamic" && $6 == "real" { print $4 }' "$OUT/results.csv") s, \
static $(awk -F, '$1 == "static 4:4" && $6 == "real" { print $4 }' "$OUT/results.csv") s."
sl_finish
