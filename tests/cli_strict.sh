#!/usr/bin/env bash
# Strict input, as a new user meets it: a bare number where a unit decides
# the value, a fault schedule that cannot apply, a number out of range, and
# a spec that leans on defaults. Every error exits 2, names FILE:LINE (or
# the option), prints one pointer at --help at most, and writes nothing;
# every warning goes to stderr and the command still runs; faults that did
# not apply are reported on the console and in summary.csv.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
never=$tmp/never # every refused command writes here, and must not

# refused_with WHAT NEEDLE CMD...: exit 2, nothing on stdout, NEEDLE on stderr.
refused_with() {
  local what=$1 needle=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -qF -- "$needle" "$tmp/err"; then
    echo "ok   $what"
  else
    echo "FAIL $what (exit $rc): $(cat "$tmp/err")"
    fails=$((fails + 1))
  fi
}

cat >"$tmp/cluster.ini" <<'EOF'
[group cpu]
count = 2
cpu = 8
memory = 16GB
[group gpu]
count = 4
cpu = 4
gpu = 1
memory = 16GB
EOF
spec() { # NAME LINES...: a workload spec in $tmp/NAME.ini
  local name=$1
  shift
  printf '%s\n' "$@" >"$tmp/$name.ini"
}
spec good '[workload]' 'name = good' '[read]' 'kind = source' 'tasks = 4' 'rows_per_task = 10' \
  'row_bytes = 150kb' 'time_per_task = 100MS' '[work]' 'kind = map' 'time_per_row = 50ms'

# --- specs ---------------------------------------------------------------------
spec bare '[workload]' 'name = bare' '[read]' 'kind = source' 'tasks = 4' 'rows_per_task = 10' \
  'row_bytes = 1MB' 'time_per_row = 8'
refused_with "a bare time in a spec names FILE:LINE and asks for a unit" \
  "$tmp/bare.ini:8: malformed value '8' for 'time_per_row': a time needs a unit: ns, us, ms, s, min or h (such as 8s)" \
  "$sluice" sim "$tmp/bare.ini" --cluster "$tmp/cluster.ini" --out "$never"
spec huge '[read]' 'kind = source' 'tasks = 99999999999999999999'
refused_with "a whole number too large for its key is out of range" \
  "$tmp/huge.ini:3: value '99999999999999999999' for 'tasks' is out of range" "$sluice" plan "$tmp/huge.ini"
printf '[group g]\ncpu = 8\nmemory = 16GB\nnic = 10gbps\n' >"$tmp/bits.ini"
refused_with "a miscased bandwidth says units are case-sensitive" \
  "$tmp/bits.ini:4: malformed value '10gbps' for 'nic': no unit 'gbps': bandwidth units are case-sensitive" \
  "$sluice" sim "$tmp/good.ini" --cluster "$tmp/bits.ini" --out "$never"
printf '[cluster]\nlatency = 50\n[group g]\ncpu = 8\nmemory = 16GB\n' >"$tmp/latency.ini"
refused_with "a bare time in a cluster spec names FILE:LINE" "$tmp/latency.ini:2: malformed value '50' for 'latency'" \
  "$sluice" sim "$tmp/good.ini" --cluster "$tmp/latency.ini" --out "$never"
printf '[work]\ntime_per_row = 50\n' >"$tmp/costs.ini"
refused_with "a bare time in a cost file names FILE:LINE" "$tmp/costs.ini:2: malformed value '50' for 'time_per_row'" \
  "$sluice" sim "$tmp/good.ini" --cluster "$tmp/cluster.ini" --costs "$tmp/costs.ini" --out "$never"
check "units of sizes and times match in any case (150kb, 100MS)" exits 0 "$sluice" plan "$tmp/good.ini"

spec headless '[read]' 'kind = source' 'tasks = 4' 'rows_per_task = 10' 'row_bytes = 1MB' 'time_per_row = 8ms'
"$sluice" plan "$tmp/headless.ini" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a spec without [workload] still runs" test $rc -eq 0
check "and warns on stderr, FILE:1, that it defaulted the name and target partition" grep -q \
  "^$tmp/headless.ini:1: warning: no \[workload\] section: the workload is named 'headless' after its file, and target_partition is 128 MB" \
  "$tmp/err"
