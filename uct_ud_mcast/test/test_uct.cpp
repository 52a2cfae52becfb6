// SPDX-License-Identifier: BSD-3-Clause
// ud_mcast through the UCT API (UDP wire on lo): point-to-point endpoints
// (a receiver needs none), groups through uct_group.h in forked ranks with
// injected loss, bad input, a member that never joins, a member killed.
#include "uct_ud_mcast.h"

#include "packet.h"

#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/thread_ranks.h"
#include "ucg_test/uct_iface.h"
#include "uct_mm_common/backoff.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace {

using Config = std::vector<std::pair<std::string, std::string>>;

struct Rank : ucg_test::UctIface {
    explicit Rank(const Config &cfg)
        : UctIface({"ud_mcast", "ud_mcast", "lo", cfg})
    {
        uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    }
    void progress() { uct_worker_progress(worker); }
};

struct Inbox {
    std::vector<std::vector<uint8_t>> msgs;
};

ucs_status_t on_am(void *arg, void *data, size_t length, unsigned)
{
    auto *in = static_cast<Inbox *>(arg);
    auto *p = static_cast<uint8_t *>(data);
    in->msgs.emplace_back(p, p + length);
    return UCS_OK;
}

size_t pack_index(void *dest, void *arg)
{
    const auto i = *static_cast<uint32_t *>(arg);
    std::memset(dest, static_cast<int>(i & 0xff), 1000);
    std::memcpy(dest, &i, 4);
    return 1000;
}

uint8_t pattern(unsigned msg, size_t off)
{
    return static_cast<uint8_t>(msg * 131u + off * 7u + (off >> 8));
}

struct Completion {
    uct_completion_t comp;
    unsigned count = 0;
    ucs_status_t status = UCS_OK;
};

void on_done(uct_completion_t *c)
{
    auto *d = reinterpret_cast<Completion *>(c);
    ++d->count;
    d->status = c->status;
}

constexpr unsigned kMaxRanks = 8;

struct Board {
    std::atomic<unsigned> arrived[3];
    uint8_t addr[kMaxRanks][64];
};

void barrier(Board *b, int phase, unsigned n, Rank *r)
{
    b->arrived[phase].fetch_add(1);
    uct_mm_common::Backoff backoff;
    while (b->arrived[phase].load() < n) {
        if (r != nullptr) {
            r->progress(); // others may need our ACKs meanwhile
        }
        backoff.pause();
    }
}

// Every field of a group's parameters: `n` members at `addrs`, this one
// `me`.
uct_group_params_t group_params(uint64_t key, unsigned me, unsigned n,
                                const uct_iface_addr_t **addrs)
{
    uct_group_params_t gp{};
    gp.field_mask =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    gp.group_key = key;
    gp.member_index = me;
    gp.group_size = n;
    gp.member_addrs = addrs;
    return gp;
}

uct_group_h make_group(Rank &r, Board *b, unsigned me, unsigned n)
{
    uct_iface_get_address(r.iface,
                          reinterpret_cast<uct_iface_addr_t *>(b->addr[me]));
    barrier(b, 0, n, nullptr);
    std::vector<const uct_iface_addr_t *> addrs(n);
    for (unsigned i = 0; i < n; ++i) {
        addrs[i] = reinterpret_cast<const uct_iface_addr_t *>(b->addr[i]);
    }
    const uct_group_params_t gp = group_params(42, me, n, addrs.data());
    uct_group_h g = nullptr;
    UCG_CHECK(uct_ud_mcast_group_create(r.iface, &gp, &g) == UCS_OK);
    return g;
}

