// SPDX-License-Identifier: BSD-3-Clause
// Scripts of messages for mm_incast core tests: one member runs a list of
// Specs through an IncastGroup, posting a window at a time, and checks
// what it receives as a root.
#pragma once

#include "incast_group.h"
#include "incast_test_util.h"

#include "group_test_util.h"

#include <memory>
#include <vector>

namespace incast_test {

using uct_mm_incast::IncastGroup;
using uct_mm_incast::IncastGroupConfig;
using uct_mm_incast::Status;

inline std::unique_ptr<IncastGroup> open_group(const IncastGroupConfig &c)
{
    IncastGroup *g = nullptr;
    UCG_CHECK(IncastGroup::create(c, &g) == Status::kOk);
    return std::unique_ptr<IncastGroup>(g);
}

/// Runs `script` as member `me` of `n`, `window` posts in flight.
inline void run_script(IncastGroup &g, uint32_t me, uint32_t n,
                       const std::vector<Spec> &script, unsigned window = 2)
{
    std::vector<Buffers> bufs(window);
    std::vector<uct_mm_common::test::Pending> pend(window);
    std::vector<Message> msgs(window);
    for (std::size_t base = 0; base < script.size(); base += window) {
        const std::size_t w =
            std::min<std::size_t>(window, script.size() - base);
        for (std::size_t i = 0; i < w; ++i) {
            const Spec &s = script[base + i];
            msgs[i] = prepare(s, me, n, base + i, &bufs[i]);
            pend[i] = {};
            uct_mm_common::test::post(g, me != s.root, msgs[i], &pend[i]);
        }
        for (std::size_t i = 0; i < w; ++i) {
            const Spec &s = script[base + i];
            UCG_CHECK(uct_mm_common::test::wait(g, &pend[i]) == Status::kOk);
            if (me == s.root) {
                check_root(s, n, base + i, g.mode_of(msgs[i]), bufs[i]);
            }
        }
    }
}

/// Every op of every dtype class, then gather, roots and accumulate
/// changing from message to message, `counts` elements each (gather:
/// bytes).
inline std::vector<Spec> op_dtype_script(uint32_t n,
                                         const std::vector<std::size_t> &counts)
{
    std::vector<Spec> script;
    uint32_t k = 0;
    for (ucg_dtype_t d : dtype_classes()) {
        for (ucg_op_t op : ops_for(d)) {
            for (std::size_t c : counts) {
                Spec s;
                s.dtype = d;
                s.op = op;
                s.count = c;
                s.root = k % n;
                s.accumulate = k % 3 == 1;
                s.operand = k % 3 == 2;
                s.tag = k++;
                script.push_back(s);
            }
        }
    }
    for (std::size_t c : counts) {
        for (bool each : {false, true}) {
            Spec s;
            s.coll = Coll::kGather;
            s.count = c * 8;
            s.root = k % n;
            s.member_buffers = each;
            s.tag = k++;
            script.push_back(s);
        }
    }
    return script;
}

} // namespace incast_test
