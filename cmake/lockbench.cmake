# Shared settings for every lockbench target.

# lockbench_target(TARGET): C++20 and warnings, per target.
function(lockbench_target target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
endfunction()

# lockbench_add_test(NAME SOURCES... [LIBS libs...] [LABELS labels...])
# Declares one GoogleTest executable and registers its tests with CTest.
# Label `server` marks tests that need PostgreSQL or the fake partner running
# (scripts/test exports LOCKBENCH_TEST_DB and LOCKBENCH_TEST_PARTNER for them).
function(lockbench_add_test name)
  cmake_parse_arguments(ARG "" "" "LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  lockbench_target(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  if(ARG_LABELS)
    gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 30)
  else()
    gtest_discover_tests(${name} PROPERTIES LABELS unit DISCOVERY_TIMEOUT 30)
  endif()
endfunction()

# Adds a source folder when it has a CMakeLists.txt (parts land one at a time).
macro(lockbench_subdirectory dir)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${dir}/CMakeLists.txt)
    add_subdirectory(${dir})
  endif()
endmacro()
