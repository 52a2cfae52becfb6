# SPDX-License-Identifier: BSD-3-Clause
# Applies UCG_SANITIZE to every target of the project.
if(UCG_SANITIZE)
    string(REPLACE ";" "," _ucg_san "${UCG_SANITIZE}")
    add_compile_options(-fsanitize=${_ucg_san} -fno-omit-frame-pointer
                        -fno-sanitize-recover=all)
    add_link_options(-fsanitize=${_ucg_san})
endif()

# A sanitized plugin loaded into a stock (uninstrumented) UCX tool needs its
# sanitizer runtime loaded first. UCG_SANITIZER_PRELOAD lists those runtimes,
# each followed by ':', ready to prefix a plugin path in LD_PRELOAD; empty
# without sanitizers.
set(UCG_SANITIZER_PRELOAD "")
foreach(_san IN LISTS UCG_SANITIZE)
    if(_san STREQUAL "address")
        set(_lib asan)
    elseif(_san STREQUAL "thread")
        set(_lib tsan)
    elseif(_san STREQUAL "undefined")
        set(_lib ubsan)
    else()
        message(FATAL_ERROR "UCG_SANITIZE: unknown sanitizer '${_san}'")
    endif()
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=lib${_lib}.so
        OUTPUT_VARIABLE _path OUTPUT_STRIP_TRAILING_WHITESPACE)
    string(APPEND UCG_SANITIZER_PRELOAD "${_path}:")
endforeach()

# ucg_stock_preload(<var> <plugin target>): the LD_PRELOAD value that makes
# stock UCX tools load <plugin target> (a generator expression).
function(ucg_stock_preload var target)
    set(${var} "${UCG_SANITIZER_PRELOAD}$<TARGET_FILE:${target}>" PARENT_SCOPE)
endfunction()

# Environment for a stock tool running a sanitized plugin: UCX's own
# allocations are not ours to report as leaks.
set(UCG_STOCK_TOOL_ENV "ASAN_OPTIONS=detect_leaks=0")
