/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef AMRMA_RMA_H
#define AMRMA_RMA_H

/**
 * @file
 * Remote Memory Access over Active Messages.
 *
 * put copies a local buffer into a peer's registered region; get copies a peer's region
 * into a local buffer. The remote side is named by (endpoint, access key, offset into the
 * region): see amrma_region.h. Every request is validated at the target (key, range without
 * overflow, permission) before a byte moves; a failure completes the operation with the
 * target's error (-ENOKEY, -EACCES, -ERANGE, -EOVERFLOW).
 *
 * Protocols (chosen by size, or forced with a flag):
 *  - short: one AM request carries the data (put) or asks for it (get); one reply.
 *  - pipelined: MTU-sized AM requests, each with its own remote offset, a window in flight,
 *    placed in whatever order they arrive. Put chunks in EAL memory (rte_malloc, hugepages,
 *    rte_extmem_register) are sent zero-copy (an mbuf attached to the caller's buffer with
 *    rte_pktmbuf_attach_extbuf()); chunks elsewhere are copied into the frame.
 *  - rendezvous: the request carries only (key, offset, length, tag); the target's handler
 *    validates it and enqueues an RMA request into the RMA queue (an rte_ring); the progress
 *    engine (amrma_rma_progress(), or its rte_service) dequeues it and posts a tagged
 *    receive over the target range (put) or issues the tagged send from the region (get).
 *
 * Completion: an operation completes once (AMRMA_RMA_EV_DONE, or amrma_rma_test/wait) when
 * its data is placed remotely (put) or locally (get) and the source buffer is no longer
 * referenced. With AMRMA_RMA_F_LOCAL_CB a put also reports AMRMA_RMA_EV_LOCAL as soon as
 * its source buffer may be reused; with AMRMA_RMA_F_PER_PACKET each placed packet reports
 * AMRMA_RMA_EV_PACKET.
 *
 * Threading: operations are issued, polled and completed on the lcore that polls their
 * context. The progress engine posts receives on, and sends from, the progress context
 * (amrma_rma_conf.progress_ctx): run it on the lcore that polls that context (in its poll
 * loop, or its service on the service lcore that runs the node's). Handlers of every
 * context reach it only through the RMA queue, a multi-producer rte_ring, so the other
 * contexts may be polled anywhere.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amrma_am.h"
#include "amrma_region.h"

#ifdef __cplusplus
extern "C" {
#endif

/** AM handler indices used by RMA (in the range reserved for amrma protocols). */
enum {
	AMRMA_RMA_H_PUT = AMRMA_AM_USER_HANDLERS,	/**< short/pipelined put chunk */
	AMRMA_RMA_H_GET,			/**< short/pipelined get chunk request */
	AMRMA_RMA_H_GET_REPLY,			/**< its data */
	AMRMA_RMA_H_RTS,			/**< rendezvous put: range, key, tag */
	AMRMA_RMA_H_RGET,			/**< rendezvous get: range, key, tag */
	AMRMA_RMA_H_TDATA,			/**< tagged message data */
	AMRMA_RMA_H_CTS,			/**< rendezvous put: receive posted */
	AMRMA_RMA_H_DT_SETUP,			/**< noncontiguous: target program + range */
	AMRMA_RMA_H_DT_PUT,			/**< noncontiguous put packet */
	AMRMA_RMA_H_DT_GET,			/**< noncontiguous get packet request */
	AMRMA_RMA_H_DT_REPLY,			/**< its data */
	AMRMA_RMA_H_DT_SETUP_REPLY,		/**< the slot holding the verified program */
	AMRMA_RMA_H_PUT1,			/**< pipelined put chunk, one-way */
	AMRMA_RMA_H_PUT_DONE,			/**< its operation's one completion */
	AMRMA_RMA_H_RNDV_CANCEL,		/**< rendezvous: the target's engine went */
	AMRMA_RMA_H_LAST = AMRMA_RMA_H_RNDV_CANCEL,
};

