// SPDX-License-Identifier: BSD-3-Clause
// What an attacker that sees a group's packets but not its key sends: its
// own versions of each packet, sealed (a valid CRC: the seed is in the
// clear header) with a key of its choosing. Used by the core's sim tests
// and by the attacker process of the UDP tests (udp_group.h).
#pragma once

#include "packet.h"

#include <vector>

namespace uct_ud_mcast::test {

/// The forgeries of the packet p[0, n) (parsed already): for DATA, first
/// its data with other bytes (in the user's buffer if taken); then, from
/// its header, an ACK of the sender's stream that claims everything
/// consumed (NACK repair would stop), a READY of another epoch, a JOIN of
/// another incarnation, and an ABORT that blames member 0. Each sealed with
/// `key`.
std::vector<std::vector<uint8_t>> forgeries(const uint8_t *p, size_t n,
                                            const MacKey &key);

} // namespace uct_ud_mcast::test
