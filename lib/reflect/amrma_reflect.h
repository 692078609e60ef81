/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef AMRMA_REFLECT_H
#define AMRMA_REFLECT_H

/**
 * @file
 * Injection FIFOs and completion notification by reflection (seed 002_…).
 *
 * Every context of a node has an injection FIFO: descriptors that its lcore executes in
 * order, on its own polls. Any thread may inject (a multi-producer rte_ring), so an
 * application thread hands transfers to the lcores without calling into them.
 *
 * Descriptors:
 *  - PUT / GET: a data descriptor, an RMA put or get (amrma_rma.h).
 *  - REFLECT: once every data descriptor injected before it has completed locally (its
 *    buffer is no longer used; with AMRMA_DESC_F_REMOTE: completed, its bytes placed at
 *    the target), the engine sends a remote get to the reflection node `peer` that
 *    carries a completion notification descriptor `cn`. The reflection node's engine
 *    injects cn into its own FIFO (no application code runs there) and, executing it,
 *    sends the completion packet to cn.to. So a notification can reach the origin, the
 *    target (a put the target learns of without a message of its own) or any endpoint.
 *  - NOTIFY: the completion notification descriptor itself, executed here: the
 *    completion packet goes straight from this context to cn.to.
 *
 * A completion packet lands in the reception FIFO of its context (cn.kind
 * AMRMA_CN_FIFO: a record with the cookie, read with amrma_reflect_completions()) or
 * increments an 8-byte word in a registered region (AMRMA_CN_WORD: the key needs
 * AMRMA_REGION_WRITE, the word must be 8-byte aligned), which a thread may sleep on
 * with amrma_reflect_word_wait().
 *
 * Order: the FIFO runs one descriptor after the other; a REFLECT waits for the data
 * descriptors before it, and the descriptors behind it wait with it. Status: a
 * notification carries the first error of the data descriptors that completed since the
 * previous REFLECT of that FIFO (-ENOKEY, -ERANGE...; 0 when none failed); a REFLECT the
 * reflection node refused (its FIFO full: -ENOBUFS) or that could not be sent completes
 * in the origin's own reception FIFO with that error.
 *
 * Threading: inject and read completions from any thread; everything else runs on the
 * lcore that polls the context (the RMA engine's poll hook runs the FIFO). The engine
 * is built on the node's RMA engine: create it after amrma_rma_create() on every node
 * that takes part (origin, reflection node, notified node), destroy it before
 * amrma_rma_destroy().
 */

#include <stdint.h>

#include "amrma_am.h"
#include "amrma_rma.h"

