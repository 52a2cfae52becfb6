// SPDX-License-Identifier: BSD-3-Clause
// GroupSim: the script runner over SimNet.
#include "group_sim.h"

#include <random>

namespace uct_ud_mcast::test {

SessionConfig sim_config(unsigned size, uint64_t key)
{
    SessionConfig c;
    c.key = key;
    c.size = static_cast<uint16_t>(size);
    c.window = 16;
    c.max_payload = 64;
    c.ack_fanin = 2;
    c.ack_every = 4;
    c.ack_delay_ns = 100'000;
    c.nack_delay_ns = 100'000;
    c.nack_holdoff_ns = 1'000'000;
    c.rto_min_ns = 5'000'000;
    c.rto_max_ns = 200'000'000;
    c.probe_ns = 200'000'000;
    c.timeout_ns = 10'000'000'000;
    c.attach_timeout_ns = 30'000'000'000;
    return c;
}

std::vector<ScriptMsg> random_script(unsigned size, unsigned count,
                                     uint32_t payload, uint64_t seed)
{
    std::mt19937_64 rng(seed * 7919 + 17);
    const uint32_t sizes[] = {0,           1,           payload - 1,
                              payload,     payload + 1, 3 * payload + 7,
                              2 * payload, 40};
    std::vector<ScriptMsg> s(count);
    for (auto &m : s) {
        m.root = static_cast<uint16_t>(rng() % size);
        m.len = sizes[rng() % 8];
    }
    return s;
}

GroupSim::GroupSim(SimNet &net, const SessionConfig &cfg,
                   unsigned max_outstanding, std::vector<ScriptMsg> script)
    : paused(cfg.size, false), net_(net), script_(std::move(script)),
      ranks_(cfg.size)
{
    for (unsigned m = 0; m < cfg.size; ++m) {
        SessionConfig c = cfg;
        c.my_index = static_cast<uint16_t>(m);
        c.nonce = static_cast<uint32_t>(cfg.key * 31 + m + 1);
        Rank &r = ranks_[m];
        r.ch = std::make_unique<GroupChannel>(c, max_outstanding, net.tx(m),
                                              &net.engine(m).counters(),
                                              on_complete, &r, net.now());
        net.engine(m).add(&r.ch->session());
        r.bufs.resize(script_.size());
        r.completions.assign(script_.size(), 0);
        r.statuses.assign(script_.size(), Status::kOk);
        for (size_t i = 0; i < script_.size(); ++i) {
            r.bufs[i].assign(script_[i].len, 0);
            if (script_[i].root == m) {
                for (uint32_t o = 0; o < script_[i].len; ++o) {
                    r.bufs[i][o] = pattern(static_cast<uint32_t>(i), o);
                }
            }
        }
    }
}

void GroupSim::on_complete(void *arg, void *cookie, Status st)
{
    auto *r = static_cast<Rank *>(arg);
    const auto i = reinterpret_cast<uintptr_t>(cookie);
    ++r->completions[i];
    r->statuses[i] = st;
}

void GroupSim::post_more(unsigned m)
{
    Rank &r = ranks_[m];
    while (!paused[m] && r.cursor < script_.size() &&
           r.ch->state() == Status::kOk) {
        const size_t i = r.cursor;
        GroupMsg msg;
        msg.root = script_[i].root;
        msg.len = script_[i].len;
        msg.tag = static_cast<uint32_t>(i);
        msg.buffer = r.bufs[i].data();
        bool done = false;
        void *cookie = reinterpret_cast<void *>(static_cast<uintptr_t>(i));
        const Status st = msg.root == m
                              ? r.ch->post_send(msg, cookie, &done, net_.now())
                              : r.ch->post_recv(msg, cookie, &done, net_.now());
        if (st == Status::kNoResource) {
            break;
        }
        if (st != Status::kOk) {
            break;
        }
        if (done) {
            ++r.completions[i];
        }
        ++r.cursor;
    }
}

bool GroupSim::done(unsigned m) const
{
    const Rank &r = ranks_[m];
    return r.ch->state() != Status::kOk ||
           (r.cursor == script_.size() && r.ch->outstanding() == 0);
}

bool GroupSim::run(uint64_t limit_ns)
{
    const uint64_t end = net_.now() + limit_ns;
    while (net_.now() < end) {
        bool all = true;
        for (unsigned m = 0; m < ranks_.size(); ++m) {
            if (!net_.alive(m)) {
                continue;
            }
            post_more(m);
            all = all && done(m);
        }
        if (all) {
            return true;
        }
        net_.step();
    }
    return false;
}

std::string GroupSim::verify() const
{
    for (unsigned m = 0; m < ranks_.size(); ++m) {
        const Rank &r = ranks_[m];
        if (!net_.alive(m)) {
            continue;
        }
        for (size_t i = 0; i < script_.size(); ++i) {
            const std::string where = "member " + std::to_string(m) +
                                      " message " + std::to_string(i) + ": ";
            if (r.completions[i] != 1 || r.statuses[i] != Status::kOk) {
                return where + std::to_string(r.completions[i]) +
                       " completions, status " + status_name(r.statuses[i]);
            }
            for (uint32_t o = 0; o < script_[i].len; ++o) {
                if (r.bufs[i][o] != pattern(static_cast<uint32_t>(i), o)) {
                    return where + "byte " + std::to_string(o) + " differs";
                }
            }
        }
    }
    return {};
}

std::string run_random_seed(uint64_t seed, Counters *total)
{
    std::mt19937_64 rng(seed);
    const unsigned sizes[] = {2, 3, 5, 8};
    const unsigned n = sizes[rng() % 4];
    std::uniform_real_distribution<> p(0, 0.2);
    const Faults f{p(rng), p(rng), p(rng), p(rng)};
    SimNet net(n, f, seed);
    const SessionConfig cfg = sim_config(n, mix64(seed + 1));
    GroupSim sim(net, cfg, 4, random_script(n, 24, cfg.max_payload, seed));
    if (!sim.run(600'000'000'000)) {
        return "seed " + std::to_string(seed) + ": not done";
    }
    for (unsigned m = 0; m < n; ++m) {
        const Counters &c = net.engine(m).counters();
        total->tx_resent += c.tx_resent;
        total->rx_duplicate += c.rx_duplicate;
        total->rx_out_of_order += c.rx_out_of_order;
        total->tx_nacks += c.tx_nacks;
        total->rx_delivered += c.rx_delivered;
    }
    const std::string err = sim.verify();
    return err.empty() ? err : "seed " + std::to_string(seed) + ": " + err;
}

} // namespace uct_ud_mcast::test
