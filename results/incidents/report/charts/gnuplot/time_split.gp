set terminal svg size 960,500 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'Where_a_request_s_time_goes'
set output 'time_split.svg'
set xlabel ''
set ylabel 'mean time per request (ms)'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set xtics ('none (sim, 2 pods)' 0, 'held-tx:wait (sim, 2 pods)' 1, 'advisory-xact:try (sim, 2 pods)' 2, 'row-lease (sim, 2 pods)' 3, 'synchronized:wait (sim, 2 pods)' 4, 'none (sim, 2 pods)' 5, 'held-tx:wait (sim, 2 pods)' 6, 'advisory-xact:try (sim, 2 pods)' 7, 'advisory-xact:wait (sim, 2 pods)' 8, 'synchronized:wait (sim, 2 pods)' 9, 'none (sim, 2 pods)' 10, 'held-tx:wait (sim, 2 pods)' 11, 'none (real x0.1, 2 pods)' 12, 'held-tx:wait (real x0.1, 2 pods)' 13, 'advisory-xact:try (real x0.1, 2 pods)' 14, 'row-lease (real x0.1, 2 pods)' 15, 'synchronized:wait (real x0.1, 2 pods)' 16, 'none (real x0.1, 2 pods)' 17, 'held-tx:wait (real x0.1, 2 pods)' 18, 'advisory-xact:try (real x0.1, 2 pods)' 19, 'advisory-xact:wait (real x0.1, 2 pods)' 20, 'synchronized:wait (real x0.1, 2 pods)' 21, 'none (real x0.1, 2 pods)' 22, 'held-tx:wait (real x0.1, 2 pods)' 23)
set xtics rotate by 25 right
set xrange [-0.6:23.6]
set yrange [0:373.0489502349137]
plot 'gnuplot/split_0.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#bab0ac' title 'worker queue', 'gnuplot/split_1.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#e15759' title 'pool wait', 'gnuplot/split_2.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#f28e2b' title 'lock wait', 'gnuplot/split_3.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#4e79a7' title 'partner', 'gnuplot/split_4.dat' using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' fc rgb '#59a14f' title 'database', 'gnuplot/split_idle.dat' using ($1+0.38):($2/2):(0.07):($2/2) with boxxyerror fs pattern 4 border lc rgb 'black' fc rgb 'black' title 'connection held while idle'
