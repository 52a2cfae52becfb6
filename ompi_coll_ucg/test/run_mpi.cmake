# SPDX-License-Identifier: BSD-3-Clause
# Runs one command (CMD, a ;-list, with "@" standing for ";" inside
# arguments) and checks its exit status and output: every regex of EXPECT
# must match, no regex of REJECT may; with -DFAIL=1 the command must exit
# with an error (not time out); TIMEOUT: seconds (default 60).
# cmake -DCMD=... -DEXPECT=... -DREJECT=... [-DTIMEOUT=s] -P run_mpi.cmake
if(NOT TIMEOUT)
    set(TIMEOUT 60)
endif()
string(REPLACE "@" ";" _cmd "${CMD}")
if(FAIL)
    # A job expected to abort: mpirun itself may hang after its ranks
    # exited (reap_mpirun.sh says why); that still is an error exit.
    list(PREPEND _cmd sh ${CMAKE_CURRENT_LIST_DIR}/reap_mpirun.sh)
endif()
execute_process(COMMAND ${_cmd}
    OUTPUT_VARIABLE _out ERROR_VARIABLE _out RESULT_VARIABLE _rc
    TIMEOUT ${TIMEOUT})
message("${_out}")
if(FAIL)
    if(NOT _rc MATCHES "^[0-9]+$" OR _rc EQUAL 0)
        message(FATAL_ERROR "expected an error exit, got '${_rc}': ${_cmd}")
    endif()
elseif(NOT _rc EQUAL 0)
    message(FATAL_ERROR "exit status ${_rc}: ${_cmd}")
endif()
foreach(_re IN LISTS EXPECT)
    if(NOT _out MATCHES "${_re}")
        message(FATAL_ERROR "output lacks '${_re}'")
    endif()
endforeach()
foreach(_re IN LISTS REJECT)
    if(_out MATCHES "${_re}")
        message(FATAL_ERROR "output has '${_re}'")
    endif()
endforeach()
