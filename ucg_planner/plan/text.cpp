// SPDX-License-Identifier: BSD-3-Clause
// The text form of a plan: printer and parser. One header block, then one
// line per op; fields are always present so the parser stays strict and the
// round trip exact. Example:
//   ucg-plan 1
//   collective bcast
//   algorithm knomial radix=2
//   ranks 2 root 0 chunks 1
//   rank 0 scratch 0 ops 2
//   0 copy p2p peers=- tag=0 src=in:0+1:0+1 dst=out:0+1:0+1 deps=-
//   1 send p2p peers=1 tag=0 src=out:0+1:0+1 dst=- deps=0
//   rank 1 scratch 0 ops 1
//   0 recv p2p peers=0 tag=0 src=- dst=out:0+1:0+1 deps=-
//   end
// Optional parts, printed only when present: after the header, one
// `group <index> <members>` line per one-to-many group; at the end of an
// op line ` group=<index>` and then ` src_first`.
#include "plan/plan.h"

#include <charconv>
#include <sstream>

namespace ucg::plan {

namespace {

void print_ints(std::ostringstream &os, const std::vector<int> &v)
{
    if (v.empty()) {
        os << '-';
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
        os << (i ? "," : "") << v[i];
    }
}

void print_ranges(std::ostringstream &os, const std::vector<Range> &v)
{
    if (v.empty()) {
        os << '-';
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
        const Range &r = v[i];
        os << (i ? "," : "") << to_string(r.buf) << ':' << r.block << '+'
           << r.nblocks << ':' << r.chunk << '+' << r.nchunks;
    }
}

std::vector<std::string_view> split(std::string_view s, char sep)
{
    std::vector<std::string_view> out;
    std::size_t pos = 0;
    while (true) {
        const std::size_t next = s.find(sep, pos);
        out.push_back(s.substr(pos, next - pos));
        if (next == std::string_view::npos) {
            return out;
        }
        pos = next + 1;
    }
}

bool to_int(std::string_view s, int &v)
{
    const char *end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, v);
    return ec == std::errc() && p == end && !s.empty();
}

// A cursor over one line; every parser step consumes or fails.
struct Cursor {
    std::string_view s;
    bool lit(std::string_view t)
    {
        if (s.substr(0, t.size()) != t) {
            return false;
        }
        s.remove_prefix(t.size());
        return true;
    }
    bool num(int &v)
    {
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc()) {
            return false;
        }
        s.remove_prefix(static_cast<std::size_t>(p - s.data()));
        return true;
    }
    std::string_view word(char stop)
    {
        const std::string_view w = s.substr(0, s.find(stop));
        s.remove_prefix(w.size());
        return w;
    }
};

bool parse_ints(Cursor &c, std::vector<int> &v)
{
    v.clear();
    if (c.lit("-")) {
        return true;
    }
    do {
        int x = 0;
        if (!c.num(x)) {
            return false;
        }
        v.push_back(x);
    } while (c.lit(","));
    return true;
}

bool parse_range(Cursor &c, Range &r)
{
    const auto b = buffer_from_string(c.word(':'));
    if (!b) {
        return false;
    }
    r.buf = *b;
    return c.lit(":") && c.num(r.block) && c.lit("+") && c.num(r.nblocks) &&
           c.lit(":") && c.num(r.chunk) && c.lit("+") && c.num(r.nchunks);
}

bool parse_ranges(Cursor &c, std::vector<Range> &v)
{
    v.clear();
    if (c.lit("-")) {
        return true;
    }
    do {
        Range r;
        if (!parse_range(c, r)) {
            return false;
        }
        v.push_back(r);
    } while (c.lit(","));
    return true;
}

bool parse_op(std::string_view line, int index, Op &op)
{
    Cursor c{line};
    int i = 0;
    if (!c.num(i) || i != index || !c.lit(" ")) {
        return false;
    }
    const auto kind = op_kind_from_string(c.word(' '));
    if (!kind || !c.lit(" ")) {
        return false;
    }
    const auto ch = channel_from_string(c.word(' '));
    if (!ch) {
        return false;
    }
    op.kind = *kind;
    op.channel = *ch;
    if (!(c.lit(" peers=") && parse_ints(c, op.peers) && c.lit(" tag=") &&
          c.num(op.tag) && c.lit(" src=") && parse_ranges(c, op.src) &&
          c.lit(" dst=") && parse_ranges(c, op.dst) && c.lit(" deps=") &&
          parse_ints(c, op.deps))) {
        return false;
    }
    op.group = -1;
    if (c.lit(" group=") && (!c.num(op.group) || op.group < 0)) {
        return false;
    }
    op.src_first = c.lit(" src_first");
    return c.s.empty();
}

} // namespace

