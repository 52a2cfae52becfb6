// SPDX-License-Identifier: BSD-3-Clause
// Builds the level model from per-rank locality records and derives the
// per-level leader partitions.
#include "topology/topology.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace ucg::topology {

namespace {

constexpr std::array<const char *, kNumLevels> kLevelNames = {
    "numa", "socket", "host", "switch", "world"};

/// Interns strings to dense ids in first-seen order.
class Interner {
  public:
    int id(const std::string &s)
    {
        auto [it, inserted] = ids_.try_emplace(s, next_);
        if (inserted) {
            ++next_;
        }
        return it->second;
    }

  private:
    std::unordered_map<std::string, int> ids_;
    int next_ = 0;
};

/// Splits every domain of `outer` by `local_id`, numbering the new domains
/// in order of their lowest rank.
Level refine(const Level &outer, const std::vector<int> &local_id,
             LevelKind kind)
{
    Level level;
    level.kind = kind;
    level.link = default_link_cost(kind);
    const size_t n = local_id.size();
    level.domain_of_rank.resize(n);
    std::unordered_map<uint64_t, int> dense;
    for (size_t r = 0; r < n; ++r) {
        uint64_t key = (uint64_t(uint32_t(outer.domain_of_rank[r])) << 32) |
                       uint32_t(local_id[r]);
        auto [it, inserted] =
            dense.try_emplace(key, static_cast<int>(level.domains.size()));
        if (inserted) {
            level.domains.push_back(Group{{}, static_cast<int>(r)});
        }
        level.domain_of_rank[r] = it->second;
        level.domains[size_t(it->second)].ranks.push_back(static_cast<int>(r));
    }
    return level;
}

} // namespace

const char *level_name(LevelKind kind)
{
    return kLevelNames[size_t(kind)];
}

Result<LevelKind> parse_level(std::string_view name)
{
    for (int i = 0; i < kNumLevels; ++i) {
        if (name == kLevelNames[size_t(i)]) {
            return static_cast<LevelKind>(i);
        }
    }
    if (name == "rack") {
        return LevelKind::kSwitch;
    }
    return fail("unknown level '" + std::string(name) +
                "' (expected numa, socket, host, switch, rack or world)");
}

namespace {

bool parse_cost(const std::string &text, double *out)
{
    if (text.empty()) {
        return false;
    }
    char *end = nullptr;
    *out = std::strtod(text.c_str(), &end);
    return *end == '\0' && std::isfinite(*out) && *out >= 0;
}

} // namespace

Result<LinkOverride> parse_link(const std::string &text)
{
    LinkOverride l;
    l.text = text;
    const size_t eq = text.find('=');
    if (eq == std::string::npos) {
        return fail("expected LEVEL=L,o,g,G, got '" + text + "'");
    }
    auto kind = parse_level(text.substr(0, eq));
    if (!kind) {
        return kind.error();
    }
    l.kind = *kind;
    std::vector<std::string> fields;
    std::stringstream ss(text.substr(eq + 1));
    for (std::string f; std::getline(ss, f, ',');) {
        fields.push_back(f);
    }
    if (fields.size() != 4 || text.back() == ',') {
        return fail("expected 4 values L,o,g,G after '" + text.substr(0, eq) +
                    "=', got '" + text.substr(eq + 1) + "'");
    }
    double *dst[4] = {&l.cost.latency_ns, &l.cost.overhead_ns, &l.cost.gap_ns,
                      &l.cost.ns_per_byte};
    for (size_t i = 0; i < 4; ++i) {
        if (!parse_cost(fields[i], dst[i])) {
            return fail("'" + fields[i] + "' in '" + text +
                        "': expected a finite number >= 0");
        }
    }
    return l;
}

Result<std::vector<LinkOverride>> parse_links(const std::string &text)
{
    std::vector<LinkOverride> out;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ';');) {
        if (item.empty()) {
            continue;
        }
        auto l = parse_link(item);
        if (!l) {
            return l.error();
        }
        for (const LinkOverride &o : out) {
            if (o.kind == l->kind) {
                return fail("level '" + std::string(level_name(l->kind)) +
                            "' is given twice");
            }
        }
        out.push_back(*l);
    }
    return out;
}

