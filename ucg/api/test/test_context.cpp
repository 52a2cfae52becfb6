// SPDX-License-Identifier: BSD-3-Clause
// UCG's own UCP context: the shared-memory FIFO element it asks for
// (decision 0019), eager sends to ranks of the same machine (decision
// 0021) and over sockets (0028), the sockets' receive segment (0038), all
// in api/ucp_settings.h, the user's settings winning; a
// group refused where the processes of a host disagree on the element.
#include "api/internal.h"
#include "api/ucp_settings.h"
#include "rank_env.h"
#include "topology/synthetic.h"
#include "ucx/ucp_glue.h"

#include <catch2/catch.hpp>
#include <ucg_test/check.h>
#include <ucg_test/skip.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using ucg::rt::host_bcast_reads;
using ucg::rt::tls_may_open;
using ucg::rt::user_sets_fifo_elem;
using ucg::rt::user_sets_rndv;
using ucg::test::ref_case;
using ucg::test::RefCase;

TEST_CASE("UCP may open a transport unless UCX_TLS leaves it out",
          "[ucg][context]")
{
    const char *none[] = {"PATH=/bin", nullptr};
    CHECK(tls_may_open(none, "mm_bcast"));
    const char *named[] = {"UCX_TLS=sm,mm_bcast,mm_incast", nullptr};
    CHECK(tls_may_open(named, "mm_bcast"));
    const char *tcp[] = {"UCX_TLS=tcp,self", nullptr};
    CHECK_FALSE(tls_may_open(tcp, "mm_bcast"));
    const char *but[] = {"UCG_UCX_TLS=^mm_bcast", nullptr};
    CHECK_FALSE(tls_may_open(but, "mm_bcast"));
    const char *but_ib[] = {"UCX_TLS=^ib", nullptr};
    CHECK(tls_may_open(but_ib, "mm_bcast"));
}

TEST_CASE("a host's bcast receivers read the root's buffer only where the "
          "host has one receiver with a core of its own",
          "[ucg][context]")
{
    CHECK(host_bcast_reads(2, false, true, true));
    // Three or more readers of one root contend on its pages.
    CHECK_FALSE(host_bcast_reads(3, false, true, true));
    CHECK_FALSE(host_bcast_reads(16, false, true, true));
    CHECK_FALSE(host_bcast_reads(2, true, true, true));
    CHECK_FALSE(host_bcast_reads(2, false, false, true));
    CHECK_FALSE(host_bcast_reads(2, false, true, false));
}

namespace {

using UserSets = bool (*)(const char *const *) noexcept;

// What `sets` says of an environment of the one variable `var`.
bool sets_alone(UserSets sets, const char *var)
{
    const char *env[] = {var, nullptr};
    return sets(env);
}

} // namespace

TEST_CASE("a FIFO element size or a socket receive segment in the "
          "environment is the user's",
          "[ucg][context]")
{
    const struct {
        UserSets sets;
        std::vector<const char *> users;  // each the user's setting
        std::vector<const char *> others; // other programs' and settings
    } cases[] = {
        {user_sets_fifo_elem,
         {"UCX_MM_FIFO_ELEM_SIZE=256", "UCX_SYSV_FIFO_ELEM_SIZE=128",
          "UCG_UCX_POSIX_FIFO_ELEM_SIZE=1k"},
         {"PATH=/bin", "UCX_TLS=sm,self", "MY_FIFO_ELEM_SIZE=64",
          "UCX_MM_FIFO_SIZE=64", "UCX_FIFO_ELEM_SIZE_X=1"}},
        {ucg::rt::user_sets_tcp_seg,
         {"UCX_TCP_RX_SEG_SIZE=64k", "UCG_UCX_TCP_RX_SEG_SIZE=1m"},
         {"PATH=/bin", "UCX_TLS=tcp,self", "UCX_TCP_TX_SEG_SIZE=64k",
          "TCP_RX_SEG_SIZE=1", "UCX_TCP_RX_SEG_SIZE_X=1"}},
    };
    for (const auto &c : cases) {
        for (const char *var : c.users) {
            INFO(var);
            CHECK(sets_alone(c.sets, var));
        }
        for (const char *var : c.others) {
            INFO(var);
            CHECK_FALSE(sets_alone(c.sets, var));
        }
    }
    // Found among other variables; no environment sets nothing.
    const char *mixed[] = {"HOME=/", "UCX_TLS=sm,self",
                           "UCX_MM_FIFO_ELEM_SIZE=256", nullptr};
    CHECK(user_sets_fifo_elem(mixed));
    CHECK_FALSE(user_sets_fifo_elem(nullptr));
    CHECK_FALSE(ucg::rt::user_sets_tcp_seg(nullptr));
}

