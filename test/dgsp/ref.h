/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reference model for the dgsp tests, written independently of lib/dgsp:
 * a datatype is its explicit MPI typemap (data entries plus LB/UB markers),
 * every constructor is the MPI definition applied to typemaps, and bounds
 * are the MPI formulas evaluated over the whole map. Gather/scatter go
 * through a per-byte offset map.
 */
#ifndef DGSP_TEST_REF_H
#define DGSP_TEST_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amrma_dgsp.h"

enum { RE_DATA, RE_LB, RE_UB };

struct rent {
	int kind;
	int64_t disp;
	uint64_t len;
};

struct rmap {
	struct rent *e;
	size_t n, cap;
};

struct rbounds {
	int64_t lb, ub, tlb, tub;
	uint64_t size;
};

/* A library type paired with its reference typemap. */
struct pt {
	struct amrma_dgsp_type *t;
	struct rmap m;
};

/* Entry budget: constructors fail (return NULL) beyond it. */
#define REF_MAX_ENTRIES 40000

void rmap_bounds(const struct rmap *m, struct rbounds *b);
void pt_free(struct pt *p);

struct pt *pt_basic(size_t size);
struct pt *pt_contiguous(uint64_t c, struct pt *old);
struct pt *pt_vector(uint64_t c, uint64_t bl, int64_t stride, struct pt *old);
struct pt *pt_hvector(uint64_t c, uint64_t bl, int64_t stride, struct pt *old);
struct pt *pt_indexed(uint32_t n, const uint64_t *bl, const int64_t *d,
		struct pt *old);
struct pt *pt_hindexed(uint32_t n, const uint64_t *bl, const int64_t *d,
		struct pt *old);
struct pt *pt_indexed_block(uint32_t n, uint64_t bl, const int64_t *d,
		struct pt *old);
struct pt *pt_hindexed_block(uint32_t n, uint64_t bl, const int64_t *d,
		struct pt *old);
struct pt *pt_struct(uint32_t n, const uint64_t *bl, const int64_t *d,
		struct pt **types);
struct pt *pt_subarray(uint32_t nd, const uint64_t *sizes, const uint64_t *sub,
		const uint64_t *starts, enum amrma_dgsp_order order,
		struct pt *old);
struct pt *pt_resized(struct pt *old, int64_t lb, int64_t extent);
struct pt *pt_dup(struct pt *old);

/*
 * Byte offsets (from the buffer address) of every packed byte of count
 * elements, in packed order. Caller frees.
 */
int64_t *ref_bytemap(const struct rmap *m, uint64_t count, size_t *n);

/* Deterministic PRNG. */
uint64_t rng_next(uint64_t *s);
uint64_t rng_range(uint64_t *s, uint64_t lo, uint64_t hi);	/* [lo, hi] */
int64_t rng_srange(uint64_t *s, int64_t lo, int64_t hi);

/* Random nested type of at most `depth` constructor levels (never NULL). */
struct pt *gen_type(uint64_t *rng, int depth);

/* A buffer covering the footprint of a bytemap, with guard bytes. */
struct tbuf {
	uint8_t *mem;
	size_t len;
	uint8_t *base;		/* buffer address handed to the library */
};
void tbuf_alloc(struct tbuf *b, const int64_t *map, size_t n, size_t guard);
void tbuf_free(struct tbuf *b);

#endif
