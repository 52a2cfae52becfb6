// SPDX-License-Identifier: BSD-3-Clause
// The validator: shapes, matching, dependency order, deadlock freedom, slot
// races and reads of unwritten slots. Execution semantics: an op waits for
// its deps; sends are eager (the message is buffered, unbounded), a receive
// completes once every message it takes was sent. Messages match by key
// in op-list order (plan.h), so two sends or receives of one key need no
// dep between them: the executor numbers them in list order too.
#include "plan/engine.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace ucg::plan {

namespace {

using detail::where;
constexpr std::size_t kMaxErrors = 32;

int buffer_blocks(const Plan &plan, int rank, Buffer b)
{
    switch (b) {
    case Buffer::kInput:
        return input_blocks(plan.collective, plan.nranks, plan.root, rank);
    case Buffer::kOutput:
        return output_blocks(plan.collective, plan.nranks, plan.root, rank);
    default:
        return plan.ranks[static_cast<std::size_t>(rank)].scratch_blocks;
    }
}

bool channel_fits(const Op &op)
{
    switch (op.kind) {
    case OpKind::kBcastSend:
    case OpKind::kBcastRecv:
        return op.channel == Channel::kShmBcast ||
               op.channel == Channel::kMcast;
    case OpKind::kIncastSend:
    case OpKind::kIncastRecvReduce:
    case OpKind::kIncastGatherSend:
    case OpKind::kIncastRecv:
        return op.channel == Channel::kShmIncast;
    default:
        return op.channel == Channel::kP2p;
    }
}

std::string check_ranges(const Plan &plan, int rank,
                         const std::vector<Range> &v, bool write)
{
    for (const Range &r : v) {
        const std::int64_t nb = buffer_blocks(plan, rank, r.buf);
        if (r.nblocks < 1 || r.nchunks < 1 || r.block < 0 || r.chunk < 0 ||
            std::int64_t{r.block} + r.nblocks > nb ||
            std::int64_t{r.chunk} + r.nchunks > plan.nchunks) {
            return "range out of bounds in " + std::string(to_string(r.buf));
        }
        if (write && r.buf == Buffer::kInput) {
            return "writes the input buffer";
        }
    }
    return {};
}

// The op's group: named by one-to-many ops only, holding the rank; a
// root's peers are the other members in order, a member's peer is one.
std::string check_group(const Plan &plan, int rank, const Op &op)
{
    if (!is_one_to_many(op.kind)) {
        return op.group == -1 ? std::string{} : "names a group";
    }
    if (op.group < 0 ||
        static_cast<std::size_t>(op.group) >= plan.groups.size()) {
        return "names no group (" + std::to_string(op.group) + ")";
    }
    const auto &g = plan.groups[static_cast<std::size_t>(op.group)];
    if (!std::binary_search(g.begin(), g.end(), rank)) {
        return "is not a member of its group " + std::to_string(op.group);
    }
    if (!is_group_root(op.kind)) {
        return std::binary_search(g.begin(), g.end(), op.peers[0])
                   ? std::string{}
                   : "peer outside its group " + std::to_string(op.group);
    }
    std::vector<int> others;
    std::copy_if(g.begin(), g.end(), std::back_inserter(others),
                 [rank](int m) { return m != rank; });
    return op.peers == others
               ? std::string{}
               : "peers are not the other members of its "
                 "group " +
                     std::to_string(op.group) + " in ascending order";
}

// Structure of one op: peers, ranges, deps, group.
std::string check_op(const Plan &plan, int rank, int index, const Op &op)
{
    const bool many = op.kind == OpKind::kBcastSend ||
                      op.kind == OpKind::kIncastRecvReduce ||
                      op.kind == OpKind::kIncastRecv;
    const bool local = op.kind == OpKind::kCopy || op.kind == OpKind::kReduce;
    const std::size_t want = local ? 0 : 1;
    if (many ? op.peers.empty() : op.peers.size() != want) {
        return "wrong number of peers";
    }
    for (int p : op.peers) {
        if (p < 0 || p >= plan.nranks || p == rank) {
            return "bad peer " + std::to_string(p);
        }
    }
    if (!channel_fits(op)) {
        return "channel does not fit the op";
    }
    if (op.src_first && op.kind != OpKind::kRecvReduce &&
        op.kind != OpKind::kReduce) {
        return "src_first on an op that does not reduce point to point";
    }
    const bool has_src = is_send(op.kind) || local;
    const bool has_dst = is_recv(op.kind) || local;
    // A reducing receive's src, its own operand, is optional.
    const bool operand = (op.kind == OpKind::kRecvReduce ||
                          op.kind == OpKind::kIncastRecvReduce) &&
                         !op.src.empty();
    if ((has_src == op.src.empty() && !operand) || has_dst == op.dst.empty()) {
        return "src/dst do not fit the op";
    }
    if (operand && op.src_first) {
        return "src_first on a receive that names its operand";
    }
    for (std::size_t i = 0; i < op.deps.size(); ++i) {
        const int d = op.deps[i];
        if (d < 0 || d >= index || (i && d <= op.deps[i - 1])) {
            return "dependency " + std::to_string(d) +
                   " is not an earlier op (cycle or unsorted)";
        }
    }
    std::string e = check_group(plan, rank, op);
    if (e.empty()) {
        e = check_ranges(plan, rank, op.src, false);
    }
    if (e.empty()) {
        e = check_ranges(plan, rank, op.dst, true);
    }
    if (!e.empty()) {
        return e;
    }
    // Slot counts only of ranges within their buffers.
    if (op.kind == OpKind::kIncastRecv &&
        range_slots(op.dst) % static_cast<int>(op.peers.size()) != 0) {
        return "dst does not split evenly among the peers";
    }
    const int n = range_slots(op.src);
    if ((local || operand) && (n != range_slots(op.dst) ||
                               !detail::same_chunks(op.src, 0, op.dst, 0, n))) {
        return "src and dst differ in slices";
    }
    return {};
}

// Groups: ascending distinct ranks, at least two.
void check_group_lists(const Plan &plan, std::vector<std::string> &errors)
{
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        const auto &m = plan.groups[g];
        bool ok = m.size() >= 2;
        for (std::size_t i = 0; ok && i < m.size(); ++i) {
            ok = m[i] >= 0 && m[i] < plan.nranks && (i == 0 || m[i - 1] < m[i]);
        }
        if (!ok) {
            errors.push_back("group " + std::to_string(g) +
                             ": members must be two or more ascending ranks");
        }
    }
}

