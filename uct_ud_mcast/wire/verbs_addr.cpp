// SPDX-License-Identifier: BSD-3-Clause
// Verbs wire helpers that need no open device: addresses, device names,
// RoCE GIDs, and the list of active ports.
#include "verbs_wire.h"

#include <cstring>
#include <infiniband/verbs.h>

namespace uct_ud_mcast {

void pack_verbs_addr(const VerbsAddr &a, uint8_t *out) noexcept
{
    std::memset(out, 0, kWireAddrBytes);
    std::memcpy(out, a.gid, 16);
    std::memcpy(out + 16, &a.lid, 2);
    std::memcpy(out + 18, &a.qpn, 4);
}

VerbsAddr unpack_verbs_addr(const uint8_t *in) noexcept
{
    VerbsAddr a{};
    std::memcpy(a.gid, in, 16);
    std::memcpy(&a.lid, in + 16, 2);
    std::memcpy(&a.qpn, in + 18, 4);
    return a;
}

bool parse_verbs_device(const std::string &name, std::string *dev,
                        uint8_t *port)
{
    const size_t colon = name.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 >= name.size()) {
        return false;
    }
    unsigned p = 0;
    for (size_t i = colon + 1; i < name.size(); ++i) {
        if (name[i] < '0' || name[i] > '9' || p > 25) {
            return false;
        }
        p = p * 10 + static_cast<unsigned>(name[i] - '0');
    }
    if (p < 1 || p > 254) {
        return false;
    }
    *dev = name.substr(0, colon);
    *port = static_cast<uint8_t>(p);
    return true;
}

uint32_t gid_ipv4(const uint8_t gid[16]) noexcept
{
    static const uint8_t kMapped[12] = {0, 0, 0, 0, 0,    0,
                                        0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(gid, kMapped, 12) != 0) {
        return 0;
    }
    uint32_t ip;
    std::memcpy(&ip, gid + 12, 4);
    return ip; // network order
}

std::vector<std::string> verbs_devices()
{
    std::vector<std::string> out;
    int n = 0;
    ibv_device **list = ibv_get_device_list(&n);
    for (int i = 0; list != nullptr && i < n; ++i) {
        ibv_context *ctx = ibv_open_device(list[i]);
        ibv_device_attr attr{};
        if (ctx != nullptr && ibv_query_device(ctx, &attr) == 0) {
            for (uint8_t p = 1; p <= attr.phys_port_cnt; ++p) {
                ibv_port_attr pa{};
                if (ibv_query_port(ctx, p, &pa) == 0 &&
                    pa.state == IBV_PORT_ACTIVE) {
                    out.push_back(std::string(ibv_get_device_name(list[i])) +
                                  ":" + std::to_string(p));
                }
            }
        }
        if (ctx != nullptr) {
            ibv_close_device(ctx);
        }
    }
    if (list != nullptr) {
        ibv_free_device_list(list);
    }
    return out;
}

} // namespace uct_ud_mcast
