set terminal svg size 960,560 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'Successful_throughput_against_offered_load'
set output 'throughput.svg'
set xlabel ''
set ylabel 'ok throughput (requests/s)'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set xtics ('row-lease (sim)' 0, 'row-lease (real)' 1, 'row-lease:renew (sim)' 2, 'row-lease:renew (real)' 3, 'redis-lease (sim)' 4, 'redis-lease (real)' 5, 'redis-lease:fenced (sim)' 6, 'redis-lease:fenced (real)' 7, 'redis-lease:renew (sim)' 8, 'redis-lease:renew (real)' 9)
set xtics rotate by 25 right
set lmargin 18
set bmargin 9
set yrange [0:9.44]
set xrange [-0.6:9.6]
plot 'gnuplot/throughput_bars_0.dat' using 1:2:(0.6) with boxes fs solid 0.85 border lc rgb '#333333' fc rgb '#4e79a7' title 'sim', 'gnuplot/throughput_bars_1.dat' using 1:2:(0.6) with boxes fs solid 0.85 border lc rgb '#333333' fc rgb '#f28e2b' title 'real', 'gnuplot/throughput_values.dat' using 1:2:3 with labels offset 0,0.7 font ',10' notitle, 8 with lines dt 2 lw 1.5 lc rgb '#b00020' title 'offered'
