#!/usr/bin/env bash
# More memory must not make a run slower: the zoo under MODELS with every
# node's store as generated and FACTOR times it (bench/zoo.sh with
# STORE_FACTOR), and per model the cases whose JCT grew by more than 2%.
#
# usage: bench/zoo_memory.sh [COUNT] [SEED] [OUTDIR] [FACTOR]
#        (defaults 200, 1, runs/zoo-memory, 2)
# environment: MODELS (default "streaming streaming-plus"), and what
#              bench/zoo.sh takes
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
count=${1:-200}
seed=${2:-1}
out=${3:-runs/zoo-memory}
factor=${4:-2}
export MODELS=${MODELS:-streaming streaming-plus}
STORE_FACTOR=1 bash "$here/bench/zoo.sh" "$count" "$seed" "$out/x1" >"$out.x1.log" 2>&1 || { cat "$out.x1.log"; exit 1; }
STORE_FACTOR=$factor bash "$here/bench/zoo.sh" "$count" "$seed" "$out/x$factor" >"$out.x$factor.log" 2>&1 ||
  { cat "$out.x$factor.log"; exit 1; }
awk -F, -v f="$factor" '
  FNR == 1 { file++; next }
  file == 1 { jct[$1, $2] = $3; ok[$1, $2] = $8 == 1; next }
  {
    m = $2; if (!(m in seen)) { seen[m] = 1; models[++nm] = m }
    if (!ok[$1, m] || $8 != 1) { skip[m]++; next }
    n[m]++
    if ($3 > 1.02 * jct[$1, m]) { slower[m]++; list[m] = list[m] sprintf(" %s(+%.0f%%)", substr($1, 6), 100 * ($3 / jct[$1, m] - 1)) }
  }
  END {
    for (i = 1; i <= nm; i++) {
      m = models[i]
      printf "%-16s %3d cases, %3d slower by more than 2%% with %sx the memory (%d incomplete, left out)%s\n",
             m, n[m], slower[m], f, skip[m], slower[m] ? ":" : ""
      if (slower[m]) print "   " list[m]
    }
  }' "$out/x1/zoo.csv" "$out/x$factor/zoo.csv"
