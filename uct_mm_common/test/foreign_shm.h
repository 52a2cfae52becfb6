// SPDX-License-Identifier: BSD-3-Clause
// A segment another local user made: pre-created under a name, owned by
// "nobody", mode 0666 (what an attacker would leave for a victim). Needs
// root to give it away; available() says whether the test can run.
#pragma once

#include "ucg_test/shm_names.h"

#include <fcntl.h>
#include <pwd.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace uct_mm_common::test {

class ForeignSegment {
  public:
    /// Whether this process may create one (it runs as root).
    static bool available() { return geteuid() == 0; }

    ForeignSegment(const std::string &name, std::size_t bytes) : name_(name)
    {
        const passwd *nobody = getpwnam("nobody");
        fd_ = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0666);
        if (fd_ >= 0 && nobody != nullptr &&
            ftruncate(fd_, static_cast<off_t>(bytes)) == 0 &&
            fchmod(fd_, 0666) == 0 &&
            fchown(fd_, nobody->pw_uid, nobody->pw_gid) == 0) {
            ok_ = true;
        }
    }
    ~ForeignSegment()
    {
        if (fd_ >= 0) {
            close(fd_);
            shm_unlink(name_.c_str());
        }
    }
    ForeignSegment(const ForeignSegment &) = delete;
    ForeignSegment &operator=(const ForeignSegment &) = delete;

    bool ok() const { return ok_; }
    int fd() const { return fd_; }
    const std::string &name() const { return name_; }

  private:
    std::string name_;
    int fd_ = -1;
    bool ok_ = false;
};

} // namespace uct_mm_common::test
