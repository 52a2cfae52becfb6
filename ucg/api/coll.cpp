// SPDX-License-Identifier: BSD-3-Clause
// Collectives: the plan (selected once per collective, root and size
// class, and cached on the group), lowered for this call's buffers and
// run by an engine instance; start, test, wait, free; failure when a
// member dies.
#include "api/coll_shape.h"
#include "api/internal.h"
#include "api/wait_backoff.h"

#include <ucg/copy.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <poll.h>
#include <sched.h>

namespace ucg::rt {

namespace {

using plan::Collective;

// Plan variants that need their own rules.
enum : int {
    kVariantPointToPoint = 1, // no shm levels (user op or no transports)
    kVariantForced = 2,       // a v collective's algorithm
    kVariantOrdered = 4,      // a non-commutative operator: rank order
};

// The order-preserving algorithm (Algorithm::preserves_order) a
// non-commutative operator runs, or nullptr where none is built.
const char *ordered_algorithm(Collective c)
{
    switch (c) {
    case Collective::kReduce:
        return "ordered_knomial";
    case Collective::kAllreduce:
        return "knomial";
    case Collective::kScan:
    case Collective::kExscan:
        return "recursive_doubling";
    default:
        return nullptr;
    }
}

select::RuleSet rules_for(const ucg_group *g, const CollShape &s, int variant)
{
    select::RuleSet rules;
    rules.origin = "UCG";
    const char *forced = (variant & kVariantOrdered)
                             ? ordered_algorithm(s.collective)
                             : s.forced;
    if (forced != nullptr) {
        select::Rule r;
        r.collective = s.collective;
        r.algorithm = forced;
        r.text =
            std::string(plan::to_string(s.collective)) + ":0-inf:" + forced;
        rules.rules.push_back(r);
    }
    if (variant & kVariantPointToPoint) {
        // The host level's shape: anything but the shm transports.
        select::Rule r;
        r.collective = s.collective;
        r.level = topology::LevelKind::kHost;
        r.algorithm = "knomial";
        r.text = "host level without shm";
        rules.rules.push_back(r);
    }
    // Without multicast (UCG_MCAST off, or ud_mcast missing on a member)
    // a user's mcast level rule falls back to the cost model.
    for (const select::Rule &r : g->rules.rules) {
        if (g->mcast || !r.level || r.algorithm != "mcast") {
            rules.rules.push_back(r);
        }
    }
    return rules;
}

algorithms::ChannelLimits limits(const ucg::rt::OneToMany &tl)
{
    algorithms::ChannelLimits l;
    if (tl.iface != nullptr) {
        l.max_bytes = tl.attr.max_length;
        l.seg_bytes = tl.attr.seg_length;
        l.ns_per_byte = tl.ns_per_byte;
        l.alpha_ns = tl.alpha_ns;
        l.alpha_scale = tl.alpha_scale;
    }
    return l;
}

// "hierarchical radix=2 segments=1 [host: shm, world: knomial]".
std::string describe(const plan::Plan &p, const select::Decision &d)
{
    std::string name = p.algorithm;
    if (d.levels.empty()) {
        return name;
    }
    name += " [";
    for (std::size_t l = 0; l < d.levels.size(); ++l) {
        name += (l != 0 ? ", " : "") +
                std::string(topology::level_name(d.levels[l].kind)) + ": " +
                d.levels[l].choice.algorithm;
    }
    return name + "]";
}

ucs_status_t plan_for(ucg_group *g, const CollShape &s, int variant,
                      std::shared_ptr<const plan::Plan> *out, std::string *name,
                      double *predicted_ns)
{
    const int size_class = std::bit_width(s.select_bytes);
    const ucg_plan_key key{static_cast<int>(s.collective), s.root, size_class,
                           variant};
    auto it = g->plans.find(key);
    if (it != g->plans.end()) {
        *out = it->second.plan;
        *name = it->second.name;
        *predicted_ns = it->second.predicted_ns;
        return UCS_OK;
    }
    const select::Selector sel(*g->topo, rules_for(g, s, variant));
    select::SelectOptions o;
    o.collective = s.collective;
    o.bytes = s.select_bytes;
    o.root = s.root;
    o.shm_bcast = limits(g->ctx->bcast);
    o.shm_incast = limits(g->ctx->incast);
    o.oversubscribed = g->any_oversubscribed; // alike on every member
    o.ranks_per_core = g->ranks_per_core;     // alike on every member
    o.eager_bytes = g->eager_bytes;           // alike on every member
    if (g->mcast) {
        o.mcast = limits(g->mcast_tl);
    }
    auto d = sel.select(o);
    if (!d) {
        log_error("ucg_collective_init: %s", d.error().message.c_str());
        return UCS_ERR_INVALID_PARAM;
    }
    auto p = sel.build(d.value(), g->rank);
    if (!p) {
        log_error("ucg_collective_init: %s", p.error().message.c_str());
        return UCS_ERR_INVALID_PARAM;
    }
    *out = std::make_shared<const plan::Plan>(std::move(p.value()));
    *name = describe(**out, d.value());
    *predicted_ns = model_ns(sel, o, d.value(), *g->topo, g->cpu_groups);
    g->plans.emplace(key, ucg_group::PlanEntry{*out, *name, *predicted_ns});
    return UCS_OK;
}

bool rooted(Collective c)
{
    return c == Collective::kBcast || c == Collective::kReduce ||
           c == Collective::kGather || c == Collective::kScatter;
}

// The plan file for this call, if it has one the call fits: not a v
// collective (those need their own algorithm or scratch of their own
// blocks), the file's root, at least
// one element per chunk, and for a user operator no one-to-many ops (the
// transports reduce with the built-in ones only) and, if it does not
// commute, a plan that combines in rank order. Every member decides alike.
const FilePlan *file_plan_for(const ucg_group *g, const CollShape &s,
                              bool user_op, const ucg_user_op_t &op)
{
    const auto it = g->file_plans.find(static_cast<int>(s.collective));
    if (it == g->file_plans.end() || s.forced != nullptr ||
        !s.layout.scratch.count.empty()) {
        return nullptr;
    }
    const FilePlan &fp = it->second;
    if ((rooted(s.collective) && s.root != fp.root) ||
        (s.collective != Collective::kBarrier &&
         s.layout.scratch_count < static_cast<std::uint64_t>(fp.nchunks)) ||
        (user_op && (fp.one_to_many || (!op.commutative && !fp.ordered)))) {
        return nullptr;
    }
    return &fp;
}

exec::Reducer reducer_for(const ucg_coll &c, const CollShape &s)
{
    exec::Reducer r;
    if (!s.reducing) {
        return r;
    }
    r.op = c.args.op;
    r.dtype = c.args.dst.dtype.base;
    const std::size_t es = ucg_dtype_size(r.dtype);
    if (r.op == UCG_OP_USER) {
        r.user = c.user_op.func;
        r.user_arg = c.user_op.arg;
        r.unit_bytes = datatype_bytes(c.args.dst.dtype);
    } else {
        r.kernel = ucg_reduce_kernel(r.op, r.dtype);
        r.unit_bytes = es;
    }
    return r;
}

ucs_status_t channels_for(ucg_group *g, const exec::Program &prog,
                          const char *plan_name,
                          std::vector<exec::GroupChannel *> *out)
{
    for (const exec::ProgramGroup &pg : prog.groups) {
        exec::GroupChannel *ch = nullptr;
        if (pg.channel == plan::Channel::kMcast) {
            const ucs_status_t st = open_mcast(g, pg.members, &ch);
            if (st != UCS_OK) {
                return st;
            }
        } else if (pg.channel == plan::Channel::kShmBcast) {
            ch = &g->bcast_ch;
        } else if (pg.channel == plan::Channel::kShmIncast) {
            ch = &g->incast_ch;
        }
        if (ch == nullptr || ch->handle == nullptr ||
            ch->members != pg.members) {
            log_error("ucg_collective_init: %s uses a one-to-many group this "
                      "host does not have",
                      plan_name);
            return UCS_ERR_UNSUPPORTED;
        }
        out->push_back(ch);
    }
    return UCS_OK;
}

// The direct message kind of a collective, or false where it has none.
bool direct_kind(Collective c, uct_mm_incast_direct_coll_t *kind)
{
    switch (c) {
    case Collective::kBarrier:
        *kind = UCT_MM_INCAST_DIRECT_BARRIER;
        return true;
    case Collective::kBcast:
        *kind = UCT_MM_INCAST_DIRECT_BCAST;
        return true;
    case Collective::kReduce:
        *kind = UCT_MM_INCAST_DIRECT_REDUCE;
        return true;
    case Collective::kAllreduce:
        *kind = UCT_MM_INCAST_DIRECT_ALLREDUCE;
        return true;
    case Collective::kAllgather:
        *kind = UCT_MM_INCAST_DIRECT_ALLGATHER;
        return true;
    case Collective::kAlltoall:
        *kind = UCT_MM_INCAST_DIRECT_ALLTOALL;
        return true;
    case Collective::kGather:
        *kind = UCT_MM_INCAST_DIRECT_GATHER;
        return true;
    case Collective::kScatter:
        *kind = UCT_MM_INCAST_DIRECT_SCATTER;
        return true;
    default:
        return false;
    }
}

// Blocks of the call's size one direct slot must hold.
std::uint64_t direct_slot_blocks(uct_mm_incast_direct_coll_t kind, int size)
{
    const auto p = static_cast<std::uint64_t>(size);
    switch (kind) {
    case UCT_MM_INCAST_DIRECT_ALLTOALL:
        return 2 * p;
    case UCT_MM_INCAST_DIRECT_SCATTER:
        return p;
    default:
        return 1;
    }
}

// Whether the call runs as one direct message (decision 0022): the group
// has them (one host), the bytes fit a slot (an alltoall's blocks, all of
// them, half a slot; a scatter's, all of them), the operator is built in, and
// neither a UCG_TUNE rule nor a plan file speaks for this call. Not the
// barrier of a host with fewer cores than ranks: there its linear plan
// lets rank 0 leave first, and a bcast from it after the barrier finds
// its peers waiting (every member leaving at its own turn of the direct
// barrier made an 8-byte bcast 2.2 µs instead of 0.3-0.4; decisions 0018
// and 0022).
// Every member decides alike (member 0's slot size, the same arguments).
bool direct_fits(const ucg_group *g, const CollShape &s, bool user_op)
{
    uct_mm_incast_direct_coll_t kind;
    if (g->direct == nullptr || user_op || s.forced != nullptr ||
        !direct_kind(s.collective, &kind) ||
        // An alltoall's slot holds a block for every rank, and half a slot
        // of them is where its plan catches up (np=2, 1 KiB blocks); a
        // scatter's root slot holds a block for every rank.
        s.select_bytes * direct_slot_blocks(kind, g->size) > g->direct_max ||
        (kind == UCT_MM_INCAST_DIRECT_BARRIER && g->any_oversubscribed) ||
        g->file_plans.count(static_cast<int>(s.collective)) != 0) {
        return false;
    }
    return std::none_of(
        g->rules.rules.begin(), g->rules.rules.end(),
        [&](const select::Rule &r) {
            return (!r.collective || *r.collective == s.collective) &&
                   s.select_bytes >= r.min_bytes &&
                   s.select_bytes < r.max_bytes && g->size >= r.min_ranks &&
                   g->size <= r.max_ranks;
        });
}

// The direct message of this member: the shape's buffers (in place, a
// reduction's input is its output: the post copies it out first).
void prepare_direct(ucg_coll *c, const CollShape &s)
{
    auto d = std::make_unique<ucg_direct_call>();
    uct_mm_incast_direct_msg_t &m = d->msg;
    direct_kind(s.collective, &m.coll);
    m.root = static_cast<unsigned>(s.root);
    m.length = s.select_bytes;
    if (s.reducing) {
        m.op = c->args.op;
        m.dtype = c->args.dst.dtype.base;
    }
    m.src = s.input != nullptr ? s.input : s.output;
    m.dst = s.output;
    c->direct = std::move(d);
    c->plan_name = "direct [host: mm_incast]";
}

ucs_status_t prepare(ucg_coll *c, const CollShape &s)
{
    ucg_group *g = c->group;
    int variant = s.forced != nullptr ? kVariantForced : 0;
    const bool user_op = s.reducing && c->args.op == UCG_OP_USER;
    if (!g->one_to_many || user_op) {
        variant |= kVariantPointToPoint;
    }
    if (user_op && !c->user_op.commutative) {
        if (ordered_algorithm(s.collective) == nullptr) {
            log_error("ucg_collective_init: no rank-order plan for %s with a "
                      "non-commutative operator",
                      plan::to_string(s.collective).data());
            return UCS_ERR_UNSUPPORTED;
        }
        variant |= kVariantOrdered;
    }
    if (direct_fits(g, s, user_op)) {
        prepare_direct(c, s);
        return UCS_OK;
    }
    std::shared_ptr<const plan::Plan> plan;
    std::string name;
    double predicted_ns = -1; // a plan file's: none
    ucs_status_t st = UCS_OK;
    if (const FilePlan *fp = file_plan_for(g, s, user_op, c->user_op);
        fp != nullptr) {
        plan = fp->plan;
        name = fp->name;
    } else {
        st = plan_for(g, s, variant, &plan, &name, &predicted_ns);
    }
    if (st != UCS_OK) {
        return st;
    }
    auto prog = exec::lower(*plan, g->rank, s.layout);
    if (!prog) {
        log_error("ucg_collective_init: %s: %s", plan->algorithm.c_str(),
                  prog.error().message.c_str());
        return UCS_ERR_INVALID_PARAM;
    }
    if ((variant & kVariantForced) && prog->scratch_bytes != 0) {
        log_error("ucg_collective_init: %s needs scratch of equal blocks",
                  plan->algorithm.c_str());
        return UCS_ERR_UNSUPPORTED;
    }
    std::vector<exec::GroupChannel *> chans;
    st = channels_for(g, prog.value(), plan->algorithm.c_str(), &chans);
    if (st != UCS_OK) {
        return st; // logged
    }
    c->plan_name = name;
    c->predicted_us = predicted_ns >= 0 ? predicted_ns / 1000 : -1;
    c->inst = std::make_unique<exec::Instance>(
        std::make_shared<const exec::Program>(std::move(prog.value())),
        g->fabric.get(), reducer_for(*c, s), g->id, std::move(chans));
    c->input_copy.resize(s.copy_bytes);
    c->copy_bytes = s.copy_bytes;
    c->input = s.copy_bytes != 0 ? c->input_copy.data() : s.input;
    c->output = s.output;
    c->inst->bind(c->input, c->output);
    return UCS_OK;
}

void deactivate(ucg_coll *c)
{
    if (!c->active) {
        return;
    }
    auto &a = c->group->ctx->active;
    a.erase(std::remove(a.begin(), a.end(), c), a.end());
    c->active = false;
}

// Stalled: is a member dead? Rate limited to a quarter of the timeout.
void check_stall(ucg_coll *c)
{
    if (c->inst->events() != c->last_events) {
        c->last_events = c->inst->events();
        c->idle_tests = 0;
        return;
    }
    if (++c->idle_tests % 64 != 0) {
        return; // the clock only every 64 tests without progress
    }
    const double now = now_sec();
    const double timeout = c->group->ctx->timeout_sec;
    if (c->idle_tests == 64) {
        c->next_check = now + timeout / 4; // the stall starts now
        return;
    }
    if (now < c->next_check) {
        return;
    }
    c->next_check = now + timeout / 4;
    const int dead = find_dead_member(c->group);
    if (dead >= 0) {
        log_error("ucg collective %s: rank %d of the group died",
                  c->plan_name.c_str(), dead);
        c->group->failed = UCS_ERR_CONNECTION_RESET;
        c->inst->fail(UCS_ERR_CONNECTION_RESET);
        return;
    }
    // Another machine: no pid to read, and TCP keeps retrying what it
    // sent to a host that vanished: ask that host's kernel.
    const int far = find_unreachable_member(c->group, now);
    if (far >= 0) {
        log_error("ucg collective %s: the host of rank %d (%s) has not "
                  "answered for %.1f s: unreachable",
                  c->plan_name.c_str(), far,
                  c->group->hello[static_cast<std::size_t>(far)].real_host,
                  timeout / 2);
        c->group->failed = UCS_ERR_UNREACHABLE;
        c->inst->fail(UCS_ERR_UNREACHABLE);
    }
}

// A call that failed with st: whichever layer saw a dead member first
// (UCP's shared memory, a one-to-many transport, our check), the caller
// sees one code; the group is lost (the members' sequences diverged).
ucs_status_t call_failed(ucg_coll *c, ucs_status_t st)
{
    if (c->failure == UCS_OK) {
        c->failure = st;
        const int dead = find_dead_member(c->group);
        if (dead >= 0) {
            c->failure = UCS_ERR_CONNECTION_RESET;
        }
        if (c->group->failed == UCS_OK) { // the group's first: one line
            if (dead >= 0) {
                log_error("ucg collective %s: rank %d of the group died or "
                          "left",
                          c->plan_name.c_str(), dead);
            } else {
                log_error("ucg collective %s: %s", c->plan_name.c_str(),
                          ucs_status_string(st));
            }
        }
    }
    if (c->group->failed == UCS_OK) {
        c->group->failed = c->failure;
    }
    return c->failure;
}

// Posts a direct call; while 64 posts of the group are not complete, the
// oldest must finish first: it needs the other members' posts (and their
// progress of whatever they run before them), so this one progresses all.
ucs_status_t start_direct(ucg_coll *c)
{
    ucg_direct_call &d = *c->direct;
    if (d.in_flight) {
        return UCS_ERR_BUSY;
    }
    c->failure = UCS_OK;
    ucg_context *ctx = c->group->ctx;
    WaitBackoff backoff(c->group->oversubscribed);
    ucs_status_t st;
    while ((st = uct_mm_incast_direct_post(c->group->direct, &d.msg, &d.id)) ==
           UCS_ERR_NO_RESOURCE) {
        const bool moved = progress(ctx) != 0;
        if (backoff.yield_after(false, moved)) {
            sched_yield();
        }
    }
    if (st == UCS_INPROGRESS) {
        d.in_flight = true;
        return UCS_OK;
    }
    return st == UCS_OK ? UCS_OK : call_failed(c, st);
}

// One poll of a direct call; the context's other collectives progress
// too, since members may wait in them for this rank.
ucs_status_t poll_direct(ucg_coll *c, bool *moved)
{
    ucg_direct_call &d = *c->direct;
    if (!d.in_flight) {
        return c->failure;
    }
    ucg_context *ctx = c->group->ctx;
    if (!ctx->active.empty() || !ctx->zombies.empty()) {
        *moved = progress(ctx) != 0;
    }
    const ucs_status_t st = uct_mm_incast_direct_test(c->group->direct, d.id);
    if (st == UCS_INPROGRESS) {
        return st;
    }
    d.in_flight = false;
    return st == UCS_OK ? UCS_OK : call_failed(c, st);
}

} // namespace

ucs_status_t coll_init(ucg_group_h g, const ucg_coll_args_t *args,
                       ucg_coll_h *coll_p)
{
    if (g == nullptr || args == nullptr || coll_p == nullptr) {
        log_error("ucg_collective_init: NULL group, arguments or output");
        return UCS_ERR_INVALID_PARAM;
    }
    CollShape s;
    ucs_status_t st = coll_shape(*args, g->rank, g->size, &s);
    if (st != UCS_OK) {
        return st;
    }
    auto c = std::make_unique<ucg_coll>();
    c->group = g;
    c->args = *args;
    if (args->op == UCG_OP_USER && args->user_op != nullptr) {
        c->user_op = *args->user_op;
    }
    c->args.user_op = nullptr; // the copy above is what runs
    c->trivial = s.trivial;
    if (!s.trivial) {
        st = prepare(c.get(), s);
        if (st != UCS_OK) {
            return st;
        }
    } else {
        c->plan_name = "none (nothing to move)";
    }
    *coll_p = c.release();
    return UCS_OK;
}

ucs_status_t coll_start(ucg_coll_h c)
{
    if (c->trivial) {
        return UCS_OK;
    }
    ucg_group *g = c->group;
    if (g->failed != UCS_OK) {
        return g->failed;
    }
    if (c->direct) {
        return start_direct(c);
    }
    if (c->inst->in_flight() || c->inst->outstanding() != 0) {
        return UCS_ERR_BUSY;
    }
    if (c->copy_bytes != 0) {
        ucg_copy(c->input_copy.data(), c->output, c->copy_bytes);
    }
    c->failure = UCS_OK;
    const ucs_status_t st = c->inst->start(g->started++ % exec::kWireSeqs);
    if (st != UCS_OK) {
        return st;
    }
    if (c->inst->in_flight()) {
        g->ctx->active.push_back(c);
        c->active = true;
        c->last_events = c->inst->events();
        c->idle_tests = 0;
    }
    return UCS_OK;
}

namespace {

// One poll: progresses the context while c is in flight and returns c's
// status; *moved: whether anything moved (a UCP or channel event).
ucs_status_t coll_poll(ucg_coll_h c, bool *moved)
{
    *moved = false;
    if (c->trivial) {
        return UCS_OK;
    }
    if (c->direct) {
        return poll_direct(c, moved);
    }
    if (c->inst->in_flight()) {
        *moved = progress(c->group->ctx) != 0;
    }
    const ucs_status_t st = c->inst->status();
    if (st == UCS_INPROGRESS) {
        check_stall(c);
        return c->inst->status();
    }
    deactivate(c);
    return st == UCS_OK ? st : call_failed(c, st);
}

// Whether a wait may sleep on UCP's event fd: every collective in flight
// waits only for point-to-point messages (UCP raises an event for each;
// one-to-many posts and blocked channels move only when polled), one of
// them for a message from another host, and no freed collective still
// holds posts. (A direct call is not among them: it runs on one host,
// where no wait sleeps on its account, and a sleep ends within
// kSleepMs.)
bool may_sleep(const ucg_context *ctx)
{
    if (ctx->efd < 0 || !ctx->zombies.empty()) {
        return false;
    }
    bool far = false;
    for (const ucg_coll *a : ctx->active) {
        switch (a->inst->pending(a->group->far)) {
        case exec::Instance::Pending::kOther:
            return false;
        case exec::Instance::Pending::kFar:
            far = true;
            break;
        case exec::Instance::Pending::kNear:
            break;
        }
    }
    return far;
}

// The longest sleep: an event UCP misses costs no more.
constexpr int kSleepMs = 1;

// Sleeps until UCP raises an event (or kSleepMs); where UCP has events
// already, returns at once to poll them.
void sleep_on_events(ucg_context *ctx)
{
    const ucs_status_t st = ucp_worker_arm(ctx->worker);
    if (st == UCS_OK) {
        pollfd p{ctx->efd, POLLIN, 0};
        ++ctx->wait_sleeps;
        (void)poll(&p, 1, kSleepMs);
    } else if (st != UCS_ERR_BUSY) {
        sched_yield();
    }
}

} // namespace

ucs_status_t coll_test(ucg_coll_h c)
{
    bool moved;
    return coll_poll(c, &moved);
}

ucs_status_t coll_wait(ucg_coll_h c)
{
    ucg_context *ctx = c->group->ctx;
    // A core shared with processes the group does not count waits as an
    // oversubscribed one does (decision 0031).
    WaitBackoff backoff(c->group->oversubscribed || ctx->core_share.shared(),
                        ctx->sleep_after);
    for (unsigned spins = 0;; ++spins) {
        // (A trivial collective has no instance: it completes at once; a
        // direct one has no events but its own completion.)
        const std::uint64_t before = c->inst ? c->inst->events() : 0;
        bool moved;
        const ucs_status_t st = coll_poll(c, &moved);
        if (st != UCS_INPROGRESS) {
            ctx->core_share.wait_ended();
            return st;
        }
        if (ctx->idle != nullptr && spins % 16 == 15) {
            ctx->idle(ctx->idle_arg);
        }
        const bool ours = c->inst && c->inst->events() != before;
        if (!backoff.yield_after(ours, moved)) {
            continue;
        }
        if (backoff.may_sleep() && may_sleep(ctx)) {
            sleep_on_events(ctx);
        } else {
            const double t0 = now_sec();
            sched_yield();
            ctx->core_share.yielded(
                static_cast<std::uint64_t>((now_sec() - t0) * 1e9));
        }
    }
}

void coll_free(ucg_coll_h c)
{
    if (c == nullptr) {
        return;
    }
    deactivate(c);
    if (c->direct && c->direct->in_flight) {
        // Its buffers go with the caller: it completes without them.
        uct_mm_incast_direct_abandon(c->group->direct, c->direct->id);
    }
    if (c->inst && c->inst->in_flight()) {
        log_warn("ucg_collective_free: %s was still in flight",
                 c->plan_name.c_str());
        c->inst->fail(UCS_ERR_CANCELED);
    }
    if (c->inst && c->inst->outstanding() != 0) {
        c->group->ctx->zombies.push_back(c); // the fabric still holds posts
        return;
    }
    delete c;
}

void reap_zombies(ucg_context *ctx, bool force)
{
    auto &z = ctx->zombies;
    auto keep = std::partition(z.begin(), z.end(), [force](ucg_coll *c) {
        return !force && c->inst->outstanding() != 0;
    });
    for (auto it = keep; it != z.end(); ++it) {
        delete *it;
    }
    z.erase(keep, z.end());
}

} // namespace ucg::rt
