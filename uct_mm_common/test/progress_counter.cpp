// SPDX-License-Identifier: BSD-3-Clause
// Counts worker progress callbacks: this executable defines (and exports)
// uct_worker_progress_register_safe and _unregister_safe, so a transport
// plugin's calls land here first, are counted, and go on to libuct's.
#include "uct_group_test_util.h"

#include <dlfcn.h>

namespace {

std::atomic<int> g_live{0};

template <class Fn> Fn next_symbol(const char *name)
{
    return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

} // namespace

int uct_group_test::live_progress_callbacks()
{
    return g_live.load();
}

extern "C" __attribute__((visibility("default"))) void
uct_worker_progress_register_safe(uct_worker_h worker, ucs_callback_t func,
                                  void *arg, unsigned flags,
                                  uct_worker_cb_id_t *id_p)
{
    using Fn = void (*)(uct_worker_h, ucs_callback_t, void *, unsigned,
                        uct_worker_cb_id_t *);
    static const Fn real = next_symbol<Fn>("uct_worker_progress_register_safe");
    const bool added = *id_p == UCS_CALLBACKQ_ID_NULL;
    real(worker, func, arg, flags, id_p);
    if (added && *id_p != UCS_CALLBACKQ_ID_NULL) {
        g_live.fetch_add(1);
    }
}

extern "C" __attribute__((visibility("default"))) void
uct_worker_progress_unregister_safe(uct_worker_h worker,
                                    uct_worker_cb_id_t *id_p)
{
    using Fn = void (*)(uct_worker_h, uct_worker_cb_id_t *);
    static const Fn real =
        next_symbol<Fn>("uct_worker_progress_unregister_safe");
    const bool removed = *id_p != UCS_CALLBACKQ_ID_NULL;
    real(worker, id_p);
    if (removed) {
        g_live.fetch_sub(1);
    }
}
