# Capacity search: cost per run against JCT for every simulated shape, one
# colour per model, the Pareto front (nothing both cheaper and faster) as a
# line, shapes that meet the target filled, and the deadline if one was set.
#
# Parameters (gnuplot -e "name=value; ..." before the script):
#   out, term      output file; 'png' (pngcairo) or 'svg'
#   data           shapes.csv of `sluice capacity` (header row)
#   front          pareto.csv: per model a block jct_s,cost_per_run,shape sorted by JCT
#   nmodels        number of models; model1, model2, ... their names
#   deadline       JCT target in seconds (a throughput target as the JCT it implies), 0 = none
#   title

if (!exists("term")) term = 'png'
if (!exists("title")) title = ''
if (!exists("deadline")) deadline = 0
if (!exists("nmodels")) nmodels = 1
if (term eq 'svg') {
  set terminal svg size 800,520 dynamic noenhanced font 'Sans,11'
} else {
  set terminal pngcairo size 800,520 noenhanced font 'Sans,10'
}
set output out
set datafile separator ','
set datafile missing ''
set title title
# Hours for long jobs, minutes for short ones. sluice capacity draws only
# when some shape was simulated to the end; a file without one still draws.
stats data every ::1 using 9 nooutput
unit = !exists("STATS_max") ? 60. : (STATS_max > 7200) ? 3600. : 60.
set xlabel (unit == 3600. ? 'JCT (hours)' : 'JCT (minutes)')
set ylabel 'cost per run ($)'
set grid
set key below horizontal
set autoscale fix
set offsets graph 0.08, graph 0.08, graph 0.08, graph 0.08

# Columns of shapes.csv (see capacity/search.h).
col_jct = 9; col_cost = 12; col_model = 6; col_status = 7; col_meets = 13; col_pareto = 14
model_name(i) = value(sprintf("model%d", i))
is(i) = strcol(col_model) eq model_name(i) && strcol(col_status) eq 'simulated'
pt_meets(i) = (is(i) && column(col_meets) == 1) ? column(col_cost) : NaN
pt_miss(i) = (is(i) && column(col_meets) == 0) ? column(col_cost) : NaN

if (deadline > 0) { set arrow from deadline / unit, graph 0 to deadline / unit, graph 1 nohead dt 2 lc rgb '#888888' }

plot for [i=1:nmodels] data every ::1 using (column(col_jct) / unit):(pt_meets(i)) \
       title model_name(i).' (meets the target)' with points pt 7 ps 0.9 lc i, \
     for [i=1:nmodels] data every ::1 using (column(col_jct) / unit):(pt_miss(i)) \
       title model_name(i).' (misses)' with points pt 6 ps 0.9 lc i, \
     for [i=1:nmodels] front index (i - 1) using ($1 / unit):2 \
       title model_name(i).' Pareto front' with linespoints lw 1.5 pt 1 ps 1.6 lc i
