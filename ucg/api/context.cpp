// SPDX-License-Identifier: BSD-3-Clause
// Contexts: the UCP context and worker (the caller's or our own), the
// one-to-many ifaces found in the worker, and progress of every
// collective in flight.
#include "api/internal.h"

#include "api/ucp_fabric.h"
#include "api/ucp_settings.h"
#include "select/tune.h"
#include "topology/topo_file.h"
#include "ucx/ucp_glue.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <strings.h>
#include <unistd.h> // environ

namespace ucg::rt {

namespace {

// One one-to-many op's fixed cost against one point-to-point message's
// (see find_one_to_many below).
constexpr double kOneToManyAlphaScale = 1.3;

ucs_status_t open_ucp(ucg_context *ctx)
{
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read("UCG", nullptr, &config);
    if (st != UCS_OK) {
        return st;
    }
    // Collectives' 128-512 B messages inline, messages to a rank of the
    // same machine eager up to 512 KiB, and with no RDMA network every
    // message up to 4 MiB (a fixed RNDV_THRESH, which UCP applies to
    // fast-completing sends too) in 512 KiB socket segments
    // (ucp_settings.h), unless the user chose. A UCX without a setting
    // just ignores the key.
    const auto ask = [config](const char *key, const char *value) {
        const ucs_status_t s = ucp_config_modify(config, key, value);
        if (s != UCS_OK) {
            log_warn("ucg_context_create: UCX_%s=%s: %s", key, value,
                     ucs_status_string(s));
        }
    };
    if (!user_sets_fifo_elem(environ)) {
        ask("MM_FIFO_ELEM_SIZE", kShmFifoElemBytes);
    }
    if (!user_sets_rndv_nbr(environ)) {
        ask("RNDV_SEND_NBR_THRESH", kNearEagerBytes);
    }
    if (!user_sets_rndv_thresh(environ) && !ctx->rdma) {
        ask("RNDV_THRESH", kSocketEagerBytes);
    }
    if (!user_sets_tcp_seg(environ) && !ctx->rdma &&
        tls_may_open(environ, "tcp")) {
        // tcp's own key (UCP hands it to the iface whose table has it).
        ask("RX_SEG_SIZE", kSocketSegBytes);
    }
    ucp_params_t p{};
    p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
    // WAKEUP: UCP's event fd, which waits sleep on (decision 0029); UCP
    // then picks lanes that raise events (shared memory and tcp do).
    p.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
    p.name = "ucg";
    st = ucp_init(&p, config, &ctx->ucp);
    ucp_config_release(config);
    if (st != UCS_OK) {
        return st;
    }
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    st = ucp_worker_create(ctx->ucp, &wp, &ctx->worker);
    if (st != UCS_OK) {
        ucp_cleanup(ctx->ucp);
        ctx->ucp = nullptr;
        return st;
    }
    ctx->own_ucp = true;
    int fd = -1;
    if (ucp_worker_get_efd(ctx->worker, &fd) == UCS_OK) {
        ctx->efd = fd;
    }
    return UCS_OK;
}

// The one-to-many ifaces UCP opened (UCX_TLS may leave them out).
void find_one_to_many(ucg_context *ctx)
{
    struct Want {
        const char *name;
        OneToMany *slot;
        ucs_status_t (*query)(uct_iface_h, uct_group_attr_t *);
    };
    for (const Want &w :
         {Want{"mm_bcast", &ctx->bcast, uct_mm_bcast_group_iface_query},
          Want{"mm_incast", &ctx->incast, uct_mm_incast_group_iface_query}}) {
        OneToMany o;
        if (w.query != nullptr &&
            ucg_ucp_find_iface(ctx->worker, w.name, 0, &o.iface, &o.tl_csum,
                               &o.addr_len, nullptr) &&
            w.query(o.iface, &o.attr) == UCS_OK) {
            // Each byte is copied twice (into the ring, out of it) at the
            // iface's bandwidth, by different processes: chunk after chunk
            // the copies overlap, so a pipeline stage costs one copy. The
            // ifaces' latency figures are not calibrated: one op costs a
            // little more than one point-to-point message, 1.3 times the
            // link's alpha (measured at np=2, 8-64 B: bcast 0.21-0.22 us
            // through mm_bcast against 0.17-0.19 over UCP, reduce
            // 0.24-0.26 through mm_incast against 0.19; perftest/
            // RESULTS.md), so two ranks use UCP for small messages and
            // more ranks the one op that replaces several messages.
            o.alpha_scale = kOneToManyAlphaScale;
            uct_iface_attr_t ia{};
            if (uct_iface_query(o.iface, &ia) == UCS_OK) {
                const double bw = ia.bandwidth.dedicated + ia.bandwidth.shared;
                o.ns_per_byte = bw > 0 ? 1e9 / bw : 0;
            }
            *w.slot = o;
        }
    }
}

// The inline limits of UCP's shared-memory ifaces (ucg_context::shm_short).
void find_shm_short(ucg_context *ctx)
{
    const char *const names[] = {"sysv", "posix"};
    for (std::size_t i = 0; i < 2; ++i) {
        uct_iface_h iface;
        std::uint16_t csum;
        std::size_t addr_len;
        uct_iface_attr_t attr{};
        if (ucg_ucp_find_iface(ctx->worker, names[i], 0, &iface, &csum,
                               &addr_len, nullptr) &&
            uct_iface_query(iface, &attr) == UCS_OK) {
            ctx->shm_short[i] =
                static_cast<std::uint32_t>(attr.cap.am.max_short);
        }
    }
}

// UCG_MCAST=1 (y, yes, on, true): the runtime may multicast between hosts.
bool mcast_wanted()
{
    const char *v = std::getenv("UCG_MCAST");
    if (v == nullptr) {
        return false;
    }
    for (const char *yes : {"1", "y", "yes", "on", "true"}) {
        if (strcasecmp(v, yes) == 0) {
            return true;
        }
    }
    return false;
}

// Lines sorted, then hashed (FNV-1a): what members compare of a setting
// that decides plans. Never 0 (none) or kPlanSettingBad.
std::uint64_t hash_lines(std::vector<std::string> lines)
{
    std::sort(lines.begin(), lines.end());
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (const std::string &line : lines) {
        for (const char ch : line) {
            hash = (hash ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
        }
    }
    return hash == 0 || hash == kPlanSettingBad ? 1 : hash;
}

// UCG_TOPO_FILE: a switch file (topo_file.h) that puts hosts on racks,
// the planner's switch level. Sets ctx->switches and ctx->topo_file: 0
// without a file, kPlanSettingBad when it cannot be read or parsed (logged;
// the context's groups then fail, every member together), else a hash of
// the map (members compare it: other racks would give other plans).
void read_topo_file(ucg_context *ctx)
{
    const char *path = std::getenv("UCG_TOPO_FILE");
    if (path == nullptr || *path == '\0') {
        return;
    }
    auto map = topology::read_topology_file(path);
    if (!map) {
        log_error("ucg_context_create: UCG_TOPO_FILE %s",
                  map.error().message.c_str());
        ctx->topo_file = kPlanSettingBad;
        return;
    }
    // The map as one canonical text, "host switch" lines sorted.
    std::vector<std::string> lines;
    for (const auto &[host, sw] : map.value()) {
        lines.push_back(host + ' ' + sw + '\n');
    }
    ctx->topo_file = hash_lines(std::move(lines));
    ctx->switches =
        std::make_unique<topology::SwitchMap>(std::move(map).value());
}

// UCG_LINKS: link costs by level ("LEVEL=L,o,g,G;...", ucg_plan's --link
// form). Sets ctx->links and ctx->links_hash as read_topo_file does.
void read_links(ucg_context *ctx)
{
    const char *text = std::getenv("UCG_LINKS");
    if (text == nullptr || *text == '\0') {
        return;
    }
    auto links = topology::parse_links(text);
    if (!links) {
        log_error("ucg_context_create: UCG_LINKS: %s",
                  links.error().message.c_str());
        ctx->links_hash = kPlanSettingBad;
        return;
    }
    std::vector<std::string> lines;
    for (const topology::LinkOverride &l : links.value()) {
        char line[160];
        std::snprintf(line, sizeof(line), "%s %.17g %.17g %.17g %.17g\n",
                      topology::level_name(l.kind), l.cost.latency_ns,
                      l.cost.overhead_ns, l.cost.gap_ns, l.cost.ns_per_byte);
        lines.push_back(line);
    }
    ctx->links_hash = hash_lines(std::move(lines));
    ctx->links = std::move(links).value();
}

// UCG_CMA_THRESH: from which size a message between ranks of one machine
// is read from the sender's memory (ucp_fabric.h): a size ("64k"), or
// "off" (also "inf", 0). Sets ctx->cma_thresh: kPlanSettingBad where it
// does not parse (logged; the context's groups then fail).
void read_cma_thresh(ucg_context *ctx)
{
    const char *text = std::getenv("UCG_CMA_THRESH");
    if (text == nullptr || *text == '\0') {
        return;
    }
    ctx->cma_thresh_set = true;
    if (strcasecmp(text, "off") == 0) {
        ctx->cma_thresh = 0;
        return;
    }
    auto size = ucg::select::parse_size(text);
    if (!size) {
        log_error("ucg_context_create: UCG_CMA_THRESH: %s",
                  size.error().message.c_str());
        ctx->cma_thresh = kPlanSettingBad;
        return;
    }
    ctx->cma_thresh = *size == ucg::select::kInfinity ? 0 : *size;
}

// UCG_POLL_TURN: one poll turn on a CPU that hosts emulated on one
// machine share, ns (`ucg_perftest --calibrate-turn` measures it): what
// the plans' predictions add where a rank waited for a message (decision
// 0062). A number from 0 to 1e9; else a warning and none.
void read_poll_turn(ucg_context *ctx)
{
    const char *text = std::getenv("UCG_POLL_TURN");
    if (text == nullptr || *text == '\0') {
        return;
    }
    const auto ns = ucg::rt::parse_poll_turn(text);
    if (!ns) {
        log_warn("UCG_POLL_TURN=%s is not a time in ns from 0 to 1e9; the "
                 "predictions take no poll turns",
                 text);
        return;
    }
    ctx->poll_turn_ns = *ns;
}

// UCG_WAIT_SLEEP: after how many polls in a row that found nothing an
// oversubscribed wait sleeps on UCP's events (decision 0029), or "off".
void read_wait_sleep(ucg_context *ctx)
{
    const char *text = std::getenv("UCG_WAIT_SLEEP");
    if (text == nullptr || *text == '\0') {
        return;
    }
    if (strcasecmp(text, "off") == 0) {
        ctx->sleep_after = 0;
        return;
    }
    char *end = nullptr;
    const unsigned long polls = std::strtoul(text, &end, 10);
    if (*end != '\0' || *text == '-' || polls > 1000000) {
        log_warn("UCG_WAIT_SLEEP=%s is neither \"off\" nor a count of polls "
                 "up to 1000000; using %u",
                 text, ctx->sleep_after);
        return;
    }
    ctx->sleep_after = static_cast<unsigned>(polls);
}

// Loads the ud_mcast plugin (its constructor registers the transport, so
// a UCP context made after sees it) and looks up its group entry points;
// a plugin preloaded or linked by the user is found as well. Missing: no
// multicast, silently (not every installation has it).
McastApi load_mcast()
{
    McastApi api;
    // Beside libucg (the build tree), then through libucg's RUNPATH (the
    // installed plugin folder). The first by path: a sanitizer's dlopen
    // interceptor is the caller then, and libucg's RUNPATH is not read.
    const int flags = RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE;
    void *h = nullptr;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&load_mcast), &info) != 0 &&
        info.dli_fname != nullptr) {
        std::string path = info.dli_fname;
        path = path.substr(0, path.rfind('/') + 1) + UCG_UD_MCAST_LIB;
        h = dlopen(path.c_str(), flags);
    }
    if (h == nullptr) {
        h = dlopen(UCG_UD_MCAST_LIB, flags);
    }
    void *from = h != nullptr ? h : RTLD_DEFAULT;
    api.query = reinterpret_cast<decltype(api.query)>(
        dlsym(from, "uct_ud_mcast_group_iface_query"));
    api.create = reinterpret_cast<decltype(api.create)>(
        dlsym(from, "uct_ud_mcast_group_create"));
    api.flush = reinterpret_cast<decltype(api.flush)>(
        dlsym(from, "uct_ud_mcast_group_flush"));
    if (api.query == nullptr || api.create == nullptr) {
        api = McastApi{};
    }
    return api;
}