LinkCost default_link_cost(LevelKind kind)
{
    switch (kind) {
    case LevelKind::kNuma:
        return {150, 100, 50, 0.05};
    case LevelKind::kSocket:
        return {250, 100, 60, 0.06};
    case LevelKind::kHost:
        // 0.13 ns/byte: UCP between two processes of the development
        // machine moves 1 MiB in 136 us (perftest/RESULTS.md, np=2 bcast).
        return {400, 100, 80, 0.13};
    case LevelKind::kSwitch:
        return {1270, 150, 200, 0.1}; // alpha 1.57 us: seed 000, 0 hops
    case LevelKind::kWorld:
        break;
    }
    return {2150, 150, 200, 0.2}; // alpha 2.45 us: seed 000, 3 hops
}

Result<Topology> Topology::from_localities(const std::vector<Locality> &ranks,
                                           const SwitchMap *switches)
{
    const size_t n = ranks.size();
    if (n == 0) {
        return fail("topology: no ranks");
    }
    std::array<std::vector<int>, kNumLevels> local;
    for (auto &v : local) {
        v.resize(n);
    }
    Interner switch_ids, host_ids;
    bool any_switch = false;
    for (size_t r = 0; r < n; ++r) {
        const Locality &loc = ranks[r];
        if (loc.host.empty()) {
            return fail("topology: rank " + std::to_string(r) +
                        " has an empty host name");
        }
        if (loc.socket < -1 || loc.socket >= kMaxLocalityId || loc.numa < -1 ||
            loc.numa >= kMaxLocalityId) {
            return fail("topology: rank " + std::to_string(r) + " (host " +
                        loc.host + "): socket " + std::to_string(loc.socket) +
                        " or NUMA " + std::to_string(loc.numa) +
                        " outside -1.." + std::to_string(kMaxLocalityId - 1));
        }
        std::string sw = loc.switch_name;
        if (sw.empty() && switches != nullptr) {
            auto it = switches->find(loc.host);
            if (it == switches->end()) {
                // A file that misses a host would silently split the
                // machine into a switch and a rest.
                return fail("topology: host " + loc.host + " (rank " +
                            std::to_string(r) +
                            ") is on no switch of the topology file");
            }
            sw = it->second;
        }
        any_switch = any_switch || !sw.empty();
        local[size_t(LevelKind::kWorld)][r] = 0;
        local[size_t(LevelKind::kSwitch)][r] = switch_ids.id(sw);
        local[size_t(LevelKind::kHost)][r] = host_ids.id(loc.host);
        local[size_t(LevelKind::kSocket)][r] = loc.socket + 1;
        local[size_t(LevelKind::kNuma)][r] = loc.numa + 1;
    }
    // Outer to inner: each level refines the one above it.
    std::array<Level, kNumLevels> all;
    Level root;
    root.domain_of_rank.assign(n, 0);
    all[size_t(LevelKind::kWorld)] =
        refine(root, local[size_t(LevelKind::kWorld)], LevelKind::kWorld);
    for (int k = kNumLevels - 2; k >= 0; --k) {
        all[size_t(k)] = refine(all[size_t(k + 1)], local[size_t(k)],
                                static_cast<LevelKind>(k));
    }
    // Levels nobody reported (no NUMA, socket or switch ids) do not exist.
    // The innermost level with one domain is the top. Nested partitions
    // with equal counts are equal: keep the outer, more specific name.
    std::array<bool, kNumLevels> known = {};
    known[size_t(LevelKind::kHost)] = known[size_t(LevelKind::kWorld)] = true;
    for (size_t r = 0; r < n; ++r) {
        known[size_t(LevelKind::kNuma)] |= ranks[r].numa >= 0;
        known[size_t(LevelKind::kSocket)] |= ranks[r].socket >= 0;
    }
    known[size_t(LevelKind::kSwitch)] = any_switch;
    std::vector<int> cand;
    for (int k = 0; k < kNumLevels; ++k) {
        if (known[size_t(k)]) {
            cand.push_back(k);
            if (all[size_t(k)].domains.size() == 1) {
                break;
            }
        }
    }
    Topology topo;
    topo.size_ = static_cast<int>(n);
    topo.host_of_rank_ = all[size_t(LevelKind::kHost)].domain_of_rank;
    topo.switch_of_rank_ = all[size_t(LevelKind::kSwitch)].domain_of_rank;
    topo.nhosts_ =
        static_cast<int>(all[size_t(LevelKind::kHost)].domains.size());
    topo.nswitches_ =
        static_cast<int>(all[size_t(LevelKind::kSwitch)].domains.size());
    LinkCost inner_link;
    bool have_inner = false;
    for (size_t i = 0; i < cand.size(); ++i) {
        Level &l = all[size_t(cand[i])];
        // Equal partitions: the outer name, the inner (real) link class.
        if (!have_inner) {
            inner_link = l.link;
            have_inner = true;
        }
        if (i + 1 < cand.size() &&
            l.domains.size() == all[size_t(cand[i + 1])].domains.size()) {
            continue;
        }
        l.link = inner_link;
        have_inner = false;
        topo.levels_.push_back(std::move(l));
    }
    return topo;
}

