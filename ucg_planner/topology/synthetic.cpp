// SPDX-License-Identifier: BSD-3-Clause
// Parser and generator for synthetic topology strings.
#include "topology/synthetic.h"

#include <charconv>

namespace ucg::topology {

namespace {

constexpr int64_t kMaxRanks = int64_t(1) << 24;

Error key_error(std::string_view text, size_t col, std::string_view key,
                const std::string &what)
{
    std::string msg = "synthetic topology '" + std::string(text) +
                      "': column " + std::to_string(col + 1);
    if (!key.empty()) {
        msg += ", key '" + std::string(key) + "'";
    }
    return fail(msg + ": " + what);
}

int *field_of(SyntheticSpec &spec, std::string_view key)
{
    if (key == "racks" || key == "switches") {
        return &spec.racks;
    }
    if (key == "nodes" || key == "hosts") {
        return &spec.nodes;
    }
    if (key == "ppn") {
        return &spec.ppn;
    }
    if (key == "sockets") {
        return &spec.sockets;
    }
    if (key == "numa") {
        return &spec.numa;
    }
    return nullptr;
}

/// One name per field: the aliases switches and hosts map to racks and
/// nodes.
std::string_view canonical_key(std::string_view key)
{
    if (key == "switches") {
        return "racks";
    }
    if (key == "hosts") {
        return "nodes";
    }
    return key;
}

/// Fisher-Yates over 0..n-1 with splitmix64: the same on every platform.
std::vector<int64_t> shuffle(int64_t n, uint64_t seed)
{
    std::vector<int64_t> v;
    if (n <= 0) {
        return v;
    }
    v.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) {
        v[size_t(i)] = i;
    }
    uint64_t x = seed;
    for (int64_t i = n - 1; i > 0; --i) {
        x += 0x9e3779b97f4a7c15ULL;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        std::swap(v[size_t(i)], v[size_t(z % uint64_t(i + 1))]);
    }
    return v;
}

} // namespace

Result<SyntheticSpec> parse_synthetic(std::string_view text)
{
    SyntheticSpec spec;
    std::vector<std::string_view> seen; ///< canonical keys given
    size_t pos = 0;
    if (text.empty()) {
        return key_error(text, 0, "", "expected key=value[,key=value...]");
    }
    while (pos <= text.size()) {
        size_t end = text.find(',', pos);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        std::string_view item = text.substr(pos, end - pos);
        size_t eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0) {
            return key_error(text, pos, "",
                             "expected key=value, got '" + std::string(item) +
                                 "'");
        }
        std::string_view key = item.substr(0, eq);
        std::string_view val = item.substr(eq + 1);
        size_t vcol = pos + eq + 1;
        // One value per key (racks and switches, nodes and hosts alike).
        const std::string_view canon = canonical_key(key);
        for (std::string_view k : seen) {
            if (k == canon) {
                return key_error(text, pos, key, "given twice");
            }
        }
        seen.push_back(canon);
        if (key == "order") {
            if (val == "block") {
                spec.order = RankOrder::kBlock;
            } else if (val == "roundrobin" || val == "rr") {
                spec.order = RankOrder::kRoundRobin;
            } else if (val == "random") {
                spec.order = RankOrder::kRandom;
            } else {
                return key_error(text, vcol, key,
                                 "expected block, roundrobin or random, got '" +
                                     std::string(val) + "'");
            }
        } else if (key == "seed") {
            auto [p, ec] =
                std::from_chars(val.data(), val.data() + val.size(), spec.seed);
            if (ec != std::errc() || p != val.data() + val.size()) {
                return key_error(text, vcol, key,
                                 "expected an unsigned integer, got '" +
                                     std::string(val) + "'");
            }
        } else if (int *field = field_of(spec, key)) {
            int v = 0;
            auto [p, ec] =
                std::from_chars(val.data(), val.data() + val.size(), v);
            if (ec != std::errc() || p != val.data() + val.size() || v < 1) {
                return key_error(text, vcol, key,
                                 "expected a positive integer, got '" +
                                     std::string(val) + "'");
            }
            *field = v;
        } else {
            return key_error(text, pos, key,
                             "unknown key (expected racks, nodes, ppn, "
                             "sockets, numa, order or seed)");
        }
        pos = end + 1;
    }
    if (spec.ranks() > kMaxRanks) {
        return key_error(text, 0, "",
                         "too many ranks (" + std::to_string(spec.ranks()) +
                             ", at most " + std::to_string(kMaxRanks) + ")");
    }
    return spec;
}

std::vector<Locality> synthetic_localities(const SyntheticSpec &spec)
{
    const int64_t hosts = int64_t(spec.racks) * spec.nodes;
    const int64_t n = spec.ranks();
    const int64_t numa_per_host = int64_t(spec.sockets) * spec.numa;
    std::vector<std::string> host_names(static_cast<size_t>(hosts)), sw_names;
    for (int r = 0; r < spec.racks; ++r) {
        sw_names.push_back("sw" + std::to_string(r));
        for (int h = 0; h < spec.nodes; ++h) {
            host_names[size_t(r * spec.nodes + h)] =
                "r" + std::to_string(r) + "n" + std::to_string(h);
        }
    }
    std::vector<Locality> out(static_cast<size_t>(n));
    const std::vector<int64_t> shuffled = spec.order == RankOrder::kRandom
                                              ? shuffle(n, spec.seed)
                                              : std::vector<int64_t>();
    for (int64_t rank = 0; rank < n; ++rank) {
        int64_t host = 0, slot = 0;
        if (spec.order != RankOrder::kRoundRobin) {
            int64_t at =
                spec.order == RankOrder::kBlock ? rank : shuffled[size_t(rank)];
            host = at / spec.ppn;
            slot = at % spec.ppn;
        } else {
            host = rank % hosts;
            slot = rank / hosts;
        }
        // Slots fill NUMA nodes in order; a remainder goes to the last.
        int64_t numa = slot * numa_per_host / spec.ppn;
        Locality &loc = out[size_t(rank)];
        loc.host = host_names[size_t(host)];
        loc.switch_name = sw_names[size_t(host / spec.nodes)];
        loc.socket = static_cast<int>(numa / spec.numa);
        loc.numa = static_cast<int>(numa);
    }
    return out;
}

Result<Topology> make_synthetic(std::string_view text)
{
    auto spec = parse_synthetic(text);
    if (!spec) {
        return spec.error();
    }
    return Topology::from_localities(synthetic_localities(*spec), nullptr);
}

} // namespace ucg::topology
