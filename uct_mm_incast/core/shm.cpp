// SPDX-License-Identifier: BSD-3-Clause
// POSIX and memfd segments for mm_incast.
#include "shm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace uct_mm_incast {
namespace {

ucs_status_t map_fd(int fd, std::size_t bytes, Mapping *out, void **addr)
{
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return UCS_ERR_SHMEM_SEGMENT;
    }
    (void)out;
    *addr = p;
    return UCS_OK;
}

} // namespace

Mapping &Mapping::operator=(Mapping &&other) noexcept
{
    if (this != &other) {
        reset();
        addr_ = other.addr_;
        bytes_ = other.bytes_;
        fd_ = other.fd_;
        other.addr_ = nullptr;
        other.bytes_ = 0;
        other.fd_ = -1;
    }
    return *this;
}

void Mapping::reset()
{
    if (addr_ != nullptr) {
        munmap(addr_, bytes_);
    }
    if (fd_ >= 0) {
        close(fd_);
    }
    addr_ = nullptr;
    bytes_ = 0;
    fd_ = -1;
}

ucs_status_t Mapping::create_named(const std::string &name, std::size_t bytes,
                                   Mapping *out)
{
    int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        return (errno == EEXIST) ? UCS_ERR_ALREADY_EXISTS
                                 : UCS_ERR_SHMEM_SEGMENT;
    }
    // umask may have narrowed the mode; 0600 exactly is what we promise.
    if ((fchmod(fd, 0600) != 0) ||
        (ftruncate(fd, static_cast<off_t>(bytes)) != 0)) {
        close(fd);
        shm_unlink(name.c_str());
        return UCS_ERR_NO_MEMORY;
    }
    void *addr = nullptr;
    ucs_status_t status = map_fd(fd, bytes, out, &addr);
    if (status != UCS_OK) {
        shm_unlink(name.c_str());
        return status;
    }
    out->reset();
    out->addr_ = addr;
    out->bytes_ = bytes;
    close(fd);
    return UCS_OK;
}

ucs_status_t Mapping::open_named(const std::string &name, std::size_t min_bytes,
                                 Mapping *out)
{
    int fd = shm_open(name.c_str(), O_RDWR, 0);
    if (fd < 0) {
        return (errno == ENOENT) ? UCS_ERR_NO_ELEM : UCS_ERR_SHMEM_SEGMENT;
    }
    struct stat st {};
    if ((fstat(fd, &st) != 0) ||
        (static_cast<std::size_t>(st.st_size) < min_bytes)) {
        close(fd);
        return UCS_ERR_NO_ELEM;
    }
    const auto bytes = static_cast<std::size_t>(st.st_size);
    void *addr = nullptr;
    ucs_status_t status = map_fd(fd, bytes, out, &addr);
    if (status != UCS_OK) {
        return status;
    }
    out->reset();
    out->addr_ = addr;
    out->bytes_ = bytes;
    close(fd);
    return UCS_OK;
}

ucs_status_t Mapping::create_anon(const char *tag, std::size_t bytes,
                                  Mapping *out)
{
    int fd = memfd_create(tag, MFD_CLOEXEC);
    if (fd < 0) {
        return UCS_ERR_SHMEM_SEGMENT;
    }
    if ((fchmod(fd, 0600) != 0) ||
        (ftruncate(fd, static_cast<off_t>(bytes)) != 0)) {
        close(fd);
        return UCS_ERR_NO_MEMORY;
    }
    void *addr = nullptr;
    ucs_status_t status = map_fd(fd, bytes, out, &addr);
    if (status != UCS_OK) {
        return status;
    }
    out->reset();
    out->addr_ = addr;
    out->bytes_ = bytes;
    out->fd_ = fd;
    return UCS_OK;
}

ucs_status_t Mapping::open_peer(int pid, int fd, std::size_t bytes,
                                Mapping *out)
{
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
    int local = open(path, O_RDWR | O_CLOEXEC);
    if (local < 0) {
        return UCS_ERR_UNREACHABLE;
    }
    void *addr = nullptr;
    ucs_status_t status = map_fd(local, bytes, out, &addr);
    if (status != UCS_OK) {
        return status;
    }
    out->reset();
    out->addr_ = addr;
    out->bytes_ = bytes;
    close(local);
    return UCS_OK;
}

void unlink_named(const std::string &name)
{
    shm_unlink(name.c_str());
}

} // namespace uct_mm_incast
