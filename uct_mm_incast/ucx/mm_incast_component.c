/* SPDX-License-Identifier: BSD-3-Clause
 * mm_incast component (the mm transports' shared one, in
 * uct_mm_common/ucx/component.h) and its registration from the library
 * constructor: UCX 1.13 loads only its built-in modules, so stock tools see
 * this transport when the library is LD_PRELOADed. */
#include "mm_incast_iface.h"

#include "component.h"

uct_component_t uct_mm_incast_component = UCT_MM_COMMON_COMPONENT_INITIALIZER(
    UCT_MM_INCAST_NAME, "mm_incast memory domain", "MM_INCAST_MD_");

UCT_MM_COMMON_PLUGIN(uct_mm_incast, &uct_mm_incast_component, &uct_mm_incast_tl)
