#!/usr/bin/env bash
# streaming-plus on zoo cases where it once fell far from the bound, each
# for its own defect (seed 1 of `sluice zoo`; a change of the generator
# changes the cases, and this list must then be chosen again):
#   case 31  the store half full of an expanding map's queued inputs while
#            room was kept for operators with nothing to run: 4% of the bound;
#            then the outputs of 24 running one-row consumers counted as if
#            their inputs stayed stored: 52% (this one must reach 65%)
#   case 40  32 MB partitions of 11.6 MB rows: 10 of 64 sources ran: 27%
#   case 56  192 tiny partitions coalesced into one 14-minute task: 3%
#   case 120 full batches of 512 rows (no per-batch cost) for 84 GPUs: 5%
#   case 145 an expanding map idle with 190 partitions queued: 2%
#   case 45  partitions of 128 to 260 rows for a batch operator whose
#            tasks pay 57 s of fixed time and wanted 45 rows each: 38.8%;
#            then its sources and the map after them held to the steady
#            state's shares and pace ahead of one wave of its 157 s tasks,
#            which started in two: 54.8% (this one must reach 85%)
#   case 24  sources on 128 CPUs feeding a filter on GPUs, 32 at a time on
#            stores of 64 partitions: 58.2% where the static model reached
#            99.4% (this one must reach 90%)
#   case 189 a source's last tasks went to nodes in turn, the slow ones too,
#            while faster ones had room: 56.6%, then 60.3%. Its bottleneck
#            takes batches of 32 rows one at a time, and how its last
#            batches fill moves it by points: since the count of tasks a
#            consumer could start (case 6 below), every operator before it
#            ends 1.4 s sooner and it ends 3.6 s later, 57.0%; since its
#            sources spill where their consumers have nothing queued,
#            52.5%; since the operators furthest below their need start
#            first, 49.1% (this one must reach 45%: the placement of the
#            last wave by speed is no longer told apart by this bar alone)
#   case 173 sources filled every store and paused the consumers that would
#            have emptied them: 8 to 27 s with nothing delivered, 49% (this
#            one must reach 60%)
#   case 185 sources admitted at the pace Algorithm 2 drew from the slots
#            they themselves held, the stores two-thirds empty: 67.7% (this
#            one must reach 80%)
#   case 90  Algorithm 2, averaged over its period, drew a rate from the
#            1,584 CPUs a 0.25-CPU consumer could use, far above what the
#            pipeline takes: 856 sources of 528 MB started within 30 s,
#            filled every store, and the map after them, which doubles its
#            bytes, never ran again (incomplete at the time limit); the
#            rate is now capped at twice the bound's pace
#   case 6   a map of 32-row batches over 4-row source outputs was kept
#            store room as if each queued partition were a task of its
#            own, eight times what it could run: the sources held a fifth
#            of the CPUs, 35.2% (this one must reach 55%); then, as seed
#            2's case 155 below, sources started to feed a consumer with
#            nothing queued while the operators after it had CPU work
#            queued: 69.4% (this one must also reach 88%)
#   case 155 sources read from storage at the bound's pace: the last of
#            its 20 s source tasks started with a fifth of the job left
#            and ended after everything else, 82.0% (this one must reach
#            90%)
#   case 44  held to its stores, a memory-bound job ran its sources on a
#            third of the CPUs while the batch model, spilling 1 GB,
#            reached 72.6%: 54.1% (this one must reach 75%, spilling)
#   case 40  (again) its sources may spill only while the consumer had
#            nothing queued, and it was fed a partition at a time: 53.5%
#            with a disk (this one must also reach 75%)
#   case 104 batches of 64 s fixed cut at half their work fixed, 57-row
#            tasks of up to 188 s begun as the last rows came: 40.1%;
#            then 182 tasks of 101 s, fewer than the 192 CPUs of its fast
#            nodes, a third of them run at speed 0.68 because a source of
#            1 s held the fast slot at that moment: 50.1% (this one must
#            reach 60%)
#   case 4   the same for a source's last 2-CPU tasks of 26 s: 55.5%
#            (this one must reach 90%)
#   case 130 held for a 4-CPU map's long last tasks, 4-CPU nodes were
#            refilled by quarter-CPU tasks as each of theirs ended, and
#            the map waited 58 s for a fast slot: 54.7% (this one must
#            reach 62%)
#   case 13  a CPU consumer with input queued held the GPU filter that fed
#            it to its share, the filter's own queue growing, until the
#            CPUs idled for input at the end: 72.1% where fixed
#            concurrency reached 78.2%; 83.9% when fixed, 77.5% since the
#            operators furthest below their need start first (this one
#            must reach 75%)
#   case 34  least buffered first gave every freed CPU to a 2-CPU filter,
#            the source ran in bursts between its tasks, and its outputs
#            crossed 100 Mbps NICs to wherever a filter slot freed: 43.7%
#            (this one must reach 70%)
#   case 125 its last batches of 77 s fixed (at the fastest speed) went to
#            nodes of speed 0.64 in turn while nodes of speed 1 had slots:
#            58.1% (this one must reach 63%)
#   case 109 the same at its tail, for batch maps on GPUs: 81.2% (this one
#            must reach 88%)
#   case 53  6,000 four-second sources held to the bound's steady-state
#            share (1,242 of 2,496 CPUs) and started at its pace: the last
#            began at 17 s, and half the CPUs idled through the final 5 s
#            of a 20.5 s bound, 70.0% (this one must reach 80%)
#   case 49  a GPU map capped at 8 tasks took the oldest outputs first,
#            made together on one node, and 8 tasks pulled 11 MB each
#            through that node's 100 Mbps NIC: 2.7 s a task for 0.1 s of
#            work, 27.7% (this one must reach 60%)
#   case 15  a 1-CPU batch filter started wherever a CPU freed, and 356 of
#            its tasks pulled 18 GB through NICs of 177 Mbps, 7.5 s each
#            against 1.1 s of work: 48.0% (this one must reach 55%)
# and, under the paper's streaming, seed 1's
#   case 84 whose rows grow 32-fold on their way: Algorithm 1's budget,
#            capped at the stores' capacity in source bytes, let in 32
#            times what the stores hold downstream: 4.9% (this one must
#            reach 80%)
# and seed 7's
#   case 18  a map whose rounded sizes "grew" its data by 0.12% waited for
#            store room its own queued input filled: 14.8% (the paper's
#            streaming, whose store check had the same defect: 9.9%)
#   case 181 maps whose inputs crossed the NICs to whichever node had a
#            slot, while their own node had one too: 22.4% (this one must
#            reach 50%)
#   case 161 the same across a 100 Gbps backbone that 62 nodes of 59 Gbps
#            NICs share: the policy priced a move at the NIC's speed, and
#            the storage reads crawled behind the moves: 28.1% (this one
#            must reach 40%)
#   case 108 the same as seed 1's case 45: 66.2% (this one must reach 78%)
#   case 67  sources reading from a storage link that binds lagged their
#            pace, caught up three at a time, and read in lockstep: the
#            link idled a third of the time, 74.2% (this one must reach
#            88%)
#   case 118 long tasks of a last wave on slow nodes while fast ones were
#            a moment from free: 59.8% (this one must reach 70%)
# and seed 3's
#   case 198 GPU maps read where a source on 32 CPUs had made their inputs,
#            filled that node's store for a consumer capped at 3 tasks, and
#            the other node's GPUs idled: 50.9%, then 85.5%, and 83.3%
#            since its sources spill rather than wait, 79.2% since they
#            also start while its queue is short (this one must reach 75%)
#   case 54  consumers that shrink their data read their inputs across the
#            network whenever the stores were a quarter full, the rule
#            against crowding a node's store applied to tasks that cannot
#            fill it: 35.0%, then 64.7% (this one must reach 37%: since
#            the core takes a free slot that has set an operator up
#            before the last freed one, its run ties differently in the
#            order its sources' spills share a disk, and memory-bound as
#            it is, reaches 38.7%; its time idle on transfers, which the
#            defect grew, fell from 17.7 to 11.3% of its GPU time)
#   case 154 tasks that started without store room, and spilled what they
#            made for a consumer on the same CPUs, writing for longer than
#            a quarter of their task: 81.3%, then 87.8% (this one must
#            reach 80%: since a source no longer starts to feed its
#            consumer while an operator further on has work queued for
#            the CPUs it takes, its source waits 24 times for the 4-CPU
#            map's queue, its expanding map spills 3.4 GB rather than
#            1.4, and it reaches 81.6%; the zoos of seeds 1, 2, 3 and 7
#            and the set-up zoo gained 90 points in all)
#   case 17  a fused source reading 67 MB a task through NICs that bind,
#            run ahead of its share by its deadline and paced at the
#            storage link: more reads at once shared the NICs, 82.5% (this
#            one must reach 88%)
# and seed 2's
#   case 111 sources of 7 s took every CPU while their consumer's queue was
#            empty a moment, then paused on full stores holding them: the
#            consumer ran 2 of the 126 tasks the bound needs, 82 GB
#            spilled, 10.8% (this one must reach 45%)
#   case 44  a 41 s map read its 32 MiB inputs across 100 Mbps NICs, a
#            move priced as if the NIC carried it alone: a thousand did at
#            once, their slots idle for input, 47.7% (this one must reach
#            53%)
#   case 150 the same defect as seed 1's case 15: 55.7% (this one must
#            reach 75%)
#   case 155 on one node, 1.75 GiB source tasks started while the GPU
#            map after them had nothing queued, though the 4-CPU map
#            further on had 57 tasks queued for the CPUs the sources took:
#            the store filled, 3.6 GB spilled, and the GPU map read its
#            input back from a shared disk for 10 s while the CPUs idled:
#            85.2% (this one must reach 93%)
#   case 174 the same as seed 7's case 67: 68.8% (this one must reach
#            95%)
# Each must now reach 40% of its bound, with spill charged at 500 MB/s.
set -u
sluice=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
cd "$src"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$sluice" zoo --seed 1 --count 189 --out "$tmp/zoo" --quiet || { echo "FAIL zoo"; exit 1; }
for n in 040 045 056 090 120 145; do
  zoo_case_reaches "$tmp/zoo/case-$n" streaming-plus 40 "$tmp/run-$n"
