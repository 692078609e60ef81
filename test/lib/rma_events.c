/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>

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

const char *
h_rma_events_dereg_refused(const struct h_rma_events *e)
{
	static char why[128];

	if (e->done != 1)
		snprintf(why, sizeof(why), "%u completions, expected 1", e->done);
	else if (e->done_status != -ENOKEY)
		snprintf(why, sizeof(why), "ended with %d, expected -ENOKEY", e->done_status);
	else if (e->enokey == 0)
		snprintf(why, sizeof(why), "no packet refused with -ENOKEY");
	else if (e->other != 0)
		snprintf(why, sizeof(why), "%u packets refused with %d, %u with -ENOKEY",
			 e->other, e->other_status, e->enokey);
	else
		return NULL;
	return why;
}

const char *
h_rma_events_dereg_midway(struct h_rma *p, struct h_rma_events *e, struct amrma_region *reg)
{
	static char why[64];
	unsigned int i;
	int ret;

	for (i = 0; i < 100000 && e->ok == 0; i++)
		h_rma_step(p);
	if (e->ok == 0)
		return "no packet taken before the deregistration";
	ret = amrma_region_deregister(amrma_rma_regions(p->r[1]), reg, NULL, NULL);
	if (ret < 0) {
		snprintf(why, sizeof(why), "deregistration failed: %d", ret);
		return why;
	}
	H_UNTIL(e->done != 0, 30000, h_rma_step(p));
	return h_rma_events_dereg_refused(e);
}
