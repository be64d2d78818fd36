set terminal svg size 960,680 dynamic noenhanced font 'Helvetica,12' background rgb 'white' name 'Successful_throughput_against_offered_load'
set output 'throughput.svg'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key top left Left reverse font ',10' samplen 2 noautotitle
set multiplot layout 2,3 margins 0.07,0.93,0.075,0.955 spacing 0.12,0.120
set xrange [0:21]
set yrange [0:24]
set xlabel 'offered /s'
set ylabel 'ok /s'
set title 'none' offset 0,-0.5
plot 'gnuplot/throughput_1.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_2.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_3.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_4.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_5.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, x with lines dt 3 lc rgb '#777777' title 'offered = ok', 'gnuplot/throughput_0.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#1f77b4' title 'ok/s'
set title 'held-tx:wait' offset 0,-0.5
plot 'gnuplot/throughput_0.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_2.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_3.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_4.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_5.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, x with lines dt 3 lc rgb '#777777' title 'offered = ok', 'gnuplot/throughput_1.dat' using 1:3 with linespoints dt 2 lw 1.5 pt 2 lc rgb '#d62728' title 'ceiling', 'gnuplot/throughput_1.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#d62728' title 'ok/s'
set title 'advisory-xact:try' offset 0,-0.5
plot 'gnuplot/throughput_0.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_1.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_3.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_4.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_5.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, x with lines dt 3 lc rgb '#777777' title 'offered = ok', 'gnuplot/throughput_2.dat' using 1:3 with linespoints dt 2 lw 1.5 pt 2 lc rgb '#2ca02c' title 'ceiling', 'gnuplot/throughput_2.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#2ca02c' title 'ok/s'
set title 'advisory-session:pooled' offset 0,-0.5
plot 'gnuplot/throughput_0.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_1.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_2.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_4.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_5.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, x with lines dt 3 lc rgb '#777777' title 'offered = ok', 'gnuplot/throughput_3.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#ff7f0e' title 'ok/s'
set title 'row-lease' offset 0,-0.5
plot 'gnuplot/throughput_0.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_1.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_2.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_3.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_5.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, x with lines dt 3 lc rgb '#777777' title 'offered = ok', 'gnuplot/throughput_4.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#9467bd' title 'ok/s'
set title 'optimistic' offset 0,-0.5
plot 'gnuplot/throughput_0.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_1.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_2.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_3.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/throughput_4.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, x with lines dt 3 lc rgb '#777777' title 'offered = ok', 'gnuplot/throughput_5.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#8c564b' title 'ok/s'
unset multiplot
