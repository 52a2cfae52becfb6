# SPDX-License-Identifier: BSD-3-Clause
# Compiles through ccache where it is installed (UCG_CCACHE, default ON;
# docs/decisions/0052-builds-through-ccache.md). CI builds one source four
# ways and its mutant stage compiles each mutated file twice (mutated, then
# restored); ccache answers the restored file and, in a later clone of the
# same source, every file it has seen. Paths are hashed relative to the
# source tree (CCACHE_BASEDIR, CCACHE_NOHASHDIR), so a clone in another
# directory finds the objects an earlier clone made.
option(UCG_CCACHE "Compile through ccache where it is installed" ON)
if(UCG_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
    find_program(UCG_CCACHE_PROGRAM ccache)
    if(UCG_CCACHE_PROGRAM)
        set(_ucg_launcher env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
            CCACHE_NOHASHDIR=1 ${UCG_CCACHE_PROGRAM})
        set(CMAKE_C_COMPILER_LAUNCHER ${_ucg_launcher})
        set(CMAKE_CXX_COMPILER_LAUNCHER ${_ucg_launcher})
    endif()
endif()
