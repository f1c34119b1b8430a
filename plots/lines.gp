# Lines over time: one line per data file (e.g. the throughput of several runs
# of one workload), with optional event markers and a reference line.
#
# Parameters (gnuplot -e "name=value; ..." before the script):
#   out, term    output file; 'png' (pngcairo) or 'svg'
#   n            number of lines; data1..dataN their CSV files (header row
#                first), ltitle1..ltitleN their titles (value() reads them,
#                so paths may hold blanks)
#   xcol, ycol   columns to draw (default 1 and 2)
#   xscale       divide x by this (e.g. 60 for minutes; default 1)
#   title, xlabel, ylabel
#   events       times (in x units, after xscale) of vertical markers,
#                space separated; evlabels their names, '_' for a blank
#   hline        a reference line at this y named hlabel

if (!exists("term")) term = 'png'
if (!exists("title")) title = ''
if (!exists("xlabel")) xlabel = 'time (s)'
if (!exists("ylabel")) ylabel = 'rows/s'
if (!exists("xcol")) xcol = 1
if (!exists("ycol")) ycol = 2
if (!exists("xscale")) xscale = 1
if (!exists("events")) events = ''
if (!exists("evlabels")) evlabels = ''
if (!exists("hline")) hline = NaN
if (!exists("hlabel")) hlabel = ''
if (term eq 'svg') {
  set terminal svg size 900,480 dynamic noenhanced font 'Sans,11'
} else {
  set terminal pngcairo size 900,480 noenhanced font 'Sans,10'
}
set output out
set datafile separator ','
set title title
set xlabel xlabel
set ylabel ylabel
set grid
set key below horizontal
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set autoscale xfix
do for [i=1:words(events)] {
  e = word(events, i) + 0
  set arrow i from e, graph 0 to e, graph 1 nohead dt 3 lw 1.2 lc rgb '#555555'
  if (words(evlabels) >= i) {
    # (a bare 'l' would read as the keyword 'left': name the text explicitly)
    evtext = word(evlabels, i)
    evtext = (evtext eq '_') ? '' : evtext
    set label i sprintf('%s', evtext) at e, graph 0.97 offset 0.5, 0 left font ',9'
  }
}
plot for [i=1:n] value(sprintf('data%d', i)) every ::1 using (column(xcol) / xscale):(column(ycol)) \
       with lines lw 1.6 title value(sprintf('ltitle%d', i)), \
     hline with lines dt 2 lw 1.5 lc rgb '#d62728' title hlabel
