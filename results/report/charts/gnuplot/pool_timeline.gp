set terminal svg size 960,500 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'Pool_connections_over_time'
set output 'pool_timeline.svg'
set xlabel 'time since the run''s start (s)'
set ylabel 'connections / requests'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set xrange [0:16.2]
set yrange [0:219.64999999999998]
plot 'gnuplot/timeline_0.dat' using 1:2 with steps lw 2 lc rgb '#1f77b4' title 'none @ 200/s active', 'gnuplot/timeline_0.dat' using 1:3 with steps dt 2 lw 2 lc rgb '#1f77b4' title 'none @ 200/s pending', 'gnuplot/timeline_1.dat' using 1:2 with steps lw 2 lc rgb '#d62728' title 'held-tx:wait @ 200/s active', 'gnuplot/timeline_1.dat' using 1:3 with steps dt 2 lw 2 lc rgb '#d62728' title 'held-tx:wait @ 200/s pending', 'gnuplot/timeline_2.dat' using 1:2 with steps lw 2 lc rgb '#2ca02c' title 'advisory-xact:try @ 200/s active', 'gnuplot/timeline_2.dat' using 1:3 with steps dt 2 lw 2 lc rgb '#2ca02c' title 'advisory-xact:try @ 200/s pending', 'gnuplot/timeline_3.dat' using 1:2 with steps lw 2 lc rgb '#ff7f0e' title 'advisory-session:pooled @ 200/s active', 'gnuplot/timeline_3.dat' using 1:3 with steps dt 2 lw 2 lc rgb '#ff7f0e' title 'advisory-session:pooled @ 200/s pending', 'gnuplot/timeline_4.dat' using 1:2 with steps lw 2 lc rgb '#9467bd' title 'row-lease @ 200/s active', 'gnuplot/timeline_4.dat' using 1:3 with steps dt 2 lw 2 lc rgb '#9467bd' title 'row-lease @ 200/s pending', 'gnuplot/timeline_5.dat' using 1:2 with steps lw 2 lc rgb '#8c564b' title 'optimistic @ 200/s active', 'gnuplot/timeline_5.dat' using 1:3 with steps dt 2 lw 2 lc rgb '#8c564b' title 'optimistic @ 200/s pending', 10 with lines dt 3 lw 1.5 lc rgb 'black' title 'pool size'
