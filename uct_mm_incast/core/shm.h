// SPDX-License-Identifier: BSD-3-Clause
// Shared segments: named POSIX segments (0600, exclusive create, unlink on
// demand) for groups, and anonymous memfd segments, attached by peers
// through /proc/<pid>/fd/<fd>, for per-iface receive FIFOs (no name exists,
// so a crash cannot leave one behind).
#pragma once

#include <uct_mm_incast.h>

#include <cstddef>
#include <string>

namespace uct_mm_incast {

class Mapping {
  public:
    Mapping() = default;
    ~Mapping() { reset(); }
    Mapping(Mapping &&other) noexcept
    {
        *this = static_cast<Mapping &&>(other);
    }
    Mapping &operator=(Mapping &&other) noexcept;
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;

    void *data() const { return addr_; }
    std::size_t size() const { return bytes_; }
    int fd() const { return fd_; }
    void reset();

    /// Creates `name` exclusively with mode 0600 and maps `bytes` of it.
    static ucs_status_t create_named(const std::string &name, std::size_t bytes,
                                     Mapping *out);
    /// Opens an existing `name`; UCS_ERR_NO_ELEM when absent or still
    /// shorter than `min_bytes` (not sized by its creator yet).
    static ucs_status_t open_named(const std::string &name,
                                   std::size_t min_bytes, Mapping *out);
    /// Anonymous segment (memfd, 0600) kept open for peers to attach.
    static ucs_status_t create_anon(const char *tag, std::size_t bytes,
                                    Mapping *out);
    /// Maps another process's memfd through /proc/<pid>/fd/<fd>.
    static ucs_status_t open_peer(int pid, int fd, std::size_t bytes,
                                  Mapping *out);

  private:
    void *addr_ = nullptr;
    std::size_t bytes_ = 0;
    int fd_ = -1;
};

/// shm_unlink that ignores a name already gone.
void unlink_named(const std::string &name);

} // namespace uct_mm_incast
