set terminal svg size 960,500 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'Where_a_request_s_time_goes'
set output 'time_split.svg'
set xlabel ''
set ylabel 'mean time per request (ms)'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set xtics ('row-lease (sim)' 0, 'row-lease:renew (sim)' 1, 'redis-lease (sim)' 2, 'redis-lease:fenced (sim)' 3, 'redis-lease:renew (sim)' 4, 'row-lease (real)' 5, 'row-lease:renew (real)' 6, 'redis-lease (real)' 7, 'redis-lease:fenced (real)' 8, 'redis-lease:renew (real)' 9)
set xtics rotate by 25 right
set xrange [-0.6:9.6]
set yrange [0:209.51346619105956]
plot 'gnuplot/split_0.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#bab0ac' title 'worker queue', 'gnuplot/split_1.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#e15759' title 'pool wait', 'gnuplot/split_2.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#f28e2b' title 'lock wait', 'gnuplot/split_3.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#4e79a7' title 'partner', 'gnuplot/split_4.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#59a14f' title 'database', 'gnuplot/split_idle.dat' using ($1+0.38):($2/2):(0.07):($2/2) with boxxyerror fs pattern 4 border lc rgb 'black' fc rgb 'black' title 'connection held while idle'