std::string print(const Plan &plan)
{
    std::ostringstream os;
    os << "ucg-plan 1\ncollective " << to_string(plan.collective)
       << "\nalgorithm " << plan.algorithm << "\nranks " << plan.nranks
       << " root " << plan.root << " chunks " << plan.nchunks << '\n';
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        os << "group " << g << ' ';
        print_ints(os, plan.groups[g]);
        os << '\n';
    }
    for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
        const RankProgram &p = plan.ranks[r];
        os << "rank " << r << " scratch " << p.scratch_blocks << " ops "
           << p.ops.size() << '\n';
        for (std::size_t i = 0; i < p.ops.size(); ++i) {
            const Op &op = p.ops[i];
            os << i << ' ' << to_string(op.kind) << ' ' << to_string(op.channel)
               << " peers=";
            print_ints(os, op.peers);
            os << " tag=" << op.tag << " src=";
            print_ranges(os, op.src);
            os << " dst=";
            print_ranges(os, op.dst);
            os << " deps=";
            print_ints(os, op.deps);
            if (op.group >= 0) {
                os << " group=" << op.group;
            }
            os << (op.src_first ? " src_first" : "") << '\n';
        }
    }
    os << "end\n";
    return os.str();
}

namespace {

Error parse_error(int line, std::string_view what)
{
    return Error{"line " + std::to_string(line) + ": " + std::string(what)};
}

struct Lines {
    std::vector<std::string_view> v;
    std::size_t next = 0;
    bool get(std::string_view &line)
    {
        if (next >= v.size()) {
            return false;
        }
        line = v[next++];
        return true;
    }
    int number() const { return static_cast<int>(next); }
};

bool parse_header(Lines &in, Plan &plan)
{
    std::string_view l;
    if (!in.get(l) || l != "ucg-plan 1" || !in.get(l) ||
        l.substr(0, 11) != "collective ") {
        return false;
    }
    const auto c = collective_from_string(l.substr(11));
    if (!c || !in.get(l) || l.substr(0, 10) != "algorithm ") {
        return false;
    }
    plan.collective = *c;
    plan.algorithm = std::string(l.substr(10));
    if (!in.get(l)) {
        return false;
    }
    const auto t = split(l, ' ');
    return t.size() == 6 && t[0] == "ranks" && to_int(t[1], plan.nranks) &&
           t[2] == "root" && to_int(t[3], plan.root) && t[4] == "chunks" &&
           to_int(t[5], plan.nchunks) && plan.nranks > 0 &&
           plan.nranks <= (1 << 20) && plan.root >= 0 &&
           plan.root < plan.nranks && plan.nchunks > 0;
}

// `group <index> <members>` lines, as many as there are.
bool parse_groups(Lines &in, Plan &plan)
{
    while (in.next < in.v.size() && in.v[in.next].substr(0, 6) == "group ") {
        Cursor c{in.v[in.next++].substr(6)};
        int g = -1;
        std::vector<int> members;
        if (!c.num(g) || g != static_cast<int>(plan.groups.size()) ||
            !c.lit(" ") || !parse_ints(c, members) || !c.s.empty() ||
            members.size() > static_cast<std::size_t>(plan.nranks)) {
            return false;
        }
        plan.groups.push_back(std::move(members));
    }
    return true;
}

bool parse_rank_header(std::string_view l, int rank, RankProgram &p, int &nops)
{
    const auto t = split(l, ' ');
    int r = -1;
    return t.size() == 6 && t[0] == "rank" && to_int(t[1], r) && r == rank &&
           t[2] == "scratch" && to_int(t[3], p.scratch_blocks) &&
           p.scratch_blocks >= 0 && t[4] == "ops" && to_int(t[5], nops) &&
           nops >= 0;
}

} // namespace

Result<Plan> parse(std::string_view text)
{
    Lines in;
    in.v = split(text, '\n');
    Plan plan;
    if (!parse_header(in, plan)) {
        return parse_error(in.number(), "bad header");
    }
    if (!parse_groups(in, plan)) {
        return parse_error(in.number(), "bad group");
    }
    // Counts are trusted no further than the text: each rank takes a line
    // and each op one, so a count past the lines left is refused before
    // anything is sized by it.
    auto left = [&in] { return in.v.size() - in.next; };
    if (static_cast<std::size_t>(plan.nranks) > left()) {
        return parse_error(in.number(), "more ranks than lines follow");
    }
    plan.ranks.resize(static_cast<std::size_t>(plan.nranks));
    for (int r = 0; r < plan.nranks; ++r) {
        RankProgram &p = plan.ranks[static_cast<std::size_t>(r)];
        std::string_view l;
        int nops = 0;
        if (!in.get(l) || !parse_rank_header(l, r, p, nops)) {
            return parse_error(in.number(),
                               "expected 'rank " + std::to_string(r) + "'");
        }
        if (static_cast<std::size_t>(nops) > left()) {
            return parse_error(in.number(), "more ops than lines follow");
        }
        p.ops.resize(static_cast<std::size_t>(nops));
        for (int i = 0; i < nops; ++i) {
            if (!in.get(l) ||
                !parse_op(l, i, p.ops[static_cast<std::size_t>(i)])) {
                return parse_error(in.number(), "bad op");
            }
        }
    }
    std::string_view l;
    if (!in.get(l) || l != "end" || !in.get(l) || !l.empty() ||
        in.next != in.v.size()) {
        return parse_error(in.number(), "expected 'end' and nothing after");
    }
    return plan;
}

} // namespace ucg::plan
