// SPDX-License-Identifier: BSD-3-Clause
// SimNet: the simulated wire.
#include "sim_net.h"

namespace uct_ud_mcast::test {

SimNet::SimNet(unsigned size, const Faults &f, uint64_t seed)
    : rx_by_type(size, std::vector<uint64_t>(9, 0)), faults_(f), rng_(seed)
{
    for (unsigned m = 0; m < size; ++m) {
        auto mem = std::make_unique<Member>();
        mem->net = this;
        mem->index = m;
        mem->engine = std::make_unique<Engine>(10'000);
        members_.push_back(std::move(mem));
    }
}

bool SimNet::Member::to_member(uint16_t m, const uint8_t *p, size_t n) noexcept
{
    if (alive) {
        net->send(index, m, p, n);
    }
    return true;
}

bool SimNet::Member::to_all(const uint8_t *p, size_t n) noexcept
{
    for (unsigned m = 0; alive && m < net->members_.size(); ++m) {
        if (m != index) {
            net->send(index, m, p, n);
        }
    }
    return true;
}

void SimNet::send(unsigned from, unsigned to, const uint8_t *p, size_t n)
{
    if (p[3] == static_cast<uint8_t>(PacketType::kData) && first_data_ns == 0) {
        first_data_ns = now_;
    }
    if (filter && filter(from, to, p, n)) {
        return;
    }
    if (uniform() < faults_.loss) {
        return;
    }
    const int copies = uniform() < faults_.dup ? 2 : 1;
    for (int c = 0; c < copies; ++c) {
        uint64_t delay = 2'000;
        if (uniform() < faults_.reorder) {
            delay += static_cast<uint64_t>(uniform() * 200'000);
        }
        if (uniform() < faults_.delay) {
            delay += static_cast<uint64_t>(uniform() * 2'000'000);
        }
        events_.push(Event{now_ + delay, order_++, from, to,
                           std::vector<uint8_t>(p, p + n)});
    }
}

void SimNet::step(uint64_t max_step_ns)
{
    while (!events_.empty() && events_.top().at <= now_) {
        const Event &e = events_.top();
        Member &to = *members_[e.to];
        if (to.alive && members_[e.from]->alive) {
            ++rx_by_type[e.to][e.pkt[3] < 9 ? e.pkt[3] : 0];
            // Copy first: the engine may send, which pushes events.
            std::vector<uint8_t> pkt = e.pkt;
            events_.pop();
            to.engine->on_packet(pkt.data(), pkt.size(), now_);
        } else {
            events_.pop();
        }
    }
    for (auto &m : members_) {
        if (m->alive) {
            m->engine->progress(now_);
        }
    }
    uint64_t next = now_ + max_step_ns;
    if (!events_.empty() && events_.top().at < next) {
        next = events_.top().at;
    }
    now_ = next > now_ ? next : now_ + 1;
}

void SimNet::stall(uint64_t ns)
{
    std::vector<Event> moved;
    while (!events_.empty()) {
        moved.push_back(events_.top());
        events_.pop();
    }
    for (Event &e : moved) {
        e.at += ns;
        events_.push(std::move(e));
    }
    now_ += ns;
}

} // namespace uct_ud_mcast::test
