# Clustered bars: one cluster per row of the data file, one bar per value
# column. Columns whose header starts with 'paper' are hatched, ours solid.
#
# Parameters (gnuplot -e "name=value; ..." before the script):
#   out, term     output file; 'png' (pngcairo) or 'svg'
#   data          CSV with a header row: label,series1,series2,...  (NaN = none)
#   paper         number of the first column holding the paper's numbers
#                 (default: none); those and the ones after it are hatched
#   title, ylabel
#   ymax          top of the y axis (default: automatic)
#   hline         a reference line at this y (default none) named hlabel
#   width         figure width in pixels (default 800)

if (!exists("term")) term = 'png'
if (!exists("title")) title = ''
if (!exists("ylabel")) ylabel = ''
if (!exists("width")) width = 800
if (term eq 'svg') {
  set terminal svg size width,480 dynamic noenhanced font 'Sans,11'
} else {
  set terminal pngcairo size width,480 noenhanced font 'Sans,10'
}
set output out
set datafile separator ','
set datafile missing 'NaN'
set title title
set ylabel ylabel
set yrange [0:*]
if (exists("ymax")) set yrange [0:ymax]
set grid ytics
set key outside right top vertical
set style data histograms
set style histogram clustered gap 1
set boxwidth 0.9
set xtics nomirror rotate by -20
set bmargin 7
# value labels over the bars: row r (r = $0 - 1 under the header line) is centred
# on x = r, its bars 1 / ncols wide with gap 1;
# three significant digits are enough to read
fmtv(v) = v != v ? '' : (abs(v) >= 100 ? sprintf('%.0f', v) : sprintf('%.3g', v))
# the number of columns, from the header row
stats data every ::1 using 0 nooutput
ncols = STATS_columns
if (!exists("paper")) paper = ncols + 1
if (!exists("hline")) hline = NaN
if (!exists("hlabel")) hlabel = ''
# one series: gnuplot draws a one-bar cluster off its tic; a one-bar stack is centred
if (ncols == 2) { set style histogram rowstacked; set boxwidth 0.5 }
set offsets 0, 0, graph 0.1, 0
plot for [i=2:paper-1] data using i:xtic(1) title columnhead(i) fs solid 0.85 lt i - 1, \
     for [i=paper:ncols] data using i:xtic(1) title columnhead(i) fs pattern 4 lt i - 1, \
     hline with lines dt 2 lw 1.5 lc rgb '#d62728' title hlabel, \
     for [i=2:ncols] data using ($0 - 1 + (i - 2 - (ncols - 2) / 2.0) / ncols):(column(i)):(fmtv(column(i))) \
       with labels offset 0, 0.6 font ',8' notitle
