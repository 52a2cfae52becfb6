// SPDX-License-Identifier: BSD-3-Clause
// CRC-32C (Castagnoli): the check every ud_mcast packet carries. SSE4.2's
// crc32 instruction where the CPU has it, a table otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

namespace uct_ud_mcast {

/// CRC-32C of `len` bytes, continuing from `crc` (0 to start).
uint32_t crc32c(uint32_t crc, const void *data, size_t len) noexcept;

} // namespace uct_ud_mcast
