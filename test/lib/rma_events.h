/* SPDX-License-Identifier: BSD-3-Clause */
/* What an RMA operation's per-packet callback reported, counted (AMRMA_RMA_F_PER_PACKET). */
#ifndef AMRMA_TEST_RMA_EVENTS_H
#define AMRMA_TEST_RMA_EVENTS_H

#include "amrma_rma.h"
#include "rma_nodes.h"

struct h_rma_events {
	unsigned int ok, enokey, other, done;	/* packets by status, then the end */
	int other_status, done_status;		/* the last of each */
};

/** amrma_rma_cb_t counting into the struct h_rma_events at arg. */
void h_rma_events_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status);

/**
 * After a deregistration in the middle of an operation: NULL when it ended once, with
 * -ENOKEY, and every packet refused was refused with -ENOKEY (at least one); otherwise
 * what went wrong (a static buffer).
 */
const char *h_rma_events_dereg_refused(const struct h_rma_events *e);

/**
 * Deregister reg, node 1's, in the middle of an operation that reports into e: step p
 * until one of its packets was taken, deregister, step until it ended (30 s at most).
 * NULL when it ended as h_rma_events_dereg_refused() wants; otherwise what went wrong.
 */
const char *h_rma_events_dereg_midway(struct h_rma *p, struct h_rma_events *e,
				      struct amrma_region *reg);

#endif