/** Engine configuration; start from amrma_rma_conf_defaults(). */
struct amrma_rma_conf {
	uint32_t max_regions;		/**< region table capacity */
	uint32_t max_ops;		/**< operations in flight per context (<= 32767) */
	uint32_t short_max;		/**< largest put/get sent as one copied frame */
	uint64_t rndv_threshold;	/**< gets of this size and more use rendezvous */
	uint64_t rndv_put_threshold;	/**< puts of this size and more use rendezvous */
	uint32_t pipeline_depth;	/**< chunks in flight per operation */
	uint32_t queue_size;		/**< RMA queue entries (power of two) */
	bool zero_copy;			/**< attach put payloads in EAL memory instead of copying */
	uint32_t progress_ctx;		/**< context the progress engine sends from */
	uint32_t rndv_timeout_ms;	/**< a rendezvous waiting this long without progress
					 *   (no CTS, no data) fails with -ETIMEDOUT; so do a
					 *   pipelined put waiting for its completion and a
					 *   target's tagged send whose chunks are not taken.
					 *   One whose target restarted after taking it fails
					 *   with -ECONNRESET, one whose channel to it closed
					 *   (amrma_node_leave() there, or it stopped
					 *   answering) with -ENOTCONN, within about 10 ms of
					 *   its context hearing of it, without waiting */
	uint32_t completion_slots;	/**< target: pipelined puts counted at once per
					 *   context (power of two); one beyond completes
					 *   with -ENOSPC */
	uint64_t stream_min;		/**< puts and tagged sends of this size and more
					 *   fetch their source ahead while sending: set it
					 *   to about the size that no longer stays in the
					 *   cache (default 8 MiB; UINT64_MAX: never) */
};

/**
 * The defaults: 1024 regions, 1024 operations per context, short = one frame's payload,
 * rendezvous from 256 KiB for gets and 4 MiB for puts, 64 chunks in flight, a queue of
 * 1024, zero copy on, progress on context 0, a 10 s rendezvous timeout, 1024 completion
 * slots, streaming from 8 MiB (the thresholds measured: docs/rma.md).
 */
void amrma_rma_conf_defaults(struct amrma_rma_conf *conf);

struct amrma_rma;

/**
 * Create the RMA engine of a node: region table, per-context operation tables, the RMA
 * queue, handlers and poll hooks.
 * @return 0 or a negative errno.
 */
int amrma_rma_create(struct amrma_node *node, const struct amrma_rma_conf *conf,
		     struct amrma_rma **out);

/**
 * Destroy it, on the lcore that polls the node's contexts (or while none is polled), and
 * before its node (amrma_node_destroy()); not from one of its callbacks.
 * Its progress service (amrma_rma_service_register()) is stopped and unregistered; an
 * iteration under way on a service lcore is waited for.
 * Operations still live complete with -ECANCELED (or their first error): their callbacks
 * run before it returns, and their handles become invalid. Initiators whose pipelined
 * puts this engine owes a completion are sent it now (-ECANCELED for a put whose bytes
 * had not all come), and so are those of rendezvous puts still waiting for their CTS and
 * rendezvous gets whose data had not all been handed to the node (-ECANCELED), as far as
 * the node takes the messages, instead of waiting out their rendezvous timeout.
 * A zero-copy put's chunks the node still holds (unacknowledged, or kept by the port after
 * it was asked for up to 10 ms to let go) read the source until they are freed, by
 * amrma_node_destroy() at the latest: AMRMA_RMA_EV_LOCAL is reported only if none is left.
 * The memory those chunks point at (their mbuf pool, the operation tables) then stays
 * allocated, with a warning in the log, until the first amrma_rma_create() or
 * amrma_rma_destroy() (of any node's engine) after the last of them was freed.
 * An engine created afterwards on the same node may meet the destroyed one's messages
 * still in flight (replies, completions, tagged data): they name operations and receives
 * by slot and generation, and a new engine's generations start past the old one's, so
 * they are refused (counted as bad_replies), never taken for its own; so are the old
 * handles.
 */
void amrma_rma_destroy(struct amrma_rma *rma);

/** The node's region table (register memory here; publish the keys to peers). */
struct amrma_region_table *amrma_rma_regions(struct amrma_rma *rma);

/** The RMA engine attached to a node's context (NULL if none). */
struct amrma_rma *amrma_rma_of(const struct amrma_ctx *ctx);

