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
     "Slots of the point-to-point receive FIFO, a power of two.",
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
    {"MAX_GROUP_SIZE", "64", "Largest group (members; at most 256).",
     ucs_offsetof(IfaceConfig, max_group_size), UCS_CONFIG_TYPE_UINT},
    {"TIMEOUT", "2s",
     "A group member whose process died is reported within this time "
     "(UCS_ERR_CONNECTION_RESET to every member waiting for it), and the "
     "dead peer of an endpoint whose pending sends wait on its full FIFO "
     "(through the iface error handler).",
     ucs_offsetof(IfaceConfig, timeout), UCS_CONFIG_TYPE_TIME},
    {"ATTACH_TIMEOUT", "10s",
     "Time every member of a new group has to join it; later, the group "
     "fails with UCS_ERR_ENDPOINT_TIMEOUT.",
     ucs_offsetof(IfaceConfig, attach_timeout), UCS_CONFIG_TYPE_TIME},
    {"MAX_OUTSTANDING", "16",
     "Group posts per member not yet complete; more return "
     "UCS_ERR_NO_RESOURCE.",
     ucs_offsetof(IfaceConfig, max_outstanding), UCS_CONFIG_TYPE_UINT},
    {"GROUP_RING_SIZE", "64",
     "Positions of a group's ring (a power of two): how many fragments "
     "the root may be ahead of the slowest receiver. Member 0's is used.",
     ucs_offsetof(IfaceConfig, group_ring_size), UCS_CONFIG_TYPE_UINT},
    {"GROUP_SEG_SIZE", "64k",
     "Payload bytes of a group ring position (a multiple of 64): a message "
     "takes consecutive positions, each holding an eighth of it, from 8 "
     "KiB up to this size. Member 0's is used.",
     ucs_offsetof(IfaceConfig, group_seg_size), UCS_CONFIG_TYPE_MEMUNITS},
    {"CMA_THRESH", "inf",
     "Group messages from this size go by CMA: the root publishes its "
     "buffer's address and every receiver reads it with process_vm_readv "
     "straight into its posted buffer; the send completes once all have. "
     "Below, the root copies ring fragments (perftest/mm/RESULTS.md). "
     "Member 0's is used.",
     ucs_offsetof(IfaceConfig, cma_thresh), UCS_CONFIG_TYPE_MEMUNITS},
    {"CMA_MAX", "inf",
     "Group messages from this size go through the ring again (CMA only "
     "from CMA_THRESH up to this size): a large read by one receiver can "
     "take longer than the ring's copies overlapped. Member 0's is used.",
     ucs_offsetof(IfaceConfig, cma_max), UCS_CONFIG_TYPE_MEMUNITS},
    {"STREAM_THRESH", "16k",
     "Group messages from this size are written into the ring with "
     "non-temporal stores: the receivers read them from memory instead of "
     "from the root's cache, which is slow where their cores are far "
     "apart (decision 0047). This member's own; inf: plain copies.",
     ucs_offsetof(IfaceConfig, stream_thresh), UCS_CONFIG_TYPE_MEMUNITS},
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

UCT_MM_COMMON_PLUGIN(mm_bcast, &uct_mm_bcast::g_component, &uct_mm_bcast::g_tl)
