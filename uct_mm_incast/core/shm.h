// SPDX-License-Identifier: BSD-3-Clause
// mm_incast's view of shared segments, over uct_mm_common::Segment (shared
// with mm_bcast): named segments (0600, exclusive create) for groups and
// proc-link segments (unlinked at once, mapped by peers through
// /proc/<pid>/fd/<fd>) for the per-iface receive FIFOs; results as
// ucs_status_t.
#pragma once

#include <uct_mm_common/segment.h>
#include <uct_mm_incast.h>

#include <cstddef>
#include <string>

namespace uct_mm_incast {

class Mapping {
  public:
    void *data() const { return seg_.data(); }
    std::size_t size() const { return seg_.size(); }
    int fd() const { return seg_.fd(); }
    void reset() { seg_ = uct_mm_common::Segment(); }

    /// Creates `name` exclusively, mode 0600, `bytes` long, and maps it.
    static ucs_status_t create_named(const std::string &name, std::size_t bytes,
                                     Mapping *out);
    /// Maps the first `bytes` of an existing `name`; UCS_ERR_NO_ELEM while
    /// it is absent or shorter (its creator has not sized it yet).
    static ucs_status_t open_named(const std::string &name, std::size_t bytes,
                                   Mapping *out);
    /// A segment with no name left (proc-link) for peers to map by pid/fd.
    static ucs_status_t create_anon(const char *tag, std::size_t bytes,
                                    Mapping *out);
    /// Maps another process's proc-link segment.
    static ucs_status_t open_peer(int pid, int fd, std::size_t bytes,
                                  Mapping *out);

  private:
    uct_mm_common::Segment seg_;
};

/// Unlinks a named segment; a name already gone is fine.
void unlink_named(const std::string &name);

} // namespace uct_mm_incast
