set terminal svg size 960,680 dynamic noenhanced font 'Helvetica,12' background rgb 'white' name 'p99_latency_against_offered_load'
set output 'p99.svg'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key top left Left reverse font ',10' samplen 2 noautotitle
set multiplot layout 2,3 margins 0.07,0.93,0.075,0.955 spacing 0.12,0.120
set xrange [0:*]
set xlabel 'offered /s' offset 0,0.6
set ylabel 'p99 ms'
set yrange [0:65966.90143849999]
set title 'none' offset 0,-0.5
plot 'gnuplot/p99_1.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_2.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_3.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_4.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_5.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_0_w0.dat' using 1:2 with points pt 4 ps 1.4 lw 2 lc rgb 'black' title 'real x0.1', 'gnuplot/p99_0.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#1f77b4' title 'p99'
set title 'held-tx:wait' offset 0,-0.5
plot 'gnuplot/p99_0.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_2.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_3.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_4.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_5.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_1_w0.dat' using 1:2 with points pt 4 ps 1.4 lw 2 lc rgb 'black' title 'real x0.1', 'gnuplot/p99_1.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#d62728' title 'p99'
set title 'advisory-xact:try' offset 0,-0.5
plot 'gnuplot/p99_0.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_1.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_3.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_4.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_5.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_2_w0.dat' using 1:2 with points pt 4 ps 1.4 lw 2 lc rgb 'black' title 'real x0.1', 'gnuplot/p99_2.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#2ca02c' title 'p99'
set title 'advisory-session:pooled' offset 0,-0.5
plot 'gnuplot/p99_0.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_1.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_2.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_4.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_5.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_3_w0.dat' using 1:2 with points pt 4 ps 1.4 lw 2 lc rgb 'black' title 'real x0.1', 'gnuplot/p99_3.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#ff7f0e' title 'p99'
set title 'row-lease' offset 0,-0.5
plot 'gnuplot/p99_0.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_1.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_2.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_3.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_5.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_4_w0.dat' using 1:2 with points pt 4 ps 1.4 lw 2 lc rgb 'black' title 'real x0.1', 'gnuplot/p99_4.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#9467bd' title 'p99'
set title 'optimistic' offset 0,-0.5
plot 'gnuplot/p99_0.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_1.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_2.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_3.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_4.dat' using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, 'gnuplot/p99_5_w0.dat' using 1:2 with points pt 4 ps 1.4 lw 2 lc rgb 'black' title 'real x0.1', 'gnuplot/p99_5.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '#8c564b' title 'p99'
unset multiplot