done
zoo_case_reaches "$tmp/zoo/case-031" streaming-plus 65 "$tmp/run-031"
zoo_case_reaches "$tmp/zoo/case-173" streaming-plus 60 "$tmp/run-173"
zoo_case_reaches "$tmp/zoo/case-189" streaming-plus 45 "$tmp/run-189"
zoo_case_reaches "$tmp/zoo/case-024" streaming-plus 90 "$tmp/run-024"
zoo_case_reaches "$tmp/zoo/case-185" streaming-plus 80 "$tmp/run-185"
zoo_case_reaches "$tmp/zoo/case-006" streaming-plus 55 "$tmp/run-006"
zoo_case_reaches "$tmp/zoo/case-006" streaming-plus 88 "$tmp/run-006-fed"
zoo_case_reaches "$tmp/zoo/case-155" streaming-plus 90 "$tmp/run-155"
zoo_case_reaches "$tmp/zoo/case-013" streaming-plus 75 "$tmp/run-013"
zoo_case_reaches "$tmp/zoo/case-034" streaming-plus 70 "$tmp/run-034"
zoo_case_reaches "$tmp/zoo/case-044" streaming-plus 75 "$tmp/run-044"
zoo_case_reaches "$tmp/zoo/case-104" streaming-plus 60 "$tmp/run-104"
zoo_case_reaches "$tmp/zoo/case-004" streaming-plus 90 "$tmp/run-004"
zoo_case_reaches "$tmp/zoo/case-130" streaming-plus 62 "$tmp/run-130"
zoo_case_reaches "$tmp/zoo/case-040" streaming-plus 75 "$tmp/run-040-fed"
zoo_case_reaches "$tmp/zoo/case-125" streaming-plus 63 "$tmp/run-125"
zoo_case_reaches "$tmp/zoo/case-109" streaming-plus 88 "$tmp/run-109"
zoo_case_reaches "$tmp/zoo/case-084" streaming 80 "$tmp/run-084s"
zoo_case_reaches "$tmp/zoo/case-053" streaming-plus 80 "$tmp/run-053"
zoo_case_reaches "$tmp/zoo/case-049" streaming-plus 60 "$tmp/run-049"
zoo_case_reaches "$tmp/zoo/case-015" streaming-plus 55 "$tmp/run-015"
zoo_case_reaches "$tmp/zoo/case-045" streaming-plus 85 "$tmp/run-045-wave"

