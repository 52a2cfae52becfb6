// SPDX-License-Identifier: BSD-3-Clause
// POSIX shared-memory segments for the mm transports. Two ways to share one:
//  - named: the creator makes "/<name>" (0600, O_EXCL); the others attach by
//    name; the member that completes the expected attach count unlinks it,
//    and a creator that fails or is destroyed before that unlinks it too.
//  - proc-link: the creator unlinks the name right after creating it and
//    keeps the fd; others open /proc/<pid>/fd/<fd>. Nothing is ever left in
//    /dev/shm, whoever crashes (used when the attachers are not known).
// Every attach refuses a segment that another user owns or that is not
// mode 0600 (kNotTrusted, one log line): a local user of another uid could
// otherwise pre-create a name, or hand out an fd, and read or inject data.
#pragma once

#include "uct_mm_common/status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace uct_mm_common {

/// A unique POSIX shm name: "/<prefix>-<pid>-<counter>-<random hex>".
std::string unique_segment_name(const std::string &prefix);

/// Unlinks a named segment; true when this call removed it.
bool unlink_segment(const std::string &name) noexcept;

/// The inode the name `name` names now; false when it names nothing.
bool segment_inode(const std::string &name, dev_t *dev, ino_t *ino) noexcept;

/// Unlinks `name` only while it names the inode (dev, ino): a new group
/// may have taken the name since. True when this call removed it.
bool unlink_segment_of(const std::string &name, dev_t dev, ino_t ino) noexcept;

/// One mapping of a shared-memory segment (move-only).
class Segment {
  public:
    Segment() = default;
    ~Segment();
    Segment(Segment &&other) noexcept;
    Segment &operator=(Segment &&other) noexcept;
    Segment(const Segment &) = delete;
    Segment &operator=(const Segment &) = delete;

    /// Creates `name` with mode 0600 and `bytes` zero-filled bytes, mapped.
    /// The segment stays linked until unlink() or this object's death.
    static Status create(const std::string &name, std::size_t bytes,
                         Segment *seg_p) noexcept;
    /// Maps an existing named segment; kNotFound while it does not exist
    /// or is shorter than `bytes` (its creator has not sized it yet).
    static Status attach(const std::string &name, std::size_t bytes,
                         Segment *seg_p) noexcept;
    /// Maps all of an existing named segment whose size is unknown to the
    /// caller: kNotFound while it is absent or under `min_bytes`,
    /// kExceedsLimit over `max_bytes`.
    static Status attach_whole(const std::string &name, std::size_t min_bytes,
                               std::size_t max_bytes, Segment *seg_p) noexcept;
    /// Proc-link mode: creates a unique segment from `prefix`, unlinks it at
    /// once and keeps the fd (see fd(); share getpid() and fd()).
    static Status create_unlinked(const std::string &prefix, std::size_t bytes,
                                  Segment *seg_p) noexcept;
    /// Opens /proc/<pid>/fd/<fd> of the creator and maps it.
    static Status attach_proc(pid_t pid, int fd, std::size_t bytes,
                              Segment *seg_p) noexcept;

    /// Removes the name (named mode; idempotent, safe from any member).
    void unlink() noexcept;
    /// Gives up the duty to unlink the name (another member takes it).
    void disown() noexcept { unlink_on_destroy_ = false; }
    /// Whether this object still owns the duty to unlink the name.
    bool linked() const noexcept { return unlink_on_destroy_; }

    void *data() const noexcept { return addr_; }
    std::size_t size() const noexcept { return bytes_; }
    int fd() const noexcept { return fd_; }
    const std::string &name() const noexcept { return name_; }

    /// kOk when `fd` is owned by the effective uid with mode exactly 0600,
    /// else kNotTrusted (logged once, naming `what`), or kIoError.
    static Status check_trusted(int fd, const char *what) noexcept;

  private:
    static Status open_named(const std::string &name, int *fd_p,
                             std::size_t *size_p) noexcept;
    static Status map_fd(int fd, std::size_t bytes, Segment *seg_p) noexcept;
    void reset() noexcept;

    void *addr_ = nullptr;
    std::size_t bytes_ = 0;
    int fd_ = -1;
    std::string name_;
    bool unlink_on_destroy_ = false; ///< creator until the name is unlinked
};

} // namespace uct_mm_common