#ifdef __cplusplus
extern "C" {
#endif

/** AM handler indices of the reflection protocol (after RMA's). */
enum {
	AMRMA_REFLECT_H_REFLECT = AMRMA_RMA_H_LAST + 1,	/**< remote get: inject a cn */
	AMRMA_REFLECT_H_NOTIFY,				/**< the completion packet */
	AMRMA_REFLECT_H_STRIPE_RTS,			/**< striped send: request to send */
	AMRMA_REFLECT_H_LAST = AMRMA_REFLECT_H_STRIPE_RTS,
};

/** Where a completion packet lands. */
enum amrma_cn_kind {
	AMRMA_CN_FIFO = 1,	/**< a record in the reception FIFO of cn.to */
	AMRMA_CN_WORD = 2,	/**< +1 on the word at (key, offset) of cn.to's node */
};

/** A completion notification descriptor: what is sent, and to whom. */
struct amrma_cn {
	uint64_t cookie;	/**< the completion packet's header, delivered as is */
	uint64_t key;		/**< AMRMA_CN_WORD: region holding the word... */
	uint64_t offset;	/**< ...and the word's offset in it */
	struct amrma_ep to;	/**< the endpoint the completion packet goes to */
	uint8_t kind;		/**< enum amrma_cn_kind */
	int16_t status;		/**< NOTIFY: status to carry (0 or -errno) */
};

/** Descriptor operations. */
enum amrma_desc_op {
	AMRMA_DESC_PUT = 1,	/**< local -> (peer, key, offset), len bytes */
	AMRMA_DESC_GET,		/**< (peer, key, offset) -> local, len bytes */
	AMRMA_DESC_REFLECT,	/**< after the data before it: cn through the node `peer` */
	AMRMA_DESC_NOTIFY,	/**< cn from here */
};

/**
 * PUT/GET: called once on the context's lcore when the operation completes (outside
 * handlers: it may inject, not wait), with its status.
 */
typedef void (*amrma_desc_cb_t)(struct amrma_ctx *ctx, void *arg, int status);

/** REFLECT: wait for the data descriptors before it to complete, not only locally. */
#define AMRMA_DESC_F_REMOTE	(1u << 0)

/** One entry of an injection FIFO. */
struct amrma_desc {
	uint8_t op;		/**< enum amrma_desc_op */
	uint8_t flags;		/**< AMRMA_DESC_F_* */
	struct amrma_ep peer;	/**< PUT/GET: the target; REFLECT: the reflection node */
	uint32_t rma_flags;	/**< PUT/GET: AMRMA_RMA_F_SHORT/PIPELINED/RENDEZVOUS/COPY */
	uint64_t key;		/**< PUT/GET: the target's region */
	uint64_t offset;	/**< PUT/GET: offset in it */
	void *local;		/**< PUT: source, GET: destination; in use until completion */
	uint64_t len;		/**< PUT/GET: bytes */
	struct amrma_cn cn;	/**< REFLECT/NOTIFY */
	amrma_desc_cb_t cb;	/**< PUT/GET: optional */
	void *cb_arg;
};

/** A completion packet as it lands in a reception FIFO. */
struct amrma_completion {
	uint64_t cookie;	/**< amrma_cn.cookie */
	struct amrma_ep from;	/**< who sent it (the reflection node; here for a refusal) */
	int16_t status;		/**< 0, or the first error (see Status above) */
};

/** Engine configuration; start from amrma_reflect_conf_defaults(). */
struct amrma_reflect_conf {
	uint32_t fifo_size;	/**< injection FIFO entries per context */
	uint32_t rx_size;	/**< reception FIFO entries per context; a completion
				 *   packet finding it full is dropped and counted */
	uint32_t max_inflight;	/**< data descriptors started, not completed, per context */
	uint32_t max_stripes;	/**< striped sends under way per context (origin), and
				 *   striped receives per node (target: more are
				 *   refused, -ENOBUFS) */
	uint64_t stripe_min_part; /**< striped send: the least bytes per portion */
	uint32_t stripe_timeout_ms; /**< striped send: the longest wait for the target */
};

/** Defaults: FIFOs of 1024 entries, 256 data descriptors in flight, 64 striped sends of
 *  portions from 64 KiB, a 30 s striped-send timeout. */
void amrma_reflect_conf_defaults(struct amrma_reflect_conf *conf);

struct amrma_reflect;

/**
 * Create the engine of rma's node: FIFOs per context, handlers, and its part of every
 * context's poll (before the RMA work). Before polling starts, or on the lcore that
 * polls the node.
 * @return 0, -EINVAL, -ENOMEM, -EEXIST (one already).
 */
int amrma_reflect_create(struct amrma_rma *rma, const struct amrma_reflect_conf *conf,
			 struct amrma_reflect **out);

/**
 * Destroy it, where its contexts are not being polled, before amrma_rma_destroy().
 * Descriptors not started are dropped; data descriptors under way go on as RMA
 * operations whose end nobody hears of (their buffers stay in use until then). Striped
 * sends under way end with -ECANCELED (see amrma_stripe_cb_t).
 */
void amrma_reflect_destroy(struct amrma_reflect *rf);

/**
 * Append d to the injection FIFO of context ctx_idx. Any thread.
 * @return 0; -EINVAL (a malformed descriptor, or no such context); -ENOBUFS (full).
 */
int amrma_reflect_inject(struct amrma_reflect *rf, uint16_t ctx_idx,
			 const struct amrma_desc *d);

/**
 * Take up to n completions from the reception FIFO of context ctx_idx, oldest first.
 * Any thread (one at a time per FIFO, or several: the ring is multi-consumer).
 * @return the number taken.
 */
unsigned int amrma_reflect_completions(struct amrma_reflect *rf, uint16_t ctx_idx,
				       struct amrma_completion *out, unsigned int n);

/**
 * Wait until *word >= value (a word that AMRMA_CN_WORD notifications count).
 * With ctx, poll ctx meanwhile (a thread that drives its context itself); without, sleep
 * on the word with rte_power_monitor() where the CPU has it (rte_pause() otherwise)
 * while another lcore polls.
 * @return 0; -ETIMEDOUT after timeout_us; -EPERM inside a poll of ctx; -EINVAL.
 */
int amrma_reflect_word_wait(struct amrma_ctx *ctx, const volatile uint64_t *word,
			    uint64_t value, uint64_t timeout_us);

/**
 * Descriptors of context ctx_idx injected and not yet finished (started ones included).
 * Exact on the lcore that polls the context; from another thread, a snapshot.
 */
unsigned int amrma_reflect_pending(struct amrma_reflect *rf, uint16_t ctx_idx);

/**
 * Striped SEND (seed 003_…), the target's side. alloc() is asked for the buffer of an
 * arriving send (NULL refuses it: the sender gets -ENOBUFS); done() reports the buffer
 * filled (status 0) or failed. Both run on a context's lcore, outside handlers.
 */
struct amrma_stripe_listener {
	void *(*alloc)(struct amrma_ctx *ctx, void *arg, struct amrma_ep src, uint64_t tag,
		       uint64_t len);
	void (*done)(struct amrma_ctx *ctx, void *arg, struct amrma_ep src, uint64_t tag,
		     void *buf, uint64_t len, int status);
	void *arg;
};

/**
 * Take striped sends on this node (NULL: refuse them, -ENOTSUP). Before polling starts.
 */
int amrma_stripe_listen(struct amrma_reflect *rf, const struct amrma_stripe_listener *l);

/**
 * Called once when a striped send ends (0: all of it placed) and nothing reads its buffer
 * any more: on the origin's lcore; for a send that amrma_reflect_destroy() cancelled
 * while a get of another lcore still read the buffer, on that lcore once it let go.
 */
typedef void (*amrma_stripe_cb_t)(struct amrma_ctx *ctx, void *arg, int status);

/**
 * Send len bytes of buf to the endpoint dst as a striped transfer: a request to send
 * (RTS) tells dst where the data is (buf is exposed for reading under a fresh key of
 * this node's region table until the end) and how much; dst divides it into portions
 * of at least stripe_min_part bytes, one per context of its node, and posts each in that
 * context's injection FIFO as a get; the contexts pull their portions in parallel, each
 * from one of this node's contexts in turn, and the last one to finish tells the
 * origin. On ctx's lcore, not in a handler; it registers a region, so not concurrently
 * with the node's other region registrations.
 * @return 0; -EINVAL; -EAGAIN (max_stripes under way: poll, retry); -ENOSPC (region
 *   table full); errors of amrma_am_request(). cb reports the rest: -ENOBUFS (refused),
 *   -ENOTSUP (no listener), a portion's error, -ETIMEDOUT / -ENOTCONN / -ECONNRESET.
 */
int amrma_stripe_send(struct amrma_reflect *rf, struct amrma_ctx *ctx, struct amrma_ep dst,
		      const void *buf, uint64_t len, uint64_t tag, amrma_stripe_cb_t cb,
		      void *arg);

/** Counters of one context. */
struct amrma_reflect_stats {
	uint64_t injected;		/**< descriptors taken by amrma_reflect_inject() */
	uint64_t inject_full;		/**< refused: the FIFO was full */
	uint64_t data_started;		/**< PUT/GET descriptors started */
	uint64_t data_errors;		/**< of which failed (refused or completed so) */
	uint64_t reflects_sent;		/**< remote gets sent to reflection nodes */
	uint64_t reflect_refused;	/**< of which failed there or on the way */
	uint64_t cn_injected;		/**< reflection node: cn taken into this FIFO */
	uint64_t cn_full;		/**< reflection node: refused, FIFO full */
	uint64_t notifies_sent;		/**< completion packets sent */
	uint64_t notify_failed;		/**< not delivered (peer gone, unknown endpoint) */
	uint64_t completions;		/**< completion packets received into the FIFO */
	uint64_t words;			/**< completion packets counted in a word */
	uint64_t rx_full;		/**< dropped: reception FIFO full */
	uint64_t word_refused;		/**< word not found (key, range, permission, alignment) */
	uint64_t bad_requests;		/**< malformed REFLECT/NOTIFY/RTS messages */
	uint64_t stripes_sent;		/**< origin: striped sends started */
	uint64_t stripes_failed;	/**< origin: of which ended with an error */
	uint64_t stripe_recvs;		/**< target: striped sends split here */
	uint64_t stripe_refused;	/**< target: refused (no listener, no buffer, full) */
	uint64_t stripe_parts;		/**< target: portions this context pulled */
	uint64_t stripe_stale;		/**< origin: ends naming no send under way */
	uint64_t stripe_read_wait;	/**< origin: ended sends whose callback waited for a
					 * get of the buffer to finish */
};

/** The counters of context ctx_idx (zeros for an unknown one). */
void amrma_reflect_stats_get(struct amrma_reflect *rf, uint16_t ctx_idx,
			     struct amrma_reflect_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* AMRMA_REFLECT_H */
