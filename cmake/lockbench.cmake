# Shared settings for every lockbench target.

# lockbench_target(TARGET): C++20, warnings and the precompiled headers, per target.
function(lockbench_target target)
  lockbench_flags(${target})
  lockbench_pch(${target} lockbench_pch_release)
endfunction()

# lockbench_flags(TARGET): C++20 and warnings.
function(lockbench_flags target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  # g++ 12 at -O2 reports -Wrestrict inside libstdc++'s own std::string
  # concatenation (GCC PR 105329, a false positive fixed in g++ 13).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  # GCC tells a type of the main file from one of an included file, and in a
  # unity build every source is included: it then reports coroutine frames and
  # gtest fixtures built on a type of the unnamed namespace
  # (-Wsubobject-linkage), which the same source compiled alone does not.
  if(LOCKBENCH_UNITY AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
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
set(LOCKBENCH_TEST_SERVER_SETS 1 CACHE STRING "server sets the server tests run on at once (scripts/test: 3)")
if(NOT LOCKBENCH_TEST_SERVER_SETS MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "LOCKBENCH_TEST_SERVER_SETS=${LOCKBENCH_TEST_SERVER_SETS}: accepted: a whole number from 1")
endif()

# lockbench_add_test(NAME SOURCES... [LIBS libs...] [LABELS labels...] [RESOURCE_LOCK name] [RUN_SERIAL])
# Declares one GoogleTest executable and registers its tests with CTest.
# Label `server` marks tests that need PostgreSQL or the fake partner running
# (scripts/test exports LOCKBENCH_TEST_DB and LOCKBENCH_TEST_PARTNER for them);
# RESOURCE_LOCK db keeps tests that reset the shared database and partner apart
# (or, with LOCKBENCH_TEST_SERVER_SETS > 1, gives each a server set of its own).
# RUN_SERIAL: nothing else runs beside its tests (a real run judged on timing
# targets, which a host busy with other tests would break).
# Test code is compiled at -Og: it runs for seconds, and -O1 compiled it a third
# faster than -O3, -Og a fifth faster again;
# the code under test (the libraries) keeps the build type's optimisation.
function(lockbench_add_test name)
  cmake_parse_arguments(ARG "RUN_SERIAL" "RESOURCE_LOCK" "LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  lockbench_flags(${name})
  lockbench_test_optimisation(${name})
  lockbench_pch(${name} lockbench_pch_test)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  # server-alone: a server test that runs with nothing beside it (RUN_SERIAL);
  # `ctest -L server` matches it too, and scripts/test runs it before the others.
  if(NOT "server" IN_LIST ARG_LABELS AND NOT "server-alone" IN_LIST ARG_LABELS)
    set_property(GLOBAL APPEND PROPERTY LOCKBENCH_TESTS_WITHOUT_SERVERS ${name})
  endif()
  set(props LABELS "${ARG_LABELS}")
  if(ARG_RESOURCE_LOCK STREQUAL "db" AND LOCKBENCH_TEST_SERVER_SETS GREATER 1)
    list(APPEND props RESOURCE_GROUPS "servers:1")
    set_target_properties(${name} PROPERTIES CROSSCOMPILING_EMULATOR "${PROJECT_SOURCE_DIR}/tests/server_set.sh")
  elseif(ARG_RESOURCE_LOCK)
    list(APPEND props RESOURCE_LOCK ${ARG_RESOURCE_LOCK})
  endif()
  if(ARG_RUN_SERIAL)
    list(APPEND props RUN_SERIAL TRUE)
  endif()
  # CTest starts the costliest tests first (COST; with a COST set, a run's
  # measured times never replace it): the tests on the server sets, one a set
  # at a time, are the suite's critical path, so they start at once; then the
  # browser tests (one Chromium at a time, a chain of about three minutes) and
  # the servers' own tests; the unit tests fill the jobs beside them. A COST is
  # in seconds: the tests measured in tests/test_costs.cmake (10 s or more)
  # get theirs (lockbench_test_costs below), so the longest start first and
  # none is the suite's tail; the others get their group's guess, below them.
  if(ARG_RESOURCE_LOCK STREQUAL "db")
    list(APPEND props COST 9)
  elseif("browser" IN_LIST ARG_LABELS)
    list(APPEND props COST 8)
  elseif("server" IN_LIST ARG_LABELS)
    list(APPEND props COST 5)
  endif()
  gtest_discover_tests(${name} PROPERTIES ${props} DISCOVERY_TIMEOUT 30)
  lockbench_test_costs()
endfunction()

# The measured seconds of the suite's longest tests (tests/test_costs.cmake)
# become their COST, so CTest starts them first: on the server sets, a long
# test that started last was the suite's tail (docs/reference/tests.md, "Test
# time"). COST orders only; a test not listed keeps its group's COST above.
include(${PROJECT_SOURCE_DIR}/tests/test_costs.cmake)
set(lockbench_costs_file ${PROJECT_BINARY_DIR}/lockbench_test_costs.cmake)
set(lockbench_costs_text "# Generated from tests/test_costs.cmake (cmake/lockbench.cmake): COST of the measured tests.\n")
foreach(entry ${LOCKBENCH_TEST_COSTS})
  string(REGEX MATCH "^(.+)=([0-9]+)$" matched "${entry}")
  if(NOT matched)
    message(FATAL_ERROR "tests/test_costs.cmake: '${entry}': accepted: TEST_NAME=SECONDS")
  endif()
  string(APPEND lockbench_costs_text "set_tests_properties([=[${CMAKE_MATCH_1}]=] PROPERTIES COST ${CMAKE_MATCH_2})\n")
endforeach()
file(CONFIGURE OUTPUT ${lockbench_costs_file} CONTENT "${lockbench_costs_text}")

# lockbench_test_costs(): the measured COSTs for the gtest tests of this
# folder. Discovered tests are defined by include files that CTest reads in
# order, so the costs' include goes last (after every gtest_discover_tests of
# the folder); names of other folders are ignored.
function(lockbench_test_costs)
  get_property(includes DIRECTORY PROPERTY TEST_INCLUDE_FILES)
  list(REMOVE_ITEM includes ${lockbench_costs_file})
  list(APPEND includes ${lockbench_costs_file})
  set_property(DIRECTORY PROPERTY TEST_INCLUDE_FILES ${includes})
endfunction()

# lockbench_test_cost(TEST DEFAULT): sets TEST's COST (an add_test test) to
# its measured seconds, DEFAULT when it is not measured.
function(lockbench_test_cost test default)
  set(cost ${default})
  foreach(entry ${LOCKBENCH_TEST_COSTS})
    if(entry MATCHES "^(.+)=([0-9]+)$" AND CMAKE_MATCH_1 STREQUAL test)
      set(cost ${CMAKE_MATCH_2})
    endif()
  endforeach()
  set_tests_properties(${test} PROPERTIES COST ${cost})
endfunction()

# Test sources at -Og in optimised builds (after the build type's -O3/-O2, so it
# wins), with sibling calls still optimised: a coroutine's symmetric transfer is
# a tail call, and without it a long synchronous chain of Tasks (core/task.hpp)
# grows the stack until it overflows (Task.SynchronousChainsRunToTheEnd).
function(lockbench_test_optimisation target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release,RelWithDebInfo>:-Og -foptimize-sibling-calls>)
endfunction()

# Adds a source folder when it has a CMakeLists.txt (parts land one at a time).
macro(lockbench_subdirectory dir)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${dir}/CMakeLists.txt)
    add_subdirectory(${dir})
  endif()
endmacro()

# Unity builds (LOCKBENCH_UNITY, ON): CMake compiles each target's sources in
# groups of LOCKBENCH_UNITY_BATCH, one translation unit a group, so the
# instantiations every source makes of nlohmann/json, the standard library and
# gtest (inline code GCC must compile and optimise in each unit that uses it)
# are made once a group: a half to two thirds less compile time for a target of
# several sources (docs/reference/tests.md, "Build time"). Sources are written
# for it: names in an unnamed namespace are unique across a folder's sources.
# -DLOCKBENCH_UNITY=OFF compiles every source alone (an edit then recompiles
# one source, not its group; and it checks that each source includes what it
# uses).
option(LOCKBENCH_UNITY "Unity builds: each target's sources compiled in groups" ON)
set(LOCKBENCH_UNITY_BATCH 8 CACHE STRING "sources a unity group holds at most")
if(NOT LOCKBENCH_UNITY_BATCH MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "LOCKBENCH_UNITY_BATCH=${LOCKBENCH_UNITY_BATCH}: accepted: a whole number from 1")
endif()
set(CMAKE_UNITY_BUILD ${LOCKBENCH_UNITY})
set(CMAKE_UNITY_BUILD_BATCH_SIZE ${LOCKBENCH_UNITY_BATCH})

# Precompiled headers (LOCKBENCH_PCH, ON): almost every translation unit parses
# the same ~100,000 preprocessed lines of the standard library and
# nlohmann/json (the tests gtest too) before its own code, and that parse was
# most of the build (docs/reference/tests.md, "Build time"). Two headers are
# compiled once, each by a host target of its own, and reused by every target
# with the same flags: lockbench_pch_release for libraries and executables (the
# build type's flags), lockbench_pch_test for the tests (-Og, gtest). GCC uses a
# precompiled header only when the flags match, and CMake's -Winvalid-pch would
# warn otherwise. Only headers no macro of a target changes belong here (not
# cpp-httplib: its layout depends on pkg-config's definitions; not fmt, Boost or
# libpqxx: few files use them). The playground precompiles the same list for
# its em++ sources (playground/CMakeLists.txt).
option(LOCKBENCH_PCH "Precompiled headers for the standard library, nlohmann/json and gtest" ON)
set(LOCKBENCH_PCH_HEADERS <algorithm> <array> <atomic> <charconv> <chrono> <cmath> <cstdint> <cstdio>
  <cstdlib> <cstring> <deque> <exception> <filesystem> <fstream> <functional> <map> <memory> <mutex>
  <optional> <set> <sstream> <stdexcept> <string> <string_view> <thread> <unordered_map> <utility>
  <vector> <nlohmann/json.hpp>)

# lockbench_pch(TARGET HOST): TARGET reuses HOST's precompiled header; HOST
# (lockbench_pch_release or lockbench_pch_test) is made at its first use.
function(lockbench_pch target host)
  if(NOT LOCKBENCH_PCH)
    return()
  endif()
  if(NOT TARGET ${host})
    set(stub ${PROJECT_BINARY_DIR}/${host}.cpp)
    if(NOT EXISTS ${stub})
      file(WRITE ${stub} "// The host of a precompiled header (cmake/lockbench.cmake).\n")
    endif()
    add_library(${host} OBJECT ${stub})
    lockbench_flags(${host})
    target_link_libraries(${host} PRIVATE nlohmann_json::nlohmann_json)
    set(headers ${LOCKBENCH_PCH_HEADERS})
    if(host STREQUAL "lockbench_pch_test")
      lockbench_test_optimisation(${host})
      target_link_libraries(${host} PRIVATE GTest::gtest)
      list(APPEND headers <gtest/gtest.h>)
    endif()
    target_precompile_headers(${host} PRIVATE ${headers})
    target_compile_definitions(${host} PRIVATE _FILE_OFFSET_BITS=64)
  endif()
  target_precompile_headers(${target} REUSE_FROM ${host})
  # hiredis' pkg-config flags define _FILE_OFFSET_BITS=64, which glibc's headers
  # read, so GCC would refuse the header in lockbench_real: defined for every
  # target that uses one (and its host; on 64-bit Linux it changes nothing).
  target_compile_definitions(${target} PRIVATE _FILE_OFFSET_BITS=64)
  # g++ 12 loses, for headers read from a precompiled header, that they are
  # system headers: at -O3 it then reports -Wstringop-overflow and
  # -Warray-bounds inside libstdc++'s own operator+(const char*, string&&)
  # ("o" + std::to_string(k)), which the same source compiled without the
  # precompiled header does not report. False positives of g++ 12's, like
  # -Wrestrict above.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-stringop-overflow -Wno-array-bounds)
  endif()
endfunction()

# lockbench_server_side_target(): the target `lockbench_server_side`, every
# executable except those of the tests that need no server (the playground's
# WebAssembly, a custom target, is not one either): what the server tests run,
# including the binaries they start (lockbench, fake_partner) and the docs'
# commands. scripts/test builds it first and starts the server tests, which
# mostly wait on time-scaled calls, while the rest builds beside them
# (docs/reference/tests.md, "Test time"). Called last, once every folder has
# defined its targets.
function(lockbench_server_side_target)
  get_property(without GLOBAL PROPERTY LOCKBENCH_TESTS_WITHOUT_SERVERS)
  set(dirs ${PROJECT_SOURCE_DIR})
  set(deps)
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "EXECUTABLE" AND NOT target IN_LIST without)
        list(APPEND deps ${target})
      endif()
    endforeach()
  endwhile()
  add_custom_target(lockbench_server_side)
  add_dependencies(lockbench_server_side ${deps})
endfunction()