// The ud_mcast ifaces UCP opened (one per device), when the plugin is
// loaded and UCX_TLS allows it. Their progress is enabled by the group
// that uses one (UCP enables only its lanes' ifaces).
void find_mcast(ucg_context *ctx)
{
    if (ctx->mcast_api.create == nullptr) {
        return;
    }
    for (unsigned nth = 0;; ++nth) {
        OneToMany o;
        const char *dev = nullptr;
        if (!ucg_ucp_find_iface(ctx->worker, "ud_mcast", nth, &o.iface,
                                &o.tl_csum, &o.addr_len, &dev)) {
            return;
        }
        if (ctx->mcast_api.query(o.iface, &o.attr) != UCS_OK ||
            !(o.attr.cap_flags & UCT_GROUP_CAP_BCAST) ||
            (o.attr.cap_flags & UCT_GROUP_CAP_HOST_LOCAL)) {
            continue;
        }
        uct_iface_attr_t ia{};
        if (uct_iface_query(o.iface, &ia) == UCS_OK) {
            const double bw = ia.bandwidth.dedicated + ia.bandwidth.shared;
            o.ns_per_byte = bw > 0 ? 1e9 / bw : 0;
            o.alpha_ns = (ia.latency.c + ia.overhead) * 1e9;
        }
        o.loopback = dev != nullptr && std::strcmp(dev, "lo") == 0;
        ctx->mcast.push_back(o);
    }
}

} // namespace