check "the warning stays off stdout" bash -c "! grep -q warning '$tmp/out'"
"$sluice" plan "$tmp/good.ini" >/dev/null 2>"$tmp/err"
check "a spec with [workload] says nothing" test ! -s "$tmp/err"

spec million '[workload]' '[read]' 'kind = source' 'tasks = 1000' 'rows_per_task = 1000' 'row_bytes = 1KB'
check "the plan counts rows as integers" bash -c "'$sluice' plan '$tmp/million.ini' | head -1 | grep -q '1000000 source rows, 1000000 sink rows'"

# --- fault schedules -----------------------------------------------------------
sim=("$sluice" sim "$tmp/good.ini" --cluster "$tmp/cluster.ini" --out "$never")
refused_with "a bare fault time asks for a unit" \
  "sluice sim: --fail: 'lose:1@100': the time needs a unit: ns, us, ms, s, min or h (such as 100s)" "${sim[@]}" --fail lose:1@100
refused_with "a join before its loss is bad input" \
  "sluice sim: --fail: 'join:1@50s' comes before 'lose:1@100s': a node joins only after it is lost" \
  "${sim[@]}" --fail lose:1@100s,join:1@50s
refused_with "a node past its group's end says how many nodes the group has" \
  "sluice sim: --fail: lose: no node 'gpu.7': group gpu has 4 nodes, gpu.0 to gpu.3" "${sim[@]}" --fail lose:gpu.7@1s
refused_with "run refuses a bare fault time too" "sluice run: --fail: 'kill@3': the time needs a unit" \
  "$sluice" run "$tmp/good.ini" --cluster "$tmp/cluster.ini" --fail kill@3 --out "$never"
refused_with "an option's bare time asks for a unit" "sluice sim: --stall-timeout: '5': a time needs a unit" \
  "${sim[@]}" --stall-timeout 5
refused_with "an option's integer too large is out of range" \
  "sluice sim: --seed: '99999999999999999999' is out of range (from 0 to 9223372036854775807)" \
  "${sim[@]}" --seed 99999999999999999999
check "refused commands wrote nothing" test ! -e "$never"

# Faults that do not apply: a join of a node in service, a second loss, one
# due after the job ended. The run goes on, and says which and why.
sched=lose:cpu.1@0.1s,join:gpu.2@0.2s,lose:cpu.1@0.3s,kill@2h
"$sluice" sim "$tmp/good.ini" --cluster "$tmp/cluster.ini" --fail "$sched" --out "$tmp/s" >"$tmp/out" 2>"$tmp/err"
check "sim with faults that do not apply completes" test $? -eq 0
check "and lists them on the console, with why" bash -c "grep -q '^  not applied   join:gpu.2@0.2s (the node was in service)$' '$tmp/out' &&
  grep -q '^                lose:cpu.1@0.3s (the node was already lost)$' '$tmp/out' &&
  grep -q '^                kill@2h (the run had ended)$' '$tmp/out'"
check "one node lost, in the singular" grep -q "faults        1 applied: 1 node lost, 0 joined, 0 tasks killed" "$tmp/out"
check "summary.csv counts the applied" test "$(summary_field "$tmp/s" faults_applied)" = 1
check "summary.csv lists the others" test "$(summary_field "$tmp/s" faults_not_applied)" = \
  'join:gpu.2@0.2s (the node was in service); lose:cpu.1@0.3s (the node was already lost); kill@2h (the run had ended)'
"$sluice" sim "$tmp/good.ini" --cluster "$tmp/cluster.ini" --fail "$sched" --quiet --out "$tmp/q" >"$tmp/out" 2>"$tmp/err"
check "--quiet still warns of them on stderr" bash -c "[ ! -s '$tmp/out' ] && grep -q '^sluice sim: warning: faults not applied: join:gpu.2@0.2s' '$tmp/err'"
"$sluice" run "$tmp/good.ini" --cluster "$tmp/cluster.ini" --fail "$sched" --time-scale 0.5 --quiet --out "$tmp/r" \
  >"$tmp/out" 2>"$tmp/err"
check "run reports them too" bash -c "grep -q '^  faults 1 applied; not applied:$' '$tmp/out' &&
  grep -q '^    kill@2h (the run had ended)$' '$tmp/out'"
check "in its summary.csv as well" grep -q 'kill@2h (the run had ended)$' <<<"$(summary_field "$tmp/r" faults_not_applied)"

exit $((fails > 0))
