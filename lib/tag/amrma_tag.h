/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef AMRMA_TAG_H
#define AMRMA_TAG_H

/**
 * @file
 * Tagged message matching: posted receives (the expected queue) against arrived messages
 * (the unexpected queue), with MPI ordering rules. Transport-agnostic: the engine never
 * touches payload bytes. The protocol above describes an arrival as (tag, source endpoint,
 * length, opaque cookie), gets back which receive it matched, moves the bytes (eager copy,
 * rendezvous pull, DMA...) and then reports completion with amrma_tag_complete(), which
 * runs the receive's callback.
 *
 * Matching rule. A receive posted with (tag, ignore, src) matches a message (t, s) when
 *     (t & ~ignore) == (tag & ~ignore)  and  (src == AMRMA_TAG_ANY_SRC || src == s).
 * `ignore` holds the bits that do NOT take part (libfabric convention): 0 = exact tag,
 * UINT64_MAX = any tag. A zero-initialised mask is thus the safe, exact-match default.
 *
 * Ordering (MPI non-overtaking):
 * - an arriving message matches the FIRST (oldest) posted receive that matches it;
 * - a newly posted receive matches the OLDEST unexpected message that matches it.
 *
 * Truncation: a message longer than the buffer of the receive it matches still matches
 * (both are consumed, so ordering is unaffected); the match says copy_len = buffer length
 * and status -EMSGSIZE: the protocol delivers the first copy_len bytes, discards the rest,
 * and the receive completes with -EMSGSIZE and the full message length.
 *
 * Bounded memory. All entries come from arrays allocated at creation. The unexpected queue
 * is limited both in entries and in buffered bytes; an arrival that would exceed either
 * limit is refused with -ENOBUFS and nothing is queued: the protocol must turn that into
 * flow control towards the sender (e.g. a NACK/"retry later" reply, or not acknowledging
 * the frame so the reliable channel retransmits it). Posting more receives than
 * max_posted (matched-but-uncompleted ones included) fails with -ENOSPC, even if an
 * unexpected message would have matched.
 *
 * Complexity: an exact receive (ignore 0, a given source) and an arriving message are
 * matched through bins hashed on (tag, src): O(1) plus the wildcard receives posted. A
 * wildcard receive scans the unexpected queue in arrival order: O(queue length).
 *
 * Threading: an engine is single-threaded by design. It is owned by one lcore (normally the
 * progress lcore, or a context lcore) and every function on it must be called from that
 * lcore; callbacks run on it too. Other threads reach it through a ring to its owner.
 * The engine needs no EAL (plain libc + libnuma memory), so it also works in pure tests.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Receive source wildcard: match messages from any endpoint. */
#define AMRMA_TAG_ANY_SRC	UINT32_MAX
/** Ignore mask that matches any tag. */
#define AMRMA_TAG_ANY_TAG	UINT64_MAX

/** Matching engine (opaque). */
struct amrma_tag_engine;

/** Engine creation parameters; every limit is fixed for the engine's life. */
struct amrma_tag_config {
	uint32_t max_posted;		/**< posted receives (incl. matched, not completed) */
	uint32_t max_unexpected;	/**< unexpected messages queued */
	uint64_t max_unexpected_bytes;	/**< sum of held_bytes of queued unexpected msgs */
	int socket_id;			/**< NUMA node for the arrays, or -1 for any */
};

/** An arrived message, as the protocol describes it. */
struct amrma_tag_msg {
	uint64_t tag;
	uint32_t src;		/**< source endpoint id (not AMRMA_TAG_ANY_SRC) */
	uint64_t len;		/**< full message length, used for truncation */
	/**
	 * Bytes the protocol keeps buffered for this message while it is unexpected, charged
	 * against max_unexpected_bytes: len for eager data, 0 or a header size for a
	 * rendezvous announcement whose data stays at the sender.
	 */
	uint64_t held_bytes;
	void *cookie;		/**< opaque: where/how the protocol finds the data */
};

/** Completion of a receive, passed to its callback. */
struct amrma_tag_completion {
	uint64_t recv_id;	/**< id returned by amrma_tag_post_recv */
	uint64_t tag;		/**< tag of the message received (0 if cancelled) */
	uint32_t src;		/**< its source endpoint */
	uint64_t msg_len;	/**< its full length */
	uint64_t len;		/**< bytes delivered into the buffer */
	void *buf;		/**< the receive buffer */
	/** 0, -EMSGSIZE (truncated), -ECANCELED, or the status given to complete(). */
	int status;
};

/** Receive completion callback; runs on the owning lcore. */
typedef void (*amrma_tag_recv_cb_t)(const struct amrma_tag_completion *c, void *arg);

/** A receive to post. */
struct amrma_tag_recv {
	uint64_t tag;
	uint64_t ignore;	/**< bits of tag that are ignored (see file comment) */
	/** endpoint id, or AMRMA_TAG_ANY_SRC (0 is endpoint 0, not a wildcard) */
	uint32_t src;
	void *buf;
	uint64_t len;		/**< buffer length */
	amrma_tag_recv_cb_t cb;	/**< may be NULL */
	void *cb_arg;
};

/** A match: what the protocol needs to move the bytes, then call amrma_tag_complete(). */
struct amrma_tag_match {
	uint64_t recv_id;	/**< the receive that matched */
	void *buf;		/**< its buffer */
	uint64_t copy_len;	/**< min(msg.len, buffer length): bytes to deliver */
	int status;		/**< 0 or -EMSGSIZE (message truncated to copy_len) */
	struct amrma_tag_msg msg; /**< the message, cookie included */
};