// Posts message i (root i % n) and waits for it with progress.
ucs_status_t bcast_one(Rank &r, uct_group_h g, unsigned me, unsigned n,
                       unsigned i, size_t len)
{
    std::vector<uint8_t> buf(len, 0);
    const unsigned root = i % n;
    if (root == me) {
        for (size_t o = 0; o < len; ++o) {
            buf[o] = pattern(i, o);
        }
    }
    uct_group_msg_t msg{};
    msg.coll = UCT_GROUP_COLL_BCAST;
    msg.root = root;
    msg.length = len;
    msg.buffer = buf.data();
    msg.tag = i;
    Completion done;
    done.comp = {on_done, 1, UCS_OK};
    ucs_status_t st = root == me ? uct_group_send(g, &msg, &done.comp)
                                 : uct_group_recv(g, &msg, &done.comp);
    uct_mm_common::Backoff backoff;
    while (st == UCS_INPROGRESS && done.count == 0) {
        r.progress();
        backoff.pause();
    }
    if (st == UCS_INPROGRESS) {
        st = done.status;
    }
    for (size_t o = 0; st == UCS_OK && o < len; ++o) {
        UCG_CHECK(buf[o] == pattern(i, o));
    }
    return st;
}

// The iface address of `r`.
std::vector<uint8_t> iface_address(Rank &r)
{
    std::vector<uint8_t> addr(r.attr.iface_addr_len);
    uct_iface_get_address(r.iface,
                          reinterpret_cast<uct_iface_addr_t *>(addr.data()));
    return addr;
}

// An endpoint of `from` to the iface address `to`.
ucs_status_t connect_ep(Rank &from, const std::vector<uint8_t> &to,
                        uct_ep_h *ep)
{
    uct_ep_params_t p{};
    p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_IFACE_ADDR;
    p.iface = from.iface;
    p.iface_addr = reinterpret_cast<const uct_iface_addr_t *>(to.data());
    return uct_ep_create(&p, ep);
}

} // namespace

TEST_CASE("ud_mcast p2p endpoints deliver active messages in order",
          "[ud_mcast][ucx]")
{
    const Config cfg = {{"RX_LOSS", "0.05"}};
    Rank a(cfg), b(cfg);
    Inbox in_a, in_b;
    REQUIRE(uct_iface_set_am_handler(a.iface, 3, on_am, &in_a, 0) == UCS_OK);
    REQUIRE(uct_iface_set_am_handler(b.iface, 3, on_am, &in_b, 0) == UCS_OK);
    std::vector<uint8_t> addr_b(b.attr.iface_addr_len);
    uct_iface_get_address(b.iface,
                          reinterpret_cast<uct_iface_addr_t *>(addr_b.data()));
    uct_ep_params_t ep_params{};
    ep_params.field_mask =
        UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface = a.iface;
    ep_params.iface_addr =
        reinterpret_cast<const uct_iface_addr_t *>(addr_b.data());
    uct_ep_h ep;
    REQUIRE(uct_ep_create(&ep_params, &ep) == UCS_OK); // b has no ep
    constexpr uint32_t kCount = 400;
    uct_mm_common::Backoff backoff;
    for (uint32_t i = 0; i < kCount;) {
        const ucs_status_t st =
            i % 2 == 0 ? uct_ep_am_short(ep, 3, i, &i, sizeof(i))
                       : static_cast<ucs_status_t>(std::min<ssize_t>(
                             0, uct_ep_am_bcopy(ep, 3, pack_index, &i, 0)));
        if (st == UCS_OK) {
            ++i;
        } else {
            REQUIRE(st == UCS_ERR_NO_RESOURCE);
        }
        a.progress();
        b.progress();
    }
    while (in_b.msgs.size() < kCount ||
           uct_ep_flush(ep, 0, nullptr) != UCS_OK) {
        a.progress();
        b.progress();
        backoff.pause();
    }
    for (uint32_t i = 0; i < kCount; ++i) {
        uint32_t got;
        std::memcpy(&got, in_b.msgs[i].data(), 4);
        REQUIRE(got == i);
        REQUIRE(in_b.msgs[i].size() == (i % 2 == 0 ? 12u : 1000u));
    }
    uct_ud_mcast_counters_t c;
    REQUIRE(uct_ud_mcast_iface_counters(b.iface, &c) == UCS_OK);
    CHECK(c.drop_injected > 0);
    CHECK(c.rx_delivered >= kCount);
    uct_ep_destroy(ep);
}

