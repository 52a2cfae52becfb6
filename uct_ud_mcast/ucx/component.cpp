// SPDX-License-Identifier: BSD-3-Clause
// ud_mcast registration: configuration table (UCX_UD_MCAST_*) and the
// transport, in a component built like the mm transports' (the md pins
// nothing: sends copy into the send window), registered from the library
// constructor.
#include "ud_mcast.h"

#include "component.h"

namespace uct_ud_mcast {
namespace {

ucs_config_field_t g_iface_config_table[] = {
    {"", "", nullptr, ucs_offsetof(IfaceConfig, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},
    {"MAX_PACKET", "0",
     "Largest datagram in bytes, the 64-byte header included (UDP wire; "
     "verbs uses the port MTU). 0 takes what the interface carries without "
     "IP fragments (MTU less 28), at most 8K.",
     ucs_offsetof(IfaceConfig, max_packet), UCS_CONFIG_TYPE_MEMUNITS},
    {"WINDOW", "64",
     "Packets a sender may have in flight (not yet consumed by every "
     "member); a power of two. Also what a receiver stores per sender.",
     ucs_offsetof(IfaceConfig, window), UCS_CONFIG_TYPE_UINT},
    {"GROUP_WINDOW", "256",
     "WINDOW of a group's sessions: with the runs a sender hands the wire, "
     "a window of 64 bounded a bcast over a bridge (4 hosts) at ~75 MB/s, "
     "256 at ~115. Its store (packets of one MTU) is allocated per group, "
     "a receiver's per sender only on reordering.",
     ucs_offsetof(IfaceConfig, group_window), UCS_CONFIG_TYPE_UINT},
    {"ACK_FANIN", "4",
     "Children per node of the ACK tree: a sender hears ACKs from at most "
     "this many members, whatever the group size.",
     ucs_offsetof(IfaceConfig, ack_fanin), UCS_CONFIG_TYPE_UINT},
    {"ACK_DELAY", "100us", "Coalescing delay of cumulative ACKs.",
     ucs_offsetof(IfaceConfig, ack_delay), UCS_CONFIG_TYPE_TIME},
    {"NACK_DELAY", "50us",
     "Grace for reordering before a gap is NACKed; a gap is NACKed again "
     "with backoff, and a sender resends a packet at most once per ms.",
     ucs_offsetof(IfaceConfig, nack_delay), UCS_CONFIG_TYPE_TIME},
    {"RTO_MIN", "5ms", "First resend timeout (doubles without progress).",
     ucs_offsetof(IfaceConfig, rto_min), UCS_CONFIG_TYPE_TIME},
    {"RTO_MAX", "500ms", "Largest resend timeout.",
     ucs_offsetof(IfaceConfig, rto_max), UCS_CONFIG_TYPE_TIME},
    {"TIMEOUT", "10s",
     "Silence after which a member we wait on is dead: the group or "
     "endpoint fails with UCS_ERR_CONNECTION_RESET (probed from a fifth "
     "of it).",
     ucs_offsetof(IfaceConfig, timeout), UCS_CONFIG_TYPE_TIME},
    {"ATTACH_TIMEOUT", "30s",
     "How long the join barrier waits for every member; then "
     "UCS_ERR_ENDPOINT_TIMEOUT.",
     ucs_offsetof(IfaceConfig, attach_timeout), UCS_CONFIG_TYPE_TIME},
    {"MAX_OUTSTANDING", "16", "Group posts per member not yet complete.",
     ucs_offsetof(IfaceConfig, max_outstanding), UCS_CONFIG_TYPE_UINT},
    {"MAX_GROUP_SIZE", "1024", "Largest group (hard limit 1024).",
     ucs_offsetof(IfaceConfig, max_group_size), UCS_CONFIG_TYPE_UINT},
    {"MAX_PEERS", "4096",
     "Point-to-point peers per iface (each an authenticated session, kept "
     "for the iface's lifetime); past it ep_create fails with "
     "UCS_ERR_EXCEEDS_LIMIT and a new peer's JOIN is dropped.",
     ucs_offsetof(IfaceConfig, max_peers), UCS_CONFIG_TYPE_UINT},
    {"PORT_BASE", "40000",
     "UDP wire: group ports are this plus a hash of the group (0..4095).",
     ucs_offsetof(IfaceConfig, port_base), UCS_CONFIG_TYPE_UINT},
    {"TTL", "1", "UDP wire: multicast TTL (routers crossed + 1).",
     ucs_offsetof(IfaceConfig, ttl), UCS_CONFIG_TYPE_UINT},
    {"RCVBUF", "4m", "UDP wire: socket receive buffer.",
     ucs_offsetof(IfaceConfig, rcvbuf), UCS_CONFIG_TYPE_MEMUNITS},
    {"RX_LOSS", "0",
     "Test hook: fraction (0..1) of received packets dropped on purpose, "
     "to exercise and measure the reliability protocol.",
     ucs_offsetof(IfaceConfig, rx_loss), UCS_CONFIG_TYPE_DOUBLE},
    {"GID_INDEX", "0",
     "Verbs wire: GID table entry of the port (RoCE: the RoCE v2 IPv4 one).",
     ucs_offsetof(IfaceConfig, gid_index), UCS_CONFIG_TYPE_UINT},
    {"BIND_ADDR", "",
     "Verbs wire: IPv4 address of the device (IPoIB or RoCE) that rdma_cm "
     "joins groups from; empty takes it from an IPv4-mapped GID.",
     ucs_offsetof(IfaceConfig, bind_addr), UCS_CONFIG_TYPE_STRING},
    {nullptr}};

uct_tl_t g_tl = {"ud_mcast",
                 query_devices,
                 iface_open,
                 {"ud_mcast transport",
                  "UD_MCAST_",
                  g_iface_config_table,
                  sizeof(IfaceConfig),
                  {}},
                 {}};

} // namespace

uct_component_t g_component = UCT_MM_COMMON_COMPONENT_INITIALIZER(
    "ud_mcast", "ud_mcast memory domain", "UD_MCAST_");

} // namespace uct_ud_mcast

UCT_MM_COMMON_PLUGIN(ud_mcast, &uct_ud_mcast::g_component, &uct_ud_mcast::g_tl)
