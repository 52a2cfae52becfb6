// SPDX-License-Identifier: BSD-3-Clause
// run_udp_group: forked members over UdpWire.
#include "udp_group.h"

#include "group_sim.h"
#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/thread_ranks.h"
#include "uct_mm_common/backoff.h"

#include <atomic>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
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

SessionConfig wire_config(const UdpRun &run, uint32_t max_packet)
{
    SessionConfig c;
    c.key = mix64(run.seed * 1000 + run.size);
    c.size = static_cast<uint16_t>(run.size);
    c.window = 64;
    c.max_payload = max_packet - static_cast<uint32_t>(kDataHeaderBytes);
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
    while (board->published.load() < run.size) {
        backoff.pause();
    }
    std::vector<int> peers(run.size);
    for (unsigned m = 0; m < run.size; ++m) {
        peers[m] = m == me ? -1 : wire->resolve(board->addrs[m]);
    }
    SessionConfig cfg = wire_config(run, wire->max_packet());
    cfg.my_index = static_cast<uint16_t>(me);
    cfg.nonce = static_cast<uint32_t>(getpid());
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
}

} // namespace

uint32_t udp_script_len(uint64_t seed, unsigned i)
{
    const uint64_t h = mix64(seed * 977 + i);
    const uint32_t sizes[] = {0, 1, 8, 100, 1400, 8127, 8128, 20000, 65536};
    if (h % 500 == 7) {
        return 1u << 20; // 1 MiB, rarely
    }
    return sizes[(h >> 8) % 9];
}

std::string run_udp_group(const UdpRun &run)
{
    ucg_test::SharedMapping mapping(sizeof(Board));
    auto *board = new (mapping.data()) Board();
    ucg_test::ForkOptions opts(static_cast<int>(run.size));
    opts.timeout = std::chrono::milliseconds(50'000);
    if (run.victim >= 0) {
        opts.may_be_killed.push_back(run.victim);
    }
    const ucg_test::ForkResult res =
        ucg_test::run_fork_ranks(opts, [&](int rank) {
            member_body(run, board, static_cast<unsigned>(rank));
        });
    return res.ok ? std::string() : res.summary();
}

} // namespace uct_ud_mcast::test
