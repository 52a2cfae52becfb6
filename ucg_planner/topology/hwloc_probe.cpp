// SPDX-License-Identifier: BSD-3-Clause
// hwloc-backed locality probe.
#include "topology/hwloc_probe.h"

#include <hwloc.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace ucg::topology {

namespace {

/// Index of the one object of `type` whose cpuset covers `bound`, or -1.
int covering_index(hwloc_topology_t topo, hwloc_obj_type_t type,
                   hwloc_const_cpuset_t bound)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);
    int found = -1;
    for (int i = 0; i < n; ++i) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, unsigned(i));
        if (hwloc_bitmap_iszero(obj->cpuset) ||
            !hwloc_bitmap_intersects(obj->cpuset, bound)) {
            continue;
        }
        if (found >= 0 || !hwloc_bitmap_isincluded(bound, obj->cpuset)) {
            return -1; // binding spans several objects
        }
        found = static_cast<int>(obj->logical_index);
    }
    return found;
}

Result<int> env_int(const char *name, int fallback)
{
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        return fallback;
    }
    int out = 0;
    const char *end = v + std::strlen(v);
    auto [p, ec] = std::from_chars(v, end, out);
    if (ec != std::errc() || p != end) {
        return fail(std::string(name) + "='" + v + "': expected an integer");
    }
    return out;
}

} // namespace

Result<Locality> probe_locality()
{
    Locality loc;
    if (const char *h = std::getenv("UCG_TOPO_HOST"); h != nullptr && *h) {
        loc.host = h;
    } else {
        char buf[256] = {};
        if (gethostname(buf, sizeof(buf) - 1) != 0) {
            return fail("gethostname failed");
        }
        loc.host = buf;
    }
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) {
        return fail("hwloc_topology_init failed");
    }
    if (hwloc_topology_load(topo) == 0) {
        hwloc_bitmap_t bound = hwloc_bitmap_alloc();
        if (hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS) == 0) {
            loc.socket = covering_index(topo, HWLOC_OBJ_PACKAGE, bound);
            loc.numa = covering_index(topo, HWLOC_OBJ_NUMANODE, bound);
        }
        hwloc_bitmap_free(bound);
    }
    hwloc_topology_destroy(topo);
    auto socket = env_int("UCG_TOPO_SOCKET", loc.socket);
    if (!socket) {
        return socket.error();
    }
    auto numa = env_int("UCG_TOPO_NUMA", loc.numa);
    if (!numa) {
        return numa.error();
    }
    loc.socket = *socket;
    loc.numa = *numa;
    return loc;
}

} // namespace ucg::topology
