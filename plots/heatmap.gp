# Heat maps side by side, one panel per data file: a cell per (column, row)
# coloured by a value (JCT / bound, so panels of different scales share one
# colour scale) and labelled with its own text (the JCT in seconds, or OOM).
# Failed or OOM cells are grey.
#
# Parameters (gnuplot -e "name=value; ..." before the script):
#   out, term    output file; 'png' (pngcairo) or 'svg'
#   title        the figure's title
#   n            number of panels; data1..dataN their files, ptitle1..ptitleN
#                their titles (value() reads them, so paths may hold blanks)
#   cbmax        top of the colour scale; cblabel its name
#   width        figure width in pixels (default 430 per panel)
#
# Each data file is CSV with a header row:
#   col,row,xlabel,ylabel,color,label,oom
# col and row count from 0; row 0 is drawn at the top.

if (!exists("term")) term = 'png'
if (!exists("title")) title = ''
if (!exists("cbmax")) cbmax = 3
if (!exists("cblabel")) cblabel = 'JCT / bound'
# labels on cells darker than this colour value are white
if (!exists("dark")) dark = 0.72 * cbmax
# (NaN, an OOM or empty cell, is not dark; it is tested as text because
# gnuplot turns any arithmetic on a NaN column into a NaN label)
isdark(s) = (s eq 'NaN' || s eq '') ? 0 : (real(s) > dark)
if (!exists("width")) width = 430 * n + 120
if (term eq 'svg') {
  set terminal svg size width,470 dynamic noenhanced font 'Sans,11'
} else {
  set terminal pngcairo size width,470 noenhanced font 'Sans,10'
}
set output out
set datafile separator ','
set palette defined (0 '#ffffcc', 1 '#fed976', 2 '#fd8d3c', 3 '#e31a1c', 4 '#800026')
set cbrange [1:cbmax]
set cblabel cblabel
set tics nomirror scale 0
set xtics rotate by 0
unset key
set multiplot layout 1,n title title

do for [i=1:n] {
  f = value(sprintf('data%d', i))
  # stats keeps only points inside the current ranges: clear the last panel's
  set autoscale xy
  stats f every ::1 using 1:2 nooutput
  set xrange [-0.5:STATS_max_x + 0.5]
  set yrange [STATS_max_y + 0.5:-0.5]
  set title value(sprintf('ptitle%d', i))
  if (i < n) { unset colorbox } else { set colorbox }
  plot f every ::1 using 1:2:(0.5):(0.5):($7 == 1 ? NaN : $5) with boxxyerror fs solid 1.0 noborder fc palette, \
       f every ::1 using 1:($7 == 1 ? $2 : NaN):(0.5):(0.5) with boxxyerror fs solid 1.0 noborder fc rgb '#bdbdbd', \
       f every ::1 using 1:2:(isdark(strcol(5)) ? '' : strcol(6)):xtic(3):ytic(4) with labels tc rgb 'black', \
       f every ::1 using 1:2:(isdark(strcol(5)) ? strcol(6) : '') with labels tc rgb 'white'
}
unset multiplot
