# XY lines: one line per value column of one data file, against the first
# column (partition size, nodes, GPUs...). The paper's columns are dashed.
#
# Parameters (gnuplot -e "name=value; ..." before the script):
#   out, term      output file; 'png' (pngcairo) or 'svg'
#   data           CSV with a header row: x,series1,series2,...  (NaN = none)
#   paper          number of the first column holding the paper's numbers
#                  (default: none); those and the ones after it are dashed
#   title, xlabel, ylabel
#   logx, logy     log scale base for an axis (default 0: linear)

if (!exists("term")) term = 'png'
if (!exists("title")) title = ''
if (!exists("xlabel")) xlabel = ''
if (!exists("ylabel")) ylabel = ''
if (!exists("logx")) logx = 0
if (!exists("logy")) logy = 0
if (term eq 'svg') {
  set terminal svg size 800,480 dynamic noenhanced font 'Sans,11'
} else {
  set terminal pngcairo size 800,480 noenhanced font 'Sans,10'
}
set output out
set datafile separator ','
set datafile missing 'NaN'
set title title
set xlabel xlabel
set ylabel ylabel
set grid
set key below horizontal
if (logx > 0) { set logscale x logx }
if (logy > 0) { set logscale y logy } else { set yrange [0:*] }
stats data every ::1 using 1 nooutput
ncols = STATS_columns
if (!exists("paper")) paper = ncols + 1
plot for [i=2:paper-1] data using 1:i title columnhead(i) with linespoints lw 1.8 pt 7 ps 0.8 lt i - 1, \
     for [i=paper:ncols] data using 1:i title columnhead(i) with linespoints lw 1.5 dt 2 pt 6 ps 0.9 lt i - 1
