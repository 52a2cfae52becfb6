// SPDX-License-Identifier: BSD-3-Clause
// Shared-memory segments: create 0600 / attach / unlink, named or proc-link.
#include "uct_mm_common/segment.h"
#include "uct_mm_common/log.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace uct_mm_common {

std::string unique_segment_name(const std::string &prefix)
{
    static std::atomic<unsigned> counter{0};
    std::random_device rd;
    char buf[96];
    std::snprintf(buf, sizeof(buf), "/%s-%d-%u-%08x", prefix.c_str(),
                  static_cast<int>(getpid()), counter.fetch_add(1), rd());
    return buf;
}

bool unlink_segment(const std::string &name) noexcept
{
    return shm_unlink(name.c_str()) == 0;
}

bool segment_inode(const std::string &name, dev_t *dev, ino_t *ino) noexcept
{
    const int fd = shm_open(name.c_str(), O_RDONLY, 0);
    if (fd < 0) {
        return false;
    }
    struct stat st {};
    const bool ok = fstat(fd, &st) == 0;
    close(fd);
    *dev = st.st_dev;
    *ino = st.st_ino;
    return ok;
}

bool unlink_segment_of(const std::string &name, dev_t dev, ino_t ino) noexcept
{
    dev_t now_dev;
    ino_t now_ino;
    return segment_inode(name, &now_dev, &now_ino) && now_dev == dev &&
           now_ino == ino && unlink_segment(name);
}

Segment::~Segment()
{
    reset();
}

Segment::Segment(Segment &&other) noexcept
{
    *this = std::move(other);
}

Segment &Segment::operator=(Segment &&other) noexcept
{
    if (this != &other) {
        reset();
        addr_ = std::exchange(other.addr_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
        fd_ = std::exchange(other.fd_, -1);
        name_ = std::move(other.name_);
        unlink_on_destroy_ = std::exchange(other.unlink_on_destroy_, false);
    }
    return *this;
}

void Segment::reset() noexcept
{
    if (addr_ != nullptr) {
        munmap(addr_, bytes_);
        addr_ = nullptr;
    }
    if (fd_ >= 0) {
        close(fd_);
        fd_ = -1;
    }
    unlink();
    bytes_ = 0;
}

void Segment::unlink() noexcept
{
    if (unlink_on_destroy_) {
        shm_unlink(name_.c_str());
        unlink_on_destroy_ = false;
    }
}

namespace {

// Takes and maps every page of a fresh mapping writable before the fast
// path runs, so that no call of a collective pays for a page's first use
// (decision 0048). MADV_POPULATE_WRITE allocates the pages and fills this
// process's page table, failing (EFAULT) where a first touch would raise
// SIGBUS: a full /dev/shm is an error here. Then one atomic add of zero
// per page is this process's first write from user space, which a
// hypervisor that shadows guest page tables charges once per page and
// process (this VM: 5 us a page; a ring's first pass ran 25 us a
// position). Adding zero changes no byte: safe on a segment other
// members already use.
Status prefault_writable(void *addr, std::size_t bytes) noexcept
{
    // EINVAL: a kernel before 5.14, without MADV_POPULATE_WRITE.
    if (madvise(addr, bytes, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
        log(LogLevel::kError,
            "cannot take the %zu bytes of a shared segment (is /dev/shm "
            "full?): %s",
            bytes, std::strerror(errno));
        return Status::kNoMemory;
    }
    auto *p = static_cast<std::uint8_t *>(addr);
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    for (std::size_t off = 0; off < bytes; off += page) {
        __atomic_fetch_add(p + off, std::uint8_t{0}, __ATOMIC_RELAXED);
    }
    return Status::kOk;
}

} // namespace

Status Segment::map_fd(int fd, std::size_t bytes, Segment *seg_p) noexcept
{
    void *addr =
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) {
        log(LogLevel::kError, "mmap of %zu bytes failed: %s", bytes,
            std::strerror(errno));
        close(fd);
        return Status::kNoMemory;
    }
    if (prefault_writable(addr, bytes) != Status::kOk) {
        munmap(addr, bytes);
        close(fd);
        return Status::kNoMemory;
    }
    seg_p->addr_ = addr;
    seg_p->bytes_ = bytes;
    seg_p->fd_ = fd;
    return Status::kOk;
}

Status Segment::create(const std::string &name, std::size_t bytes,
                       Segment *seg_p) noexcept
{
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        log(LogLevel::kError, "shm_open(%s, create) failed: %s", name.c_str(),
            std::strerror(errno));
        return Status::kIoError;
    }
    // fchmod: the umask may have cleared bits but never adds any; be exact.
    if (fchmod(fd, 0600) != 0 ||
        ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        log(LogLevel::kError, "sizing %s to %zu bytes failed: %s", name.c_str(),
            bytes, std::strerror(errno));
        close(fd);
        shm_unlink(name.c_str());
        return Status::kIoError;
    }
    Segment seg;
    seg.name_ = name;
    seg.unlink_on_destroy_ = true; // until every member has attached
    const Status st = map_fd(fd, bytes, &seg);
    if (st != Status::kOk) {
        return st; // seg's destructor unlinks the name
    }
    *seg_p = std::move(seg);
    return Status::kOk;
}

