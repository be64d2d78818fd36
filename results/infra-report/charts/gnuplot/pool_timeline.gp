set terminal svg size 960,2000 dynamic noenhanced font 'Helvetica,12' background rgb 'white' name 'Pool_connections_over_time'
set output 'pool_timeline.svg'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key top left Left reverse font ',10' samplen 2 noautotitle
set multiplot layout 6,3 margins 0.07,0.93,0.025,0.985 spacing 0.12,0.040
set xlabel 'time (s)' offset 0,0.6
set ylabel 'connections'
set ytics nomirror
set y2tics
set y2label 'pending' offset -1,0
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:16.200000000000003]
set title 'advisory-session:pinned (sim)' offset 0,-0.5
plot 'gnuplot/timeline_0.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_0.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'advisory-session:pooled (sim)' offset 0,-0.5
plot 'gnuplot/timeline_1.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_1.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:76.95]
set title 'advisory-xact:try (sim)' offset 0,-0.5
plot 'gnuplot/timeline_2.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_2.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'row-lease (sim)' offset 0,-0.5
plot 'gnuplot/timeline_3.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_3.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'row-lease:renew (sim)' offset 0,-0.5
plot 'gnuplot/timeline_4.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_4.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'redis-lease (sim)' offset 0,-0.5
plot 'gnuplot/timeline_5.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_5.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'redis-lease:fenced (sim)' offset 0,-0.5
plot 'gnuplot/timeline_6.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_6.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'redis-lease:renew (sim)' offset 0,-0.5
plot 'gnuplot/timeline_7.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_7.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:13.5]
set title 'advisory-session:pinned (real)' offset 0,-0.5
plot 'gnuplot/timeline_8.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_8.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'advisory-session:pooled (real)' offset 0,-0.5
plot 'gnuplot/timeline_9.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_9.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:75.60000000000001]
set title 'advisory-xact:try (real)' offset 0,-0.5
plot 'gnuplot/timeline_10.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_10.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'row-lease (real)' offset 0,-0.5
plot 'gnuplot/timeline_11.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_11.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'row-lease:renew (real)' offset 0,-0.5
plot 'gnuplot/timeline_12.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_12.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'redis-lease (real)' offset 0,-0.5
plot 'gnuplot/timeline_13.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_13.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'redis-lease:fenced (real)' offset 0,-0.5
plot 'gnuplot/timeline_14.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_14.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
set xrange [0:*]
set yrange [0:13.5]
set y2range [0:1]
set title 'redis-lease:renew (real)' offset 0,-0.5
plot 'gnuplot/timeline_15.dat' using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', 10 with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size 10', 'gnuplot/timeline_15.dat' using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'
unset multiplot
