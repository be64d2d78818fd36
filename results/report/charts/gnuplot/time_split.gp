set terminal svg size 960,500 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'Where_a_request_s_time_goes'
set output 'time_split.svg'
set xlabel ''
set ylabel 'mean time per request (ms)'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set xtics ('none (sim)' 0, 'held-tx:wait (sim)' 1, 'advisory-xact:try (sim)' 2, 'advisory-session:pooled (sim)' 3, 'row-lease (sim)' 4, 'optimistic (sim)' 5, 'none (real x0.1)' 6, 'held-tx:wait (real x0.1)' 7, 'advisory-xact:try (real x0.1)' 8, 'advisory-session:pooled (real x0.1)' 9, 'row-lease (real x0.1)' 10, 'optimistic (real x0.1)' 11, 'row-lease:fenced (real x0.1, 2 pods)' 12)
set xtics rotate by 25 right
set xrange [-0.6:12.6]
set yrange [0:19249.938236690392]
plot 'gnuplot/split_0.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#bab0ac' title 'worker queue', 'gnuplot/split_1.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#e15759' title 'pool wait', 'gnuplot/split_2.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#f28e2b' title 'lock wait', 'gnuplot/split_3.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#4e79a7' title 'partner', 'gnuplot/split_4.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#59a14f' title 'database', 'gnuplot/split_idle.dat' using ($1+0.38):($2/2):(0.07):($2/2) with boxxyerror fs pattern 4 border lc rgb 'black' fc rgb 'black' title 'connection held while idle'
