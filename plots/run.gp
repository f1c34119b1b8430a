# One run, from its timeline.csv: throughput, store memory and running tasks
# per operator over time, three panels sharing the time axis.
#
# Parameters (gnuplot -e "name=value; ..." before the script):
#   data     path of timeline.csv
#   out      output file
#   term     'png' (pngcairo) or 'svg'
#   title    one line over the figure (workload, model, engine, JCT)
#   opcols   column numbers of the running_<op> columns, space separated
#   opnames  their operator names, same order (spaces inside names made '_')
#   nodecols column numbers of the store_node<N> columns ('' when none)
#   budget   store budget per node in bytes (0: no budget line)
#   mscale   bytes per memory unit (1e6 or 1e9) and munit its name
#
# sluice plot builds these from the CSV headers; the script never guesses a
# column by position, because the number of operators and nodes varies.

if (!exists("term")) term = 'png'
if (!exists("title")) title = ''
if (!exists("nodecols")) nodecols = ''
if (!exists("budget")) budget = 0
if (!exists("mscale")) mscale = 1e6
if (!exists("munit")) munit = 'MB'

if (term eq 'svg') {
  set terminal svg size 900,900 dynamic noenhanced font 'Sans,11'
} else {
  set terminal pngcairo size 900,900 noenhanced font 'Sans,10'
}
set output out
set datafile separator ','
# every ::1 skips the header row; columns are addressed by number
set grid
set key outside right top vertical
set lmargin 10
set rmargin 22
set multiplot layout 3,1 title title

set title 'throughput'
set ylabel 'rows/s'
set format x ''
plot data every ::1 using 1:3 with steps lw 1.5 lc rgb '#1f77b4' title 'delivered'

set title 'partition store'
set ylabel munit
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0   # room above the budget line
if (budget > 0) {
  plot for [i=1:words(nodecols)] data every ::1 using 1:(column(int(word(nodecols,i)))/mscale) \
         with steps lw 1.2 title sprintf('node %d', i-1), \
       budget/mscale with lines dt 2 lw 1.5 lc rgb '#d62728' title 'budget per node'
} else {
  plot data every ::1 using 1:($4/mscale) with steps lw 1.5 title 'all nodes'
}

set title 'running tasks'
set offsets 0, 0, graph 0.05, 0
set ylabel 'tasks'
set xlabel 'time (s)'
set format x '%g'
plot for [i=1:words(opcols)] data every ::1 using 1:(column(int(word(opcols,i)))) \
       with steps lw 1.5 title word(opnames,i)

unset multiplot
