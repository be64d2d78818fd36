set terminal svg size 960,500 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'Where_a_request_s_time_goes'
set output 'time_split.svg'
set xlabel ''
set ylabel 'mean time per request (ms)'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set xtics ('advisory-session:pinned (sim)' 0, 'advisory-session:pooled (sim)' 1, 'advisory-xact:try (sim)' 2, 'row-lease (sim)' 3, 'row-lease:renew (sim)' 4, 'redis-lease (sim)' 5, 'redis-lease:fenced (sim)' 6, 'redis-lease:renew (sim)' 7, 'advisory-session:pinned (real)' 8, 'advisory-session:pooled (real)' 9, 'advisory-xact:try (real)' 10, 'row-lease (real)' 11, 'row-lease:renew (real)' 12, 'redis-lease (real)' 13, 'redis-lease:fenced (real)' 14, 'redis-lease:renew (real)' 15)
set xtics rotate by 25 right
set xrange [-0.6:15.6]
set yrange [0:6220.010726866841]
plot 'gnuplot/split_0.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#bab0ac' title 'worker queue', 'gnuplot/split_1.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#e15759' title 'pool wait', 'gnuplot/split_2.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#f28e2b' title 'lock wait', 'gnuplot/split_3.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#4e79a7' title 'partner', 'gnuplot/split_4.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#59a14f' title 'database', 'gnuplot/split_idle.dat' using ($1+0.38):($2/2):(0.07):($2/2) with boxxyerror fs pattern 4 border lc rgb 'black' fc rgb 'black' title 'connection held while idle'
