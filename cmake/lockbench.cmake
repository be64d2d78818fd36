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

# lockbench_add_test(NAME SOURCES... [LIBS libs...] [LABELS labels...] [RESOURCE_LOCK name])
# Declares one GoogleTest executable and registers its tests with CTest.
# Label `server` marks tests that need PostgreSQL or the fake partner running
# (scripts/test exports LOCKBENCH_TEST_DB and LOCKBENCH_TEST_PARTNER for them);
# RESOURCE_LOCK db keeps tests that reset the shared database and partner apart.
function(lockbench_add_test name)
  cmake_parse_arguments(ARG "" "RESOURCE_LOCK" "LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  lockbench_target(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  set(props LABELS "${ARG_LABELS}")
  if(ARG_RESOURCE_LOCK)
    list(APPEND props RESOURCE_LOCK ${ARG_RESOURCE_LOCK})
  endif()
  gtest_discover_tests(${name} PROPERTIES ${props} DISCOVERY_TIMEOUT 30)
endfunction()

# Adds a source folder when it has a CMakeLists.txt (parts land one at a time).
macro(lockbench_subdirectory dir)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${dir}/CMakeLists.txt)
    add_subdirectory(${dir})
  endif()
endmacro()
