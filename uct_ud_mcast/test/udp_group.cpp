// SPDX-License-Identifier: BSD-3-Clause
// run_udp_group: forked members over UdpWire.
#include "udp_group.h"

#include "forge.h"
#include "group_sim.h"
#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/thread_ranks.h"
#include "uct_mm_common/backoff.h"

#include <arpa/inet.h>
#include <atomic>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

namespace uct_ud_mcast::test {
namespace {

using uct_mm_common::Backoff;
using uct_mm_common::now_ns;

constexpr unsigned kMaxRanks = 16;

struct Board {
    std::atomic<unsigned> published;
    std::atomic<unsigned> finished;
    uint8_t addrs[kMaxRanks][kWireAddrBytes];
    MacKey key; ///< the group's MAC key (the attacker never reads it)
};

struct Member {
    const UdpRun *run;
    unsigned me;
    std::vector<std::vector<uint8_t>> bufs; ///< by message, while posted
    unsigned completed = 0;
    std::string error;
};

void check_message(Member *m, unsigned i)
{
    const std::vector<uint8_t> &b = m->bufs[i];
    for (uint32_t o = 0; o < b.size() && m->error.empty(); ++o) {
        if (b[o] != pattern(i, o)) {
            m->error = "message " + std::to_string(i) + " byte " +
                       std::to_string(o) + " differs";
        }
    }
    m->bufs[i] = std::vector<uint8_t>();
    ++m->completed;
}

void on_complete(void *arg, void *cookie, Status st)
{
    auto *m = static_cast<Member *>(arg);
    if (st != Status::kOk && m->error.empty()) {
        m->error = std::string("completion: ") + status_name(st);
    }
    check_message(m,
                  static_cast<unsigned>(reinterpret_cast<uintptr_t>(cookie)));
}

void enter_netns(const std::string &name)
{
    const std::string path = "/var/run/netns/" + name;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    UCG_CHECK(fd >= 0);
    UCG_CHECK(setns(fd, CLONE_NEWNET) == 0);
    close(fd);
}

uint64_t session_key(const UdpRun &run)
{
    return mix64(run.seed * 1000 + run.size);
}

SessionConfig wire_config(const UdpRun &run, uint32_t max_packet)
{
    SessionConfig c;
    c.key = session_key(run);
    c.size = static_cast<uint16_t>(run.size);
    c.window = 64;
    c.max_payload =
        max_packet - static_cast<uint32_t>(kDataHeaderBytes + kMacBytes);
    c.ack_delay_ns = 100'000;
    c.nack_delay_ns = 50'000;
    c.nack_holdoff_ns = 1'000'000;
    c.rto_min_ns = 5'000'000;
    c.probe_ns = run.timeout_ns / 5;
    c.timeout_ns = run.timeout_ns;
    c.attach_timeout_ns = 20'000'000'000;
    return c;
}

void member_body(const UdpRun &run, Board *board, unsigned me)
{
    if (!run.netns.empty()) {
        enter_netns(run.netns[me]);
    }
    UdpConfig ucfg;
    ucfg.ifname = run.ifname;
    std::unique_ptr<UdpWire> wire;
    UCG_CHECK(UdpWire::open(ucfg, &wire) == Status::kOk);
    Engine engine;
    engine.set_rx_loss(run.rx_loss, run.seed * 31 + me);
    wire->local_addr(board->addrs[me]);
    board->published.fetch_add(1);
    Backoff backoff;
    while (board->published.load() < run.size + (run.attacker ? 1u : 0u)) {
        backoff.pause();
    }
    std::vector<int> peers(run.size);
    for (unsigned m = 0; m < run.size; ++m) {
        peers[m] = m == me ? -1 : wire->resolve(board->addrs[m]);
    }
    SessionConfig cfg = wire_config(run, wire->max_packet());
    cfg.my_index = static_cast<uint16_t>(me);
    cfg.nonce = static_cast<uint32_t>(getpid());
    cfg.tx_key = cfg.rx_key = board->key;
    int group;
    UCG_CHECK(wire->join(cfg.key, &group) == Status::kOk);
    WireTransmit tx(wire.get(), peers, group, cfg.my_index);
    Member mem{&run, me, {}, 0, {}};
    mem.bufs.resize(run.messages);
    GroupChannel ch(cfg, 8, &tx, &engine.counters(), on_complete, &mem,
                    now_ns());
    engine.add(&ch.session());
    unsigned cursor = 0;
    unsigned idle = 0;
    bool counted = false;
    while (true) {
        while (cursor < run.messages && ch.state() == Status::kOk) {
            if (static_cast<int>(me) == run.victim &&
                cursor == run.kill_after) {
                kill(getpid(), SIGKILL);
            }
            const uint16_t root =
                static_cast<uint16_t>(mix64(run.seed + cursor) % run.size);
            std::vector<uint8_t> &b = mem.bufs[cursor];
            b.assign(udp_script_len(run.seed, cursor), 0);
            if (root == me) {
                for (uint32_t o = 0; o < b.size(); ++o) {
                    b[o] = pattern(cursor, o);
                }
            }
            GroupMsg msg{root, static_cast<uint32_t>(b.size()), cursor,
                         b.data()};
            bool done = false;
            void *cookie = reinterpret_cast<void *>(uintptr_t{cursor});
            const uint64_t now = now_ns();
            const Status st = root == me
                                  ? ch.post_send(msg, cookie, &done, now)
                                  : ch.post_recv(msg, cookie, &done, now);
            if (st != Status::kOk) {
                break;
            }
            if (done) {
                check_message(&mem, cursor);
            }
            ++cursor;
        }
        const bool finished =
            ch.state() != Status::kOk ||
            (cursor == run.messages && ch.outstanding() == 0 &&
             !ch.session().unacked());
        if (finished && !counted) {
            counted = true;
            board->finished.fetch_add(1);
        }
        // Stay until everyone finished: they may need our ACKs and repairs.
        if (counted &&
            (board->finished.load() >= run.size - (run.victim >= 0 ? 1 : 0) ||
             ch.state() != Status::kOk)) {
            break;
        }
        const uint64_t now = now_ns();
        const unsigned got = wire->poll(&engine, now);
        engine.progress(now);
        if (got != 0) {
            idle = 0;
        } else if (++idle < 64) {
            backoff.pause();
        } else {
            wire->wait(1);
        }
    }
    if (run.victim >= 0) {
        UCG_CHECK(ch.state() == Status::kPeerDead);
        return;
    }
    UCG_CHECK(ch.state() == Status::kOk);
    if (!mem.error.empty()) {
        ucg_test::fail_check(__FILE__, __LINE__, "bytes", mem.error);
    }
    UCG_CHECK_EQ(mem.completed, run.messages);
    // The loss hook did drop packets, and the protocol repaired them.
    const Counters &c = engine.counters();
    UCG_CHECK(run.rx_loss == 0 || c.drop_injected > 0);
    UCG_CHECK(c.rx_delivered > 0);
    UCG_CHECK(run.rx_loss < 0.05 || c.tx_nacks + c.tx_resent > 0);
    // The attacker's forgeries reached this member and were dropped.
    UCG_CHECK(!run.attacker || c.drop_bad_mac > 0);
}

// A socket of `ip` that reads the datagrams of the multicast group
// `group` (as UdpWire::join, with no key: anyone may).
int listen_to_group(const sockaddr_in &group, in_addr ip)
{
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const int one = 1, zero = 0;
    ip_mreq mreq{};
    mreq.imr_multiaddr = group.sin_addr;
    mreq.imr_interface = ip;
    UCG_CHECK(fd >= 0);
    UCG_CHECK(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0);
    UCG_CHECK(bind(fd, reinterpret_cast<const sockaddr *>(&group),
                   sizeof(group)) == 0);
    UCG_CHECK(
        setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof(zero)) == 0);
    UCG_CHECK(setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq,
                         sizeof(mreq)) == 0);
    return fd;
}

