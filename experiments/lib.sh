# shellcheck shell=bash
# Shared by experiments/*/run.sh: run cases, collect results, draw, report.
# Sourced, not run. `sluice experiment NAME` sets the environment:
#   SLUICE      the sluice binary
#   SLUICE_SRC  the source tree (specs, plots/, experiments/)
#   OUT         the output folder
#   QUICK       1 for reduced sizes (the tests), 0 for the full experiment
# Run by hand, run.sh falls back to build/sluice, this tree and
# runs/experiments/NAME.
#
# What every experiment leaves in OUT:
#   results.csv   series,x,metric,value,unit,engine,profile (our numbers;
#                 profile: the system cost profile of the run, ideal when none)
#   NAME.png/.svg the figure
#   report.md     ours beside the paper's (experiments/report.awk)
#   commands.txt  every sluice command it ran, log.txt their output
#   runs/         one folder per run (summary.csv, timeline.csv, tasks.csv)
#   .durations    how long each run took, for the next run's progress line
# On a terminal, a progress line on stderr says which run of how many goes
# on and about how long is left (sl_expect N declares the count).
# results.csv, the figure and report.md are written under temporary names and
# renamed when whole, like the run folders themselves.
set -euo pipefail

SLUICE_SRC=${SLUICE_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
SLUICE=${SLUICE:-$SLUICE_SRC/build/sluice}
QUICK=${QUICK:-0}

sl_die() {
  echo "experiment ${EXP:-?}: $*" >&2
  exit 1
}

# sl_begin NAME TITLE: fresh outputs for experiment NAME.
sl_begin() {
  EXP=$1
  EXP_TITLE=$2
  EXP_DIR=$SLUICE_SRC/experiments/$EXP
  OUT=${OUT:-runs/experiments/$EXP}
  [ -x "$SLUICE" ] || sl_die "no sluice binary at $SLUICE (build it, or set SLUICE)"
  command -v gnuplot >/dev/null || sl_die "gnuplot is missing (apt-get install gnuplot-nox)"
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
  rm -rf "$OUT/runs" "$OUT/specs" # this experiment's own folders, rebuilt below
  mkdir -p "$OUT/runs" "$OUT/specs"
  # stale outputs of an earlier run must not pass for this one's
  rm -f "$OUT/results.csv" "$OUT/report.md" "$OUT/$EXP.png" "$OUT/$EXP.svg"
  LOG=$OUT/log.txt
  : >"$LOG"
  : >"$OUT/.commands.tmp"
  : >"$OUT/.notes.tmp"
  echo "series,x,metric,value,unit,engine,profile" >"$OUT/.results.csv.tmp"
  SL_T0=$SECONDS
  SL_RUNS=0
  SL_EXPECT=
  SL_START=$EPOCHREALTIME
  # how long each run took the last time, for the progress line's estimate
  SL_PREV=$OUT/.durations
  : >"$OUT/.durations.tmp"
}

# sl_expect N: the runs (sl_exec calls) this experiment makes, for the
# progress line ("run 12 of 72"); run.sh computes it from its own loops.
sl_expect() { SL_EXPECT=$1; }

# sl_words WORD...: how many words, for sl_expect's arithmetic.
sl_words() { echo $#; }

# sl_progress ENGINE ARGS...: on a terminal only (stderr), before a run:
# which one, how many of how many, and the time left. The estimate takes
# the same runs' durations from the experiment's previous run when it made
# as many, scaled by how fast this one goes; else the mean so far.
sl_progress() {
  [ -t 2 ] || return 0
  local n=$((SL_RUNS + 1)) what left
  what=$(echo "$*" | sed "s|$SLUICE_SRC/||g; s|$OUT/||g" | cut -c1-90)
  left=$(awk -v done="$SL_RUNS" -v total="${SL_EXPECT:-0}" -v start="$SL_START" -v now="$EPOCHREALTIME" \
    -v prev="$SL_PREV" 'BEGIN {
      el = now - start; if (total <= done) exit
      while ((getline d < prev) > 0) p[++np] = d
      if (np == total) {
        for (i = 1; i <= done; i++) past += p[i]
        for (i = done + 1; i <= total; i++) rest += p[i]
        s = (done > 0 && past > 0) ? el / past : 1
        printf "%.0f", rest * s
      } else if (done > 0) printf "%.0f", el / done * (total - done)
    }')
  printf '\r\033[K  %s: run %d%s: %s; %d s%s' "$EXP" "$n" "${SL_EXPECT:+ of $SL_EXPECT}" "$what" \
    $((SECONDS - SL_T0)) "${left:+, about $left s left}" >&2
}

sl_quick() { [ "$QUICK" = 1 ]; }

# sl_exec ENGINE DIR ARGS...: sluice ENGINE ARGS --out DIR --quiet, output to
# the log. Never fails the script: the run's exit code is left in SL_RC and
# its summary says what happened (a failed case is a result too).
# With SL_TIME_LIMIT set (seconds), a run still going then is interrupted
# (SIGINT: it writes a summary marked incomplete) and DIR/capped marks it.
sl_exec() {
  local engine=$1 dir=$2 limit=()
  shift 2
  [ -n "${SL_TIME_LIMIT:-}" ] && limit=(timeout -s INT "$SL_TIME_LIMIT")
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir" # an old summary.csv would pass for this run's
  echo "sluice $engine $* --out $dir" | sed "s|$SLUICE_SRC/||g; s|$OUT/||g" >>"$OUT/.commands.tmp"
  echo "== sluice $engine $* --out $dir" >>"$LOG"
  sl_progress "$engine" "$@"
  SL_RC=0
  local t0=$EPOCHREALTIME
  "${limit[@]}" "$SLUICE" "$engine" "$@" --out "$dir" --quiet >>"$LOG" 2>&1 || SL_RC=$?
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }' >>"$OUT/.durations.tmp"
  if [ "$SL_RC" = 124 ] && [ -n "${SL_TIME_LIMIT:-}" ]; then
    mkdir -p "$dir" && : >"$dir/capped"
    echo "== stopped at the ${SL_TIME_LIMIT} s cap" >>"$LOG"
  fi
  echo "== exit $SL_RC" >>"$LOG"
  SL_RUNS=$((SL_RUNS + 1))
}

# sl_field DIR COLUMN: one column of DIR/summary.csv, empty when absent.
sl_field() {
  [ -f "$1/summary.csv" ] || return 0
  awk -F, -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i }
                       NR == 2 && c { print $c }' "$1/summary.csv"
}

