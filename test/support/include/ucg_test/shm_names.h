// SPDX-License-Identifier: BSD-3-Clause
// Shared-memory names unique per test, and the check that none is left.
#pragma once

#include <string>
#include <vector>

namespace ucg_test {

/// A POSIX shm name ("/ucgt-<pid>-<n>-<tag>") unique within this machine
/// for the life of this process.
std::string unique_shm_name(const std::string &tag);

/// What every name unique_shm_name makes in this process starts with
/// ("ucgt-<pid>-", without the '/'), for list_shm and ShmSweeper.
std::string own_shm_prefix();

/// Entries of /dev/shm whose names start with `prefix` (without the '/').
std::vector<std::string> list_shm(const std::string &prefix);

/// Unlinks every /dev/shm entry starting with `prefix`; returns how many.
int unlink_shm(const std::string &prefix);

/// RAII guard: on destruction, unlinks every segment whose name starts with
/// the prefix, and remembers how many it had to remove (a leak).
class ShmSweeper {
  public:
    explicit ShmSweeper(std::string prefix) : prefix_(std::move(prefix)) {}
    ~ShmSweeper() { unlink_shm(prefix_); }
    ShmSweeper(const ShmSweeper &) = delete;
    ShmSweeper &operator=(const ShmSweeper &) = delete;
    /// Segments left behind right now.
    std::vector<std::string> leftovers() const { return list_shm(prefix_); }

  private:
    std::string prefix_;
};

} // namespace ucg_test
