# SPDX-License-Identifier: BSD-3-Clause
# Install rules, ucg.pc and the ucg CMake package (ucg::ucg); see
# docs/decisions/0008-installable-package.md. Included after every
# component, it names only targets that exist (noucx has no libucg and no
# transports). Components:
#   Runtime      libucg.so.<major>, the UCT transports in <libdir>/ucx
#   Development  headers, libucg_reduce.a, ucg.pc, lib/cmake/ucg
#   Tools        the benchmarks and ucg_plan
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(UCG_INSTALL_PLUGINDIR "${CMAKE_INSTALL_LIBDIR}/ucx" CACHE STRING
    "Where the UCT transports are installed (UCX's module directory)")
set(UCG_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/ucg")

# $ORIGIN-relative RUNPATH from <from> to <to> (install dirs), so a prefix
# can be moved or given at install time (cmake --install --prefix).
function(_ucg_origin_rpath var from to)
    file(RELATIVE_PATH _rel "${CMAKE_INSTALL_PREFIX}/${from}"
         "${CMAKE_INSTALL_PREFIX}/${to}")
    if(_rel STREQUAL "")
        set(${var} "$ORIGIN" PARENT_SCOPE)
    else()
        set(${var} "$ORIGIN/${_rel}" PARENT_SCOPE)
    endif()
endfunction()

# The transports, versioned as UCX's modules. Stock UCX 1.13 loads only the
# modules it was built with, so installing them there lists nothing by
# itself: libucg links them, stock tools take LD_PRELOAD (README "Install").
set(_ucg_plugins "")
foreach(_t uct_mmbcast uct_mmincast uct_udmcast)
    if(TARGET ${_t})
        list(APPEND _ucg_plugins ${_t})
    endif()
endforeach()
# The ones libucg links are exported too (ucg::uct_mmbcast, ...): CMake
# needs its shared dependencies in the export set.
foreach(_t ${_ucg_plugins})
    set(_export "")
    if(TARGET ucg AND _t MATCHES "^uct_mm")
        set(_export EXPORT ucgTargets)
    endif()
    install(TARGETS ${_t} ${_export}
        LIBRARY DESTINATION "${UCG_INSTALL_PLUGINDIR}"
            COMPONENT Runtime NAMELINK_COMPONENT Development)
endforeach()
foreach(_h uct_mm_bcast/include/uct_mm_bcast.h
           uct_mm_incast/include/uct_mm_incast.h
           uct_ud_mcast/include/uct_ud_mcast.h
           uct_group/include/uct_group.h)
    if(_ucg_plugins AND EXISTS ${PROJECT_SOURCE_DIR}/${_h})
        install(FILES ${PROJECT_SOURCE_DIR}/${_h}
            DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" COMPONENT Development)
    endif()
endforeach()
if(TARGET ucg_reduce)
    install(FILES ${PROJECT_SOURCE_DIR}/ucg_reduce/include/ucg/reduce.h
                  ${PROJECT_SOURCE_DIR}/ucg_reduce/include/ucg/reduce_atomic.h
                  ${PROJECT_SOURCE_DIR}/ucg_reduce/include/ucg/copy.h
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/ucg" COMPONENT Development)
endif()

if(TARGET ucg)
    # libucg finds the transports it links beside itself.
    _ucg_origin_rpath(_rp "${CMAKE_INSTALL_LIBDIR}" "${UCG_INSTALL_PLUGINDIR}")
    set_target_properties(ucg PROPERTIES INSTALL_RPATH "${_rp}")
    install(TARGETS ucg EXPORT ucgTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
            COMPONENT Runtime NAMELINK_COMPONENT Development)
    install(TARGETS ucg_reduce uct_group EXPORT ucgTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT Development)
    set_target_properties(ucg_reduce PROPERTIES EXPORT_NAME reduce)
    install(FILES ${PROJECT_SOURCE_DIR}/ucg/include/ucg/ucg.h
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/ucg" COMPONENT Development)

    install(EXPORT ucgTargets NAMESPACE ucg::
        DESTINATION "${UCG_INSTALL_CMAKEDIR}" COMPONENT Development)
    configure_package_config_file(
        ${CMAKE_CURRENT_LIST_DIR}/ucgConfig.cmake.in
        ${CMAKE_BINARY_DIR}/ucgConfig.cmake
        INSTALL_DESTINATION "${UCG_INSTALL_CMAKEDIR}")
    # 0.x: a minor release may change the API (SOVERSION is the major).
    write_basic_package_version_file(${CMAKE_BINARY_DIR}/ucgConfigVersion.cmake
        VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
    install(FILES ${CMAKE_BINARY_DIR}/ucgConfig.cmake
                  ${CMAKE_BINARY_DIR}/ucgConfigVersion.cmake
        DESTINATION "${UCG_INSTALL_CMAKEDIR}" COMPONENT Development)

    # ucg.pc, relocatable: the prefix is found from the file's own place
    # (pkg-config's ${pcfiledir}), so cmake --install --prefix works.
    file(RELATIVE_PATH UCG_PC_PREFIX_REL
         "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
    string(REGEX REPLACE "/$" "" UCG_PC_PREFIX_REL "${UCG_PC_PREFIX_REL}")
    foreach(_d LIBDIR INCLUDEDIR)
        if(IS_ABSOLUTE "${CMAKE_INSTALL_${_d}}")
            set(UCG_PC_${_d} "${CMAKE_INSTALL_${_d}}")
        else()
            set(UCG_PC_${_d} "\${prefix}/${CMAKE_INSTALL_${_d}}")
        endif()
    endforeach()
    configure_file(${CMAKE_CURRENT_LIST_DIR}/ucg.pc.in
        ${CMAKE_BINARY_DIR}/ucg.pc @ONLY)
    install(FILES ${CMAKE_BINARY_DIR}/ucg.pc
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
        COMPONENT Development)
endif()

# Tools: everything they link (libucg, the transports) by RUNPATH.
_ucg_origin_rpath(_rp_lib "${CMAKE_INSTALL_BINDIR}" "${CMAKE_INSTALL_LIBDIR}")
_ucg_origin_rpath(_rp_plug "${CMAKE_INSTALL_BINDIR}" "${UCG_INSTALL_PLUGINDIR}")
set(_ucg_tools "")
foreach(_t ucg_perftest ucg_plan ucg_plan_bench ucg_mm_perftest
           ucg_mcast_perftest ucg_reduce_perftest ucs_lock_perftest)
    if(TARGET ${_t})
        set_target_properties(${_t} PROPERTIES
            INSTALL_RPATH "${_rp_lib};${_rp_plug}"
            INSTALL_RPATH_USE_LINK_PATH ON) # MPI's folder, where linked
        list(APPEND _ucg_tools ${_t})
    endif()
endforeach()
if(_ucg_tools)
    install(TARGETS ${_ucg_tools}
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT Tools)
endif()

# The test: install Runtime + Development into a temporary prefix, build a
# C program against it (pkg-config, then find_package) and run a bcast
# between two forked processes.
if(UCG_BUILD_TESTS AND TARGET ucg)
    foreach(_how pkgconfig cmake)
        set(_name "install: ${_how} consumer builds and bcasts over 2 forks")
        add_test(NAME "${_name}"
            COMMAND ${CMAKE_CURRENT_LIST_DIR}/test/install_test.sh ${_how}
                    ${CMAKE_BINARY_DIR} ${CMAKE_INSTALL_LIBDIR}
                    ${CMAKE_CURRENT_LIST_DIR}/test/install_consumer
                    ${CMAKE_COMMAND} ${CMAKE_C_COMPILER})
        set_tests_properties("${_name}" PROPERTIES
            LABELS "install;ucx;fork" TIMEOUT 60
            ENVIRONMENT "${UCG_STOCK_TOOL_ENV};UCG_TEST_PRELOAD=${UCG_SANITIZER_PRELOAD}")
    endforeach()
endif()
