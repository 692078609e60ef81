/* SPDX-License-Identifier: BSD-3-Clause */
/* Built-in AM workloads: an echo service and a verifying request generator. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "app.h"

static int
echo_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	uint64_t out[2];

	(void)arg;
	out[0] = msg->nargs ? msg->args[0] : 0;
	out[1] = rte_hash_crc(msg->payload, msg->len, (uint32_t)out[0]);
	return amrma_am_reply(ctx, tok, APP_H_ECHO_REPLY, out, 2, msg->payload, msg->len, 0);
}

struct slot {
	struct load *load;
	uint64_t id;
	uint64_t t0;
	uint32_t crc;
};

struct load {
	struct slot *slots;
	uint32_t *free;
	uint32_t nb_free;
	uint64_t completed, verified, errors;
	double *rtt;
	uint64_t nb_rtt, max_rtt;
	double tsc_us;
};

static int
echo_reply_handler(struct amrma_ctx *ctx, amrma_am_token_t tok,
		   const struct amrma_am_msg *msg, void *arg)
{
	struct slot *s = msg->op_arg;

	(void)ctx;
	(void)tok;
	(void)arg;
	/* the echo returns our id and the checksum of what it received, plus the bytes */
	if (s != NULL && msg->nargs == 2 && msg->args[0] == s->id &&
	    msg->args[1] == s->crc &&
	    rte_hash_crc(msg->payload, msg->len, (uint32_t)s->id) == s->crc)
		s->load->verified++;
	return 0;
}

static int
sink_handler(struct amrma_ctx *ctx, amrma_am_token_t tok, const struct amrma_am_msg *msg,
	     void *arg)
{
	(void)ctx;
	(void)tok;
	(void)msg;
	(void)arg;
	return 0;
}

void
app_register_workloads(struct amrma_node *node)
{
	amrma_am_register(node, APP_H_ECHO, echo_handler, NULL);
	amrma_am_register(node, APP_H_ECHO_REPLY, echo_reply_handler, NULL);
	amrma_am_register(node, APP_H_SINK, sink_handler, NULL);
}

static void
load_done(struct amrma_ctx *ctx, void *arg, int status)
{
	struct slot *s = arg;
	struct load *l = s->load;

	(void)ctx;
	if (status != 0)
		l->errors++;
	l->completed++;
	if (l->nb_rtt < l->max_rtt)
		l->rtt[l->nb_rtt++] = (double)(rte_rdtsc() - s->t0) * l->tsc_us;
	l->free[l->nb_free++] = (uint32_t)(s - l->slots);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
fill(uint8_t *buf, uint64_t id, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(id * 131 + i * 7);
}

int
app_am_load(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t count,
	    uint32_t window, uint32_t size, double progress_s, struct app_load_result *res)
{
	uint64_t issued = 0, t_start, t_last, hz = rte_get_tsc_hz();
	uint8_t *buf = malloc(size ? size : 1);
	struct amrma_idle idle = { .spin = a->cfg.idle_spin, .sleep_us = a->cfg.idle_sleep_us };
	/* on the heap: a request still outstanding when the drain gives up keeps it */
	struct load *l = calloc(1, sizeof(*l));
	uint32_t i;
	int ret = 0;

	if (l == NULL) {
		free(buf);
		return -ENOMEM;
	}
	l->slots = calloc(window, sizeof(*l->slots));
	l->free = calloc(window, sizeof(*l->free));
	l->max_rtt = RTE_MIN(count, (uint64_t)1 << 20);
	l->rtt = calloc(l->max_rtt, sizeof(*l->rtt));
	l->tsc_us = 1e6 / (double)hz;
	if (buf == NULL || l->slots == NULL || l->free == NULL || l->rtt == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < window; i++)
		l->free[l->nb_free++] = window - 1 - i;
	t_start = t_last = rte_rdtsc();
	while (l->completed < count && !app_stop) {
		while (issued < count && l->nb_free > 0) {
			struct slot *s = &l->slots[l->free[l->nb_free - 1]];
			uint64_t arg;

			s->load = l;
			s->id = issued;
			fill(buf, issued, size);
			s->crc = rte_hash_crc(buf, size, (uint32_t)issued);
			arg = issued;
			s->t0 = rte_rdtsc();
			ret = amrma_am_request(ctx, dst, APP_H_ECHO, &arg, 1, buf, (uint16_t)size,
					       load_done, s);
			if (ret == -EAGAIN || ret == -ENOBUFS)
				break;
			if (ret != 0)
				goto out;
			l->nb_free--;
			issued++;
		}
		ret = 0;
		amrma_idle_step(&idle, app_poll(a));
		if (progress_s > 0 && rte_rdtsc() - t_last > progress_s * hz) {
			double el = (double)(rte_rdtsc() - t_start) / hz;

			t_last = rte_rdtsc();
			fprintf(stderr, "progress: %" PRIu64 "/%" PRIu64 " done, %.0f req/s, "
				"%" PRIu64 " errors\n", l->completed, count, l->completed / el,
				l->errors);
		}
	}
	res->seconds = (double)(rte_rdtsc() - t_start) / hz;
	/*
	 * Drain what is still in flight (interrupted run) so nothing refers to l, and send
	 * the acks we owe before the sort below: the peer would resend its last replies if
	 * they stayed unacknowledged for its retransmit timeout (the demo's target counted
	 * 3-4 such retransmits per run with the sort first).
	 */
	app_settle(a, 1.0);
	if (amrma_ctx_outstanding(ctx) != 0) {
		/* their callbacks (at the latest when the node goes) still write into l and
		 * its slots: leave them allocated */
		free(buf);
		return -ETIMEDOUT;
	}
	res->completed = l->completed;
	res->verified = l->verified;
	res->errors = l->errors;
	qsort(l->rtt, l->nb_rtt, sizeof(*l->rtt), cmp_double);
	res->rtt_median_us = l->nb_rtt ? l->rtt[l->nb_rtt / 2] : 0;
	res->rtt_p99_us = l->nb_rtt ? l->rtt[(l->nb_rtt * 99) / 100] : 0;
out:
	free(buf);
	free(l->slots);
	free(l->free);
	free(l->rtt);
	free(l);
	return ret;
}
