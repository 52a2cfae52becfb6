// SPDX-License-Identifier: BSD-3-Clause
// A uct_group_h (uct_group.h) around a UCX-free GroupCore: the ops table
// both mm transports share, the parameter checks of create, and the worker
// progress callback, registered while the core has work (posts outstanding
// or connecting) and for kIdleProgressCalls calls after, so an idle group
// costs nothing and back-to-back messages register nothing.
#pragma once

#include "uct_mm_common/group_core.h"

#include <uct_group.h>

#include <cstring>
#include <memory>

namespace uct_mm_common {

/// An enum field of a caller's C struct as the int it stored: a value
/// outside the enum's range may not even be loaded as the enum type.
template <typename E> int raw(const E &field) noexcept
{
    static_assert(sizeof(E) == sizeof(int));
    int v;
    std::memcpy(&v, &field, sizeof(v));
    return v;
}

/// A caller's operator or datatype field; out of range: the LAST value,
/// which no kernel accepts.
inline ucg_op_t op_of(const ucg_op_t &field) noexcept
{
    const int v = raw(field);
    return v >= 0 && v < UCG_OP_LAST ? static_cast<ucg_op_t>(v) : UCG_OP_LAST;
}
inline ucg_dtype_t dtype_of(const ucg_dtype_t &field) noexcept
{
    const int v = raw(field);
    return v >= 0 && v < UCG_DTYPE_LAST ? static_cast<ucg_dtype_t>(v)
                                        : UCG_DTYPE_LAST;
}

/// Progress calls in a row that find a group idle before its callback
/// leaves the worker's progress (a next message often follows at once).
constexpr unsigned kIdleProgressCalls = 1024;

/// Checks uct_group_params_t (every field, member index, addresses) and
/// the group size against an iface's limit: UCS_OK, or a logged
/// UCS_ERR_INVALID_PARAM / UCS_ERR_EXCEEDS_LIMIT.
ucs_status_t check_group_params(const char *tl, const uct_group_params_t *p,
                                unsigned max_group_size,
                                uct_group_h *group_p) noexcept;

/// Wraps `core` (which has started connecting) for `worker`; writes
/// *group_p. UCS_ERR_NO_MEMORY if the handle cannot be allocated.
ucs_status_t wrap_group(const char *tl, std::unique_ptr<GroupCore> core,
                        uct_worker_h worker, uct_group_h *group_p) noexcept;

/// The core of a group made by wrap_group, or nullptr for another handle.
GroupCore *core_of(uct_group_h group) noexcept;

/// uct_group_attr_t from core limits.
void fill_group_attr(const GroupLimits &limits,
                     uct_group_attr_t *attr) noexcept;

} // namespace uct_mm_common
