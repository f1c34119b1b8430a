# One run, from its timeline.csv: throughput, store memory and running tasks
# per operator over time, panels sharing the time axis, with a marker at
# every fault and rollback.
#
# Parameters (gnuplot -e "name=value; ..." before the script):
#   data       path of timeline.csv
#   out        output file
#   term       'png' (pngcairo) or 'svg'
#   title      one line over the figure (workload, model, engine, JCT)
#   opcols     column numbers of the running_<op> columns, space separated
#   opnames    their operator identifiers, same order
#   opgpu      1 for an operator that requests a GPU, 0 otherwise, same order
#   nodecols   column numbers of the store_bytes_<node> columns ('' when none)
#   nodegroups the group of each of them, 1-based (0: not known)
#   groupnames the groups' identifiers; budgets their store budget per node in
#              bytes (0: none), same order
#   evtimes    times of the markers; evlabels their texts, same order, one
#              word each with '~' for a blank and '|' between two events at
#              the same time ("lose:gpu.1|rollback:~1234~rows~un-delivered")
#   bound_rate the bound's steady rate in sink rows/s (0: no bound line)
#   gpu_slots  GPU slots of the cluster: the GPU operators' axis
#   mscale     bytes per memory unit (1e6 or 1e9) and munit its name
#
# sluice plot builds these from the CSV headers and summary.csv; the script
# never guesses a column by position, because the number of operators and
# nodes varies.

if (!exists("term")) term = 'png'
if (!exists("title")) title = ''
if (!exists("opgpu")) opgpu = ''
if (!exists("nodecols")) nodecols = ''
if (!exists("nodegroups")) nodegroups = ''
if (!exists("groupnames")) groupnames = ''
if (!exists("budgets")) budgets = ''
if (!exists("evtimes")) evtimes = ''
if (!exists("evlabels")) evlabels = ''
if (!exists("bound_rate")) bound_rate = 0
if (!exists("gpu_slots")) gpu_slots = 0
if (!exists("mscale")) mscale = 1e6
if (!exists("munit")) munit = 'MB'

# GPU operators get their own panel when there are some, on an axis of the
# GPU count: beside dozens of CPU tasks, four GPU tasks would be a flat line.
ngpu_ops = 0
do for [i=1:words(opgpu)] { ngpu_ops = ngpu_ops + (word(opgpu, i) eq '1') }
ncpu_ops = words(opcols) - ngpu_ops
panels = 2 + (ncpu_ops > 0) + (ngpu_ops > 0)

if (term eq 'svg') {
  set terminal svg size 1000,(panels * 280 + 60) dynamic noenhanced font 'Sans,11'
} else {
  set terminal pngcairo size 1000,(panels * 280 + 60) noenhanced font 'Sans,10'
}
set output out
set datafile separator ','
set datafile missing ''
# every ::1 skips the header row; columns are addressed by number
set grid
# The panels share fixed margins so their time axes line up; keys live in
# the right margin, wide enough for long operator names, never on the frame.
set lmargin at screen 0.09
set rmargin at screen 0.70
set key at screen 0.72, graph 1 left top vertical Left reverse
set multiplot layout panels,1 title title

# Markers: a dotted line through every panel at each fault and rollback,
# labelled in the first one. A rollback names the rows it took back from the
# sink: shown as such, never as a negative throughput.
blanks(s) = (strstrt(s, '~') == 0) ? s : s[1:strstrt(s, '~') - 1].' '.blanks(s[strstrt(s, '~') + 1:])
lines(s) = (strstrt(s, '|') == 0) ? blanks(s) : blanks(s[1:strstrt(s, '|') - 1])."\n".lines(s[strstrt(s, '|') + 1:])
do for [i=1:words(evtimes)] {
  set arrow i from word(evtimes, i)+0, graph 0 to word(evtimes, i)+0, graph 1 nohead dt 3 lw 1 lc rgb '#d62728'
  set label i lines(word(evlabels, i)) at word(evtimes, i)+0, graph 0.98 rotate by 90 right \
    offset -0.6, 0 front textcolor rgb '#d62728' font ',8'
}

set title 'throughput'
set ylabel 'rows/s'
set format x ''
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
if (bound_rate > 0) {
  plot data every ::1 using 1:4 with steps lw 1.5 lc rgb '#1f77b4' title 'delivered', \
       bound_rate with lines dt 2 lw 1.5 lc rgb '#2ca02c' title 'bound (steady rate)'
} else {
  plot data every ::1 using 1:4 with steps lw 1.5 lc rgb '#1f77b4' title 'delivered'
}
unset label

# One colour per node group; each group's budget per node dashed in it.
group_color(g) = word('#9467bd #ff7f0e #17becf #8c564b #e377c2 #7f7f7f #bcbd22 #1f77b4', (g - 1) % 8 + 1)
node_group(i) = (words(nodegroups) >= i) ? int(word(nodegroups, i)) : 0
first_of_group(i) = (i == 1 || node_group(i) != node_group(i - 1))
node_title(i) = node_group(i) > 0 ? word(groupnames, node_group(i)).' nodes' : 'nodes'
set title 'partition store per node'
set ylabel munit
if (words(nodecols) > 0 && words(budgets) > 0) {
  plot for [i=1:words(nodecols)] data every ::1 using 1:(column(int(word(nodecols,i)))/mscale) \
         with steps lw 1.2 lc rgb group_color(node_group(i) > 0 ? node_group(i) : 1) \
         title (first_of_group(i) ? node_title(i) : ''), \
       for [g=1:words(budgets)] (word(budgets, g) + 0 > 0 ? (word(budgets, g) + 0) / mscale : NaN) \
         with lines dt 2 lw 1.5 lc rgb group_color(g) title word(groupnames, g).' budget per node'
} else {
  plot data every ::1 using 1:($5/mscale) with steps lw 1.5 title 'all nodes'
}

set ylabel 'tasks'
set offsets 0, 0, graph 0.05, 0
is_gpu(i) = (words(opgpu) >= i) && (word(opgpu, i) eq '1')
last_panel_cpu = (ngpu_ops == 0)
if (ncpu_ops > 0) {
  set title 'running tasks, CPU operators'
  if (last_panel_cpu) { set xlabel 'time (s)'; set format x '%g' }
  set yrange [0:*]
  plot for [i=1:words(opcols)] data every ::1 using 1:(is_gpu(i) ? NaN : column(int(word(opcols,i)))) \
         with steps lw 1.5 title (is_gpu(i) ? '' : word(opnames,i))
}
if (ngpu_ops > 0) {
  set title 'running tasks, GPU operators'
  set xlabel 'time (s)'
  set format x '%g'
  # the axis spans the GPU count; autoscale only ever widens it
  if (gpu_slots > 0) { set yrange [0:gpu_slots<*]; set ytics gpu_slots > 8 ? ceil(gpu_slots / 8.) : 1 } \
  else { set yrange [0:*] }
  plot for [i=1:words(opcols)] data every ::1 using 1:(is_gpu(i) ? column(int(word(opcols,i))) : NaN) \
         with steps lw 1.5 title (is_gpu(i) ? word(opnames,i) : '')
}

unset multiplot
