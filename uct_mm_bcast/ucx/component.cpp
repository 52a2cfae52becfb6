// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast registration: configuration table (UCX_MM_BCAST_*) and
// transport, in the mm component (uct_mm_common/ucx/component.h),
// registered from the library constructor.
#include "mm_bcast.h"

#include "component.h"

namespace uct_mm_bcast {
namespace {

ucs_config_field_t g_iface_config_table[] = {
    {"", "", nullptr, ucs_offsetof(IfaceConfig, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},
    {"FIFO_SIZE", "64",
     "Slots of every ring (receive FIFO and group ring), a power of two.",
     ucs_offsetof(IfaceConfig, fifo_size), UCS_CONFIG_TYPE_UINT},
    {"SEG_SIZE", "8256",
     "Bytes per ring slot: a 16-byte header and the payload (am_bcopy "
     "limit); a multiple of 64.",
     ucs_offsetof(IfaceConfig, seg_size), UCS_CONFIG_TYPE_MEMUNITS},
    {"MAX_SHORT", "256", "am_short limit in bytes, its 8-byte header included.",
     ucs_offsetof(IfaceConfig, max_short), UCS_CONFIG_TYPE_MEMUNITS},
    // Measured (perftest/mm/RESULTS.md, 2-core VM): zcopy, where every
    // receiver copies with process_vm_readv, lost to max_bcopy fragments at
    // every size from 16 KiB to 16 MiB and N = 2..8; hence a threshold
    // above the largest size measured. am_zcopy itself takes any size.
    {"MIN_ZCOPY", "32m",
     "Smallest message for which am_zcopy is advertised (cap.am.min_zcopy): "
     "callers choosing by capabilities, such as UCP, send max_bcopy "
     "fragments below it.",
     ucs_offsetof(IfaceConfig, min_zcopy), UCS_CONFIG_TYPE_MEMUNITS},
    {"MAX_ZCOPY", "64m",
     "am_zcopy limit: receivers copy from the sender with process_vm_readv.",
     ucs_offsetof(IfaceConfig, max_zcopy), UCS_CONFIG_TYPE_MEMUNITS},
    {"MAX_IOV", "8", "am_zcopy iov entries.",
     ucs_offsetof(IfaceConfig, max_iov), UCS_CONFIG_TYPE_UINT},
    {"MAX_GROUP_SIZE", "64", "Largest group endpoint (at most 256 members).",
     ucs_offsetof(IfaceConfig, max_group_size), UCS_CONFIG_TYPE_UINT},
    {"TIMEOUT", "2s",
     "Stall after which the members' processes are checked; a dead member "
     "fails the endpoint with UCS_ERR_CONNECTION_RESET.",
     ucs_offsetof(IfaceConfig, timeout), UCS_CONFIG_TYPE_TIME},
    {"ATTACH_TIMEOUT", "10s",
     "How long a group member waits for member 0 to create the segment.",
     ucs_offsetof(IfaceConfig, attach_timeout), UCS_CONFIG_TYPE_TIME},
    {nullptr}};

uct_tl_t g_tl = {"mm_bcast",
                 uct_sm_base_query_tl_devices,
                 iface_open,
                 {"mm_bcast transport",
                  "MM_BCAST_",
                  g_iface_config_table,
                  sizeof(IfaceConfig),
                  {}},
                 {}};

} // namespace

uct_component_t g_component = UCT_MM_COMMON_COMPONENT_INITIALIZER(
    "mm_bcast", "mm_bcast memory domain", "MM_BCAST_");

} // namespace uct_mm_bcast

// Registration when the library is loaded (LD_PRELOAD or linked).
__attribute__((constructor)) static void mm_bcast_register()
{
    uct_mm_common_register(&uct_mm_bcast::g_component, &uct_mm_bcast::g_tl);
}

__attribute__((destructor)) static void mm_bcast_unregister()
{
    uct_mm_common_unregister(&uct_mm_bcast::g_component, &uct_mm_bcast::g_tl);
}
