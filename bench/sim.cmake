# sim_bench: the seeds' incident in the simulator, all six strategies, as a
# Google Benchmark binary (events/s and requests/s in its counters).
if(TARGET lockbench_sim)
  add_executable(sim_bench ${CMAKE_CURRENT_LIST_DIR}/sim_bench.cpp)
  lockbench_target(sim_bench)
  target_link_libraries(sim_bench PRIVATE lockbench_sim benchmark::benchmark lockbench_malloc)
endif()