"$sluice" zoo --seed 7 --count 181 --out "$tmp/zoo7" --quiet || { echo "FAIL zoo seed 7"; exit 1; }
zoo_case_reaches "$tmp/zoo7/case-018" streaming-plus 40 "$tmp/run7-018"
# the paper's policy had the same defect in its store check: 9.9%
zoo_case_reaches "$tmp/zoo7/case-018" streaming 40 "$tmp/run7-018s"
zoo_case_reaches "$tmp/zoo7/case-181" streaming-plus 50 "$tmp/run7-181"
zoo_case_reaches "$tmp/zoo7/case-161" streaming-plus 40 "$tmp/run7-161"
zoo_case_reaches "$tmp/zoo7/case-118" streaming-plus 70 "$tmp/run7-118"
zoo_case_reaches "$tmp/zoo7/case-108" streaming-plus 78 "$tmp/run7-108"
zoo_case_reaches "$tmp/zoo7/case-067" streaming-plus 88 "$tmp/run7-067"

"$sluice" zoo --seed 2 --count 174 --out "$tmp/zoo2" --quiet || { echo "FAIL zoo seed 2"; exit 1; }
zoo_case_reaches "$tmp/zoo2/case-111" streaming-plus 45 "$tmp/run2-111"
# partitions wait for their own node where a move over a 100 Mbps NIC
# would end later (input_worth_a_task()): 56.6 and 57.1% before
zoo_case_reaches "$tmp/zoo2/case-044" streaming-plus 70 "$tmp/run2-044"
zoo_case_reaches "$tmp/zoo2/case-145" streaming-plus 90 "$tmp/run2-145"
zoo_case_reaches "$tmp/zoo2/case-150" streaming-plus 75 "$tmp/run2-150"
zoo_case_reaches "$tmp/zoo2/case-155" streaming-plus 93 "$tmp/run2-155"
zoo_case_reaches "$tmp/zoo2/case-174" streaming-plus 95 "$tmp/run2-174"

