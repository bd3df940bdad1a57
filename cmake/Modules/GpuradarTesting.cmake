# gpuradar_add_gtest(<name> SOURCES <files...> LIBS <targets...> [PRECOMPILE <headers...>])
#
# One GoogleTest binary, two ctest entries:
#   <name>      every test whose suite name does not contain "Cuda"
#   <name>_gpu  the suites with "Cuda" in their name, ctest label `gpu`. Without a usable
#               device they call GTEST_SKIP; gpuradar_gtest_main.cc then exits 77 (every
#               test skipped) and ctest reports the entry as skipped through
#               SKIP_RETURN_CODE, never by matching the output (a failing test exits 1).
# PRECOMPILE: external headers most of the sources include, precompiled when
# GPURADAR_PRECOMPILE_HEADERS is on (the sanitizer build), else ignored.
# Every binary is recorded in the global property GPURADAR_TEST_BINARIES so that
# tools/gather_gpu_runner.sh can carry them to a GPU host without GNU Radio, and its
# target in GPURADAR_TEST_TARGETS (the top-level target gpuradar_test_targets).
# The main() is compiled once for every binary (kernels/ and lib/ both include this file).
if(NOT TARGET gpuradar_gtest_main)
    add_library(gpuradar_gtest_main STATIC ${CMAKE_CURRENT_LIST_DIR}/gpuradar_gtest_main.cc)
    target_link_libraries(gpuradar_gtest_main PUBLIC GTest::gtest)
endif()

function(gpuradar_add_gtest name)
    cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;PRECOMPILE" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE ${ARG_LIBS} gpuradar_gtest_main GTest::gtest)
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/kernels/tests)
    # With GPURADAR_PRECOMPILE_HEADERS the first binary of a header list compiles them and
    # the others reuse its precompiled header; they share their compile options (kernels/
    # tests among themselves, lib/ tests among themselves), which reuse requires.
    if(GPURADAR_PRECOMPILE_HEADERS AND ARG_PRECOMPILE)
        string(MD5 pch_key "${ARG_PRECOMPILE}")
        get_property(pch_owner GLOBAL PROPERTY GPURADAR_PCH_OWNER_${pch_key})
        if(pch_owner)
            target_precompile_headers(${name} REUSE_FROM ${pch_owner})
        else()
            target_precompile_headers(${name} PRIVATE ${ARG_PRECOMPILE})
            set_property(GLOBAL PROPERTY GPURADAR_PCH_OWNER_${pch_key} ${name})
        endif()
    endif()
    add_test(NAME ${name} COMMAND ${name} --gtest_filter=-*Cuda*)
    # A binary without Cuda suites gets no gpu entry: an empty run would count as passed.
    set(has_cuda_suites FALSE)
    foreach(src ${ARG_SOURCES})
        file(READ ${src} text)
        if(text MATCHES "Cuda")
            set(has_cuda_suites TRUE)
        endif()
    endforeach()
    if(has_cuda_suites)
        add_test(NAME ${name}_gpu COMMAND ${name} --gtest_filter=*Cuda*)
        set_tests_properties(${name}_gpu PROPERTIES
            LABELS gpu
            SKIP_RETURN_CODE 77)
    endif()
    set_property(GLOBAL APPEND PROPERTY GPURADAR_TEST_BINARIES $<TARGET_FILE:${name}>)
    set_property(GLOBAL APPEND PROPERTY GPURADAR_TEST_TARGETS ${name})
endfunction()