/** Counters and current occupancy. */
struct amrma_tag_stats {
	uint64_t arrivals;	/**< amrma_tag_arrive calls accepted (matched or queued) */
	uint64_t matched_posted; /**< arrivals that matched a posted receive */
	uint64_t queued_unexpected; /**< arrivals queued as unexpected */
	uint64_t matched_unexpected; /**< posts that matched an unexpected message */
	uint64_t refused;	/**< arrivals refused with -ENOBUFS */
	uint64_t truncated;	/**< matches with -EMSGSIZE */
	uint64_t cancelled;	/**< receives cancelled */
	uint64_t completed;	/**< receives completed through amrma_tag_complete */
	uint32_t posted;	/**< receives waiting in the expected queue */
	uint32_t in_progress;	/**< matched receives not yet completed */
	uint32_t unexpected;	/**< messages in the unexpected queue */
	uint32_t unexpected_hwm; /**< high-water mark of unexpected */
	uint64_t unexpected_bytes; /**< held bytes in the unexpected queue */
};

/**
 * Create an engine. All memory is allocated here (on socket_id when libnuma can).
 *
 * @return the engine, or NULL with errno set (EINVAL: a limit is 0; ENOMEM).
 */
struct amrma_tag_engine *amrma_tag_engine_create(const struct amrma_tag_config *cfg);

/**
 * Destroy an engine. Receives still posted (unmatched) complete with -ECANCELED (callbacks
 * run, in no particular order); matched receives not yet completed are dropped without callback;
 * unexpected messages are dropped (their cookies are the caller's to release: drain them
 * first with amrma_tag_unexpected_pop() if they own buffers).
 */
void amrma_tag_engine_free(struct amrma_tag_engine *e);

/**
 * Post a receive. If the oldest matching unexpected message exists it is dequeued and
 * returned in *m (return 1): the protocol moves its data (m->msg.cookie) into m->buf,
 * releases whatever the cookie held, then calls amrma_tag_complete(m->recv_id). Otherwise
 * the receive joins the tail of the expected queue (return 0).
 *
 * @param[out] recv_id  handle for cancel/complete (may be NULL); never 0
 * @return 1 matched now (m filled), 0 posted, -EINVAL, -ENOSPC (max_posted in use).
 */
int amrma_tag_post_recv(struct amrma_tag_engine *e, const struct amrma_tag_recv *r,
			uint64_t *recv_id, struct amrma_tag_match *m);

/**
 * A message arrived. If a posted receive matches, the first one is taken off the expected
 * queue and returned in *m (return 1); the protocol moves the data and then calls
 * amrma_tag_complete(m->recv_id). Otherwise the message is queued as unexpected (return 0)
 * if the bounds allow it.
 *
 * @return 1 matched (m filled), 0 queued as unexpected, -ENOBUFS (unexpected queue full in
 *   entries or bytes: nothing queued, the protocol must push back on the sender),
 *   -EINVAL.
 */
int amrma_tag_arrive(struct amrma_tag_engine *e, const struct amrma_tag_msg *msg,
		     struct amrma_tag_match *m);

/**
 * Complete a matched receive: runs its callback and frees its entry.
 *
 * @param status  0 to report the match status (0 or -EMSGSIZE); a negative errno to report
 *   a transfer failure instead (e.g. -EIO when a rendezvous pull failed).
 * @return 0, or -ENOENT if recv_id is not a matched, uncompleted receive.
 */
int amrma_tag_complete(struct amrma_tag_engine *e, uint64_t recv_id, int status);

/**
 * Cancel a posted receive that has not matched yet: it leaves the expected queue and its
 * callback runs with -ECANCELED.
 *
 * @return 0, -EBUSY (already matched: it will complete normally), -ENOENT (unknown id).
 */
int amrma_tag_cancel(struct amrma_tag_engine *e, uint64_t recv_id);

/**
 * Probe: find the oldest unexpected message a receive (tag, ignore, src) would match,
 * without dequeuing it (MPI_Iprobe).
 *
 * @return 1 found (*msg filled), 0 none.
 */
int amrma_tag_probe(const struct amrma_tag_engine *e, uint64_t tag, uint64_t ignore,
		    uint32_t src, struct amrma_tag_msg *msg);

/**
 * Dequeue the oldest unexpected message regardless of tag (teardown, peer failure).
 *
 * @return 1 (msg filled), 0 queue empty.
 */
int amrma_tag_unexpected_pop(struct amrma_tag_engine *e, struct amrma_tag_msg *msg);

/** Called for each unexpected message dropped by amrma_tag_purge_src(). */
typedef void (*amrma_tag_msg_cb_t)(const struct amrma_tag_msg *msg, void *arg);

/**
 * A peer is gone (or its channel was reset): drop its unexpected messages, so that a dead
 * peer cannot hold the bounded queue, and cancel the receives posted for exactly that
 * source (their callbacks run with -ECANCELED). Receives for AMRMA_TAG_ANY_SRC stay, and
 * matched receives complete normally.
 *
 * @param msg_cb  optional: called for each dropped message, to release its cookie; it may
 *   call into the engine, as receive callbacks may (every message to drop is off the queue
 *   before the first call, so a message queued meanwhile stays)
 * @return the number of messages dropped plus receives cancelled, or -EINVAL.
 */
int amrma_tag_purge_src(struct amrma_tag_engine *e, uint32_t src, amrma_tag_msg_cb_t msg_cb,
			void *arg);

/** Read counters and occupancy. */
void amrma_tag_stats_get(const struct amrma_tag_engine *e, struct amrma_tag_stats *s);

/** The matching predicate itself (exposed for protocols and tests). */
static inline int
amrma_tag_matches(uint64_t recv_tag, uint64_t ignore, uint64_t msg_tag)
{
	return ((recv_tag ^ msg_tag) & ~ignore) == 0;
}

#ifdef __cplusplus
}
#endif

#endif /* AMRMA_TAG_H */