/** Operation flags. */
#define AMRMA_RMA_F_LOCAL_CB	(1u << 0)	/**< report local completion of a put */
#define AMRMA_RMA_F_PER_PACKET	(1u << 1)	/**< report each placed packet */
#define AMRMA_RMA_F_SHORT	(1u << 4)	/**< force the short protocol */
#define AMRMA_RMA_F_PIPELINED	(1u << 5)	/**< force the pipelined protocol */
#define AMRMA_RMA_F_RENDEZVOUS	(1u << 6)	/**< force the rendezvous protocol */
#define AMRMA_RMA_F_COPY	(1u << 7)	/**< never zero-copy (source reusable at once) */

/** What a completion callback reports (one call per event). */
enum amrma_rma_event {
	AMRMA_RMA_EV_LOCAL = 1,		/**< put: source buffer reusable */
	AMRMA_RMA_EV_PACKET = 2,	/**< one packet placed (status is its status) */
	AMRMA_RMA_EV_DONE = 4,		/**< operation complete (status 0 or first error) */
};

/**
 * Completion callback; runs on the context's lcore, inside its poll (or inside the call
 * that started the operation, or amrma_rma_destroy()), never inside an AM handler: an
 * operation that a message ends (a pipelined put's completion, a rendezvous cancel) is
 * finished by the poll hook after the handlers. So it may start operations, as the
 * next one of a pipeline. It may not wait (amrma_rma_wait() returns -EPERM).
 */
typedef void (*amrma_rma_cb_t)(struct amrma_ctx *ctx, void *arg, enum amrma_rma_event ev,
			       int status);

/** Handle of an operation (0 = none). Stale handles are detected, never dereferenced. */
typedef uint64_t amrma_rma_req_t;

/**
 * Write len bytes from src to offset of the region `key` at dst.
 *
 * @param cb   optional completion callback
 * @param req  optional handle for amrma_rma_test/wait; when NULL the operation releases
 *             itself after its DONE callback
 * @return 0; -EAGAIN (operation table full: poll, retry); -EINVAL; -EPERM (inside a
 *   handler); -ENOTCONN (peer dead).
 */
int amrma_rma_put(struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t key, uint64_t offset,
		  const void *src, size_t len, uint32_t flags, amrma_rma_cb_t cb, void *arg,
		  amrma_rma_req_t *req);

/** Read len bytes at offset of the region `key` at dst into buf. Same conventions. */
int amrma_rma_get(struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t key, uint64_t offset,
		  void *buf, size_t len, uint32_t flags, amrma_rma_cb_t cb, void *arg,
		  amrma_rma_req_t *req);

struct amrma_dgsp;

/**
 * Noncontiguous put: the packed stream of src_count elements of src_type at src goes to
 * dst_count elements of dst_type at offset of the region `key` at dst. Both types must have
 * the same packed size. dst_type's program is shipped in the request and verified at the
 * target (its whole footprint must lie inside the region); each MTU-sized packet is
 * gathered straight from src into the frame and scattered straight into place.
 * The programs must stay valid until completion. Same conventions as amrma_rma_put().
 * @return also -EMSGSIZE when dst_type's serialized program does not fit in one frame.
 */
int amrma_rma_put_dt(struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t key,
		     uint64_t offset, const void *src, const struct amrma_dgsp *src_type,
		     uint64_t src_count, const struct amrma_dgsp *dst_type, uint64_t dst_count,
		     uint32_t flags, amrma_rma_cb_t cb, void *arg, amrma_rma_req_t *req);

/** Noncontiguous get: the mirror image (src_type describes the remote side). */
int amrma_rma_get_dt(struct amrma_ctx *ctx, struct amrma_ep dst, uint64_t key,
		     uint64_t offset, const struct amrma_dgsp *src_type, uint64_t src_count,
		     void *buf, const struct amrma_dgsp *buf_type, uint64_t buf_count,
		     uint32_t flags, amrma_rma_cb_t cb, void *arg, amrma_rma_req_t *req);

/**
 * @return 1 and *status when req completed (the handle is released), 0 while pending,
 *   -EINVAL for an unknown or already released handle.
 */
