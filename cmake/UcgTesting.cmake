# SPDX-License-Identifier: BSD-3-Clause
# ucg_add_test(NAME <n> SOURCES <src...> [LIBS <lib...>] [LABELS <l...>]
#              [TIMEOUT <s>])
# One Catch2 executable; every TEST_CASE becomes a ctest test carrying the
# labels (and the Catch tags are left to the sources). A test case that
# calls UCG_SKIP (ucg_test/skip.h) is reported as skipped.
find_package(Catch2 2.13 REQUIRED)
include(Catch)

if(NOT TARGET ucg_catch_main)
    file(WRITE ${CMAKE_BINARY_DIR}/ucg_catch_main.cpp
         "#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n")
    add_library(ucg_catch_main STATIC ${CMAKE_BINARY_DIR}/ucg_catch_main.cpp)
    target_link_libraries(ucg_catch_main PUBLIC Catch2::Catch2)
endif()

function(ucg_add_test)
    cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
    if(NOT T_TIMEOUT)
        set(T_TIMEOUT 60)
    endif()
    add_executable(${T_NAME} ${T_SOURCES})
    target_link_libraries(${T_NAME} PRIVATE ucg_catch_main ${T_LIBS})
    ucg_target_warnings(${T_NAME})
    # --warn NoTests: a ctest name that matches no test case (CMake cut
    # it at a ';') fails instead of passing with nothing run.
    catch_discover_tests(${T_NAME}
        TEST_PREFIX "${T_NAME}: "
        EXTRA_ARGS --warn NoTests
        TEST_LIST ${T_NAME}_TESTS
        PROPERTIES TIMEOUT ${T_TIMEOUT}
                   SKIP_REGULAR_EXPRESSION "UCG_TEST_SKIPPED: ")
    # Catch's discovery cannot pass a list-valued property; label the
    # discovered tests from a second include file read after its own.
    set(_labels_file ${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_labels.cmake)
    file(WRITE ${_labels_file}
        "if(${T_NAME}_TESTS)\n"
        "  set_tests_properties(\${${T_NAME}_TESTS} PROPERTIES LABELS \"${T_LABELS}\")\n"
        "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_labels_file})
    # The TSan stage builds only these (ucg_thread_tests), not the tree.
    if("threads" IN_LIST T_LABELS)
        if(NOT TARGET ucg_thread_tests)
            add_custom_target(ucg_thread_tests)
        endif()
        add_dependencies(ucg_thread_tests ${T_NAME})
    endif()
endfunction()
