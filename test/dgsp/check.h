/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DGSP_TEST_CHECK_H
#define DGSP_TEST_CHECK_H

#include <errno.h>

#include "ref.h"

/* Library bounds == reference bounds (cmocka asserts). */
void check_bounds(const struct pt *p);
/*
 * Compile, compare gather/scatter/seek/chunk walk with the reference for
 * count elements, serialize round trip. deep adds every activation size.
 */
void check_pt(struct pt *p, uint64_t count, uint64_t *rng, bool deep);

/* The side of a DGSRM transfer: count elements of type t at addr. */
struct amrma_dgsrm_side side_of(const struct amrma_dgsp_type *t, const void *addr,
				uint64_t count);

#endif