TEST_CASE("a rendezvous threshold in the environment is the user's",
          "[ucg][context]")
{
    const char *none[] = {"PATH=/bin", "UCX_TLS=sm,self", nullptr};
    CHECK_FALSE(user_sets_rndv(none));
    const char *thresh[] = {"UCX_RNDV_THRESH=64k", nullptr};
    CHECK(user_sets_rndv(thresh));
    const char *nbr[] = {"UCG_UCX_RNDV_SEND_NBR_THRESH=1m", nullptr};
    CHECK(user_sets_rndv(nbr));
    // Neighbours of the names are not.
    const char *other[] = {"UCX_RNDV_THRESH_FALLBACK=inf",
                           "UCX_RNDV_SCHEME=get_zcopy", "RNDV_THRESH=1",
                           nullptr};
    CHECK_FALSE(user_sets_rndv(other));
    // Each is the user's alone: UCG still asks for the other.
    CHECK(ucg::rt::user_sets_rndv_thresh(thresh));
    CHECK_FALSE(ucg::rt::user_sets_rndv_nbr(thresh));
    CHECK(ucg::rt::user_sets_rndv_nbr(nbr));
    CHECK_FALSE(ucg::rt::user_sets_rndv_thresh(nbr));
}

namespace {

// The inline limit (am.max_short) of UCG's shared-memory UCP lane, as its
// context found it (sysv, else posix); 0 if UCP opened neither.
size_t shm_max_short()
{
    ucg_context_h ctx = nullptr;
    REQUIRE(ucg_context_create(nullptr, &ctx) == UCS_OK);
    const size_t max_short =
        ctx->shm_short[0] != 0 ? ctx->shm_short[0] : ctx->shm_short[1];
    ucg_context_destroy(ctx);
    return max_short;
}

} // namespace

TEST_CASE("UCG's own UCP context sends 128-500 B messages inline over "
          "shared memory, unless the user set the FIFO element",
          "[ucg][context]")
{
    if (user_sets_fifo_elem(environ)) {
        UCG_SKIP("the environment sets a FIFO element size");
    }
    const size_t ours = shm_max_short();
    if (ours == 0) {
        UCG_SKIP("UCP opened neither sysv nor posix here");
    }
    CHECK(ours >= 400); // UCX's default element carries about 100 B
    REQUIRE(setenv("UCX_MM_FIFO_ELEM_SIZE", "128", 1) == 0);
    const size_t users = shm_max_short();
    unsetenv("UCX_MM_FIFO_ELEM_SIZE");
    CHECK(users < 128);
}

TEST_CASE("ranks of one host whose UCX FIFO elements differ refuse the "
          "group together",
          "[ucg][context][fork]")
{
    if (user_sets_fifo_elem(environ) || shm_max_short() == 0) {
        UCG_SKIP("a FIFO element size set, or no sysv or posix");
    }
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_UNSUPPORTED, [](int rank) {
        if (rank == 1) { // a process whose UCP keeps UCX's 128 B element
            UCG_CHECK(setenv("UCX_MM_FIFO_ELEM_SIZE", "128", 1) == 0);
        }
    }));
}

