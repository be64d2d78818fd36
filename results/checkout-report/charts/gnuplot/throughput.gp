set terminal svg size 960,560 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'Successful_throughput_against_offered_load'
set output 'throughput.svg'
set xlabel ''
set ylabel 'ok throughput (requests/s)'
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set xtics ('none (sim)' 0, 'none (real x0.1)' 1, 'held-tx:wait (sim)' 2, 'held-tx:wait (real x0.1)' 3, 'advisory-xact:try (sim)' 4, 'advisory-xact:try (real x0.1)' 5, 'advisory-session:pooled (sim)' 6, 'advisory-session:pooled (real x0.1)' 7, 'optimistic (sim)' 8, 'optimistic (real x0.1)' 9, 'split-tx (sim)' 10, 'split-tx (real x0.1)' 11, 'after-commit (sim)' 12, 'after-commit (real x0.1)' 13, 'outbox (sim)' 14, 'outbox (real x0.1)' 15)
set xtics rotate by 25 right
set lmargin 18
set bmargin 9
set yrange [0:10.596187666011577]
set xrange [-0.6:15.6]
plot 'gnuplot/throughput_bars_0.dat' using 1:2:(0.6) with boxes fs solid 0.85 border lc rgb '#333333' fc rgb '#4e79a7' title 'sim', 'gnuplot/throughput_bars_1.dat' using 1:2:(0.6) with boxes fs solid 0.85 border lc rgb '#333333' fc rgb '#f28e2b' title 'real x0.1', 'gnuplot/throughput_values.dat' using 1:2:3 with labels offset 0,0.7 font ',10' notitle, 'gnuplot/throughput_marks.dat' using ($1-0.3):2:(0.6):(0) with vectors nohead lw 3 lc rgb 'black' title 'Little''s-law ceiling', 8 with lines dt 2 lw 1.5 lc rgb '#b00020' title 'offered'
