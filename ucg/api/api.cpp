// SPDX-License-Identifier: BSD-3-Clause
// The extern "C" entries of ucg.h: each runs its implementation behind one
// guard that turns a stray exception into a status and one log line, so
// nothing escapes into C callers.
#include "api/internal.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <time.h>

namespace ucg::rt {

namespace {

void vlog(const char *level, const char *fmt, va_list ap)
{
    char line[512];
    std::vsnprintf(line, sizeof(line), fmt, ap);
    std::fprintf(stderr, "[ucg] %s: %s\n", level, line);
}

template <class F> auto guard(const char *where, F &&f) noexcept
{
    try {
        return f();
    } catch (const std::bad_alloc &) {
        log_error("%s: out of memory", where);
    } catch (const std::exception &e) {
        log_error("%s: %s", where, e.what());
    } catch (...) {
        log_error("%s: unexpected exception", where);
    }
    using R = decltype(f());
    if constexpr (std::is_same_v<R, ucs_status_t>) {
        return UCS_ERR_NO_MEMORY;
    } else if constexpr (!std::is_void_v<R>) {
        return R{};
    }
}

} // namespace

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("error", fmt, ap);
    va_end(ap);
}

void log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("warning", fmt, ap);
    va_end(ap);
}

double env_double(const char *name, double fallback)
{
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        return fallback;
    }
    char *end;
    const double d = std::strtod(v, &end);
    if (*end != '\0' || !(d > 0)) {
        log_warn("%s=%s is not a positive number; using %g", name, v, fallback);
        return fallback;
    }
    return d;
}

double now_sec()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) +
           1e-9 * static_cast<double>(ts.tv_nsec);
}

} // namespace ucg::rt

using namespace ucg::rt;

extern "C" {

UCG_API ucs_status_t ucg_context_create(const ucg_context_params_t *params,
                                        ucg_context_h *context_p) noexcept
{
    return guard("ucg_context_create",
                 [&] { return context_create(params, context_p); });
}

UCG_API void ucg_context_destroy(ucg_context_h context) noexcept
{
    guard("ucg_context_destroy", [&] { context_destroy(context); });
}

UCG_API unsigned ucg_progress(ucg_context_h context) noexcept
{
    return guard("ucg_progress", [&] { return progress(context); });
}

UCG_API ucs_status_t ucg_group_create(ucg_context_h context,
                                      const ucg_group_params_t *params,
                                      ucg_group_h *group_p) noexcept
{
    return guard("ucg_group_create",
                 [&] { return group_create(context, params, group_p); });
}

UCG_API void ucg_group_destroy(ucg_group_h group) noexcept
{
    guard("ucg_group_destroy", [&] { group_destroy(group); });
}

UCG_API ucs_status_t ucg_collective_init(ucg_group_h group,
                                         const ucg_coll_args_t *args,
                                         ucg_coll_h *coll_p) noexcept
{
    return guard("ucg_collective_init",
                 [&] { return coll_init(group, args, coll_p); });
}

UCG_API ucs_status_t ucg_collective_start(ucg_coll_h coll) noexcept
{
    if (coll == nullptr) {
        log_error("ucg_collective_start: NULL collective");
        return UCS_ERR_INVALID_PARAM;
    }
    return guard("ucg_collective_start", [&] { return coll_start(coll); });
}

UCG_API ucs_status_t ucg_collective_test(ucg_coll_h coll) noexcept
{
    if (coll == nullptr) {
        log_error("ucg_collective_test: NULL collective");
        return UCS_ERR_INVALID_PARAM;
    }
    return guard("ucg_collective_test", [&] { return coll_test(coll); });
}

UCG_API ucs_status_t ucg_collective_wait(ucg_coll_h coll) noexcept
{
    if (coll == nullptr) {
        log_error("ucg_collective_wait: NULL collective");
        return UCS_ERR_INVALID_PARAM;
    }
    return guard("ucg_collective_wait", [&] { return coll_wait(coll); });
}

UCG_API void ucg_collective_free(ucg_coll_h coll) noexcept
{
    guard("ucg_collective_free", [&] { coll_free(coll); });
}

UCG_API const char *ucg_collective_plan_name(ucg_coll_h coll) noexcept
{
    return coll != nullptr ? coll->plan_name.c_str() : "";
}

UCG_API double ucg_collective_predicted_us(ucg_coll_h coll) noexcept
{
    return coll != nullptr ? coll->predicted_us : -1;
}

UCG_API const char *ucg_coll_type_name(ucg_coll_type_t coll) noexcept
{
    static const char *const names[] = {
        "barrier",        "bcast",
        "reduce",         "allreduce",
        "gather",         "gatherv",
        "scatter",        "scatterv",
        "allgather",      "allgatherv",
        "alltoall",       "alltoallv",
        "reduce_scatter", "reduce_scatter_block",
        "scan",           "exscan"};
    static_assert(sizeof(names) / sizeof(names[0]) == UCG_COLL_LAST);
    return (coll >= 0 && coll < UCG_COLL_LAST) ? names[coll] : "?";
}

} // extern "C"
