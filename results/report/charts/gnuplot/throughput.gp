set terminal svg size 960,500 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'Successful_throughput_against_offered_load'
set output 'throughput.svg'
set xlabel 'offered load (requests/s)'
set ylabel 'ok throughput (requests/s)'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set xrange [0:22]
set yrange [0:25]
plot 'gnuplot/throughput_0.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#1f77b4' title 'none', \
'gnuplot/throughput_1.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#d62728' title 'held-tx:wait', \
'gnuplot/throughput_1.dat' using 1:3 with linespoints dt 2 lw 1.5 pt 2 lc rgb '#d62728' title 'held-tx:wait ceiling', \
'gnuplot/throughput_2.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#2ca02c' title 'advisory-xact:try', \
'gnuplot/throughput_2.dat' using 1:3 with linespoints dt 2 lw 1.5 pt 2 lc rgb '#2ca02c' title 'advisory-xact:try ceiling', \
'gnuplot/throughput_3.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#ff7f0e' title 'advisory-session:pooled', \
'gnuplot/throughput_4.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#9467bd' title 'row-lease', \
'gnuplot/throughput_5.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#8c564b' title 'optimistic', \
x with lines dt 3 lc rgb '#999999' title 'offered = ok'