TEST_CASE("members that read other switch maps (UCG_TOPO_FILE) refuse the "
          "group together",
          "[ucg][context][fork]")
{
    // Members that see other racks would choose other plans. Rank 1 alone
    // puts the (posed) host on a rack: a one-rack map changes no plan, so
    // only the check tells; with the same file everywhere the group is
    // made.
    auto setup = [](bool all) {
        return [all](int rank) {
            UCG_CHECK(setenv("UCG_TOPO_HOST", "hostA", 1) == 0);
            if (all || rank == 1) {
                UCG_CHECK(setenv("UCG_TOPO_FILE",
                                 UCG_API_TESTDATA "/one_rack.txt", 1) == 0);
            }
        };
    };
    CHECK(
        ucg::test::expect_group_create(3, UCS_ERR_INVALID_PARAM, setup(false)));
    CHECK(ucg::test::expect_group_create(3, UCS_OK, setup(true)));
}

TEST_CASE("members with other link costs (UCG_LINKS) or costs that do not "
          "parse refuse the group together",
          "[ucg][context][fork]")
{
    // Costs pick plans: members with other costs could choose others.
    auto setup = [](const char *mine, const char *rank1) {
        return [mine, rank1](int rank) {
            const char *v = rank == 1 ? rank1 : mine;
            if (v != nullptr) {
                UCG_CHECK(setenv("UCG_LINKS", v, 1) == 0);
            }
        };
    };
    const char *host = "host=400,100,80,0.13";
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_INVALID_PARAM,
                                         setup(nullptr, host)));
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_INVALID_PARAM,
                                         setup(host, "host=401,100,80,0.13")));
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_INVALID_PARAM,
                                         setup("host=1,2,3", "host=1,2,3")));
    CHECK(ucg::test::expect_group_create(3, UCS_OK, setup(host, host)));
}

TEST_CASE("a message to a rank of the same machine goes out eagerly: its "
          "send completes before the receiver posts the receive",
          "[ucg][context][fork]")
{
    if (user_sets_rndv(environ) || ucg::test::online_cpus() < 2) {
        UCG_SKIP("a rendezvous threshold set, or fewer cores than two ranks "
                 "(then sends stay rendezvous)");
    }
    // Above UCX's own eager limits (its rendezvous threshold, about 16 KiB
    // here, and 256 KiB for fast-completing sends), below UCG's 512 KiB;
    // without the one-copy path (which waits for the receiver's read) and
    // with UCP's own threshold for other sends (which, with no RDMA
    // network, UCG would set at 4 MiB).
    constexpr std::size_t kBytes = 320 << 10;
    const ucg::test::ScopedEnv off("UCG_CMA_THRESH", "off");
    const ucg::test::ScopedEnv auto_thresh("UCX_RNDV_THRESH", "auto");
    // The receiver progresses (it drains its FIFO) but posts no receive
    // until this send is done: only an eager one can complete.
    CHECK(ucg::test::root_done_alone(kBytes, std::chrono::seconds(10),
                                     "bcast:0-inf:linear:segments=1"));
}

TEST_CASE("RDMA networks are the verbs and uGNI components", "[ucg][context]")
{
    CHECK(ucg::rt::rdma_component("ib"));
    CHECK(ucg::rt::rdma_component("ugni"));
    for (const char *other : {"tcp", "posix", "sysv", "cma", "self", "rdmacm",
                              "ibx", "cuda_ipc", ""}) {
        CHECK_FALSE(ucg::rt::rdma_component(other));
    }
}

TEST_CASE("with no RDMA network, a message below 4 MiB goes out eagerly "
          "whatever its peer, and one of 4 MiB takes the rendezvous",
          "[ucg][context][fork]")
{
    if (user_sets_rndv(environ) || ucg::rt::rdma_device_found()) {
        UCG_SKIP("a rendezvous threshold set, or an RDMA device (then "
                 "UCP's own threshold stands)");
    }
    // Above UCX's own limits and UCG's 512 KiB for fast-completing sends
    // (which a machine with fewer cores than ranks does not use); without
    // the one-copy path, which waits for the receiver's read.
    const ucg::test::ScopedEnv off("UCG_CMA_THRESH", "off");
    const char *tune = "bcast:0-inf:linear:segments=1";
    CHECK(ucg::test::root_done_alone(std::size_t{2} << 20,
                                     std::chrono::seconds(10), tune));
    // A rendezvous cannot complete before the receive: no wait is short.
    CHECK_FALSE(ucg::test::root_done_alone(
        std::size_t{4} << 20, std::chrono::milliseconds(300), tune));
}

