# SPDX-License-Identifier: BSD-3-Clause
# Per-target warnings: ucg_target_warnings(<target>).
function(ucg_target_warnings target)
    target_compile_options(${target} PRIVATE
        -Wall -Wextra -Wpedantic -Wshadow
        $<$<COMPILE_LANGUAGE:CXX>:-Wold-style-cast -Wnon-virtual-dtor>)
    if(UCG_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
endfunction()

# For code that includes UCX's private headers: they use GNU extensions,
# zero-length arrays and C-style casts we cannot change.
function(ucg_target_warnings_ucx_glue target)
    target_compile_options(${target} PRIVATE -Wall -Wextra
        -Wno-pedantic -Wno-unused-parameter -Wno-missing-field-initializers
        $<$<COMPILE_LANGUAGE:CXX>:-Wno-old-style-cast>)
    if(UCG_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
endfunction()
