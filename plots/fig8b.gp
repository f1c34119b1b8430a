# Fig. 8b: one epoch of Stable Diffusion pre-training per setup, in two
# panels side by side: run time (hours) and cost (dollars), ours solid
# beside the paper's hatched.
#
# Parameters (gnuplot -e "name=value; ..." before the script):
#   out, term  output file; 'png' (pngcairo) or 'svg'
#   data       CSV with a header row:
#              setup,ours hours,paper hours,ours dollars,paper dollars (NaN = none)
#   title

if (!exists("term")) term = 'png'
if (!exists("title")) title = ''
if (term eq 'svg') {
  set terminal svg size 1000,480 dynamic noenhanced font 'Sans,11'
} else {
  set terminal pngcairo size 1000,480 noenhanced font 'Sans,10'
}
set output out
set datafile separator ','
set datafile missing 'NaN'
set style data histograms
set style histogram clustered gap 1
set boxwidth 0.9
set grid ytics
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set key top left
# bar labels: row r is centred on x = r; two bars of width 1/3 with gap 1
fmtv(v) = v != v ? '' : (abs(v) >= 1000 ? sprintf('%.1fk', v / 1000) : sprintf('%.1f', v))

set multiplot layout 1,2 title title
set title 'run time (h)'
plot data using 2:xtic(1) title columnhead(2) fs solid 0.85 lt 1, \
     '' using 3 title columnhead(3) fs pattern 4 lt 2, \
     '' using ($0 - 1 - 1 / 6.0):2:(fmtv($2)) with labels offset 0, 0.6 font ',8' notitle, \
     '' using ($0 - 1 + 1 / 6.0):3:(fmtv($3)) with labels offset 0, 0.6 font ',8' notitle
set title 'cost ($)'
plot data using 4:xtic(1) title columnhead(4) fs solid 0.85 lt 1, \
     '' using 5 title columnhead(5) fs pattern 4 lt 2, \
     '' using ($0 - 1 - 1 / 6.0):4:(fmtv($4)) with labels offset 0, 0.6 font ',8' notitle, \
     '' using ($0 - 1 + 1 / 6.0):5:(fmtv($5)) with labels offset 0, 0.6 font ',8' notitle
unset multiplot