TEST_CASE("ud_mcast groups broadcast from every root with loss",
          "[ud_mcast][ucx][fork]")
{
    const unsigned n = GENERATE(2u, 3u, 5u);
    ucg_test::SharedMapping mapping(sizeof(Board));
    auto *board = new (mapping.data()) Board();
    const auto res = ucg_test::run_fork_ranks(n, [&](int rank) {
        const auto me = static_cast<unsigned>(rank);
        Rank r(Config{{"RX_LOSS", "0.05"}});
        uct_group_attr_t attr{};
        UCG_CHECK(uct_ud_mcast_group_iface_query(r.iface, &attr) == UCS_OK);
        UCG_CHECK(attr.cap_flags == UCT_GROUP_CAP_BCAST);
        uct_group_h g = make_group(r, board, me, n);
        const size_t sizes[] = {0, 1, 8, 8112, 8113, 65536, 300000};
        for (unsigned i = 0; i < 70; ++i) {
            UCG_CHECK(bcast_one(r, g, me, n, i, sizes[i % 7]) == UCS_OK);
        }
        // Our packets reach every member (resends included) with progress.
        ucs_status_t fl;
        uct_mm_common::Backoff backoff;
        while ((fl = uct_ud_mcast_group_flush(g)) == UCS_INPROGRESS) {
            r.progress();
            backoff.pause();
        }
        UCG_CHECK(fl == UCS_OK);
        barrier(board, 1, n, &r); // stay until all are done
        uct_group_destroy(g);
    });
    INFO(res.summary());
    CHECK(res.ok);
}

TEST_CASE("ud_mcast group posts: bad input and flow control", "[ud_mcast][ucx]")
{
    Rank r(Config{{"MAX_OUTSTANDING", "4"}, {"MAX_GROUP_SIZE", "8"}});
    std::vector<uint8_t> addr(r.attr.iface_addr_len);
    uct_iface_get_address(r.iface,
                          reinterpret_cast<uct_iface_addr_t *>(addr.data()));
    const uct_iface_addr_t *addrs[2] = {
        reinterpret_cast<const uct_iface_addr_t *>(addr.data()),
        reinterpret_cast<const uct_iface_addr_t *>(addr.data())};
    uct_group_params_t gp{};
    gp.group_key = 7;
    gp.group_size = 2;
    gp.member_addrs = addrs;
    uct_group_h g = nullptr;
    CHECK(uct_ud_mcast_group_create(r.iface, &gp, &g) ==
          UCS_ERR_INVALID_PARAM); // no field mask
    gp.field_mask =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    gp.group_size = 9;
    CHECK(uct_ud_mcast_group_create(r.iface, &gp, &g) == UCS_ERR_EXCEEDS_LIMIT);
    gp.group_size = 2;
    REQUIRE(uct_ud_mcast_group_create(r.iface, &gp, &g) == UCS_OK);
    uint8_t buf[64] = {};
    uct_group_msg_t msg{};
    msg.coll = UCT_GROUP_COLL_GATHER;
    msg.length = sizeof(buf);
    msg.buffer = buf;
    CHECK(uct_group_send(g, &msg, nullptr) == UCS_ERR_INVALID_PARAM);
    msg.coll = UCT_GROUP_COLL_BCAST;
    CHECK(uct_group_recv(g, &msg, nullptr) == UCS_ERR_INVALID_PARAM);
    msg.root = 2;
    CHECK(uct_group_recv(g, &msg, nullptr) == UCS_ERR_INVALID_PARAM);
    // Nothing posted: flushed; another transport's group is refused.
    CHECK(uct_ud_mcast_group_flush(g) == UCS_OK);
    const uct_group_ops_t other_ops{};
    uct_group other{&other_ops};
    CHECK(uct_ud_mcast_group_flush(&other) == UCS_ERR_INVALID_PARAM);
    // Member 1 never joins: sends wait for the barrier, up to 4 of them.
    msg.root = 0;
    Completion done[5];
    for (unsigned i = 0; i < 4; ++i) {
        done[i].comp = {on_done, 1, UCS_OK};
        CHECK(uct_group_send(g, &msg, &done[i].comp) == UCS_INPROGRESS);
    }
    done[4].comp = {on_done, 1, UCS_OK};
    CHECK(uct_group_send(g, &msg, &done[4].comp) == UCS_ERR_NO_RESOURCE);
    CHECK(uct_group_status(g) == UCS_OK);
    CHECK(uct_ud_mcast_group_flush(g) == UCS_INPROGRESS); // queued
    uct_group_destroy(g);
}