const Level *Topology::level(LevelKind kind) const
{
    for (const Level &l : levels_) {
        if (l.kind == kind) {
            return &l;
        }
    }
    return nullptr;
}

const Level &Topology::link_level(int a, int b) const
{
    for (const Level &l : levels_) {
        if (l.domain_of_rank[size_t(a)] == l.domain_of_rank[size_t(b)]) {
            return l;
        }
    }
    return levels_.back(); // unreachable: the top level has one domain
}

void Topology::enable_mcast(LevelKind kind)
{
    // Levels are innermost first: a larger index holds wider domains.
    for (size_t i = 0; i < levels_.size(); ++i) {
        if (levels_[i].kind == kind && int(i) > mcast_level_) {
            mcast_level_ = int(i);
            mcast_of_rank_ = levels_[i].domain_of_rank;
        }
    }
}

void Topology::set_link_cost(LevelKind kind, const LinkCost &cost)
{
    for (Level &l : levels_) {
        if (l.kind == kind) {
            l.link = cost;
        }
    }
}

std::vector<Partition> Topology::hierarchy(const HierarchyOptions &opts) const
{
    std::vector<Partition> out;
    std::vector<int> participants(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) {
        participants[size_t(r)] = r;
    }
    for (const Level &l : levels_) {
        Partition part{l.kind, l.link, {}, int(participants.size())};
        std::vector<int> group_of_domain(l.domains.size(), -1);
        for (int r : participants) {
            int d = l.domain_of_rank[size_t(r)];
            int &g = group_of_domain[size_t(d)];
            if (g < 0) {
                g = static_cast<int>(part.groups.size());
                part.groups.push_back(Group{{}, r});
            }
            Group &grp = part.groups[size_t(g)];
            grp.ranks.push_back(r);
            if (r == opts.root) {
                grp.leader = r;
            }
        }
        std::vector<int> leaders;
        leaders.reserve(part.groups.size());
        bool trivial = true;
        for (const Group &g : part.groups) {
            leaders.push_back(g.leader);
            trivial = trivial && g.ranks.size() == 1;
        }
        std::sort(leaders.begin(), leaders.end());
        if (!trivial || opts.keep_trivial) {
            out.push_back(std::move(part));
        }
        participants = std::move(leaders);
        if (participants.size() == 1) {
            break;
        }
    }
    return out;
}

std::string Topology::describe() const
{
    std::ostringstream os;
    os << size_ << " ranks, " << levels_.size() << " levels\n";
    for (const Level &l : levels_) {
        size_t lo = size_t(size_), hi = 0;
        for (const Group &g : l.domains) {
            lo = std::min(lo, g.ranks.size());
            hi = std::max(hi, g.ranks.size());
        }
        os << "  " << level_name(l.kind) << ": " << l.domains.size()
           << " domains of " << lo;
        if (hi != lo) {
            os << ".." << hi;
        }
        os << " ranks; L=" << l.link.latency_ns << "ns o=" << l.link.overhead_ns
           << "ns g=" << l.link.gap_ns << "ns G=" << l.link.ns_per_byte
           << "ns/B\n";
    }
    return os.str();
}

} // namespace ucg::topology
