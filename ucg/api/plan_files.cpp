// SPDX-License-Identifier: BSD-3-Clause
// Plan files (UCG_PLAN_FILES or ucg_group_params_t::plan_files): plans a
// user brings for a collective, as MSCCL's algorithm files, in the text
// form of `ucg_plan print`. Each is read and checked once at group
// creation (collective, ranks, validate(), check_symbolic(), the
// one-to-many groups this group has) and projected to this rank; a call
// that fits it (its root, enough elements per block) runs it as it runs
// a selected plan (coll.cpp).
#include "api/internal.h"

#include "cost/simulator.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

namespace ucg::rt {

namespace {

ucs_status_t refuse(const std::string &what)
{
    log_error("ucg_group_create: UCG_PLAN_FILES: %s", what.c_str());
    return UCS_ERR_INVALID_PARAM;
}

bool read_text(const std::string &path, std::string *out)
{
    std::ifstream in(path);
    if (!in) {
        return false;
    }
    std::ostringstream os;
    os << in.rdbuf();
    *out = os.str();
    return !in.bad();
}

// "line N: why" as "PATH:N: why".
std::string at(const std::string &path, const std::string &msg)
{
    if (msg.rfind("line ", 0) == 0) {
        return path + ":" + msg.substr(5);
    }
    return path + ": " + msg;
}

// Whether every one-to-many op's group is one the runtime opens: shm ops
// over all the members of one host, on a group with one-to-many
// transports; mcast ops on a group with multicast. Empty when it is, else
// why not.
std::string check_groups(const ucg_group *g, const plan::Plan &p)
{
    bool any_shm = false;
    for (const plan::RankProgram &rp : p.ranks) {
        for (const plan::Op &op : rp.ops) {
            if (!plan::is_one_to_many(op.kind)) {
                continue;
            }
            if (op.channel == plan::Channel::kMcast) {
                if (!g->mcast) {
                    return "mcast ops, and this group has no multicast "
                           "(UCG_MCAST=1, ud_mcast on every member, more "
                           "than one host)";
                }
                continue; // validate() kept them in the multicast domain
            }
            any_shm = true;
            const auto &members = p.groups[static_cast<std::size_t>(op.group)];
            std::vector<int> host;
            const char *name =
                g->hello[static_cast<std::size_t>(members.front())].host;
            for (int r = 0; r < g->size; ++r) {
                if (std::strcmp(g->hello[static_cast<std::size_t>(r)].host,
                                name) == 0) {
                    host.push_back(r);
                }
            }
            if (members != host) {
                return "group " + std::to_string(op.group) +
                       " is not all the ranks of host '" + name + "'";
            }
        }
    }
    if (any_shm && !g->one_to_many) {
        return "one-to-many ops, and this group has no one-to-many "
               "transports";
    }
    return {};
}

ucs_status_t load_one(ucg_group *g, plan::Collective coll,
                      const std::string &path)
{
    std::string text;
    if (!read_text(path, &text)) {
        return refuse(path + ": cannot read the file");
    }
    auto parsed = plan::parse(text);
    if (!parsed) {
        return refuse(at(path, parsed.error().message));
    }
    const plan::Plan &p = parsed.value();
    if (p.collective != coll) {
        return refuse(path + ": the plan's collective is " +
                      std::string(plan::to_string(p.collective)) +
                      ", named for " + std::string(plan::to_string(coll)));
    }
    if (p.nranks != g->size) {
        return refuse(path + ": the plan has " + std::to_string(p.nranks) +
                      " ranks, the group " + std::to_string(g->size));
    }
    auto errors = plan::validate(p, cost::placement_of(*g->topo));
    if (errors.empty()) {
        errors = plan::check_symbolic(p);
    }
    if (!errors.empty()) {
        return refuse(path + ": " + errors.front());
    }
    if (std::string why = check_groups(g, p); !why.empty()) {
        return refuse(path + ": " + why);
    }
    FilePlan fp;
    fp.name = "file:" + path;
    fp.root = p.root;
    fp.nchunks = p.nchunks;
    fp.ordered = !plan::has_operator(coll) ||
                 plan::check_symbolic(p, plan::Combine::kOrdered).empty();
    fp.one_to_many = !p.groups.empty();
    fp.plan = std::make_shared<const plan::Plan>(plan::project(p, g->rank));
    g->file_plans[static_cast<int>(coll)] = std::move(fp);
    return UCS_OK;
}

} // namespace

ucs_status_t load_plan_files(ucg_group *g, const char *spec)
{
    if (spec == nullptr) {
        return UCS_OK;
    }
    std::string_view rest = spec;
    while (!rest.empty()) {
        const std::size_t semi = rest.find(';');
        const std::string_view entry = rest.substr(0, semi);
        rest = semi == std::string_view::npos ? std::string_view()
                                              : rest.substr(semi + 1);
        if (entry.empty()) {
            continue;
        }
        const std::size_t eq = entry.find('=');
        if (eq == std::string_view::npos || eq + 1 == entry.size()) {
            return refuse("'" + std::string(entry) +
                          "': expected COLLECTIVE=PATH");
        }
        const auto coll = plan::collective_from_string(entry.substr(0, eq));
        if (!coll) {
            return refuse("'" + std::string(entry) + "': unknown collective '" +
                          std::string(entry.substr(0, eq)) + "'");
        }
        if (g->file_plans.count(static_cast<int>(*coll)) != 0) {
            return refuse("'" + std::string(entry) + "': a second file for " +
                          std::string(plan::to_string(*coll)));
        }
        const ucs_status_t st =
            load_one(g, *coll, std::string(entry.substr(eq + 1)));
        if (st != UCS_OK) {
            return st;
        }
    }
    return UCS_OK;
}

} // namespace ucg::rt