// UdpRun::attacker: what a host on the segment (or a local user that binds
// the group's port) can do without the group's key.
void attacker_body(const UdpRun &run, Board *board)
{
    if (!run.netns.empty()) {
        enter_netns(run.netns.at(run.size));
    }
    UdpConfig ucfg;
    ucfg.ifname = run.ifname;
    std::unique_ptr<UdpWire> wire; // what it sends with, as a member would
    UCG_CHECK(UdpWire::open(ucfg, &wire) == Status::kOk);
    uint8_t self[kWireAddrBytes]; // IPv4 address, then port
    wire->local_addr(self);
    in_addr ip;
    std::memcpy(&ip.s_addr, self, 4);
    // The session key is in every packet's header, and the group's
    // address follows from it.
    uint32_t gip;
    uint16_t gport;
    UdpWire::group_addr(session_key(run), ucfg.port_base, &gip, &gport);
    sockaddr_in group{};
    group.sin_family = AF_INET;
    group.sin_addr.s_addr = htonl(gip);
    group.sin_port = htons(gport);
    const int rx = listen_to_group(group, ip);
    int to_group = -1; // (the copies this socket receives go unread)
    UCG_CHECK(wire->join(session_key(run), &to_group) == Status::kOk);
    board->published.fetch_add(1);
    MacKey guess;
    guess.fill(0x42);
    constexpr size_t kBudget = 3000; // packets forged from and replayed
    std::vector<std::vector<uint8_t>> captured;
    std::vector<uint8_t> buf(65536);
    uint64_t sent = 0;
    // To the group, and to the member `from` that sent the original.
    auto send = [&](const std::vector<uint8_t> &pkt, const uint8_t *from) {
        const int member = wire->resolve(from);
        sent += wire->send_group(to_group, pkt.data(), pkt.size());
        sent += member >= 0 && wire->send_to(member, pkt.data(), pkt.size());
    };
    while (board->finished.load() < run.size) {
        pollfd p{rx, POLLIN, 0};
        if (poll(&p, 1, 1) <= 0) {
            continue;
        }
        sockaddr_in sender{};
        socklen_t sender_len = sizeof(sender);
        const ssize_t n =
            recvfrom(rx, buf.data(), buf.size(), 0,
                     reinterpret_cast<sockaddr *>(&sender), &sender_len);
        uint8_t from[kWireAddrBytes] = {}; // as UdpWire::local_addr
        std::memcpy(from, &sender.sin_addr.s_addr, 4);
        std::memcpy(from + 4, &sender.sin_port, 2);
        Packet pkt;
        if (n <= 0 || captured.size() >= kBudget ||
            std::memcmp(from, self, sizeof(from)) == 0 || // its own
            parse_packet(buf.data(), static_cast<size_t>(n), &pkt) !=
                ParseError::kNone) {
            continue;
        }
        for (const auto &f :
             forgeries(buf.data(), static_cast<size_t>(n), guess)) {
            send(f, from);
        }
        captured.emplace_back(buf.data(), buf.data() + n);
        if (captured.size() > 64) {
            send(captured[captured.size() - 65], from);
        }
    }
    close(rx);
    UCG_CHECK(sent > 0);
}

} // namespace

