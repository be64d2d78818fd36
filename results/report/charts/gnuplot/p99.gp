set terminal svg size 960,500 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'p99_latency_against_offered_load'
set output 'p99.svg'
set xlabel 'offered load (requests/s)'
set ylabel 'p99 latency (ms)'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set yrange [0:*]
set xrange [0:*]
plot 'gnuplot/p99_0.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#1f77b4' title 'none', 'gnuplot/p99_1.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#d62728' title 'held-tx:wait', 'gnuplot/p99_2.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#2ca02c' title 'advisory-xact:try', 'gnuplot/p99_3.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#ff7f0e' title 'advisory-session:pooled', 'gnuplot/p99_4.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#9467bd' title 'row-lease', 'gnuplot/p99_5.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#8c564b' title 'optimistic'
