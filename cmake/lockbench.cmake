# Shared settings for every lockbench target.

# lockbench_target(TARGET): C++20 and warnings, per target.
function(lockbench_target target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  # g++ 12 at -O2 reports -Wrestrict inside libstdc++'s own std::string
  # concatenation (GCC PR 105329, a false positive fixed in g++ 13).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
endfunction()

# Server sets for the tests that reset a database and a partner (RESOURCE_LOCK
# db). With 1 (the default) ctest runs them one at a time against the servers
# of LOCKBENCH_TEST_DB, LOCKBENCH_TEST_PARTNER, ... With N > 1 (scripts/test
# starts N sets of throw-away servers and passes ctest a resource spec file with
# N `servers` slots) each such test takes one slot, and tests/server_set.sh
# points it at that set's servers (LOCKBENCH_TEST_DB_SET<id>, ...): N of them
# run at once, each alone on its own PostgreSQL, partner, Redis and PgBouncer.
# Without the spec file ctest ignores resource groups, so a build configured
# with N > 1 must run its server tests through scripts/test.
set(LOCKBENCH_TEST_SERVER_SETS 1 CACHE STRING "server sets the server tests run on at once (scripts/test: 2)")
if(NOT LOCKBENCH_TEST_SERVER_SETS MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "LOCKBENCH_TEST_SERVER_SETS=${LOCKBENCH_TEST_SERVER_SETS}: accepted: a whole number from 1")
endif()

# lockbench_add_test(NAME SOURCES... [LIBS libs...] [LABELS labels...] [RESOURCE_LOCK name])
# Declares one GoogleTest executable and registers its tests with CTest.
# Label `server` marks tests that need PostgreSQL or the fake partner running
# (scripts/test exports LOCKBENCH_TEST_DB and LOCKBENCH_TEST_PARTNER for them);
# RESOURCE_LOCK db keeps tests that reset the shared database and partner apart
# (or, with LOCKBENCH_TEST_SERVER_SETS > 1, gives each a server set of its own).
# Test code is compiled at -O1: it runs for seconds and compiles a third faster;
# the code under test (the libraries) keeps the build type's optimisation.
function(lockbench_add_test name)
  cmake_parse_arguments(ARG "" "RESOURCE_LOCK" "LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  lockbench_target(${name})
  lockbench_test_optimisation(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  set(props LABELS "${ARG_LABELS}")
  if(ARG_RESOURCE_LOCK STREQUAL "db" AND LOCKBENCH_TEST_SERVER_SETS GREATER 1)
    list(APPEND props RESOURCE_GROUPS "servers:1")
    set_target_properties(${name} PROPERTIES CROSSCOMPILING_EMULATOR "${PROJECT_SOURCE_DIR}/tests/server_set.sh")
  elseif(ARG_RESOURCE_LOCK)
    list(APPEND props RESOURCE_LOCK ${ARG_RESOURCE_LOCK})
  endif()
  gtest_discover_tests(${name} PROPERTIES ${props} DISCOVERY_TIMEOUT 30)
endfunction()

# Test sources at -O1 in optimised builds (after the build type's -O3/-O2, so it
# wins), with sibling calls still optimised: a coroutine's symmetric transfer is
# a tail call, and without it a long synchronous chain of Tasks (core/task.hpp)
# grows the stack until it overflows (Task.SynchronousChainsRunToTheEnd).
function(lockbench_test_optimisation target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release,RelWithDebInfo>:-O1 -foptimize-sibling-calls>)
endfunction()

# Adds a source folder when it has a CMakeLists.txt (parts land one at a time).
macro(lockbench_subdirectory dir)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${dir}/CMakeLists.txt)
    add_subdirectory(${dir})
  endif()
endmacro()