int amrma_rma_test(struct amrma_ctx *ctx, amrma_rma_req_t req, int *status);

/**
 * 1 once a put's source buffer may be reused (also before completion: when
 * AMRMA_RMA_EV_LOCAL is reported, a zero-copy put's once no frame refers to it); 0 before;
 * -EINVAL if stale.
 */
int amrma_rma_local_done(struct amrma_ctx *ctx, amrma_rma_req_t req);

/**
 * Poll ctx until req completes; returns its status, -EINVAL if stale, or -EPERM from
 * inside a poll of ctx (a handler or a callback: waiting there could only spin). The
 * peer must make progress elsewhere (its own lcore or service).
 */
int amrma_rma_wait(struct amrma_ctx *ctx, amrma_rma_req_t req);

/**
 * Poll ctx until every operation it issued to the endpoint dst completed: 0, -EINVAL
 * without an RMA engine on ctx, or -EPERM from inside a poll of ctx.
 */
int amrma_rma_flush(struct amrma_ctx *ctx, struct amrma_ep dst);

/** Operations of ctx not yet released. */
unsigned int amrma_rma_outstanding(const struct amrma_ctx *ctx);

/**
 * One round of the progress engine: serve the RMA queue (post tagged receives, issue
 * tagged sends, finish placed messages). Run it on one lcore, or through the service.
 * @return work done.
 */
int amrma_rma_progress(struct amrma_rma *rma);

/**
 * Register the progress engine as an rte_service (the caller maps and starts it). Map it to
 * the service lcore that polls the progress context (see Threading above).
 */
int amrma_rma_service_register(struct amrma_rma *rma, uint32_t *service_id);

struct amrma_copy_engine;

/**
 * Make the RMA handlers of ctx place received bytes with engine e (CPU by default; see
 * drivers/dma/amrma_dma.h). The engine must outlive its use and is used only by ctx's
 * lcore. NULL restores the CPU engine.
 */
int amrma_rma_set_copy_engine(struct amrma_ctx *ctx, struct amrma_copy_engine *e);

/** Counters of one context (initiator and target roles). */
struct amrma_rma_stats {
	uint64_t puts;
	uint64_t gets;
	uint64_t put_bytes;
	uint64_t get_bytes;
	uint64_t chunks;		/**< AM requests sent for RMA */
	uint64_t zero_copy_chunks;	/**< of which attached, not copied */
	uint64_t rndv_ops;
	uint64_t op_errors;		/**< operations completed with an error */
	uint64_t served_put_bytes;	/**< target: bytes written into regions */
	uint64_t served_get_bytes;	/**< target: bytes read from regions */
	uint64_t access_errors;		/**< target: requests refused (key/range/perm) */
	/** initiator: replies that do not fit the op, messages to reply-only handlers */
	uint64_t bad_replies;
	uint64_t queue_full;		/**< target: RMA queue full, request refused */
	uint64_t tag_retries;		/**< tagged data refused (not posted yet), resent */
	uint64_t rndv_timeouts;		/**< rendezvous waits that expired (either side) */
	uint64_t dt_ops;		/**< noncontiguous operations started */
	uint64_t dt_rejected;		/**< target: programs refused by the verifier */
	uint64_t completions_sent;	/**< target: pipelined put completions (one per op) */
	uint64_t completion_full;	/**< target: puts not counted, completed -ENOSPC */
	uint64_t completion_drops;	/**< target: completions not sent (peer gone, or
					 *   refusals beyond 64 queued) */
	/** target: rendezvous requests, receives, noncontiguous program slots,
	 *  pipelined puts' completion entries and completions, and data of an
	 *  initiator's earlier life, dropped when this context learns it restarted
	 *  or closed its channel (the region they held is let go then, not at
	 *  rndv_timeout_ms) */
	uint64_t stale_requests;
	/** initiator: rendezvous puts and gets that the target's engine cancelled (it was
	 *  destroyed owing their CTS or data); they end with -ECANCELED */
	uint64_t rndv_cancelled;
};

/** The counters of ctx's part of the engine (all zero without an engine). */
void amrma_rma_stats_get(const struct amrma_ctx *ctx, struct amrma_rma_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* AMRMA_RMA_H */
