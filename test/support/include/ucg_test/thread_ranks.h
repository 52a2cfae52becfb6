// SPDX-License-Identifier: BSD-3-Clause
// Ranks as threads of one process sharing one mapping, so ThreadSanitizer
// sees the races between them. The first exception thrown by a rank is
// rethrown to the caller after all ranks have joined.
#pragma once

#include <cstddef>
#include <functional>

namespace ucg_test {

/// Runs body(rank) on `num_ranks` threads and joins them.
void run_thread_ranks(int num_ranks, const std::function<void(int rank)> &body);

/// An anonymous shared mapping (MAP_SHARED, zero-filled) that survives
/// fork, so the same helper serves threads and processes.
class SharedMapping {
  public:
    explicit SharedMapping(std::size_t bytes);
    ~SharedMapping();
    SharedMapping(const SharedMapping &) = delete;
    SharedMapping &operator=(const SharedMapping &) = delete;

    void *data() const { return addr_; }
    std::size_t size() const { return bytes_; }
    template <typename T> T *as() const { return static_cast<T *>(addr_); }

  private:
    void *addr_;
    std::size_t bytes_;
};

} // namespace ucg_test
