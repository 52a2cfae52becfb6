// SPDX-License-Identifier: BSD-3-Clause
// Unique shared-memory names for tests and the sweep of /dev/shm.
#include "ucg_test/shm_names.h"

#include <atomic>
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

namespace ucg_test {

std::string own_shm_prefix()
{
    return "ucgt-" + std::to_string(getpid()) + "-";
}

std::string unique_shm_name(const std::string &tag)
{
    static std::atomic<unsigned> counter{0};
    return "/" + own_shm_prefix() + std::to_string(counter.fetch_add(1)) + "-" +
           tag;
}

std::vector<std::string> list_shm(const std::string &prefix)
{
    std::vector<std::string> names;
    DIR *dir = opendir("/dev/shm");
    if (dir == nullptr) {
        return names;
    }
    while (const dirent *e = readdir(dir)) {
        std::string name = e->d_name;
        if (name.compare(0, prefix.size(), prefix) == 0) {
            names.push_back(name);
        }
    }
    closedir(dir);
    return names;
}

int unlink_shm(const std::string &prefix)
{
    int removed = 0;
    for (const auto &name : list_shm(prefix)) {
        if (shm_unlink(("/" + name).c_str()) == 0) {
            ++removed;
        }
    }
    return removed;
}

} // namespace ucg_test
