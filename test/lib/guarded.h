/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffers between two guards, for tests where a peer must never write outside what it
 * was given: H_GUARD bytes of a known pattern on each side of len usable bytes (zeroed,
 * 64-byte aligned at p + H_GUARD). Pure C.
 */
#ifndef AMRMA_TEST_GUARDED_H
#define AMRMA_TEST_GUARDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define H_GUARD 64u

static inline uint8_t
h_guard_byte(size_t i)
{
	return (uint8_t)(0xA0 | (i & 0x1f));
}

/* len usable bytes at p + H_GUARD; NULL without memory. free() it. */
static inline uint8_t *
h_guarded_alloc(size_t len)
{
	size_t all = (len + 2 * H_GUARD + 63) & ~(size_t)63, i;
	uint8_t *p = aligned_alloc(64, all);

	if (p == NULL)
		return NULL;
	for (i = 0; i < len + 2 * H_GUARD; i++)
		p[i] = h_guard_byte(i);
	memset(p + H_GUARD, 0, len);
	return p;
}

/* Whether both guards of the len-byte buffer p are intact. */
static inline bool
h_guards_ok(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < H_GUARD; i++)
		if (p[i] != h_guard_byte(i) ||
		    p[H_GUARD + len + i] != h_guard_byte(H_GUARD + len + i))
			return false;
	return true;
}

#endif
