set terminal svg size 960,340 dynamic noenhanced font 'Helvetica,14' background rgb 'white' name 'The_captured_race_on_a_time_axis'
set output 'race.svg'
set xlabel 'time since the run''s start (ms)'
set ylabel ''
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#555555'
set tics nomirror
set key outside right top vertical Left reverse noautotitle
set xrange [432.80240131:1560.85654569]
set yrange [-0.7:2.1]
set ytics ('request 11' 1, 'request 10' 0)
set grid noytics
set object 1 rect from 499.120794,-0.6 to 1033.199923,1.6 behind fc rgb '#fde0e0' fs solid 1.0 noborder
set label 2 'both requests inside the critical section' at 766.1603584999999,1.85 center tc rgb '#b00020'
plot 'gnuplot/race_0.dat' using (($1+$2)/2):3:(($2-$1)/2):(0.3) with boxxyerror fs solid 0.9 border lc rgb '#333333' fc rgb '#59a14f' title 'pool wait / database', 'gnuplot/race_1.dat' using (($1+$2)/2):3:(($2-$1)/2):(0.3) with boxxyerror fs solid 0.9 border lc rgb '#333333' fc rgb '#e15759' title 'lock', 'gnuplot/race_2.dat' using (($1+$2)/2):3:(($2-$1)/2):(0.3) with boxxyerror fs solid 0.9 border lc rgb '#333333' fc rgb '#f28e2b' title 'partner unlink', 'gnuplot/race_3.dat' using (($1+$2)/2):3:(($2-$1)/2):(0.3) with boxxyerror fs solid 0.9 border lc rgb '#333333' fc rgb '#4e79a7' title 'partner link'