TEST_CASE("ud_mcast group: a member that never joins times out",
          "[ud_mcast][ucx]")
{
    Rank r(Config{{"ATTACH_TIMEOUT", "0.3s"}});
    std::vector<uint8_t> addr(r.attr.iface_addr_len);
    uct_iface_get_address(r.iface,
                          reinterpret_cast<uct_iface_addr_t *>(addr.data()));
    const uct_iface_addr_t *addrs[2] = {
        reinterpret_cast<const uct_iface_addr_t *>(addr.data()),
        reinterpret_cast<const uct_iface_addr_t *>(addr.data())};
    uct_group_params_t gp = group_params(8, 0, 2, addrs);
    uct_group_h g = nullptr;
    REQUIRE(uct_ud_mcast_group_create(r.iface, &gp, &g) == UCS_OK);
    uint8_t buf[16] = {};
    uct_group_msg_t msg{};
    msg.coll = UCT_GROUP_COLL_BCAST;
    msg.length = sizeof(buf);
    msg.buffer = buf;
    Completion done;
    done.comp = {on_done, 1, UCS_OK};
    REQUIRE(uct_group_send(g, &msg, &done.comp) == UCS_INPROGRESS);
    uct_mm_common::Backoff backoff;
    while (done.count == 0) {
        r.progress();
        backoff.pause();
    }
    CHECK(done.status == UCS_ERR_ENDPOINT_TIMEOUT);
    CHECK(uct_group_status(g) == UCS_ERR_ENDPOINT_TIMEOUT);
    CHECK(uct_group_send(g, &msg, &done.comp) == UCS_ERR_ENDPOINT_TIMEOUT);
    uct_group_destroy(g);
}

TEST_CASE("ud_mcast group: a killed member fails the others",
          "[ud_mcast][ucx][fork]")
{
    constexpr unsigned n = 4;
    ucg_test::SharedMapping mapping(sizeof(Board));
    auto *board = new (mapping.data()) Board();
    ucg_test::ForkOptions opts(n);
    opts.may_be_killed = {2};
    const auto res = ucg_test::run_fork_ranks(opts, [&](int rank) {
        const auto me = static_cast<unsigned>(rank);
        Rank r(Config{{"TIMEOUT", "0.5s"}});
        uct_group_h g = make_group(r, board, me, n);
        for (unsigned i = 0;; ++i) {
            if (me == 2 && i == 20) {
                kill(getpid(), SIGKILL);
            }
            const ucs_status_t st = bcast_one(r, g, me, n, i, 1000);
            if (st != UCS_OK) {
                UCG_CHECK(st == UCS_ERR_CONNECTION_RESET);
                UCG_CHECK(uct_group_status(g) == UCS_ERR_CONNECTION_RESET);
                break;
            }
        }
        uct_group_destroy(g);
    });
    INFO(res.summary());
    CHECK(res.ok);
}

