// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest --calibrate-links' arithmetic (link_fit.h).
#include "link_fit.h"

#include "topology/topology.h"

#include <algorithm>

namespace ucg::perftest {

LinkFit fit_link(const std::vector<LinkPoint> &points)
{
    LinkFit f;
    if (points.empty()) {
        return f;
    }
    std::vector<LinkPoint> large;
    for (const LinkPoint &p : points) {
        if (p.bytes >= kFitFromBytes) {
            large.push_back(p);
        }
    }
    const std::vector<LinkPoint> &use = large.size() >= 2 ? large : points;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const LinkPoint &p : use) {
        sx += p.bytes;
        sy += p.us;
        sxx += p.bytes * p.bytes;
        sxy += p.bytes * p.us;
    }
    const double n = static_cast<double>(use.size());
    const double den = n * sxx - sx * sx;
    const double slope_us = den > 0 ? (n * sxy - sx * sy) / den : 0;
    f.ns_per_byte = std::max(0.0, slope_us * 1000);
    const LinkPoint &small =
        *std::min_element(points.begin(), points.end(),
                          [](const LinkPoint &a, const LinkPoint &b) {
                              return a.bytes < b.bytes;
                          });
    f.alpha_us = std::max(0.0, small.us - small.bytes * f.ns_per_byte / 1000);
    f.overhead_us = std::clamp(small.sender_us, 0.0, f.alpha_us / 2);
    return f;
}

std::string merge_links(const std::string &current, const std::string &entry)
{
    auto now = topology::parse_links(current);
    auto add = topology::parse_link(entry);
    if (!now || !add) {
        return "";
    }
    std::vector<topology::LinkOverride> links = std::move(now).value();
    links.erase(std::remove_if(links.begin(), links.end(),
                               [&add](const topology::LinkOverride &l) {
                                   return l.kind == add->kind;
                               }),
                links.end());
    links.push_back(*add);
    std::sort(links.begin(), links.end(),
              [](const topology::LinkOverride &a,
                 const topology::LinkOverride &b) { return a.kind < b.kind; });
    std::string out;
    for (const topology::LinkOverride &l : links) {
        out += (out.empty() ? "" : ";") + l.text;
    }
    return out;
}

std::vector<PassedPoint>
best_of_passes(const std::vector<std::vector<LinkPoint>> &passes)
{
    std::vector<PassedPoint> out;
    if (passes.empty()) {
        return out;
    }
    size_t sizes = passes.front().size();
    for (const std::vector<LinkPoint> &pass : passes) {
        sizes = std::min(sizes, pass.size());
    }
    for (size_t i = 0; i < sizes; ++i) {
        PassedPoint p{passes.front()[i], passes.front()[i].us};
        for (const std::vector<LinkPoint> &pass : passes) {
            if (pass[i].us < p.best.us) {
                p.best = pass[i];
            }
            p.worst_us = std::max(p.worst_us, pass[i].us);
        }
        out.push_back(p);
    }
    return out;
}

double pass_spread(const std::vector<PassedPoint> &points, double from_bytes)
{
    double spread = 1;
    for (const PassedPoint &p : points) {
        if (p.best.bytes >= from_bytes && p.best.us > 0) {
            spread = std::max(spread, p.worst_us / p.best.us);
        }
    }
    return spread;
}

double poll_turn_ns(const std::vector<TurnPoint> &points)
{
    std::vector<double> turns;
    for (const TurnPoint &p : points) {
        if (p.ranks_per_cpu > 1) {
            turns.push_back(p.round_us * 1000 / p.ranks_per_cpu);
        }
    }
    if (turns.empty()) {
        return 0;
    }
    std::sort(turns.begin(), turns.end());
    return turns[turns.size() / 2];
}

} // namespace ucg::perftest
