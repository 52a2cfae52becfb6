// SPDX-License-Identifier: BSD-3-Clause
// Thread ranks, shared anonymous mappings and the rank-side check helper.
#include "ucg_test/thread_ranks.h"
#include "ucg_test/check.h"

#include <exception>
#include <mutex>
#include <new>
#include <sys/mman.h>
#include <thread>
#include <vector>

namespace ucg_test {

void fail_check(const char *file, int line, const char *expr,
                const std::string &detail)
{
    std::string msg = std::string(file) + ":" + std::to_string(line) +
                      ": check failed: " + expr;
    if (!detail.empty()) {
        msg += " (" + detail + ")";
    }
    throw RankFailure(msg);
}

void run_thread_ranks(int num_ranks, const std::function<void(int rank)> &body)
{
    std::mutex lock;
    std::exception_ptr first;
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(num_ranks));
    for (int r = 0; r < num_ranks; ++r) {
        threads.emplace_back([&, r] {
            try {
                body(r);
            } catch (...) {
                std::lock_guard<std::mutex> guard(lock);
                if (!first) {
                    first = std::current_exception();
                }
            }
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    if (first) {
        std::rethrow_exception(first);
    }
}

SharedMapping::SharedMapping(std::size_t bytes) : addr_(nullptr), bytes_(bytes)
{
    addr_ = mmap(nullptr, bytes == 0 ? 1 : bytes, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (addr_ == MAP_FAILED) {
        throw std::bad_alloc();
    }
}

SharedMapping::~SharedMapping()
{
    munmap(addr_, bytes_ == 0 ? 1 : bytes_);
}

} // namespace ucg_test
