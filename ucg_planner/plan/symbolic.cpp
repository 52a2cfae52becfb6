// SPDX-License-Identifier: BSD-3-Clause
// The symbolic checker: runs a plan over multisets (or ordered sequences)
// of contributions. A contribution is (origin rank, input block); chunks
// never change place (the validator enforces equal chunk sequences), so
// they are implicit. In ordered mode a value is the sequence of
// contributions in the order (+) combined them; since contributions number
// rank-major, a rank-ordered combination is an ascending sequence.
#include "plan/engine.h"

#include <algorithm>

namespace ucg::plan {

namespace {

using Value = std::vector<int>; // sorted (or ordered) contributions
using Buffers = std::vector<Value>[3];

class Machine {
  public:
    Machine(const Plan &plan, Combine mode)
        : plan_(plan), ordered_(mode == Combine::kOrdered),
          stride_(plan.collective == Collective::kAlltoall ||
                          plan.collective == Collective::kScatter ||
                          plan.collective == Collective::kReduceScatter
                      ? plan.nranks
                      : 1),
          bufs_(plan.ranks.size())
    {
        for (int r = 0; r < plan.nranks; ++r) {
            auto &b = bufs_[static_cast<std::size_t>(r)];
            const int nc = plan.nchunks;
            const int in =
                input_blocks(plan.collective, plan.nranks, plan.root, r);
            b[0].resize(static_cast<std::size_t>(in * nc));
            for (int i = 0; i < in * nc; ++i) {
                b[0][static_cast<std::size_t>(i)] = {r * stride_ + i / nc};
            }
            b[1].resize(static_cast<std::size_t>(
                output_blocks(plan.collective, plan.nranks, plan.root, r) *
                nc));
            b[2].resize(static_cast<std::size_t>(
                plan.ranks[static_cast<std::size_t>(r)].scratch_blocks * nc));
        }
    }
    int stride() const { return stride_; }

    // A message: the slots' values back to back, with each slot's end.
    struct Flat {
        Value data;
        std::vector<std::size_t> end;
    };
    Flat read(int rank, const std::vector<Range> &v) const
    {
        Flat out;
        for (const Range &r : v) {
            const auto &ss = buf(rank, r.buf);
            for (int b = r.block; b < r.block + r.nblocks; ++b) {
                for (int c = r.chunk; c < r.chunk + r.nchunks; ++c) {
                    const Value &x = ss[index(b, c)];
                    out.data.insert(out.data.end(), x.begin(), x.end());
                    out.end.push_back(out.data.size());
                }
            }
        }
        return out;
    }
    // How a write combines the message with what the slot holds.
    struct How {
        bool reduce = false;
        bool src_first = false;
        int first = 0; // the first slot of dst the message fills
    };
    void write(int rank, const std::vector<Range> &v, const Flat &vals, How how)
    {
        int slot = 0;
        std::size_t k = 0;
        for (const Range &r : v) {
            auto &ss = bufs_[static_cast<std::size_t>(rank)]
                            [static_cast<std::size_t>(r.buf)];
            for (int b = r.block; b < r.block + r.nblocks; ++b) {
                for (int c = r.chunk; c < r.chunk + r.nchunks; ++c, ++slot) {
                    if (slot < how.first || k >= vals.end.size()) {
                        continue;
                    }
                    combine(ss[index(b, c)], vals, k++, how);
                }
            }
        }
    }
    const Value &output(int rank, int block, int chunk) const
    {
        return buf(rank, Buffer::kOutput)[index(block, chunk)];
    }