# sl_jct DIR: the JCT in seconds, OOM, capped (stopped at SL_TIME_LIMIT), or
# fail (no summary, or incomplete).
sl_jct() {
  if [ -f "$1/capped" ]; then
    echo capped
  elif [ "$(sl_field "$1" complete)" = 1 ]; then
    sl_field "$1" jct_s
  elif [ "$(sl_field "$1" oom)" = 1 ]; then
    echo OOM
  else
    echo fail
  fi
}

# sl_calc EXPR: floating-point arithmetic (awk), printed with 6 significant digits.
sl_calc() { awk "BEGIN { v = $1; printf \"%.6g\n\", v }"; }

# sl_div A B [SCALE]: A / B x SCALE, or A itself when A is not a number (OOM).
sl_div() {
  case $1 in
    '' | *[!0-9.eE+-]*) echo "$1" ;;
    *) sl_calc "$1 / $2 * ${3:-1}" ;;
  esac
}

# sl_add SERIES X METRIC VALUE UNIT ENGINE [PROFILE]: one row of results.csv
# (PROFILE: the --profile the run charged; ideal when not given).
sl_add() {
  local f out=""
  [ $# -ge 7 ] || set -- "$@" ideal
  for f in "$@"; do
    case $f in *[,\"]*) f="\"${f//\"/\"\"}\"" ;; esac
    out="$out${out:+,}$f"
  done
  echo "$out" >>"$OUT/.results.csv.tmp"
}

# sl_system_profile SERIES [X]: the cost profile (profiles/NAME.ini) of the
# paper's system that our SERIES (at X) is compared with, found in the
# experiment's paper.csv (its x or source names the system): raydata, spark
# or flink; nothing when that system has no profile (tf.data, plain Ray).
# SL_SYSTEM, set by a run.sh, names it where paper.csv does not.
sl_system_profile() {
  awk -v s="$1" -v x="${2:-}" "$SL_AWK_CSV"'
    NR > 1 { csvsplit($0, f)
      if (f[3] != s || (x != "" && f[4] != x)) next
      if ($0 ~ /Ray Data/) p = "raydata"; else if ($0 ~ /Spark/) p = "spark"; else if ($0 ~ /Flink/) p = "flink"
      if (p != "") { print p; exit }
    }
    END { if (p == "" && sys != "") print sys }' sys="${SL_SYSTEM:-}" "$EXP_DIR/paper.csv"
}

# SL_PROFILES: the profiles beside the ideal that experiments run their
# simulations under ("sluice system": our executor's and the paper's
# system's); empty runs the ideal alone.
SL_PROFILES=${SL_PROFILES-sluice system}

# sl_profiles SERIES [X]: the profiles to run SERIES (at X) under beside the
# ideal: sluice, and the paper's system's where it has one.
sl_profiles() {
  local p sys
  for p in $SL_PROFILES; do
    if [ "$p" = system ]; then
      sys=$(sl_system_profile "$@")
      [ -n "$sys" ] && echo "$sys"
    else
      echo "$p"
    fi
  done
  return 0
}

# sl_note TEXT...: a paragraph of the report, after the table's introduction.
sl_note() { printf '%s\n\n' "$*" >>"$OUT/.notes.tmp"; }

# sl_gp_str VALUE: VALUE as a gnuplot single-quoted string.
sl_gp_str() { printf "'%s'" "${1//\'/\'\'}"; }

# sl_plot SCRIPT BASENAME ASSIGNMENTS: draws plots/SCRIPT into OUT/BASENAME.png
# and .svg. ASSIGNMENTS is gnuplot code ("data='...'; title='...'"); the
# output and terminal are added here. gnuplot leaves an empty file when it
# gives up (e.g. no valid points), so an empty output is a failure too.
sl_plot() {
  local script=$SLUICE_SRC/plots/$1 base=$2 assign=$3 term tmp
  for term in png svg; do
    tmp="$OUT/.$base.$term.tmp"
    rm -f "$tmp"
    if ! gnuplot -e "$assign; out=$(sl_gp_str "$tmp"); term='$term'" "$script" >>"$LOG" 2>&1 ||
      [ ! -s "$tmp" ]; then
      rm -f "$tmp"
      sl_die "gnuplot failed on plots/$1 for $base.$term (see $LOG)"
    fi
    mv "$tmp" "$OUT/$base.$term"
  done
}

# sl_results_done: results.csv becomes visible (before the figure and report
# read it).
sl_results_done() {
  sl_progress_end
  [ -f "$OUT/.results.csv.tmp" ] && mv "$OUT/.results.csv.tmp" "$OUT/results.csv"
  [ -f "$OUT/.commands.tmp" ] && mv "$OUT/.commands.tmp" "$OUT/commands.txt"
  return 0
}

# sl_report: OUT/report.md from results.csv, the folder's paper.csv and
# gaps.csv, and the notes gathered on the way.
sl_report() {
  local tmp=$OUT/.report.md.tmp mode=full figs f gaps=""
  [ -f "$EXP_DIR/gaps.csv" ] && gaps=$EXP_DIR/gaps.csv
  sl_quick && mode="quick (QUICK=1: reduced sizes, numbers not comparable)"
  figs=""
  for f in "$OUT"/*.png; do
    [ -e "$f" ] && figs="$figs ![$(basename "$f")]($(basename "$f"))"
  done
  {
    echo "# $EXP: $EXP_TITLE"
    echo
    echo "Mode: $mode. $SL_RUNS runs in $((SECONDS - SL_T0)) s; every command is in commands.txt,"
    echo "each run's summary.csv, timeline.csv and tasks.csv under runs/. Specs and the"
    echo "reasons for every choice: experiments/$EXP/ in the source tree."
    echo
    [ -n "$figs" ] && echo "$figs" && echo
    cat "$OUT/.notes.tmp"
    echo "## Ours beside the paper"
    echo
    echo "Ratio = ours / paper; ⚠ marks a gap over 25%, explained below from"
    echo "experiments/$EXP/gaps.csv (or marked unexplained)."
    echo
    awk -f "$SLUICE_SRC/experiments/report.awk" -v paper="$EXP_DIR/paper.csv" \
      -v results="$OUT/results.csv" -v gaps="$gaps"
  } >"$tmp" || sl_die "cannot write the report"
  mv "$tmp" "$OUT/report.md"
  rm -f "$OUT/.notes.tmp"
}

# sl_finish: the last step of every run.sh.
sl_finish() {
  sl_progress_end
  mv "$OUT/.durations.tmp" "$OUT/.durations" # the next run's estimate
  if [ -n "$SL_EXPECT" ] && [ "$SL_EXPECT" != "$SL_RUNS" ]; then
    echo "experiment $EXP: made $SL_RUNS runs where run.sh expects $SL_EXPECT (sl_expect)" >&2
  fi
  sl_report
  echo "$EXP: $SL_RUNS runs in $((SECONDS - SL_T0)) s; $OUT/report.md"
}

# sl_progress_end: clears the progress line (on a terminal).
sl_progress_end() {
  [ -t 2 ] && printf '\r\033[K' >&2
  return 0
}

# sl_rate TIMELINE WINDOW: time,rows_per_s averaged over WINDOW seconds from
# the rows_done column (the instantaneous rate of a timeline is noisy). A
# rollback makes rows_done fall: that window shows 0, not a negative rate.
sl_rate() {
  awk -F, -v w="$2" 'NR == 1 { print "time_s,rows_per_s"; next }
    { t = $1; r = $2
      if (NR == 2) { t0 = t; r0 = r; next }
      if (t - t0 >= w) { v = (r - r0) / (t - t0); printf "%.6g,%.6g\n", (t0 + t) / 2, v < 0 ? 0 : v
                         t0 = t; r0 = r } }' "$1"
}

# sl_mean_rate TIMELINE FROM TO: rows per second delivered between two times
# (from rows_done), empty when the run did not last that long.
sl_mean_rate() {
  awk -F, -v a="$2" -v b="$3" 'NR > 1 { if ($1 <= a) { ra = $2; ta = $1 } if ($1 <= b) { rb = $2; tb = $1 } }
    END { if (tb > ta && tb >= b - 60) printf "%.6g\n", (rb - ra) / (tb - ta) }' "$1"
}

# sl_rollbacks TIMELINE: how many times rows_done fell (a global rollback
# takes delivered rows back).
sl_rollbacks() {
  awk -F, 'NR > 2 && $2 < prev { n++ } NR > 1 { prev = $2 } END { print n + 0 }' "$1"
}

# sl_spec SRC DST [SECTION KEY VALUE]...: writes DST, a copy of the INI spec
# SRC with each KEY of SECTION set to VALUE (replaced, or added at the end of
# the section). Specs stay the built-in files; an experiment changes only
# what it varies, and its run.sh says why.
sl_spec() {
  local src=$1 dst=$2 tmp
  shift 2
  tmp=$(mktemp "$OUT/specs/.spec.XXXXXX")
  cp "$src" "$tmp"
  while [ $# -ge 3 ]; do
    awk -v sec="$1" -v key="$2" -v val="$3" '
      function flush() { if (insec && !done) { print key " = " val; done = 1 } }
      /^[ \t]*\[/ { flush(); h = $0; sub(/^[ \t]*\[/, "", h); sub(/\].*$/, "", h)
                     insec = (h == sec); print; next }
      insec && $0 ~ ("^[ \t]*" key "[ \t]*=") { if (!done) print key " = " val; done = 1; next }
      { print }
      END { flush() }' "$tmp" >"$tmp.n"
    mv "$tmp.n" "$tmp"
    shift 3
  done
  [ $# -eq 0 ] || sl_die "sl_spec: arguments go by three (SECTION KEY VALUE)"
  mv "$tmp" "$dst"
}

# sl_bound WORKLOAD CLUSTER: the physical limit's JCT in seconds (sluice bound).
sl_bound() {
  "$SLUICE" bound "$1" --cluster "$2" --csv 2>>"$LOG" |
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "jct_bound_s") c = i } NR == 2 { print $c }'
}

# The CSV field splitter of report.awk (quoted fields may hold commas), for
# the lookups below.
SL_AWK_CSV='function csvsplit(line, f,    n, i, c, q, cur, len) {
  sub(/\r$/, "", line); n = 0; cur = ""; q = 0; len = length(line)
  for (i = 1; i <= len; i++) {
    c = substr(line, i, 1)
    if (q) { if (c == "\"") { if (substr(line, i + 1, 1) == "\"") { cur = cur "\""; i++ } else q = 0 } else cur = cur c }
    else if (c == "\"") q = 1
    else if (c == ",") { f[++n] = cur; cur = "" }
    else cur = cur c
  }
  f[++n] = cur
  return n
}'

# sl_paper SERIES X METRIC: the paper's value from the folder's paper.csv
# (empty when it has none).
sl_paper() {
  awk -v s="$1" -v x="$2" -v m="$3" "$SL_AWK_CSV"'
    NR > 1 { csvsplit($0, f); if (f[3] == s && f[4] == x && f[5] == m) print f[6] }' "$EXP_DIR/paper.csv"
}

# sl_ours SERIES X METRIC [ENGINE] [PROFILE]: our value from OUT/results.csv
# (any engine when ENGINE is empty; the ideal profile unless PROFILE says).
sl_ours() {
  awk -v s="$1" -v x="$2" -v m="$3" -v e="${4:-}" -v p="${5:-ideal}" "$SL_AWK_CSV"'
    NR > 1 { csvsplit($0, f); if (f[7] == "") f[7] = "ideal"
      if (f[1] == s && f[2] == x && f[3] == m && (e == "" || f[6] == e) && f[7] == p) print f[4] }' \
    "$OUT/results.csv"
}

# sl_num VALUE: VALUE when it is a number, else NaN (for figure data files).
sl_num() {
  case $1 in
    '' | *[!0-9.eE+-]*) echo NaN ;;
    *) echo "$1" ;;
  esac
}