Status Segment::check_trusted(int fd, const char *what) noexcept
{
    struct stat sb {};
    if (fstat(fd, &sb) != 0) {
        log(LogLevel::kError, "fstat of %s failed: %s", what,
            std::strerror(errno));
        return Status::kIoError;
    }
    if (sb.st_uid != geteuid() || (sb.st_mode & 07777) != 0600) {
        log(LogLevel::kError,
            "refusing shared memory %s: owner uid %u, mode %04o (need uid "
            "%u, mode 0600)",
            what, static_cast<unsigned>(sb.st_uid),
            static_cast<unsigned>(sb.st_mode & 07777),
            static_cast<unsigned>(geteuid()));
        return Status::kNotTrusted;
    }
    return Status::kOk;
}

// Opens `name` read-write once it exists and passes check_trusted; its size
// in *size_p (0 until the creator has sized it).
Status Segment::open_named(const std::string &name, int *fd_p,
                           std::size_t *size_p) noexcept
{
    const int fd = shm_open(name.c_str(), O_RDWR, 0);
    if (fd < 0) {
        return errno == ENOENT ? Status::kNotFound : Status::kIoError;
    }
    Status st = check_trusted(fd, name.c_str());
    struct stat sb {};
    if (st == Status::kOk && fstat(fd, &sb) != 0) {
        st = Status::kIoError;
    }
    if (st != Status::kOk) {
        close(fd);
        return st;
    }
    *fd_p = fd;
    *size_p = static_cast<std::size_t>(sb.st_size);
    return Status::kOk;
}

Status Segment::attach(const std::string &name, std::size_t bytes,
                       Segment *seg_p) noexcept
{
    int fd = -1;
    std::size_t size = 0;
    const Status st = open_named(name, &fd, &size);
    if (st != Status::kOk) {
        return st;
    }
    // The creator sizes the segment after creating it: not ready until then.
    if (size < bytes) {
        close(fd);
        return Status::kNotFound;
    }
    Segment seg;
    seg.name_ = name;
    const Status mst = map_fd(fd, bytes, &seg);
    if (mst == Status::kOk) {
        *seg_p = std::move(seg);
    }
    return mst;
}

Status Segment::attach_whole(const std::string &name, std::size_t min_bytes,
                             std::size_t max_bytes, Segment *seg_p) noexcept
{
    int fd = -1;
    std::size_t size = 0;
    const Status st = open_named(name, &fd, &size);
    if (st != Status::kOk) {
        return st;
    }
    if (size < min_bytes || size > max_bytes) {
        close(fd);
        if (size > max_bytes) {
            log(LogLevel::kError, "shared memory %s: %zu bytes, over %zu",
                name.c_str(), size, max_bytes);
            return Status::kExceedsLimit;
        }
        return Status::kNotFound;
    }
    Segment seg;
    seg.name_ = name;
    const Status mst = map_fd(fd, size, &seg);
    if (mst == Status::kOk) {
        *seg_p = std::move(seg);
    }
    return mst;
}

Status Segment::create_unlinked(const std::string &prefix, std::size_t bytes,
                                Segment *seg_p) noexcept
{
    Segment seg;
    const Status st = create(unique_segment_name(prefix), bytes, &seg);
    if (st != Status::kOk) {
        return st;
    }
    seg.unlink();
    *seg_p = std::move(seg);
    return Status::kOk;
}

Status Segment::attach_proc(pid_t pid, int fd, std::size_t bytes,
                            Segment *seg_p) noexcept
{
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%d/fd/%d", static_cast<int>(pid),
                  fd);
    const int my_fd = open(path, O_RDWR);
    if (my_fd < 0) {
        const int err = errno;
        log(LogLevel::kError, "open(%s) failed: %s", path, std::strerror(err));
        return err == ENOENT ? Status::kPeerDead : Status::kIoError;
    }
    Status st = check_trusted(my_fd, path);
    struct stat sb {};
    if (st == Status::kOk && (fstat(my_fd, &sb) != 0 ||
                              static_cast<std::size_t>(sb.st_size) < bytes)) {
        log(LogLevel::kError, "%s is smaller than its address says (%zu)", path,
            bytes);
        st = Status::kInvalidParam;
    }
    if (st != Status::kOk) {
        close(my_fd);
        return st;
    }
    Segment seg;
    st = map_fd(my_fd, bytes, &seg);
    if (st == Status::kOk) {
        *seg_p = std::move(seg);
    }
    return st;
}

} // namespace uct_mm_common