"$sluice" zoo --seed 3 --count 198 --out "$tmp/zoo3" --quiet || { echo "FAIL zoo seed 3"; exit 1; }
zoo_case_reaches "$tmp/zoo3/case-198" streaming-plus 75 "$tmp/run3-198"
zoo_case_reaches "$tmp/zoo3/case-154" streaming-plus 80 "$tmp/run3-154"
zoo_case_reaches "$tmp/zoo3/case-054" streaming-plus 37 "$tmp/run3-054"
zoo_case_reaches "$tmp/zoo3/case-017" streaming-plus 88 "$tmp/run3-017"

# Runs that once beat their bound, which must hold. The set-up zoos: seed 1
# case 109 (a 900 s set-up): outputs left before the model had loaded,
# 117%; seed 7 case 124 (a 1,240 s set-up on a chain of GPU operators): the
# critical path added the set-ups after the row reached them, 101.8%.
within_bound() {
  local case=$1 out=$2
  "$sluice" sim "$case.ini" --cluster "$case.cluster.ini" --model streaming-plus --spill-bandwidth 500MB/s \
    --out "$out" --quiet >/dev/null 2>&1
  local pct
  pct=$(summary_field "$out" pct_of_bound)
  check "$(basename "$(dirname "$case")")/$(basename "$case") stays within its bound ($pct%)" \
    awk -v p="$pct" 'BEGIN { exit !(p > 0 && p <= 100.5) }'
}
"$sluice" zoo --seed 1 --count 109 --setups --out "$tmp/setups1" --quiet || { echo "FAIL set-up zoo seed 1"; exit 1; }
within_bound "$tmp/setups1/case-109" "$tmp/setups1-109"
"$sluice" zoo --seed 7 --count 167 --setups --out "$tmp/setups7" --quiet || { echo "FAIL set-up zoo seed 7"; exit 1; }
within_bound "$tmp/setups7/case-124" "$tmp/setups7-124"
# ... but no longer than the move would take: 62.5% waiting without limit
zoo_case_reaches "$tmp/setups7/case-167" streaming-plus 75 "$tmp/setups7-167"
# The plain zoo of seed 7, case 124: a 1 -> 16 map before three GPU
# operators; the critical path charged each the whole expansion of a
# source row in one task, 267.0 s, and the run took 245.7 s (108.7%).
within_bound "$tmp/zoo7/case-124" "$tmp/zoo7-124"
exit $((fails > 0))
