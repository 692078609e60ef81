/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the libFuzzer harnesses over live nodes check alike: a violation aborts with the
 * harness's name (libFuzzer then keeps the input), and the EAL heap in use stays where
 * the first input left it (a leak of the library's rte_malloc memory).
 */
#ifndef AMRMA_TEST_FUZZ_CHECK_H
#define AMRMA_TEST_FUZZ_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

/* "who: what" on stderr, then abort() */
static __rte_noreturn void
fuzz_die(const char *who, const char *fmt, ...) __rte_format_printf(2, 3);

static inline void
fuzz_die(const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", who);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

/* The EAL heap in use on our socket, recorded by the first check after a reset. */
struct fuzz_heap {
	size_t base;
	bool set;
};

static inline size_t
fuzz_heap_in_use(void)
{
	struct rte_malloc_socket_stats s;

	rte_malloc_get_socket_stats((int)rte_socket_id(), &s);
	return s.heap_allocsz_bytes;
}

/* false when the heap in use moved from the base (*now: where it is) */
static inline bool
fuzz_heap_same(struct fuzz_heap *h, size_t *now)
{
	*now = fuzz_heap_in_use();
	if (!h->set) {
		h->base = *now;
		h->set = true;
	}
	return *now == h->base;
}

#endif
