# SPDX-License-Identifier: BSD-3-Clause
# Finds the installed UCX and a configured UCX source tree of the same
# version for its private headers (see DESIGN.md section 2).
#
# Provides:
#   ucx::public   - the installed UCX (ucp, uct, ucs)
#   ucx::private  - + the private headers and config.h of the matching tree
#   ucg_add_uct_plugin(NAME <n> SOURCES <src...> [LIBS <lib...>])
#       builds libuct_<n>.so, a transport that registers itself when loaded.
# UCX_SOURCE_DIR set: that tree, nothing fetched. Unset: with UCG_FETCH_UCX
# (default) scripts/prepare-ucx-source fetches Debian's; without, an error.
find_package(PkgConfig REQUIRED)
pkg_check_modules(UCX REQUIRED IMPORTED_TARGET ucx)

set(UCG_UCX_CACHE_DIR "${CMAKE_BINARY_DIR}/_deps/ucx" CACHE PATH
    "Where the Debian UCX source tree is prepared (shared by build trees)")

if(NOT UCX_SOURCE_DIR AND NOT UCG_FETCH_UCX)
    message(FATAL_ERROR "UCG_FETCH_UCX=OFF needs -DUCX_SOURCE_DIR=<a UCX "
            "${UCX_VERSION} source tree, configured (config.h present)>: "
            "the transports include UCX's private headers. Nothing is fetched.")
endif()
if(UCX_SOURCE_DIR)
    set(_ucx_tree "${UCX_SOURCE_DIR}")
    if(NOT EXISTS "${_ucx_tree}/config.h")
        message(FATAL_ERROR "UCX_SOURCE_DIR=${_ucx_tree} has no config.h: "
                "run UCX's ./configure there first")
    endif()
    if(NOT EXISTS "${_ucx_tree}/src/uct/api/version.h")
        message(FATAL_ERROR "UCX_SOURCE_DIR=${_ucx_tree} has no "
                "src/uct/api/version.h: not a configured UCX source tree")
    endif()
else()
    execute_process(
        COMMAND ${CMAKE_CURRENT_LIST_DIR}/../scripts/prepare-ucx-source
                ${UCG_UCX_CACHE_DIR}
        RESULT_VARIABLE _ucx_rc)
    if(NOT _ucx_rc EQUAL 0)
        message(FATAL_ERROR "Could not prepare UCX's private headers (see "
                "above). Set -DUCX_SOURCE_DIR=<configured UCX tree> or "
                "-DUCG_WITH_UCX=OFF.")
    endif()
    set(_ucx_tree "${UCG_UCX_CACHE_DIR}/src")
endif()

# The tree must be the version we link against: struct layouts differ.
file(STRINGS "${_ucx_tree}/src/uct/api/version.h" _ucx_ver_line
     REGEX "^#define UCT_VERNO_STRING")
string(REGEX MATCH "\"([0-9.]+)" _ "${_ucx_ver_line}")
set(_tree_version "${CMAKE_MATCH_1}")
if(NOT _tree_version STREQUAL UCX_VERSION)
    message(FATAL_ERROR "UCX source tree ${_ucx_tree} is version "
            "'${_tree_version}' but the installed UCX is ${UCX_VERSION}")
endif()
message(STATUS "UCX ${UCX_VERSION}; private headers from ${_ucx_tree}")

add_library(ucx::public INTERFACE IMPORTED GLOBAL)
target_link_libraries(ucx::public INTERFACE PkgConfig::UCX)
add_library(ucx::private INTERFACE IMPORTED GLOBAL)
target_include_directories(ucx::private SYSTEM INTERFACE
    "${_ucx_tree}" "${_ucx_tree}/src")
target_compile_definitions(ucx::private INTERFACE HAVE_CONFIG_H)
target_link_libraries(ucx::private INTERFACE ucx::public)

function(ucg_add_uct_plugin)
    cmake_parse_arguments(P "" "NAME" "SOURCES;LIBS" ${ARGN})
    if(P_NAME MATCHES "_")
        message(FATAL_ERROR "plugin name '${P_NAME}' must not contain '_'")
    endif()
    add_library(uct_${P_NAME} SHARED ${P_SOURCES})
    # Versioned as UCX's own modules are (libuct_ib.so.0).
    set_target_properties(uct_${P_NAME} PROPERTIES OUTPUT_NAME uct_${P_NAME}
        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
        VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
    target_link_libraries(uct_${P_NAME} PRIVATE ucx::private ${P_LIBS})
    target_link_options(uct_${P_NAME} PRIVATE -Wl,--no-undefined)
endfunction()