ucs_status_t context_create(const ucg_context_params_t *params,
                            ucg_context_h *context_p)
{
    const std::uint64_t mask = params != nullptr ? params->field_mask : 0;
    const bool has_ctx = mask & UCG_CONTEXT_PARAM_FIELD_UCP_CONTEXT;
    const bool has_worker = mask & UCG_CONTEXT_PARAM_FIELD_UCP_WORKER;
    if (context_p == nullptr || has_ctx != has_worker ||
        (has_ctx &&
         (params->ucp_context == nullptr || params->ucp_worker == nullptr))) {
        log_error("ucg_context_create: pass both a UCP context and a worker, "
                  "or neither, and an output pointer");
        return UCS_ERR_INVALID_PARAM;
    }
    auto ctx = std::make_unique<ucg_context>();
    ctx->timeout_sec = env_double("UCG_TIMEOUT", 30.0);
    if (mask & UCG_CONTEXT_PARAM_FIELD_TIMEOUT) {
        if (!(params->timeout_sec > 0)) {
            log_error("ucg_context_create: timeout_sec must be positive");
            return UCS_ERR_INVALID_PARAM;
        }
        ctx->timeout_sec = params->timeout_sec;
    }
    if (mask & UCG_CONTEXT_PARAM_FIELD_IDLE) {
        ctx->idle = params->idle;
        ctx->idle_arg = params->idle_arg;
    }
    if (mcast_wanted()) {
        ctx->mcast_api = load_mcast();
    }
    read_topo_file(ctx.get());
    read_links(ctx.get());
    read_cma_thresh(ctx.get());
    read_wait_sleep(ctx.get());
    read_poll_turn(ctx.get());
    ctx->rdma = rdma_device_found();
    if (has_ctx) {
        ctx->ucp = params->ucp_context;
        ctx->worker = params->ucp_worker;
    } else {
        const ucs_status_t st = open_ucp(ctx.get());
        if (st != UCS_OK) {
            log_error("ucg_context_create: UCP: %s", ucs_status_string(st));
            return st;
        }
        ctx->socket_rndv = !ctx->rdma && !user_sets_rndv_thresh(environ);
    }
    find_one_to_many(ctx.get());
    find_shm_short(ctx.get());
    find_mcast(ctx.get());
    if (const ucs_status_t st = ctx->probe_listener.open(); st != UCS_OK) {
        log_warn("ucg_context_create: no liveness port (%s): a host that "
                 "stops answering is found only by UCP",
                 ucs_status_string(st));
    }
    *context_p = ctx.release();
    return UCS_OK;
}

