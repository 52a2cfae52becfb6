/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ucg/copy.h
 * The byte copy every part of UCG uses for payloads (the runtime's
 * executor, the mm transports' rings and FIFOs): memcpy, except where
 * glibc's copy is pathological.
 *
 * glibc 2.36 copies with `rep movsb` from 2 KiB and with vector loops
 * below; on the AMD EPYC hosts this was measured on both run 15-20x slower
 * (2-4 GB/s instead of 40-90) when dst is 1..255 bytes past src modulo
 * 4 KiB (store-to-load 4 KiB aliasing), and two heap buffers allocated one
 * after the other sit exactly so (16 bytes of malloc header apart). Such
 * copies run in a plain 64-byte SSE2 loop instead, 36-43 GB/s there
 * (`ucg_reduce_perftest`, perftest/reduce/RESULTS.md).
 *
 * ucg_copy_to_peer writes with non-temporal stores: the lines go to memory
 * and leave the writer's cache, so a reader on another core does not fetch
 * each one from the writer's, which costs 5-10x more where the two cores
 * are far apart (decision 0047; mm_bcast's root streams large messages).
 */
#ifndef UCG_COPY_H_
#define UCG_COPY_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__SSE2__)
/* Bytes [i, n) of src to dst in 64-byte steps of SSE2 loads and stores,
 * non-temporal where `stream`, then the tail with memcpy. */
static inline void ucg_copy_lines_(char *d, const char *s, size_t i, size_t n,
                                   int stream)
{
    for (; i + 64 <= n; i += 64) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        const __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        const __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        const __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        if (stream) {
            _mm_stream_si128((__m128i *)(d + i), a);
            _mm_stream_si128((__m128i *)(d + i + 16), b);
            _mm_stream_si128((__m128i *)(d + i + 32), c);
            _mm_stream_si128((__m128i *)(d + i + 48), e);
        } else {
            _mm_storeu_si128((__m128i *)(d + i), a);
            _mm_storeu_si128((__m128i *)(d + i + 16), b);
            _mm_storeu_si128((__m128i *)(d + i + 32), c);
            _mm_storeu_si128((__m128i *)(d + i + 48), e);
        }
        /* Keeps the compiler from turning the loop back into memcpy. */
        __asm__ volatile("" : : : "memory");
    }
    memcpy(d + i, s + i, n - i);
}
#endif

/** memcpy(dst, src, n): the regions must not overlap. */
static inline void ucg_copy(void *dst, const void *src, size_t n)
{
#if defined(__SSE2__)
    const size_t page = 4096, near_bytes = 256, small = 512;
    const size_t delta = (size_t)((uintptr_t)dst - (uintptr_t)src) % page;
    if (n < small || delta == 0 || delta >= near_bytes) {
        memcpy(dst, src, n);
        return;
    }
    ucg_copy_lines_((char *)dst, (const char *)src, 0, n, 0);
#else
    memcpy(dst, src, n);
#endif
}

/**
 * memcpy(dst, src, n) into shared memory that another process reads next:
 * non-temporal stores from dst's first 64-byte boundary, and a store fence
 * at the end, so a release store after the call publishes every byte.
 */
static inline void ucg_copy_to_peer(void *dst, const void *src, size_t n)
{
#if defined(__SSE2__)
    const size_t head = (size_t)(-(uintptr_t)dst % 64);
    if (n < 128) {
        memcpy(dst, src, n);
        return;
    }
    memcpy(dst, src, head);
    ucg_copy_lines_((char *)dst, (const char *)src, head, n, 1);
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}

#ifdef __cplusplus
}
#endif

#endif /* UCG_COPY_H_ */