uint32_t udp_script_len(uint64_t seed, unsigned i)
{
    const uint64_t h = mix64(seed * 977 + i);
    const uint32_t sizes[] = {0, 1, 8, 100, 1400, 8111, 8112, 20000, 65536};
    if (h % 500 == 7) {
        return 1u << 20; // 1 MiB, rarely
    }
    return sizes[(h >> 8) % 9];
}

std::string run_udp_group(const UdpRun &run)
{
    ucg_test::SharedMapping mapping(sizeof(Board));
    auto *board = new (mapping.data()) Board();
    UCG_CHECK(random_secret(&board->key));
    UCG_CHECK(!run.attacker || run.netns.empty() ||
              run.netns.size() == run.size + 1);
    ucg_test::ForkOptions opts(static_cast<int>(run.size) +
                               (run.attacker ? 1 : 0));
    opts.timeout = std::chrono::milliseconds(50'000);
    if (run.victim >= 0) {
        opts.may_be_killed.push_back(run.victim);
    }
    const ucg_test::ForkResult res =
        ucg_test::run_fork_ranks(opts, [&](int rank) {
            if (static_cast<unsigned>(rank) == run.size) {
                attacker_body(run, board);
            } else {
                member_body(run, board, static_cast<unsigned>(rank));
            }
        });
    return res.ok ? std::string() : res.summary();
}

} // namespace uct_ud_mcast::test
