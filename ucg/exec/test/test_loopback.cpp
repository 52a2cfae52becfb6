// SPDX-License-Identifier: BSD-3-Clause
// The engine runs every registered algorithm on the loopback fabric and
// every rank ends with the collective's result, with eager sends and with
// synchronous ones (rendezvous: a send completes only once received).
#include "exec/test/loopback_runner.h"

#include "exec/loopback.h"

#include "algorithms/registry.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

namespace ucg::exec::test {

namespace {

using algorithms::LevelChoice;
using algorithms::Request;
using algorithms::Shape;
using plan::Collective;

bool rooted(Collective c)
{
    return c == Collective::kBcast || c == Collective::kReduce ||
           c == Collective::kGather || c == Collective::kScatter;
}

struct Hier {
    std::vector<int> sizes;
    std::vector<LevelChoice> shapes;
    std::string top;
};

std::vector<Hier> hier_sets(const algorithms::Algorithm &a)
{
    if (a.name != "hierarchical") {
        return {Hier{}};
    }
    return {Hier{{2}, {{Shape::kShm, 2}}, "recursive_doubling"},
            Hier{{3}, {{Shape::kKnomial, 2}}, "ring"},
            Hier{{2, 2}, {{Shape::kChain, 2}, {Shape::kShm, 2}}, "bruck"},
            Hier{{4}, {{Shape::kMcast, 2}}, "linear"}};
}

// Runs every applicable point of one algorithm; returns how many ran.
int run_algorithm(const algorithms::Algorithm &a, bool sync)
{
    int ran = 0;
    for (int p : {1, 2, 3, 4, 5, 7, 8}) {
        for (const Hier &h : hier_sets(a)) {
            for (int root = 0; root < (rooted(a.collective) ? p : 1); ++root) {
                for (int segs : {1, 3}) {
                    Request q;
                    q.collective = a.collective;
                    q.nranks = p;
                    q.root = root;
                    q.radix = 3;
                    q.segments = segs;
                    if (!h.sizes.empty()) {
                        q.levels = algorithms::make_levels(p, h.sizes);
                        q.per_level = h.shapes;
                        q.top = h.top;
                    }
                    if (!a.applicable(q)) {
                        continue;
                    }
                    const plan::Plan plan = a.build(q);
                    const bool barrier = a.collective == Collective::kBarrier;
                    for (std::uint64_t count :
                         barrier ? std::vector<std::uint64_t>{0}
                                 : std::vector<std::uint64_t>{1, 5, 37}) {
                        const std::string err =
                            run_and_check(plan, count, sync);
                        if (!err.empty()) {
                            FAIL(plan::to_string(a.collective)
                                 << "/" << a.name << " P=" << p
                                 << " root=" << root << " segments=" << segs
                                 << " levels=" << h.sizes.size()
                                 << " top=" << h.top << " count=" << count
                                 << (sync ? " sync" : " eager") << ": " << err);
                        }
                        ++ran;
                    }
                }
            }
        }
    }
    return ran;
}

void run_collective(Collective c, bool sync)
{
    int ran = 0;
    for (const algorithms::Algorithm &a : algorithms::registry()) {
        if (a.collective == c) {
            ran += run_algorithm(a, sync);
        }
    }
    CHECK(ran > 0);
}

} // namespace

TEST_CASE("every algorithm gives the right result on the loopback fabric",
          "[exec][loopback]")
{
    const auto c = static_cast<Collective>(
        GENERATE(range(0, static_cast<int>(plan::kNumCollectives))));
    const bool sync = GENERATE(false, true);
    INFO(plan::to_string(c) << (sync ? " synchronous sends" : " eager"));
    run_collective(c, sync);
}

// A one-to-many post carries the buffers of the latest bind(): an
// instance started again after binding new buffers moves the new ones
// (its messages are built once, their addresses at bind()).
// Rank r's instance of plan p for `count` bytes per block on `world`.
std::unique_ptr<Instance> instance_for(LoopbackWorld &world,
                                       const plan::Plan &p, int r,
                                       std::uint64_t count, const Reducer &red)
{
    Layout lay;
    lay.input = BufferLayout::uniform(
        plan::input_blocks(p.collective, p.nranks, p.root, r), count, 1);
    lay.output = BufferLayout::uniform(
        plan::output_blocks(p.collective, p.nranks, p.root, r), count, 1);
    lay.scratch_count = count;
    auto prog = lower(p, r, lay);
    REQUIRE(prog.ok());
    std::vector<GroupChannel *> chans;
    for (const ProgramGroup &g : prog->groups) {
        chans.push_back(world.channel(r, g.channel, g.members));
    }
    return std::make_unique<Instance>(
        std::make_shared<const Program>(std::move(prog.value())),
        world.fabric(r), red, 1, std::move(chans));
}

TEST_CASE("a rebound instance's shm bcast and gather use the new buffers",
          "[exec][loopback]")
{
    for (const auto &[coll, name] :
         {std::pair{Collective::kBcast, "shm"},
          std::pair{Collective::kGather, "hierarchical"}}) {
        INFO(plan::to_string(coll));
        const int n = 3;
        const std::uint64_t count = 5;
        Request q;
        q.collective = coll;
        q.nranks = n;
        q.root = 1;
        q.levels = algorithms::make_levels(n, {n});
        q.per_level = {LevelChoice{Shape::kShm, 2}};
        auto built = algorithms::build(name, q);
        REQUIRE(built.ok());
        const plan::Plan &p = built.value();
        const auto &root_ops = p.ranks[size_t(q.root)].ops;
        REQUIRE(std::any_of(
            root_ops.begin(), root_ops.end(),
            [](const plan::Op &o) { return plan::is_one_to_many(o.kind); }));
        LoopbackWorld world(n);
        Reducer red;
        red.kernel = ucg_reduce_kernel(UCG_OP_SUM, UCG_DTYPE_UINT8);
        struct Bufs {
            std::vector<std::uint8_t> in, out;
        };
        std::vector<std::unique_ptr<Instance>> inst;
        std::vector<Bufs> first(n), second(n);
        for (int r = 0; r < n; ++r) {
            const int ib = plan::input_blocks(coll, n, q.root, r);
            const int ob = plan::output_blocks(coll, n, q.root, r);
            inst.push_back(instance_for(world, p, r, count, red));
            for (auto [b, base] : {std::pair{&first, 10}, {&second, 100}}) {
                Bufs &x = (*b)[size_t(r)];
                x.in.assign(size_t(ib) * count, std::uint8_t(base + r));
                x.out.assign(size_t(ob) * count, 0);
            }
        }
        for (std::vector<Bufs> *b : {&first, &second}) {
            for (int r = 0; r < n; ++r) {
                Bufs &x = (*b)[size_t(r)];
                inst[size_t(r)]->bind(x.in.data(), x.out.data());
                REQUIRE(inst[size_t(r)]->start(b == &first ? 0 : 1) == UCS_OK);
            }
            for (int guard = 0; guard < 1000; ++guard) {
                unsigned ev = world.progress();
                for (auto &i : inst) {
                    ev += i->drain();
                }
                if (ev == 0) {
                    break;
                }
            }
            for (auto &i : inst) {
                REQUIRE(i->status() == UCS_OK);
            }
        }
        // Run 2 wrote the second buffers only: run 1's results stand.
        // (A gather's output is the root's alone: the others' is empty.)
        for (auto [b, base] : {std::pair{&first, 10}, {&second, 100}}) {
            for (int r = 0; r < n; ++r) {
                const std::vector<std::uint8_t> &out = (*b)[size_t(r)].out;
                for (std::size_t i = 0; i < out.size(); ++i) {
                    const int from = coll == Collective::kBcast
                                         ? q.root
                                         : int(i / count); // gather: block
                    CHECK(int(out[i]) == base + from);
                }
            }
        }
    }
}

TEST_CASE("an instance says whether it waits for point-to-point messages "
          "only and whether one comes from a far peer",
          "[exec][loopback]")
{
    using Pending = Instance::Pending;
    for (const char *name : {"linear", "shm"}) {
        INFO(name);
        Request q;
        q.collective = Collective::kBcast;
        q.nranks = 2;
        q.levels = algorithms::make_levels(2, {2});
        q.per_level = {LevelChoice{Shape::kShm, 2}};
        auto built = algorithms::build(name, q);
        REQUIRE(built.ok());
        LoopbackWorld world(2);
        Reducer red;
        red.kernel = ucg_reduce_kernel(UCG_OP_SUM, UCG_DTYPE_UINT8);
        auto receiver = instance_for(world, built.value(), 1, 4, red);
        std::vector<std::uint8_t> out(4, 0);
        receiver->bind(nullptr, out.data());
        REQUIRE(receiver->start(0) == UCS_OK);
        world.progress();
        receiver->drain();
        REQUIRE(receiver->in_flight()); // the root has not started
        const bool p2p = std::string(name) == "linear";
        // The root, rank 0, is far or near; its one-to-many message moves
        // only when polled, wherever it runs.
        CHECK(receiver->pending({true, false}) ==
              (p2p ? Pending::kFar : Pending::kOther));
        CHECK(receiver->pending({false, true}) ==
              (p2p ? Pending::kNear : Pending::kOther));
        auto root = instance_for(world, built.value(), 0, 4, red);
        std::vector<std::uint8_t> in(4, 7);
        root->bind(in.data(), in.data());
        REQUIRE(root->start(0) == UCS_OK);
        for (int guard = 0; guard < 100; ++guard) {
            if (world.progress() + root->drain() + receiver->drain() == 0) {
                break;
            }
        }
        REQUIRE(receiver->status() == UCS_OK);
        CHECK(out == in);
        CHECK(receiver->pending({true, true}) == Pending::kNear); // nothing
    }
}

TEST_CASE("a wire tag keeps its fields apart and an answer names its "
          "replier",
          "[exec][tag]")
{
    const std::uint32_t id = kMaxWireMessages - 1;
    const int last = static_cast<int>(kMaxWireRanks) - 1;
    const std::uint64_t t = wire_tag(kMaxGroupIds - 1, kWireSeqs - 1, last, id);
    // Every field at its largest value still leaves the others alone.
    CHECK(t != wire_tag(kMaxGroupIds - 2, kWireSeqs - 1, last, id));
    CHECK(t != wire_tag(kMaxGroupIds - 1, kWireSeqs - 2, last, id));
    CHECK(t != wire_tag(kMaxGroupIds - 1, kWireSeqs - 1, last - 1, id));
    CHECK(t != wire_tag(kMaxGroupIds - 1, kWireSeqs - 1, last, id - 1));
    // An answer to rank 3's message from rank 7 is neither rank 7's own
    // message of that id nor rank 8's answer; its group and sequence stay.
    const std::uint64_t m = wire_tag(5, 9, 3, 11);
    const std::uint64_t a = answer_tag(m, 7);
    CHECK(a != wire_tag(5, 9, 7, 11));
    CHECK(a != answer_tag(m, 8));
    CHECK((a & ~((std::uint64_t{1} << 40) - 1)) ==
          (m & ~((std::uint64_t{1} << 40) - 1)));
}

} // namespace ucg::exec::test
