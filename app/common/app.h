/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared pieces of the amrma applications: port bring-up, workloads, telemetry. */
#ifndef AMRMA_APP_H
#define AMRMA_APP_H

#include <signal.h>

#include "amrma_am.h"
#include "amrma_reflect.h"
#include "amrma_rma.h"
#include "app_config.h"
#include "eal_rundir.h"

/* handler indices used by the built-in workloads (same on every node) */
enum {
	APP_H_ECHO = 1,		/* request: reply with the payload and its checksum */
	APP_H_ECHO_REPLY = 2,	/* reply: verify checksum */
	APP_H_SINK = 3,		/* request: count, reply empty */
	APP_H_REGION_INFO = 4,	/* request {index}: reply {key, length, perm} */
	APP_H_REGION_CRC = 5,	/* request {index, offset, length}: reply {crc32c} */
	APP_H_REGION_REPLY = 6,	/* their replies */
};

struct app {
	struct app_config cfg;
	uint16_t port_id;
	struct amrma_net_dev dev;
	struct rte_mempool *pool;
	struct amrma_node *node;
	struct amrma_rma *rma;
	struct amrma_reflect *reflect;	/* injection FIFOs, completion by reflection */
	uint64_t stripes_in;		/* striped sends received here... */
	uint64_t stripes_in_failed;	/* ...of which failed */
	struct amrma_region *region[APP_MAX_REGIONS];
	uint64_t region_key[APP_MAX_REGIONS];
	uint8_t *region_mem[APP_MAX_REGIONS];
	unsigned int nb_regions;
	/* production layout: worker lcores poll contexts 1.., the main lcore context 0 */
	bool workers;
	/* rte_malloc'd memory of operations a stop signal cut short: the library may still
	 * write into it until the node is destroyed, so it is freed after that */
	void *abandoned[8];
	unsigned int nb_abandoned;
};

/** xorshift64: fresh test data and offsets, the same for the same seed. */
static inline uint64_t
app_xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct app_rma_result {
	uint64_t size;
	uint64_t count;
	uint64_t verified;
	uint64_t mismatches;
	int status;
	double put_mbps, get_mbps;	/* one operation at a time, verified ones */
	double put_us, get_us;		/* mean time per operation */
};

extern volatile sig_atomic_t app_stop;

/** Install SIGINT/SIGTERM handlers that set app_stop. */
void app_signals(void);

/** Find the port, set it up, wait for link, create the node and its peers. */
int app_setup(struct app *a);
void app_teardown(struct app *a);

/** Register the echo/sink handlers. */
void app_register_workloads(struct amrma_node *node);

struct app_load_result {
	uint64_t completed;
	uint64_t verified;
	uint64_t errors;
	double seconds;
	double rtt_median_us;
	double rtt_p99_us;
};

/**
 * Run count echo requests of size bytes with window in flight against dst from ctx
 * (polling the whole node), verifying each reply. With window 1 each round trip is timed.
 */
int app_am_load(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t count,
		uint32_t window, uint32_t size, double progress_s,
		struct app_load_result *res);

/**
 * One round of what the calling (main) lcore polls: the whole node and the RMA progress
 * engine, or only context 0 (and the engine if it runs there) while workers poll the
 * other contexts. Returns the work done.
 */
int app_poll(struct app *a);

/**
 * Poll until no request on our contexts is outstanding, then, unless workers poll the node,
 * until every ack we owe left and every frame we sent is acknowledged
 * (amrma_node_quiesce()): a peer whose last frames stay unacknowledged while we compute
 * or exit resends them. Gives up after timeout_s. 0, or -ETIMEDOUT.
 */
int app_settle(struct app *a, double timeout_s);

/** Poll the node (AM + RMA progress) until req completes; its status, or -EINTR. */
int app_rma_wait(struct app *a, struct amrma_ctx *ctx, amrma_rma_req_t req);

/** Ask dst for the key and length of its region idx (polls until answered). */
int app_region_info(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t idx,
		    uint64_t *key, uint64_t *len);

/** RMA engine, configured regions, directory and checksum handlers. */
int app_rma_setup(struct app *a);
void app_rma_teardown(struct app *a);

/**
 * For each configured size: put fresh data at an odd offset of the target's region 0,
 * compare checksums computed on both sides, get it back and compare again.
 */
int app_rma_load(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t count,
		 struct app_rma_result *res, unsigned int *nb_res);

/** Ask dst for the crc32c of len bytes at off of its region idx (polls until answered). */
int app_region_crc(struct app *a, struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t idx,
		   uint64_t off, uint64_t len, uint64_t *crc);

/** Memory an operation cut short by a stop signal may still use: freed at teardown. */
void app_abandon(struct app *a, void *p);

struct app_reflect_result {
	uint64_t count;		/* notified puts whose completion came */
	uint64_t verified;	/* ...with the right cookie, status 0 and the bytes in place */
	uint64_t bad;
	uint64_t min, max;	/* sizes */
	double us;		/* mean time from injection to completion */
	struct amrma_reflect_stats st;
};

/**
 * Notified puts (at most 256, sizes from the config in turn) through context 0's
 * injection FIFO, each followed by a REFLECT that dst reflects back once the bytes are
 * placed; the bytes are then checked with dst's checksum service.
 */
int app_reflect_load(struct app *a, struct amrma_ep dst, uint64_t count,
		     struct app_reflect_result *r);

/** Take striped sends into the exposed regions (the tag names region and offset). */
int app_stripe_setup(struct app *a);

struct app_stripe_result {
	uint64_t size;
	uint64_t count;		/* sends that ended */
	uint64_t verified;	/* ...with status 0 and the right bytes at the target */
	int status;		/* the last failed send's */
	double us, mbps;	/* per send, one at a time */
};

/**
 * For each configured size, count striped sends of fresh data to a random place in
 * dst's region (--region), each checked with dst's checksum service.
 */
int app_stripe_load(struct app *a, struct amrma_ep dst, uint64_t count,
		    struct app_stripe_result *res, unsigned int *nb_res);

/** Register /amrma/stats, /amrma/peers, /amrma/contexts for dpdk-telemetry.py. */
int app_telemetry_init(struct app *a);

/**
 * Make the commands answer empty from now on; waits for one reading the app to finish.
 * app_teardown() calls it before it destroys anything.
 */
void app_telemetry_detach(void);

/** Print non-zero counters, one per line, with a prefix. */
void app_print_stats(const struct amrma_node *node, const char *prefix);

#endif
