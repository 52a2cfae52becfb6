// SPDX-License-Identifier: BSD-3-Clause
// The loopback runner (loopback_runner.h).
#include "exec/test/loopback_runner.h"

#include "exec/engine.h"
#include "exec/loopback.h"

#include <memory>
#include <sstream>
#include <vector>

namespace ucg::exec::test {

namespace {

using plan::Collective;

constexpr std::int32_t kUnwritten = 0x5a5a5a5a;

// Rank r's input element i of block b.
std::int32_t in(int r, int b, std::uint64_t i)
{
    const std::uint32_t v = static_cast<std::uint32_t>(r + 1) * 7919u +
                            static_cast<std::uint32_t>(b) * 104729u +
                            static_cast<std::uint32_t>(i) * 31u;
    return static_cast<std::int32_t>(v);
}

std::int32_t sum_over_ranks(int nranks, int b, std::uint64_t i)
{
    std::uint32_t s = 0;
    for (int r = 0; r < nranks; ++r) {
        s += static_cast<std::uint32_t>(in(r, b, i));
    }
    return static_cast<std::int32_t>(s);
}

// The expected value of rank r's output element i of block b.
std::int32_t expected(const plan::Plan &p, int r, int b, std::uint64_t i)
{
    switch (p.collective) {
    case Collective::kBcast:
        return in(p.root, 0, i);
    case Collective::kReduce:
    case Collective::kAllreduce:
        return sum_over_ranks(p.nranks, 0, i);
    case Collective::kGather:
    case Collective::kAllgather:
        return in(b, 0, i);
    case Collective::kScatter:
        return in(p.root, r, i);
    case Collective::kAlltoall:
        return in(b, r, i);
    case Collective::kReduceScatter:
        return sum_over_ranks(p.nranks, r, i);
    case Collective::kScan:
        return sum_over_ranks(r + 1, 0, i);
    case Collective::kExscan: // rank 0's output is untouched
        return r == 0 ? kUnwritten : sum_over_ranks(r, 0, i);
    default:
        return kUnwritten; // barrier: tokens, nothing to compare
    }
}

struct Rank {
    std::vector<std::int32_t> input, output;
    std::unique_ptr<Instance> inst;
};

// One run. Rank `late` (or none, -1) starts only after every other rank
// has started and the fabric has gone quiet; a barrier's rank that finished
// before then left before the late rank arrived.
std::string run_once(const plan::Plan &p, std::uint64_t count,
                     bool synchronous_sends, int late)
{
    const int n = p.nranks;
    LoopbackWorld world(n, synchronous_sends);
    std::vector<Rank> ranks(static_cast<std::size_t>(n));
    Reducer red;
    red.op = UCG_OP_SUM;
    red.dtype = UCG_DTYPE_INT32;
    red.kernel = ucg_reduce_kernel(UCG_OP_SUM, UCG_DTYPE_INT32);
    red.unit_bytes = sizeof(std::int32_t);
    for (int r = 0; r < n; ++r) {
        Rank &rk = ranks[static_cast<std::size_t>(r)];
        const int ib = plan::input_blocks(p.collective, n, p.root, r);
        const int ob = plan::output_blocks(p.collective, n, p.root, r);
        Layout lay;
        lay.elem_bytes = sizeof(std::int32_t);
        lay.input = BufferLayout::uniform(ib, count, lay.elem_bytes);
        lay.output = BufferLayout::uniform(ob, count, lay.elem_bytes);
        lay.scratch_count = count;
        auto prog = lower(p, r, lay);
        if (!prog) {
            return "rank " + std::to_string(r) + ": " + prog.error().message;
        }
        rk.input.resize(static_cast<std::size_t>(ib) * count);
        for (int b = 0; b < ib; ++b) {
            for (std::uint64_t i = 0; i < count; ++i) {
                rk.input[static_cast<std::size_t>(b) * count + i] = in(r, b, i);
            }
        }
        rk.output.assign(static_cast<std::size_t>(ob) * count, kUnwritten);
        std::vector<GroupChannel *> chans;
        for (const ProgramGroup &g : prog->groups) {
            chans.push_back(world.channel(r, g.channel, g.members));
        }
        auto shared = std::make_shared<const Program>(std::move(prog.value()));
        rk.inst = std::make_unique<Instance>(shared, world.fabric(r), red, 1,
                                             std::move(chans));
        rk.inst->bind(rk.input.data(), rk.output.data());
    }
    for (int r = 0; r < n; ++r) {
        if (r != late &&
            ranks[static_cast<std::size_t>(r)].inst->start(0) != UCS_OK) {
            return "start failed";
        }
    }
    // Progresses until every started rank is done (true) or nothing moves
    // (false); a rank's error is returned in `err`.
    auto progress = [&](std::string &err) {
        for (;;) {
            unsigned events = world.progress();
            bool all_done = true;
            for (Rank &rk : ranks) {
                events += rk.inst->drain();
                const ucs_status_t st = rk.inst->status();
                if (st != UCS_OK) {
                    all_done = false;
                }
                if (st != UCS_OK && st != UCS_INPROGRESS) {
                    err =
                        std::string("a rank failed: ") + ucs_status_string(st);
                    return false;
                }
            }
            if (all_done || events == 0) {
                return all_done;
            }
        }
    };
    std::string err;
    if (late >= 0) {
        progress(err);
        if (!err.empty()) {
            return err;
        }
        for (int r = 0; r < n; ++r) {
            if (r != late &&
                ranks[static_cast<std::size_t>(r)].inst->status() == UCS_OK) {
                return "rank " + std::to_string(r) +
                       " left the barrier before rank " + std::to_string(late) +
                       " arrived";
            }
        }
        if (ranks[static_cast<std::size_t>(late)].inst->start(0) != UCS_OK) {
            return "start failed";
        }
    }
    if (!progress(err)) {
        if (!err.empty()) {
            return err;
        }
        std::ostringstream os;
        os << "deadlock; ranks not done:";
        for (int r = 0; r < n; ++r) {
            if (ranks[static_cast<std::size_t>(r)].inst->in_flight()) {
                os << " " << r;
            }
        }
        return os.str();
    }
    if (p.collective == Collective::kBarrier) {
        return {};
    }
    for (int r = 0; r < n; ++r) {
        const Rank &rk = ranks[static_cast<std::size_t>(r)];
        const int ob = plan::output_blocks(p.collective, n, p.root, r);
        for (int b = 0; b < ob; ++b) {
            for (std::uint64_t i = 0; i < count; ++i) {
                const std::int32_t got =
                    rk.output[static_cast<std::size_t>(b) * count + i];
                const std::int32_t want = expected(p, r, b, i);
                if (got != want) {
                    std::ostringstream os;
                    os << "rank " << r << " block " << b << " element " << i
                       << ": got " << got << ", want " << want;
                    return os.str();
                }
            }
        }
    }
    return {};
}

} // namespace

std::string run_and_check(const plan::Plan &p, std::uint64_t count,
                          bool synchronous_sends)
{
    if (p.collective != Collective::kBarrier || p.nranks < 2) {
        return run_once(p, count, synchronous_sends, -1);
    }
    for (int late = 0; late < p.nranks; ++late) {
        std::string err = run_once(p, count, synchronous_sends, late);
        if (!err.empty()) {
            return err;
        }
    }
    return {};
}

} // namespace ucg::exec::test
