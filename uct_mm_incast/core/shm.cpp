// SPDX-License-Identifier: BSD-3-Clause
// uct_mm_common segments with ucs_status_t results for the mm_incast core.
#include "shm.h"

namespace uct_mm_incast {
namespace {

using uct_mm_common::Segment;
using uct_mm_common::Status;

ucs_status_t to_ucs(Status s)
{
    switch (s) {
    case Status::kOk:
        return UCS_OK;
    case Status::kNotFound:
        return UCS_ERR_NO_ELEM;
    case Status::kPeerDead:
        return UCS_ERR_UNREACHABLE;
    case Status::kNoMemory:
        return UCS_ERR_NO_MEMORY;
    case Status::kInvalidParam:
        return UCS_ERR_INVALID_PARAM;
    default:
        return UCS_ERR_SHMEM_SEGMENT;
    }
}

} // namespace

ucs_status_t Mapping::create_named(const std::string &name, std::size_t bytes,
                                   Mapping *out)
{
    return to_ucs(Segment::create(name, bytes, &out->seg_));
}

ucs_status_t Mapping::open_named(const std::string &name, std::size_t bytes,
                                 Mapping *out)
{
    return to_ucs(Segment::attach(name, bytes, &out->seg_));
}

ucs_status_t Mapping::create_anon(const char *tag, std::size_t bytes,
                                  Mapping *out)
{
    return to_ucs(Segment::create_unlinked(tag, bytes, &out->seg_));
}

ucs_status_t Mapping::open_peer(int pid, int fd, std::size_t bytes,
                                Mapping *out)
{
    return to_ucs(Segment::attach_proc(pid, fd, bytes, &out->seg_));
}

void unlink_named(const std::string &name)
{
    uct_mm_common::unlink_segment(name);
}

} // namespace uct_mm_incast
