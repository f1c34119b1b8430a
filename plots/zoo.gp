# The workload zoo: the distribution of JCT as a percentage of the bound
# (bound / JCT x 100), one cumulative curve per model. A curve further
# right is better; nothing should cross the dashed line at 100%, the bound.
#
# Parameters (gnuplot -e "name=value; ..." before the script):
#   out, term    output file; 'png' (pngcairo) or 'svg'
#   n            number of curves; data1..dataN their CSV files (header row
#                first; columns pct_of_bound, fraction of cases at or below
#                it, sorted), ltitle1..ltitleN their titles
#   title
#   xmax         right end of the x axis (default 110)

if (!exists("term")) term = 'png'
if (!exists("title")) title = 'workload zoo'
if (!exists("xmax")) xmax = 110
if (term eq 'svg') {
  set terminal svg size 900,520 dynamic noenhanced font 'Sans,11'
} else {
  set terminal pngcairo size 900,520 noenhanced font 'Sans,10'
}
set output out
set datafile separator ','
set title title
set xlabel '% of bound (bound / JCT; an incomplete run counts as 0)'
set ylabel 'fraction of cases at or below'
set grid
set key top left
set xrange [0:xmax]
set yrange [0:1]
set xtics 10
set ytics 0.1
set arrow 1 from 100, graph 0 to 100, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'bound' at 100, graph 0.03 right offset -0.5, 0 tc rgb '#d62728'
plot for [i=1:n] value(sprintf('data%d', i)) every ::1 using 1:2 \
       with steps lw 1.8 title value(sprintf('ltitle%d', i))
