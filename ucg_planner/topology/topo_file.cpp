// SPDX-License-Identifier: BSD-3-Clause
// Parsers for switch topology files (simple format, ibnetdiscover subset).
#include "topology/topo_file.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace ucg::topology {

namespace {

struct Line {
    int number;
    std::string_view text;
};

std::vector<Line> split_lines(std::string_view text)
{
    std::vector<Line> lines;
    int number = 1;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        std::string_view l = text.substr(pos, end - pos);
        if (!l.empty() && l.back() == '\r') {
            l.remove_suffix(1);
        }
        lines.push_back({number++, l});
        pos = end + 1;
    }
    return lines;
}

bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

/// Whitespace-separated words with their columns (0-based).
std::vector<std::pair<size_t, std::string_view>> words(std::string_view l)
{
    std::vector<std::pair<size_t, std::string_view>> out;
    size_t i = 0;
    while (i < l.size()) {
        while (i < l.size() && is_space(l[i])) {
            ++i;
        }
        size_t start = i;
        while (i < l.size() && !is_space(l[i])) {
            ++i;
        }
        if (i > start) {
            out.emplace_back(start, l.substr(start, i - start));
        }
    }
    return out;
}

Error line_error(const char *what, const Line &line, size_t col,
                 const std::string &msg)
{
    return fail(std::string(what) + " line " + std::to_string(line.number) +
                ", column " + std::to_string(col + 1) + ": " + msg);
}

/// The n-th (0-based) double-quoted string at or after `from`.
std::string_view quoted(std::string_view l, size_t from, int nth = 0)
{
    size_t pos = from;
    for (int i = 0;; ++i) {
        size_t open = l.find('"', pos);
        if (open == std::string_view::npos) {
            return {};
        }
        size_t close = l.find('"', open + 1);
        if (close == std::string_view::npos) {
            return {};
        }
        if (i == nth) {
            return l.substr(open + 1, close - open - 1);
        }
        pos = close + 1;
    }
}

std::string first_word(std::string_view s)
{
    auto w = words(s);
    return w.empty() ? std::string() : std::string(w[0].second);
}

} // namespace

Result<SwitchMap> parse_switch_file(std::string_view text)
{
    SwitchMap map;
    std::unordered_map<std::string, int> line_of_host;
    for (const Line &line : split_lines(text)) {
        std::string_view l = line.text.substr(0, line.text.find('#'));
        auto w = words(l);
        if (w.empty()) {
            continue;
        }
        if (w[0].second != "switch") {
            return line_error("topology file", line, w[0].first,
                              "expected 'switch <name> <host>...', got '" +
                                  std::string(w[0].second) + "'");
        }
        if (w.size() < 3) {
            return line_error("topology file", line, l.size(),
                              "expected a switch name and at least one host");
        }
        std::string sw(w[1].second);
        for (size_t i = 2; i < w.size(); ++i) {
            std::string host(w[i].second);
            auto [it, inserted] = line_of_host.try_emplace(host, line.number);
            if (!inserted) {
                return line_error("topology file", line, w[i].first,
                                  "host '" + host +
                                      "' already listed on line " +
                                      std::to_string(it->second));
            }
            map[host] = sw;
        }
    }
    return map;
}

Result<SwitchMap> parse_ibnetdiscover(std::string_view text)
{
    std::unordered_map<std::string, std::string> switch_name; // guid -> name
    std::vector<std::pair<std::string, std::string>> host_guid_sw; // host,guid
    SwitchMap direct;
    enum { kNone, kSwitch, kCa } block = kNone;
    std::string cur_switch, cur_host;
    for (const Line &line : split_lines(text)) {
        auto w = words(line.text);
        if (w.empty() || w[0].second[0] == '#') {
            continue;
        }
        std::string_view head = w[0].second;
        if (head == "Hca") {
            head = "Ca"; // older ibnetdiscover
        }
        if (head == "Switch" || head == "Ca") {
            std::string_view guid = quoted(line.text, 0, 0);
            size_t hash = line.text.find('#');
            if (guid.empty() || hash == std::string_view::npos) {
                return line_error("ibnetdiscover", line, w[0].first,
                                  "expected '" + std::string(head) +
                                      " <ports> \"<guid>\" # \"<desc>\"'");
            }
            std::string desc(quoted(line.text, hash));
            if (head == "Switch") {
                block = kSwitch;
                cur_switch = desc.empty() ? std::string(guid) : desc;
                switch_name[std::string(guid)] = cur_switch;
            } else {
                block = kCa;
                cur_host = first_word(desc);
                if (cur_host.empty()) {
                    return line_error("ibnetdiscover", line, hash,
                                      "expected a CA description naming "
                                      "its host");
                }
            }
        } else if (head[0] == '[') {
            std::string_view peer = quoted(line.text, 0, 0);
            if (block == kNone || peer.empty()) {
                return line_error("ibnetdiscover", line, w[0].first,
                                  block == kNone
                                      ? "port line outside a Switch or Ca "
                                        "block"
                                      : "expected a quoted peer GUID");
            }
            size_t hash = line.text.find('#');
            if (block == kSwitch && peer.substr(0, 2) == "H-" &&
                hash != std::string_view::npos) {
                std::string host = first_word(quoted(line.text, hash));
                if (!host.empty()) {
                    direct[host] = cur_switch;
                }
            } else if (block == kCa && peer.substr(0, 2) == "S-") {
                host_guid_sw.emplace_back(cur_host, std::string(peer));
            }
        } else if (head.substr(0, 6) == "vendid" ||
                   head.substr(0, 5) == "devid" ||
                   head.substr(0, 5) == "sysim" ||
                   head.substr(0, 8) == "switchgu" ||
                   head.substr(0, 6) == "caguid") {
            block = kNone; // header of the next block
        } else {
            return line_error("ibnetdiscover", line, w[0].first,
                              "expected a Switch, Ca, port or vendid= line, "
                              "got '" +
                                  std::string(head) + "'");
        }
    }
    for (auto &[host, guid] : host_guid_sw) {
        auto it = switch_name.find(guid);
        if (direct.find(host) == direct.end()) {
            direct[host] = it != switch_name.end() ? it->second : guid;
        }
    }
    return direct;
}

Result<SwitchMap> parse_topology_file(std::string_view text)
{
    for (const Line &line : split_lines(text)) {
        auto w = words(line.text);
        if (w.empty()) {
            continue;
        }
        std::string_view head = w[0].second;
        if (head == "Switch" || head == "Ca" ||
            head.substr(0, 7) == "vendid=") {
            return parse_ibnetdiscover(text);
        }
    }
    return parse_switch_file(text);
}

Result<SwitchMap> read_topology_file(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream text;
    if (!in.is_open() || !(text << in.rdbuf())) {
        return fail(path + " cannot be read");
    }
    auto map = parse_topology_file(text.str());
    if (!map) {
        return fail(path + ": " + map.error().message);
    }
    return map;
}

} // namespace ucg::topology
