// SPDX-License-Identifier: BSD-3-Clause
// Option parsing and topology construction for the plan tools.
#include "cli.h"

#include "topology/synthetic.h"
#include "topology/topo_file.h"

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ucg::tools {

namespace {

Result<std::string> read_file(const std::string &path)
{
    std::ifstream in(path);
    if (!in) {
        return fail("cannot open '" + path + "'");
    }
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

Result<int> to_int(const std::string &opt, const std::string &v)
{
    int out = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || p != v.data() + v.size()) {
        return fail(opt + ": expected an integer, got '" + v + "'");
    }
    return out;
}

/// "host socket numa" per line, one line per rank.
Result<std::vector<topology::Locality>> parse_localities(const std::string &t)
{
    std::vector<topology::Locality> out;
    std::istringstream in(t);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        std::istringstream ls(line.substr(0, line.find('#')));
        topology::Locality loc;
        if (!(ls >> loc.host)) {
            continue;
        }
        if (!(ls >> loc.socket >> loc.numa)) {
            return fail("localities line " + std::to_string(n) +
                        ": expected 'host socket numa'");
        }
        out.push_back(loc);
    }
    return out;
}

} // namespace

std::string usage()
{
    return "usage: ucg_plan print|check|simulate|select [options]\n"
           "  --coll NAME       bcast reduce allreduce gather scatter "
           "allgather\n"
           "                    alltoall reduce_scatter barrier scan exscan\n"
           "  --bytes SIZE      bytes per rank's block (8, 64k, 1m)\n"
           "  --root N          root rank (default 0)\n"
           "  --topo STRING     synthetic: racks=4,nodes=8,ppn=16,sockets=2,"
           "numa=1,\n"
           "                    order=block|roundrobin\n"
           "  --localities FILE 'host socket numa' per rank (instead of "
           "--topo)\n"
           "  --topo-file FILE  switches: 'switch <name> <host>...' or "
           "ibnetdiscover\n"
           "  --tune RULES      selection rules (default $UCG_TUNE)\n"
           "  --alg NAME [--radix K] [--segments N]  force an algorithm\n"
           "  --rank N          print: one rank's program\n"
           "  --link LEVEL=L,o,g,G  link cost in ns (and ns/byte)\n"
           "  --uplink G        simulate: switch uplinks, ns per byte\n"
           "  --path            simulate: print the critical path\n"
           "  --simulate        select: decide by simulating the hierarchical\n"
           "                    and the 3 best flat plans (<= 4096 ranks)\n";
}

Result<Options> parse_options(int argc, char **argv)
{
    Options o;
    if (argc < 2) {
        return fail("missing command");
    }
    o.command = argv[1];
    if (o.command != "print" && o.command != "check" &&
        o.command != "simulate" && o.command != "select") {
        return fail("unknown command '" + o.command + "'");
    }
    for (int i = 2; i < argc; ++i) {
        std::string opt = argv[i];
        if (opt == "--path" || opt == "--simulate") {
            (opt == "--path" ? o.critical_path : o.simulate) = true;
            continue;
        }
        if (i + 1 >= argc) {
            return fail(opt + ": missing value");
        }
        std::string v = argv[++i];
        if (opt == "--coll") {
            auto c = plan::collective_from_string(v);
            if (!c) {
                return fail("--coll: unknown collective '" + v + "'");
            }
            o.collective = *c;
        } else if (opt == "--bytes") {
            auto b = select::parse_size(v);
            if (!b || *b == select::kInfinity) {
                return fail("--bytes: expected a size, got '" + v + "'");
            }
            o.bytes = *b;
        } else if (opt == "--root" || opt == "--radix" || opt == "--segments" ||
                   opt == "--rank") {
            auto n = to_int(opt, v);
            if (!n) {
                return n.error();
            }
            if (opt == "--root") {
                o.root = *n;
            } else if (opt == "--radix") {
                o.radix = *n;
            } else if (opt == "--segments") {
                o.segments = *n;
            } else {
                o.rank = *n;
            }
        } else if (opt == "--topo") {
            o.topo = v;
        } else if (opt == "--topo-file") {
            o.topo_file = v;
        } else if (opt == "--localities") {
            o.localities_file = v;
        } else if (opt == "--tune") {
            o.tune = v;
        } else if (opt == "--alg") {
            o.algorithm = v;
        } else if (opt == "--uplink") {
            char *end = nullptr;
            o.uplink_ns_per_byte = std::strtod(v.c_str(), &end);
            if (end == v.c_str() || *end != '\0' || o.uplink_ns_per_byte < 0) {
                return fail("--uplink: expected ns per byte, got '" + v + "'");
            }
        } else if (opt == "--link") {
            size_t eq = v.find('=');
            if (eq == std::string::npos) {
                return fail("--link: expected LEVEL=L,o,g,G");
            }
            o.links.emplace_back(v.substr(0, eq), v.substr(eq + 1));
        } else {
            return fail("unknown option '" + opt + "'");
        }
    }
    return o;
}

Result<topology::Topology> make_topology(const Options &o)
{
    Result<topology::Topology> topo = fail("no topology");
    if (!o.localities_file.empty()) {
        auto text = read_file(o.localities_file);
        if (!text) {
            return text.error();
        }
        auto locs = parse_localities(*text);
        if (!locs) {
            return locs.error();
        }
        topology::SwitchMap sw;
        if (!o.topo_file.empty()) {
            auto ft = read_file(o.topo_file);
            if (!ft) {
                return ft.error();
            }
            auto m = topology::parse_topology_file(*ft);
            if (!m) {
                return m.error();
            }
            sw = std::move(m).value();
        }
        topo = topology::Topology::from_localities(*locs, &sw);
    } else {
        topo = topology::make_synthetic(o.topo);
    }
    if (!topo) {
        return topo;
    }
    for (const auto &[level, spec] : o.links) {
        auto kind = topology::parse_level(level);
        topology::LinkCost c;
        char sep[3] = {};
        std::istringstream in(spec);
        in >> c.latency_ns >> sep[0] >> c.overhead_ns >> sep[1] >> c.gap_ns >>
            sep[2] >> c.ns_per_byte;
        if (!kind || !in || sep[0] != ',' || sep[1] != ',' || sep[2] != ',') {
            return fail("--link " + level + "=" + spec +
                        ": expected LEVEL=L,o,g,G");
        }
        topo->set_link_cost(*kind, c);
    }
    return topo;
}

Result<select::RuleSet> make_rules(const Options &o)
{
    std::string text = o.tune;
    std::string origin = "--tune";
    if (text.empty()) {
        if (const char *env = std::getenv("UCG_TUNE")) {
            text = env;
            origin = "UCG_TUNE";
        }
    }
    if (!o.algorithm.empty()) {
        std::string rule = std::string(plan::to_string(o.collective)) +
                           ":0-inf:" + o.algorithm;
        std::string params;
        if (o.radix > 0) {
            params += "radix=" + std::to_string(o.radix);
        }
        if (o.segments > 0) {
            params += (params.empty() ? "" : ",") + std::string("segments=") +
                      std::to_string(o.segments);
        }
        text = rule + (params.empty() ? "" : ":" + params) +
               (text.empty() ? "" : ";" + text);
        origin = "--alg/" + origin;
    }
    return select::parse_rules(text, origin);
}

} // namespace ucg::tools