void check_structure(const Plan &plan, std::vector<std::string> &errors)
{
    check_group_lists(plan, errors);
    for (int r = 0; r < plan.nranks; ++r) {
        const auto &p = plan.ranks[static_cast<std::size_t>(r)];
        if (p.scratch_blocks < 0) {
            errors.push_back("rank " + std::to_string(r) + ": bad scratch");
        }
        for (int i = 0; i < static_cast<int>(p.ops.size()); ++i) {
            const std::string e =
                check_op(plan, r, i, p.ops[static_cast<std::size_t>(i)]);
            if (!e.empty()) {
                errors.push_back(where(plan, r, i) + ": " + e);
            }
        }
    }
}

// Transitive closure of deps as bit rows: reach[i] has bit j if j -> i.
class Reach {
  public:
    explicit Reach(const std::vector<Op> &ops)
        : words_((ops.size() + 63) / 64), bits_(ops.size() * words_)
    {
        for (std::size_t i = 0; i < ops.size(); ++i) {
            for (int d : ops[i].deps) {
                const auto du = static_cast<std::size_t>(d);
                for (std::size_t w = 0; w < words_; ++w) {
                    bits_[i * words_ + w] |= bits_[du * words_ + w];
                }
                bits_[i * words_ + du / 64] |= std::uint64_t{1} << (du % 64);
            }
        }
    }
    bool before(int a, int b) const // a is an ancestor of b
    {
        const auto au = static_cast<std::size_t>(a);
        const auto bu = static_cast<std::size_t>(b);
        return (bits_[bu * words_ + au / 64] >> (au % 64)) & 1U;
    }