TEST_CASE("ud_mcast iface event fd wakes a receiver that armed it",
          "[ud_mcast][ucx]")
{
    Rank a(Config{}), b(Config{});
    REQUIRE((b.attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD) != 0);
    int fd = -1;
    REQUIRE(uct_iface_event_fd_get(b.iface, &fd) == UCS_OK);
    Inbox in_b;
    REQUIRE(uct_iface_set_am_handler(b.iface, 3, on_am, &in_b, 0) == UCS_OK);
    std::vector<uint8_t> addr_b(b.attr.iface_addr_len);
    uct_iface_get_address(b.iface,
                          reinterpret_cast<uct_iface_addr_t *>(addr_b.data()));
    uct_ep_params_t ep_params{};
    ep_params.field_mask =
        UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface = a.iface;
    ep_params.iface_addr =
        reinterpret_cast<const uct_iface_addr_t *>(addr_b.data());
    uct_ep_h ep;
    REQUIRE(uct_ep_create(&ep_params, &ep) == UCS_OK);
    // Connect (JOIN, READY), then let everything settle.
    uint64_t hello = 1;
    uct_mm_common::Backoff backoff;
    while (uct_ep_am_short(ep, 3, hello, nullptr, 0) != UCS_OK) {
        a.progress();
        b.progress();
        backoff.pause();
    }
    while (in_b.msgs.empty() || uct_ep_flush(ep, 0, nullptr) != UCS_OK) {
        a.progress();
        b.progress();
        backoff.pause();
    }
    // Nothing for b now: arming succeeds and the fd stays quiet.
    for (int i = 0; i < 100; ++i) {
        b.progress();
    }
    REQUIRE(uct_iface_event_arm(b.iface, UCT_EVENT_RECV) == UCS_OK);
    pollfd p{fd, POLLIN, 0};
    CHECK(poll(&p, 1, 0) == 0);
    // A message for b: the fd becomes readable, arming says busy.
    REQUIRE(uct_ep_am_short(ep, 3, hello, nullptr, 0) == UCS_OK);
    CHECK(poll(&p, 1, 2000) == 1);
    CHECK(uct_iface_event_arm(b.iface, UCT_EVENT_RECV) == UCS_ERR_BUSY);
    uct_ep_destroy(ep);
}

TEST_CASE("ud_mcast counts foreign, corrupt and malformed packets it drops",
          "[ud_mcast][ucx]")
{
    Rank r(Config{});
    std::vector<uint8_t> addr(r.attr.iface_addr_len);
    uct_iface_get_address(r.iface,
                          reinterpret_cast<uct_iface_addr_t *>(addr.data()));
    // The UDP wire address follows the 16-byte id and kind: IPv4, port.
    sockaddr_in to{};
    to.sin_family = AF_INET;
    std::memcpy(&to.sin_addr.s_addr, addr.data() + 16, 4);
    std::memcpy(&to.sin_port, addr.data() + 20, 2);
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    auto send = [&](const std::vector<uint8_t> &pkt) {
        REQUIRE(sendto(fd, pkt.data(), pkt.size(), 0,
                       reinterpret_cast<const sockaddr *>(&to),
                       sizeof(to)) == static_cast<ssize_t>(pkt.size()));
    };
    using namespace uct_ud_mcast;
    // A well-formed ACK of a session this iface does not have: foreign.
    std::vector<uint8_t> pkt(sizeof(CommonHeader) + sizeof(AckBody) + kMacBytes,
                             0);
    CommonHeader h{kMagic, kVersion, static_cast<uint8_t>(PacketType::kAck),
                   1,      2,        0xfeedface,
                   3,      0,        0,
                   0};
    std::memcpy(pkt.data(), &h, sizeof(h));
    seal_packet(pkt.data(), pkt.size(), MacKey{});
    send(pkt);
    // The same with a flipped body bit: fails the check.
    std::vector<uint8_t> corrupt = pkt;
    corrupt[sizeof(CommonHeader)] ^= 1;
    send(corrupt);
    // Not ours at all, and a truncated one.
    send(std::vector<uint8_t>(100, 0xab));
    send(std::vector<uint8_t>(pkt.begin(), pkt.begin() + 20));
    uct_ud_mcast_counters_t c{};
    uct_mm_common::Backoff backoff;
    for (int i = 0; i < 100000 && c.rx_packets < 4; ++i) {
        r.progress();
        REQUIRE(uct_ud_mcast_iface_counters(r.iface, &c) == UCS_OK);
        backoff.pause();
    }
    close(fd);
    CHECK(c.rx_packets == 4);
    CHECK(c.drop_foreign == 1);
    CHECK(c.drop_bad_check == 1);
    CHECK(c.drop_malformed == 2);
}

