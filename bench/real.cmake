# strategy_bench: one lock acquire + release per strategy through the real
# world's pool against PostgreSQL (LOCKBENCH_BENCH_DB), at 1 and 4 threads.
# bench/pgbench_compare.sh sets it against pgbench running the same statements.
if(TARGET lockbench_real)
  add_executable(strategy_bench ${CMAKE_CURRENT_LIST_DIR}/strategy_bench.cpp)
  lockbench_target(strategy_bench)
  target_link_libraries(strategy_bench PRIVATE lockbench_real benchmark::benchmark)
endif()
# pool_rate: the same pairs as BM_row_lease, counted as pgbench counts them
# (N threads, fixed time, every finished pair): bench/pgbench_compare.sh uses it.
if(TARGET lockbench_real)
  add_executable(pool_rate ${CMAKE_CURRENT_LIST_DIR}/pool_rate.cpp)
  lockbench_target(pool_rate)
  target_link_libraries(pool_rate PRIVATE lockbench_real)
endif()
