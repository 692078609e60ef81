/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "rma_events.h"

void
h_rma_events_cb(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev, int status)
{
	struct h_rma_events *e = arg;

	(void)ctx;
	if (ev == AMRMA_RMA_EV_DONE) {
		e->done++;
		e->done_status = status;
	} else if (ev == AMRMA_RMA_EV_PACKET) {
		if (status == 0) {
			e->ok++;
		} else if (status == -ENOKEY) {
			e->enokey++;
		} else {
			e->other++;
			e->other_status = status;
		}
	}
}