TEST_CASE("ud_mcast trust: a p2p JOIN or DATA sealed without the receiver's "
          "secret opens no session and delivers nothing",
          "[ud_mcast][ucx][trust]")
{
    Rank a(Config{}), b(Config{});
    Inbox in_b;
    REQUIRE(uct_iface_set_am_handler(b.iface, 3, on_am, &in_b, 0) == UCS_OK);
    const std::vector<uint8_t> addr_a = iface_address(a),
                               addr_b = iface_address(b);
    uint64_t id_a, id_b;
    std::memcpy(&id_a, addr_a.data(), 8);
    std::memcpy(&id_b, addr_b.data(), 8);
    // A genuine session a -> b first.
    uct_ep_h ep;
    REQUIRE(connect_ep(a, addr_b, &ep) == UCS_OK);
    uct_mm_common::Backoff backoff;
    ucs_status_t st;
    while ((st = uct_ep_am_short(ep, 3, 7, nullptr, 0)) ==
           UCS_ERR_NO_RESOURCE) {
        a.progress();
        b.progress();
    }
    REQUIRE(st == UCS_OK);
    while (in_b.msgs.empty()) {
        a.progress();
        b.progress();
        backoff.pause();
    }
    // The attacker: a socket on lo that knows both public addresses (they
    // travel in every JOIN) but not the secrets.
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in self{};
    self.sin_family = AF_INET;
    self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&self), sizeof(self)) == 0);
    socklen_t self_len = sizeof(self);
    getsockname(fd, reinterpret_cast<sockaddr *>(&self), &self_len);
    sockaddr_in to{}; // b's wire address: after the id and kind
    to.sin_family = AF_INET;
    std::memcpy(&to.sin_addr.s_addr, addr_b.data() + 16, 4);
    std::memcpy(&to.sin_port, addr_b.data() + 20, 2);
    using namespace uct_ud_mcast;
    const MacKey guess{}; // any key that is not derived from b's secret
    // A p2p packet from the member `src` of session `key`: the header,
    // `body` and `extra` zero bytes, sealed with the attacker's key.
    auto forge = [&](PacketType type, uint16_t src, uint64_t key,
                     const void *body, size_t body_len, size_t extra) {
        const CommonHeader h{
            kMagic, kVersion, static_cast<uint8_t>(type), src, 2, key, 0, 0,
            0,      kFlagP2p};
        std::vector<uint8_t> pkt(sizeof(h) + body_len + extra + kMacBytes, 0);
        std::memcpy(pkt.data(), &h, sizeof(h));
        std::memcpy(pkt.data() + sizeof(h), body, body_len);
        seal_packet(pkt.data(), pkt.size(), guess);
        return pkt;
    };
    // 1. A JOIN of a made-up iface: it would open a session and answer.
    const uint64_t id_x = id_a ^ 0x5555;
    JoinBody jb{};
    jb.nonce = 99;
    jb.addr_len = 56; // ud_mcast.h JoinAddr: id, kind, pad, wire, box
    std::memcpy(jb.addr, &id_x, 8);
    jb.addr[8] = 1; // UDP
    std::memcpy(jb.addr + 16, &self.sin_addr.s_addr, 4);
    std::memcpy(jb.addr + 20, &self.sin_port, 2);
    const std::vector<uint8_t> join =
        forge(PacketType::kJoin, id_x < id_b ? 0 : 1,
              p2p_session_key(id_x, id_b), &jb, sizeof(jb), 0);
    // 2. A DATA of the genuine session a -> b, as if from a.
    DataBody db{};
    db.psn = 1;
    db.msg_len = 4;
    db.kind = kKindAm;
    db.am_id = 3;
    const std::vector<uint8_t> data =
        forge(PacketType::kData, id_a < id_b ? 0 : 1,
              p2p_session_key(id_a, id_b), &db, sizeof(db), 4);
    uct_ud_mcast_counters_t before{}, c{};
    REQUIRE(uct_ud_mcast_iface_counters(b.iface, &before) == UCS_OK);
    for (const auto &pkt : {join, data}) {
        REQUIRE(sendto(fd, pkt.data(), pkt.size(), 0,
                       reinterpret_cast<const sockaddr *>(&to),
                       sizeof(to)) == static_cast<ssize_t>(pkt.size()));
    }
    for (int i = 0; i < 100000 && c.rx_packets < before.rx_packets + 2; ++i) {
        b.progress();
        REQUIRE(uct_ud_mcast_iface_counters(b.iface, &c) == UCS_OK);
        backoff.pause();
    }
    CHECK(c.drop_bad_mac == before.drop_bad_mac + 2);
    CHECK(in_b.msgs.size() == 1);
    // No session answered the JOIN.
    pollfd p{fd, POLLIN, 0};
    for (int i = 0; i < 20; ++i) {
        b.progress();
        CHECK(poll(&p, 1, 5) == 0);
    }
    close(fd);
    uct_ep_destroy(ep);
}