namespace {

// Whether this process may enter a UTS namespace of its own (a child
// tries), so forked ranks can pose as machines by their host names.
bool can_unshare_uts()
{
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        _exit(unshare(CLONE_NEWUTS) == 0 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace

TEST_CASE("with no RDMA network, a message in pieces of 4 MiB or more to "
          "another machine goes out from one contiguous copy, smaller or "
          "nearer ones as they are",
          "[ucg][context][fork]")
{
    using ucg::rt::kSocketRndvBytes;
    using ucg::rt::stage_contiguous;
    CHECK(stage_contiguous(true, 2, kSocketRndvBytes));
    CHECK_FALSE(stage_contiguous(true, 1, kSocketRndvBytes));
    CHECK_FALSE(stage_contiguous(true, 2, kSocketRndvBytes - 1));
    CHECK_FALSE(stage_contiguous(false, 2, kSocketRndvBytes));
    if (ucg::rt::user_sets_rndv_thresh(environ) ||
        ucg::rt::rdma_device_found()) {
        UCG_SKIP("a rendezvous threshold set, or an RDMA device (then "
                 "UCP's own threshold and iov path stand)");
    }
    if (!can_unshare_uts()) {
        UCG_SKIP("no UTS namespace (needs CAP_SYS_ADMIN): ranks cannot "
                 "pose as machines");
    }
    // Two hosts of two ranks; the hierarchical alltoall's two leaders
    // (ranks 0 and 1) send each other the 4 blocks their ranks exchange,
    // from scratch in 4 pieces.
    ucg::test::run_ranks(
        4, 2,
        [](ucg_group_h g, int rank) {
            const std::size_t mib = std::size_t{1} << 20;
            RefCase near = ref_case(UCG_COLL_ALLTOALL, 4, rank, mib);
            ucg::test::run_case(g, near, 1);
            UCG_CHECK(g->stage.sends == 0); // one machine
            // The ranks of each posed host now name another machine.
            REQUIRE(unshare(CLONE_NEWUTS) == 0);
            const std::string name = "ucg-stage-" + std::to_string(rank % 2);
            REQUIRE(sethostname(name.c_str(), name.size()) == 0);
            ucg_group_h far = nullptr;
            UCG_CHECK(ucg::test::second_group(g, rank, 4, &far) == UCS_OK);
            RefCase small = ref_case(UCG_COLL_ALLTOALL, 4, rank, mib / 4);
            ucg::test::run_case(far, small, 1);
            UCG_CHECK(far->stage.sends == 0); // 1 MiB
            RefCase big = ref_case(UCG_COLL_ALLTOALL, 4, rank, mib);
            ucg::test::run_case(far, big, 2);
            UCG_CHECK(far->stage.sends == (rank < 2 ? 2u : 0u));
            UCG_CHECK(far->stage.bytes == (rank < 2 ? 8 * mib : 0));
            ucg_group_destroy(far);
        },
        120, "alltoall:0-inf:hierarchical");
}

namespace {

// The largest zero-copy active message of the first tcp iface UCG's own
// context opened (its receive segment: UCX adds room for its header); 0
// where UCP opened no tcp iface.
size_t tcp_max_zcopy()
{
    ucg_context_h ctx = nullptr;
    REQUIRE(ucg_context_create(nullptr, &ctx) == UCS_OK);
    uct_iface_h iface = nullptr;
    uint16_t csum = 0;
    size_t addr_len = 0;
    size_t max_zcopy = 0;
    if (ucg_ucp_find_iface(ctx->worker, "tcp", 0, &iface, &csum, &addr_len,
                           nullptr) != 0) {
        uct_iface_attr_t attr{};
        REQUIRE(uct_iface_query(iface, &attr) == UCS_OK);
        max_zcopy = attr.cap.am.max_zcopy;
    }
    ucg_context_destroy(ctx);
    return max_zcopy;
}

// A member's hello: its host, its machine and the one CPU it may run on.
ucg::rt::Hello member_on(const char *host, std::uint64_t machine, int cpu)
{
    ucg::rt::Hello h{};
    std::strncpy(h.real_host, host, sizeof(h.real_host) - 1);
    h.machine = machine;
    h.cpus[0] = std::uint64_t{1} << cpu;
    return h;
}

} // namespace

TEST_CASE("with no RDMA network, UCG's own UCP context receives socket "
          "messages in 512 KiB segments, unless the user set the segment",
          "[ucg][context]")
{
    if (ucg::rt::user_sets_tcp_seg(environ) || ucg::rt::rdma_device_found() ||
        !tls_may_open(environ, "tcp")) {
        UCG_SKIP("a socket segment set, tcp left out, or an RDMA device "
                 "(then UCX's own segment stands)");
    }
    const size_t ours = tcp_max_zcopy();
    if (ours == 0) {
        UCG_SKIP("UCP opened no tcp iface here");
    }
    // The segment less UCX's header is its largest message (UCX's own:
    // 64 KiB).
    CHECK(ours == (size_t{512} << 10));
    const ucg::test::ScopedEnv users("UCX_TCP_RX_SEG_SIZE", "128k");
    CHECK(tcp_max_zcopy() == (size_t{128} << 10));
}

TEST_CASE("members reach each other over sockets where they span machines "
          "and none has an RDMA device",
          "[ucg][context]")
{
    using ucg::rt::Hello;
    const auto member = [](const char *machine, bool rdma) {
        Hello h{};
        std::strncpy(h.real_host, machine, sizeof(h.real_host) - 1);
        h.flags = rdma ? 0u : std::uint32_t{ucg::rt::kHelloNoRdma};
        return h;
    };
    CHECK(ucg::rt::links_are_sockets(
        {member("h1", false), member("h2", false), member("h1", false)}));
    CHECK_FALSE(
        ucg::rt::links_are_sockets({member("h1", false), member("h2", true)}));
    CHECK_FALSE(
        ucg::rt::links_are_sockets({member("h1", false), member("h1", false)}));
}

TEST_CASE("a group's gathers stay below the socket rendezvous where every "
          "member sends by it and the members span machines",
          "[ucg][context]")
{
    using ucg::rt::Hello;
    auto member = [](const char *machine, bool socket_rndv) {
        Hello h{};
        std::strncpy(h.real_host, machine, sizeof(h.real_host) - 1);
        h.flags = socket_rndv ? std::uint32_t{ucg::rt::kHelloSocketRndv} : 0u;
        return h;
    };
    CHECK(ucg::rt::socket_eager_bytes(
              {member("h1", true), member("h2", true), member("h1", true)}) ==
          ucg::rt::kSocketRndvBytes);
    // A member whose context left UCP's threshold (an RDMA device, the
    // user's UCX_RNDV_THRESH, a context of the caller's): none.
    CHECK(ucg::rt::socket_eager_bytes(
              {member("h1", true), member("h2", false)}) == 0);
    // One machine: no sockets between the members.
    CHECK(ucg::rt::socket_eager_bytes(
              {member("h1", true), member("h1", true)}) == 0);
}

TEST_CASE("a host's ranks take turns where its host or its machine has "
          "more ranks than CPUs",
          "[ucg][context]")
{
    using Over = std::map<std::string, bool>;
    // Four emulated hosts of one rank on a machine of 2 CPUs (h1 and h3
    // on CPU 0): each host has a core per rank, the machine does not.
    CHECK(ucg::rt::hosts_oversubscribed(
              {member_on("h1", 7, 0), member_on("h2", 7, 1),
               member_on("h3", 7, 0), member_on("h4", 7, 1)}) ==
          Over{{"h1", true}, {"h2", true}, {"h3", true}, {"h4", true}});
    // The same four hosts on machines of their own; two on a machine of
    // two CPUs: nobody takes turns.
    CHECK(ucg::rt::hosts_oversubscribed(
              {member_on("h1", 1, 0), member_on("h2", 2, 1),
               member_on("h3", 3, 0), member_on("h4", 4, 1)}) ==
          Over{{"h1", false}, {"h2", false}, {"h3", false}, {"h4", false}});
    CHECK(ucg::rt::hosts_oversubscribed(
              {member_on("h1", 7, 0), member_on("h2", 7, 1)}) ==
          Over{{"h1", false}, {"h2", false}});
    // Two ranks of one host on one CPU, the other host on machines of
    // its own: only that host.
    CHECK(ucg::rt::hosts_oversubscribed(
              {member_on("h1", 7, 0), member_on("h1", 7, 0),
               member_on("h2", 8, 0)}) == Over{{"h1", true}, {"h2", false}});
}

TEST_CASE("where a machine's ranks take turns, the one-copy threshold rises "
          "to the size every rank's message fits half the receiver's FIFO "
          "beside the others'",
          "[ucg][context]")
{
    using ucg::rt::kCmaThresh;
    using ucg::rt::kShmFifoBytes;
    using ucg::rt::machine_cma_thresh;
    // np=4 on two cores: three senders share half a receiver's 512 KiB.
    CHECK(machine_cma_thresh(kCmaThresh, false, true, 4) ==
          kShmFifoBytes / 2 / 3);
    CHECK(machine_cma_thresh(kCmaThresh, false, true, 2) == kShmFifoBytes / 2);
    CHECK(machine_cma_thresh(kCmaThresh, false, true, 3) == 128 * 1024);
    // Never below the context's threshold (a FIFO of 64 senders).
    CHECK(machine_cma_thresh(kCmaThresh, false, true, 65) == kCmaThresh);
    // A core per rank, a user's threshold, "off", a rank alone: as set.
    CHECK(machine_cma_thresh(kCmaThresh, false, false, 4) == kCmaThresh);
    CHECK(machine_cma_thresh(kCmaThresh, true, true, 4) == kCmaThresh);
    CHECK(machine_cma_thresh(0, false, true, 4) == 0);
    CHECK(machine_cma_thresh(kCmaThresh, false, true, 1) == kCmaThresh);
}

TEST_CASE("ranks per core count the hosts of one machine together",
          "[ucg][context]")
{
    // Two emulated hosts of 2 ranks on CPU 0 of one machine: 4 a core.
    CHECK(ucg::rt::ranks_per_core({member_on("h1", 7, 0), member_on("h1", 7, 0),
                                   member_on("h2", 7, 0),
                                   member_on("h2", 7, 0)}) == 4);
    // The same on two machines: 2 a core; one rank a CPU: 1.
    CHECK(ucg::rt::ranks_per_core({member_on("h1", 7, 0), member_on("h1", 7, 0),
                                   member_on("h2", 8, 0),
                                   member_on("h2", 8, 0)}) == 2);
    CHECK(ucg::rt::ranks_per_core({member_on("h1", 7, 0), member_on("h1", 7, 1),
                                   member_on("h1", 7, 2)}) == 1);
    // Three ranks on two CPUs: rounded up.
    CHECK(ucg::rt::ranks_per_core({member_on("h1", 7, 0), member_on("h1", 7, 1),
                                   member_on("h1", 7, 1)}) == 2);
}

TEST_CASE("hosts that share a machine's CPUs are grouped by the CPUs "
          "their members may run on",
          "[ucg][context]")
{
    using ucg::rt::cpu_groups;
    // Four emulated hosts of two ranks, two a CPU (the 4x2 cluster).
    const auto g = cpu_groups({member_on("h1", 7, 0), member_on("h2", 7, 1),
                               member_on("h3", 7, 0), member_on("h4", 7, 1),
                               member_on("h1", 7, 0), member_on("h2", 7, 1),
                               member_on("h3", 7, 0), member_on("h4", 7, 1)});
    CHECK(g.group == std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1});
    CHECK(g.cpus == std::vector<int>{1, 1});
    // Members of one host on two CPUs and on one more: a group each way.
    ucg::rt::Hello both = member_on("h2", 7, 0);
    both.cpus[0] |= 2;
    const auto mixed =
        cpu_groups({member_on("h1", 7, 0), member_on("h1", 7, 1), both});
    CHECK(mixed.group == std::vector<int>{0, 1, 2});
    CHECK(mixed.cpus == std::vector<int>{1, 1, 2});
    // One host per machine (real hosts, or one host's ranks): none.
    CHECK(cpu_groups({member_on("h1", 7, 0), member_on("h2", 8, 0)})
              .group.empty());
    CHECK(cpu_groups({member_on("h1", 7, 0), member_on("h1", 7, 1)})
              .group.empty());
}

TEST_CASE("where hosts share a machine's CPUs, a plan's prediction is its "
          "simulation on them",
          "[ucg][context]")
{
    namespace sel = ucg::select;
    auto topo = ucg::topology::make_synthetic("nodes=4,ppn=2");
    REQUIRE(topo.ok());
    const sel::Selector selector(*topo, {});
    sel::SelectOptions o;
    o.collective = ucg::plan::Collective::kAllgather;
    o.bytes = 1 << 20;
    const auto d = selector.select(o);
    REQUIRE(d.ok());
    // Hosts 0 and 2 on one CPU, 1 and 3 on another.
    ucg::rt::CpuGroups cpus;
    for (int r = 0; r < topo->size(); ++r) {
        cpus.group.push_back(topo->host_of(r) % 2);
    }
    cpus.cpus = {1, 1};
    const auto p = selector.build(*d, std::nullopt);
    REQUIRE(p.ok());
    ucg::cost::SimConfig cfg;
    cfg.count = o.bytes;
    cfg.copy_ns_per_byte = o.copy_ns_per_byte;
    cfg.reduce_ns_per_byte = o.reduce_ns_per_byte;
    const auto sim = ucg::cost::simulate(
        *p, ucg::cost::Fabric{&*topo, {}, cpus.group, cpus.cpus}, cfg);
    REQUIRE(sim.ok());
    const double on_cpus = ucg::rt::model_ns(selector, o, *d, *topo, cpus);
    CHECK(on_cpus == Approx(sim->makespan_ns));
    // Four ranks a CPU: more than the formulas' figure for a CPU a rank.
    CHECK(on_cpus > 1.5 * d->chosen.predicted_ns);
    // With a poll turn (UCG_POLL_TURN): the simulation with it, more.
    cpus.turn_ns = 10000;
    ucg::cost::Fabric turns{&*topo, {}, cpus.group, cpus.cpus};
    turns.turn_ns = cpus.turn_ns;
    const auto with_turns = ucg::cost::simulate(*p, turns, cfg);
    REQUIRE(with_turns.ok());
    const double turned = ucg::rt::model_ns(selector, o, *d, *topo, cpus);
    CHECK(turned == Approx(with_turns->makespan_ns));
    CHECK(turned > on_cpus + 10000);
    // No groups: the formulas'.
    CHECK(ucg::rt::model_ns(selector, o, *d, *topo, {}) ==
          d->chosen.predicted_ns);
}

TEST_CASE("UCG_POLL_TURN is a time in ns from 0 to 1e9", "[ucg][context]")
{
    using ucg::rt::parse_poll_turn;
    CHECK(parse_poll_turn("9200") == 9200.0);
    CHECK(parse_poll_turn("0") == 0.0);
    CHECK(parse_poll_turn("1e9") == 1e9);
    for (const char *bad : {"", "-1", "5us", "abc", "2e9", "nan"}) {
        INFO(bad);
        CHECK_FALSE(parse_poll_turn(bad));
    }
}

TEST_CASE("a host of more ranks than a member's one-to-many groups take "
          "is named, with the smallest limit",
          "[ucg][context]")
{
    using ucg::rt::Hello;
    const auto member = [](const char *host, std::uint64_t limit) {
        Hello h{};
        std::strncpy(h.host, host, sizeof(h.host) - 1);
        h.o2m_max_group = limit;
        return h;
    };
    CHECK_FALSE(ucg::rt::host_over_o2m_limit(
        {member("a", 2), member("a", 2), member("b", 2)}));
    // Host b's three ranks pass a's members' limit of 3 but not b's own 2:
    // every member decides with the smallest.
    const auto over = ucg::rt::host_over_o2m_limit(
        {member("a", 3), member("b", 2), member("b", 64), member("b", 64)});
    REQUIRE(over);
    CHECK(over->host == "b");
    CHECK(over->ranks == 3);
    CHECK(over->limit == 2);
}