  private:
    std::size_t words_;
    std::vector<std::uint64_t> bits_;
};

struct SlotLog {
    int last_write = -1;
    bool defined = false;
    std::vector<int> reads;
};

// Races and reads of unwritten slots on one rank: ops are visited in index
// order (a topological order of the deps); a conflicting earlier access
// must be an ancestor.
class SlotChecker {
  public:
    SlotChecker(const Plan &plan, int rank, std::vector<std::string> &errors)
        : plan_(plan), rank_(rank),
          prog_(plan.ranks[static_cast<std::size_t>(rank)]), reach_(prog_.ops),
          errors_(errors)
    {
        for (int b = 0; b < 3; ++b) {
            const int nb = buffer_blocks(plan, rank, static_cast<Buffer>(b));
            slots_[b].resize(static_cast<std::size_t>(nb * plan.nchunks));
        }
        for (auto &s : slots_[0]) {
            s.defined = true;
        }
    }
    void run()
    {
        for (int i = 0; i < static_cast<int>(prog_.ops.size()); ++i) {
            const Op &op = prog_.ops[static_cast<std::size_t>(i)];
            visit(i, op.src, false, true);
            // A reducing receive that names its operand reads src, not dst.
            visit(i, op.dst, true,
                  is_reducing(op.kind) &&
                      (!is_recv(op.kind) || op.src.empty()));
        }
    }

  private:
    void visit(int i, const std::vector<Range> &v, bool write, bool read)
    {
        for (const Range &r : v) {
            for (int b = r.block; b < r.block + r.nblocks; ++b) {
                for (int c = r.chunk; c < r.chunk + r.nchunks; ++c) {
                    access(i, r.buf, b, c, write, read);
                }
            }
        }
    }
    void access(int i, Buffer buf, int b, int c, bool write, bool read)
    {
        SlotLog &s = slots_[static_cast<std::size_t>(buf)]
                           [static_cast<std::size_t>(b * plan_.nchunks + c)];
        auto at = [&] {
            return std::string(to_string(buf)) + " block " + std::to_string(b) +
                   " chunk " + std::to_string(c);
        };
        if (read && !s.defined) {
            fail(i, "reads unwritten " + at());
        }
        if (s.last_write >= 0 && !reach_.before(s.last_write, i)) {
            fail(i, "races with op " + std::to_string(s.last_write) + " on " +
                        at());
        }
        if (!write) {
            s.reads.push_back(i);
            return;
        }
        for (int rd : s.reads) {
            if (rd != i && !reach_.before(rd, i)) {
                fail(i, "overwrites " + at() + " read by op " +
                            std::to_string(rd) + " without waiting");
            }
        }
        s.reads.clear();
        s.last_write = i;
        s.defined = true;
    }
    void fail(int i, const std::string &what)
    {
        if (errors_.size() < kMaxErrors) {
            errors_.push_back(where(plan_, rank_, i) + ": " + what);
        }
    }

    const Plan &plan_;
    int rank_;
    const RankProgram &prog_;
    Reach reach_;
    std::vector<std::string> &errors_;
    std::vector<SlotLog> slots_[3];
};

} // namespace