  private:
    void combine(Value &s, const Flat &vals, std::size_t k, How how) const
    {
        const auto first =
            vals.data.begin() + static_cast<long>(k ? vals.end[k - 1] : 0);
        const auto last = vals.data.begin() + static_cast<long>(vals.end[k]);
        if (!how.reduce) {
            s.assign(first, last);
        } else if (!ordered_) {
            const auto mid = static_cast<long>(s.size());
            s.insert(s.end(), first, last);
            std::inplace_merge(s.begin(), s.begin() + mid, s.end());
        } else {
            s.insert(how.src_first ? s.begin() : s.end(), first, last);
        }
    }
    const std::vector<Value> &buf(int rank, Buffer b) const
    {
        return bufs_[static_cast<std::size_t>(rank)]
                    [static_cast<std::size_t>(b)];
    }
    std::size_t index(int b, int c) const
    {
        return static_cast<std::size_t>(b * plan_.nchunks + c);
    }
    const Plan &plan_;
    bool ordered_;
    int stride_;
    std::vector<Buffers> bufs_;
};

void run(const Plan &plan, Machine &mach)
{
    std::vector<std::string> errors;
    const auto m = detail::match_messages(plan, errors);
    std::vector<Machine::Flat> msgs(m.messages.size());
    for (const detail::OpRef x : detail::execution_order(plan, m)) {
        const Op &op = plan.ranks[static_cast<std::size_t>(x.rank)]
                           .ops[static_cast<std::size_t>(x.op)];
        const auto &ids = m.msgs_of[static_cast<std::size_t>(x.rank)]
                                   [static_cast<std::size_t>(x.op)];
        if (is_send(op.kind)) {
            auto vals = mach.read(x.rank, op.src);
            for (std::size_t k = 0; k < ids.size(); ++k) {
                if (ids[k] < 0) {
                    continue;
                }
                auto &msg = msgs[static_cast<std::size_t>(ids[k])];
                if (k + 1 == ids.size()) {
                    msg = std::move(vals);
                } else {
                    msg = vals;
                }
            }
        } else if (is_recv(op.kind)) {
            if (!op.src.empty()) { // the receive's own operand
                mach.write(x.rank, op.dst, mach.read(x.rank, op.src), {});
            }
            for (std::size_t k = 0; k < ids.size(); ++k) {
                if (ids[k] < 0) {
                    continue; // unmatched: validate() reports it
                }
                const int first =
                    detail::recv_part(op, static_cast<int>(k)).first;
                auto &msg = msgs[static_cast<std::size_t>(ids[k])];
                mach.write(x.rank, op.dst, msg,
                           {is_reducing(op.kind), op.src_first, first});
                msg = Machine::Flat{};
            }
        } else {
            mach.write(x.rank, op.dst, mach.read(x.rank, op.src),
                       {is_reducing(op.kind), op.src_first, 0});
        }
    }
}

// The contributions output block `b` of `rank` must hold.
Value expected(const Plan &plan, int stride, int rank, int b)
{
    const int p = plan.nranks;
    Value v;
    switch (plan.collective) {
    case Collective::kBcast:
        return {plan.root * stride};
    case Collective::kGather:
    case Collective::kAllgather:
        return {b * stride};
    case Collective::kScatter:
        return {plan.root * stride + rank};
    case Collective::kAlltoall:
        return {b * stride + rank};
    case Collective::kReduceScatter:
        for (int q = 0; q < p; ++q) {
            v.push_back(q * stride + rank);
        }
        return v;
    case Collective::kScan:
    case Collective::kExscan: // rank 0's exscan output: untouched
        for (int q = 0; q < rank + (plan.collective == Collective::kScan);
             ++q) {
            v.push_back(q * stride);
        }
        return v;

    default: // reduce, allreduce, barrier
        for (int q = 0; q < p; ++q) {
            v.push_back(q * stride);
        }
        return v;
    }
}

std::string show(const Value &v)
{
    std::string s = "{";
    for (std::size_t i = 0; i < v.size() && i < 8; ++i) {
        s += (i ? "," : "") + std::to_string(v[i]);
    }
    return s + (v.size() > 8 ? ",...}" : "}");
}

} // namespace

std::vector<std::string> check_symbolic(const Plan &plan, Combine mode)
{
    Machine mach(plan, mode);
    run(plan, mach);
    std::vector<std::string> errors;
    for (int r = 0; r < plan.nranks && errors.size() < 16; ++r) {
        const int nb =
            output_blocks(plan.collective, plan.nranks, plan.root, r);
        for (int b = 0; b < nb && errors.size() < 16; ++b) {
            const Value want = expected(plan, mach.stride(), r, b);
            for (int c = 0; c < plan.nchunks; ++c) {
                Value got = mach.output(r, b, c);
                if (plan.collective == Collective::kBarrier) {
                    std::sort(got.begin(), got.end());
                    got.erase(std::unique(got.begin(), got.end()), got.end());
                }
                if (got != want) {
                    errors.push_back(
                        "rank " + std::to_string(r) + " out block " +
                        std::to_string(b) + " chunk " + std::to_string(c) +
                        ": expected " + show(want) + " got " + show(got));
                    break;
                }
            }
        }
    }
    return errors;
}

} // namespace ucg::plan