TEST_CASE("ud_mcast MAX_PEERS bounds the p2p sessions of an iface",
          "[ud_mcast][ucx][trust]")
{
    Rank a(Config{{"MAX_PEERS", "1"}}), b(Config{}), c(Config{});
    Inbox in_a;
    REQUIRE(uct_iface_set_am_handler(a.iface, 3, on_am, &in_a, 0) == UCS_OK);
    const std::vector<uint8_t> addr_a = iface_address(a),
                               addr_b = iface_address(b),
                               addr_c = iface_address(c);
    uct_ep_h ab, ac, ba, ca;
    REQUIRE(connect_ep(a, addr_b, &ab) == UCS_OK);
    CHECK(connect_ep(a, addr_c, &ac) == UCS_ERR_EXCEEDS_LIMIT);
    REQUIRE(connect_ep(a, addr_b, &ba) == UCS_OK); // the same peer again
    uct_ep_destroy(ba);
    // b's messages arrive (its session is a's one peer); c's JOIN is
    // dropped and counted, and its message never arrives.
    REQUIRE(connect_ep(b, addr_a, &ba) == UCS_OK);
    REQUIRE(connect_ep(c, addr_a, &ca) == UCS_OK);
    uct_ud_mcast_counters_t cnt{};
    uct_mm_common::Backoff backoff;
    bool sent_b = false;
    const uint64_t deadline = uct_mm_common::now_ns() + 3'000'000'000ull;
    while ((in_a.msgs.empty() || cnt.drop_peer_limit == 0) &&
           uct_mm_common::now_ns() < deadline) {
        sent_b = sent_b || uct_ep_am_short(ba, 3, 1, nullptr, 0) == UCS_OK;
        uct_ep_am_short(ca, 3, 2, nullptr, 0); // c's JOIN is unanswered
        a.progress();
        b.progress();
        c.progress();
        REQUIRE(uct_ud_mcast_iface_counters(a.iface, &cnt) == UCS_OK);
        backoff.pause();
    }
    CHECK(cnt.drop_peer_limit > 0);
    REQUIRE(in_a.msgs.size() == 1);
    uint64_t header;
    std::memcpy(&header, in_a.msgs[0].data(), 8);
    CHECK(header == 1);
    uct_ep_destroy(ca);
    uct_ep_destroy(ba);
    uct_ep_destroy(ab);
}

TEST_CASE("ud_mcast GROUP_WINDOW sizes a group's window, WINDOW a p2p "
          "session's",
          "[ud_mcast][ucx]")
{
    const auto [group_window, expect] =
        GENERATE(table<const char *, size_t>({{nullptr, 256}, {"32", 32}}));
    Config cfg{{"WINDOW", "8"}};
    if (group_window != nullptr) {
        cfg.emplace_back("GROUP_WINDOW", group_window);
    }
    Rank a(cfg), b(Config{});
    INFO("GROUP_WINDOW " << (group_window ? group_window : "(default)"));
    // A group's messages fill a quarter of its window.
    uct_group_attr_t attr{};
    REQUIRE(uct_ud_mcast_group_iface_query(a.iface, &attr) == UCS_OK);
    CHECK(attr.seg_length == a.attr.cap.am.max_short * expect / 4);
    // A p2p endpoint to a peer that stops progressing once the session is
    // up takes WINDOW packets.
    uct_ep_h ab;
    REQUIRE(connect_ep(a, iface_address(b), &ab) == UCS_OK);
    unsigned taken = 0;
    const uint64_t deadline = uct_mm_common::now_ns() + 3'000'000'000ull;
    while (uct_ep_am_short(ab, 3, 0, nullptr, 0) != UCS_OK &&
           uct_mm_common::now_ns() < deadline) {
        a.progress(); // the JOIN and its answer
        b.progress();
    }
    for (unsigned i = 0; i < 100; ++i) {
        taken += uct_ep_am_short(ab, 3, i, nullptr, 0) == UCS_OK;
        a.progress();
    }
    CHECK(taken + 1 == 8);
    uct_ep_destroy(ab);
}

