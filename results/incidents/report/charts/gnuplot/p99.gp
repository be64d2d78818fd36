set terminal svg size 960,560 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'p99_latency_against_offered_load'
set output 'p99.svg'
set xlabel ''
set ylabel 'p99 latency (ms)'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set xtics ('none (sim, 2 pods)' 0, 'none (sim, 2 pods)' 1, 'none (sim, 2 pods)' 2, 'none (real x0.1, 2 pods)' 3, 'none (real x0.1, 2 pods)' 4, 'none (real x0.1, 2 pods)' 5, 'held-tx:wait (sim, 2 pods)' 6, 'held-tx:wait (sim, 2 pods)' 7, 'held-tx:wait (sim, 2 pods)' 8, 'held-tx:wait (real x0.1, 2 pods)' 9, 'held-tx:wait (real x0.1, 2 pods)' 10, 'held-tx:wait (real x0.1, 2 pods)' 11, 'advisory-xact:try (sim, 2 pods)' 12, 'advisory-xact:try (sim, 2 pods)' 13, 'advisory-xact:try (real x0.1, 2 pods)' 14, 'advisory-xact:try (real x0.1, 2 pods)' 15, 'row-lease (sim, 2 pods)' 16, 'row-lease (real x0.1, 2 pods)' 17, 'synchronized:wait (sim, 2 pods)' 18, 'synchronized:wait (sim, 2 pods)' 19, 'synchronized:wait (real x0.1, 2 pods)' 20, 'synchronized:wait (real x0.1, 2 pods)' 21, 'advisory-xact:wait (sim, 2 pods)' 22, 'advisory-xact:wait (real x0.1, 2 pods)' 23)
set xtics rotate by 25 right
set lmargin 18
set bmargin 9
set yrange [0:535.3177734]
set xrange [-0.6:23.6]
plot 'gnuplot/p99_bars_0.dat' using 1:2:(0.6) with boxes fs solid 0.85 border lc rgb '#333333' fc rgb '#4e79a7' title 'sim, 2 pods', 'gnuplot/p99_bars_1.dat' using 1:2:(0.6) with boxes fs solid 0.85 border lc rgb '#333333' fc rgb '#f28e2b' title 'real x0.1, 2 pods', 'gnuplot/p99_values.dat' using 1:2:3 with labels offset 0,0.7 font ',10' notitle
