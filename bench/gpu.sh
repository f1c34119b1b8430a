#!/usr/bin/env bash
# The GPU checks, on a machine with a CUDA GPU and sluice built with nvcc:
# the CUDA kernel's tests, then the images pipeline at 8,192 images on the
# machine's CPUs (all but two) and its GPU, under each model, every real run
# calibrated and simulated, and the same run with the GPU hidden (emulated).
# Each real run's events are kept beside it (RUN.events) for --replay-events.
# Prints one line per run: the GPU batch median from tasks.csv, the
# classifier's mean handoff (calibrate's time_handoff) and the run's % of
# its bound (of its measured costs, for real kernels). Exits 77 where there
# is no GPU.
#
# usage: bench/gpu.sh [OUT_DIR] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-runs/gpu}
build=${2:-$here/build}
sluice=$build/sluice
mkdir -p "$out"
rc=0
"$build/tests/test_cuda" >"$out/test_cuda.log" 2>&1 || rc=$?
[ "$rc" = 77 ] && { echo "no CUDA GPU: skipped"; exit 77; }
[ "$rc" = 0 ] || { cat "$out/test_cuda.log"; exit 1; }
grep -E "worst|PASSED" "$out/test_cuda.log" || true
cpus=$(( $(nproc) > 3 ? $(nproc) - 2 : 1 ))
sed -e 's/^tasks = 64/tasks = 512/' -e 's/^name = images/name = images-8k/' "$here/workloads/images.ini" >"$out/images-8k.ini"
printf '[cluster]\nname = this-machine\n[group local]\ncpu = %d\ngpu = 1\nmemory = 32GB\n' "$cpus" >"$out/cluster.ini"
col() { awk -F, -v f="$2" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h[f]}' "$1/summary.csv"; }
batch_ms() { # median time of a classify attempt that did not set the model up
  awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $h["op_name"]=="classify" && $h["status"]=="done" && $h["fresh"]==0 {print $h["end_s"]-$h["start_s"]}' \
    "$1/tasks.csv" | sort -g | awk '{a[NR]=$1} END{if (NR) printf "%.2f", 1000*a[int((NR+1)/2)]; else printf "-"}'
}
handoff_us() { # the classifier's mean handoff, as calibrate fitted it
  awk '/^\[classify\]/{t=1} t && /^time_handoff/{v=$3; sub("s$", "", v); printf "%.1f", 1e6 * v; f=1; exit} END{if (!f) printf "-"}' "$1"
}
printf '%-15s %-9s %9s %9s %9s %12s %10s %12s\n' model run jct_s sim_s error_% gpu_batch_ms handoff_us bound_%
for m in streaming streaming-plus static batch stream; do
  r="$out/$m" s="$out/$m-sim"
  "$sluice" run "$out/images-8k.ini" --cluster "$out/cluster.ini" --model "$m" --out "$r" --record-events "$r.events" --quiet >/dev/null
  "$sluice" calibrate "$r" -o "$r.costs" >/dev/null
  "$sluice" sim "$out/images-8k.ini" --cluster "$out/cluster.ini" --model "$m" --costs "$r.costs" --out "$s" --quiet
  printf '%-15s %-9s %9.3f %9.3f %9.1f %12s %10s %12s\n' "$m" "$(col "$r" accelerator)" "$(col "$r" jct_s)" "$(col "$s" jct_s)" \
    "$(awk -v a="$(col "$s" jct_s)" -v b="$(col "$r" jct_s)" 'BEGIN{print 100*(a-b)/b}')" "$(batch_ms "$r")" \
    "$(handoff_us "$r.costs")" "$(printf '%.1f' "$(col "$r" pct_of_bound)") $(col "$r" bound_costs)"
done
CUDA_VISIBLE_DEVICES= "$sluice" run "$out/images-8k.ini" --cluster "$out/cluster.ini" --out "$out/emulated" --quiet >/dev/null
printf '%-15s %-9s %9.3f\n' streaming "$(col "$out/emulated" accelerator)" "$(col "$out/emulated" jct_s)"