CheckBytes rank_check_bytes(const Plan &plan, int r)
{
    // The slot log (SlotChecker) and the dependency closure (Reach: ops^2
    // bits) are per rank; the symbolic checker holds every rank's slots
    // at once (32 bytes each). Saturates instead of overflowing.
    constexpr std::int64_t kCap = std::int64_t{1} << 62;
    auto mul = [](std::int64_t a, std::int64_t b) {
        return a != 0 && b > kCap / a ? kCap : a * b;
    };
    if (r < 0 || r >= plan.nranks ||
        static_cast<std::size_t>(r) >= plan.ranks.size()) {
        return {};
    }
    std::int64_t blocks = 0;
    for (Buffer b : {Buffer::kInput, Buffer::kOutput, Buffer::kScratch}) {
        blocks += std::max(buffer_blocks(plan, r, b), 0);
    }
    const std::int64_t slots = mul(blocks, plan.nchunks);
    const auto ops =
        static_cast<std::int64_t>(plan.ranks[std::size_t(r)].ops.size());
    const std::int64_t reach = mul(ops, (ops + 63) / 64 * 8);
    return {std::min(kCap, mul(slots, sizeof(SlotLog)) + reach),
            mul(slots, 32)};
}

std::int64_t check_bytes(const Plan &plan)
{
    constexpr std::int64_t kCap = std::int64_t{1} << 62;
    std::int64_t per_rank = 0, all = 0;
    for (int r = 0;
         r < plan.nranks && static_cast<std::size_t>(r) < plan.ranks.size();
         ++r) {
        const CheckBytes c = rank_check_bytes(plan, r);
        per_rank = std::max(per_rank, c.own);
        all = std::min(kCap, all + c.shared);
    }
    return std::max(per_rank, all);
}

std::vector<std::string> validate(const Plan &plan, const Placement &placement)
{
    std::vector<std::string> errors;
    if (plan.nranks < 1 || plan.root < 0 || plan.root >= plan.nranks ||
        plan.nchunks < 1 ||
        plan.ranks.size() != static_cast<std::size_t>(plan.nranks)) {
        errors.push_back("bad plan header (ranks, root, chunks)");
        return errors;
    }
    for (const RankProgram &p : plan.ranks) {
        if (p.scratch_blocks < 0) {
            errors.push_back("bad plan: negative scratch");
            return errors;
        }
    }
    if (const std::int64_t need = check_bytes(plan); need > kMaxCheckBytes) {
        errors.push_back("plan too large to check: about " +
                         std::to_string(need >> 20) +
                         " MiB of checker state "
                         "(limit " +
                         std::to_string(kMaxCheckBytes >> 20) +
                         " MiB; ranks x buffer blocks x chunks, ops^2 per "
                         "rank)");
        return errors;
    }
    check_structure(plan, errors);
    if (!errors.empty()) {
        return errors;
    }
    for (int r = 0; r < plan.nranks && placement.known(); ++r) {
        if (std::string e = check_placement(plan, r, placement); !e.empty()) {
            errors.push_back(e);
        }
    }
    const detail::Matching m = detail::match_messages(plan, errors);
    if (!errors.empty()) {
        return errors;
    }
    detail::check_groups(plan, m, errors);
    if (!errors.empty()) {
        return errors;
    }
    for (int r = 0; r < plan.nranks && errors.size() < kMaxErrors; ++r) {
        SlotChecker(plan, r, errors).run();
    }
    const auto order = detail::execution_order(plan, m);
    std::size_t total = 0;
    for (const auto &p : plan.ranks) {
        total += p.ops.size();
    }
    if (order.size() != total) {
        std::vector<std::vector<bool>> done(plan.ranks.size());
        for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
            done[r].assign(plan.ranks[r].ops.size(), false);
        }
        for (const auto &x : order) {
            done[static_cast<std::size_t>(x.rank)]
                [static_cast<std::size_t>(x.op)] = true;
        }
        std::string stuck;
        int shown = 0;
        for (std::size_t r = 0; r < done.size() && shown < 4; ++r) {
            for (std::size_t i = 0; i < done[r].size() && shown < 4; ++i) {
                if (!done[r][i]) {
                    stuck +=
                        (shown++ ? ", " : "") +
                        where(plan, static_cast<int>(r), static_cast<int>(i));
                }
            }
        }
        errors.push_back("deadlock: " + std::to_string(total - order.size()) +
                         " ops never run, first: " + stuck);
    }
    return errors;
}

} // namespace ucg::plan
