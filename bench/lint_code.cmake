# lint_code_bench: lint --code over generated Java sources (10,000 files by
# default), on every core; prints files/s and where the time goes.
if(TARGET lockbench_lint_code)
  add_executable(lint_code_bench ${CMAKE_CURRENT_LIST_DIR}/lint_code_bench.cpp)
  lockbench_target(lint_code_bench)
  target_link_libraries(lint_code_bench PRIVATE lockbench_lint_code)
endif()