void context_destroy(ucg_context_h ctx)
{
    if (ctx == nullptr) {
        return;
    }
    if (!ctx->groups.empty()) {
        log_error("ucg_context_destroy: %zu groups are still alive",
                  ctx->groups.size());
    }
    for (auto &[addr, ep] : ctx->eps) {
        close_ep(ctx, ep);
    }
    ctx->eps.clear();
    reap_zombies(ctx, true);
    if (ctx->own_ucp) {
        ucp_worker_destroy(ctx->worker);
        ucp_cleanup(ctx->ucp);
    }
    delete ctx;
}

unsigned progress(ucg_context *ctx)
{
    unsigned n = ucp_worker_progress(ctx->worker);
    // Completions above only released ops: run them, after retrying the
    // channels whose last post found no room.
    for (std::size_t i = 0; i < ctx->active.size(); ++i) {
        ucg_coll *c = ctx->active[i];
        for (exec::GroupChannel *ch :
             {&c->group->bcast_ch, &c->group->incast_ch}) {
            if (ch->blocked) {
                exec::Instance::post_channel(*ch);
            }
        }
        for (auto &[members, m] : c->group->mcast_chs) {
            if (m->ch.blocked) {
                exec::Instance::post_channel(m->ch);
            }
        }
        if (c->inst->has_ready()) { // most polls release nothing
            n += c->inst->drain();
        }
    }
    if (!ctx->zombies.empty()) {
        reap_zombies(ctx, false);
    }
    return n;
}

} // namespace ucg::rt