TEST_CASE("ud_mcast refuses a GROUP_WINDOW that is no power of two",
          "[ud_mcast][ucx]")
{
    CHECK_THROWS(Rank(Config{{"GROUP_WINDOW", "100"}}));
    CHECK_NOTHROW(Rank(Config{{"GROUP_WINDOW", "128"}}));
}

TEST_CASE("ud_mcast a group's sender keeps GROUP_WINDOW packets in flight",
          "[ud_mcast][ucx]")
{
    const Config cfg{{"GROUP_WINDOW", "32"}, {"WINDOW", "8"}};
    Rank a(cfg), b(cfg);
    const std::vector<uint8_t> addr_a = iface_address(a),
                               addr_b = iface_address(b);
    const uct_iface_addr_t *addrs[2] = {
        reinterpret_cast<const uct_iface_addr_t *>(addr_a.data()),
        reinterpret_cast<const uct_iface_addr_t *>(addr_b.data())};
    uct_group_h ga = nullptr, gb = nullptr;
    uct_group_params_t gp = group_params(77, 0, 2, addrs);
    REQUIRE(uct_ud_mcast_group_create(a.iface, &gp, &ga) == UCS_OK);
    gp.member_index = 1;
    REQUIRE(uct_ud_mcast_group_create(b.iface, &gp, &gb) == UCS_OK);
    // A first message passes the join barrier; then both settle the ACKs.
    uint8_t one_a = 1, one_b = 0;
    uct_group_msg_t msg{};
    msg.coll = UCT_GROUP_COLL_BCAST;
    msg.length = 1;
    Completion sent, got;
    sent.comp = {on_done, 1, UCS_OK};
    got.comp = {on_done, 1, UCS_OK};
    msg.buffer = &one_a;
    REQUIRE(uct_group_send(ga, &msg, &sent.comp) == UCS_INPROGRESS);
    msg.buffer = &one_b;
    REQUIRE(uct_group_recv(gb, &msg, &got.comp) == UCS_INPROGRESS);
    const uint64_t start = uct_mm_common::now_ns();
    while ((sent.count == 0 || got.count == 0 ||
            uct_mm_common::now_ns() < start + 20'000'000) &&
           uct_mm_common::now_ns() < start + 3'000'000'000ull) {
        a.progress();
        b.progress();
    }
    REQUIRE(got.count == 1);
    CHECK(one_b == 1);
    // b stops: a sends what its window holds and no more.
    uct_ud_mcast_counters_t before{}, after{};
    REQUIRE(uct_ud_mcast_iface_counters(a.iface, &before) == UCS_OK);
    std::vector<uint8_t> big(100 * a.attr.cap.am.max_short, 7);
    msg.buffer = big.data();
    msg.length = big.size();
    Completion big_sent;
    big_sent.comp = {on_done, 1, UCS_OK};
    REQUIRE(uct_group_send(ga, &msg, &big_sent.comp) == UCS_INPROGRESS);
    const uint64_t t0 = uct_mm_common::now_ns();
    while (uct_mm_common::now_ns() < t0 + 100'000'000) {
        a.progress();
    }
    REQUIRE(uct_ud_mcast_iface_counters(a.iface, &after) == UCS_OK);
    CHECK(after.tx_data - before.tx_data == 32);
    CHECK(big_sent.count == 0);
    uct_group_destroy(gb);
    uct_group_destroy(ga);
}
