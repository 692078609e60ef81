/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef AMRMA_AM_H
#define AMRMA_AM_H

/**
 * @file
 * Active Messages over a DPDK port.
 *
 * A node owns one port (through the drivers/net transport) split into contexts: context i
 * owns RX queue i and TX queue i and is polled by exactly one lcore, so nothing on the hot
 * path takes a lock. An endpoint is (node id, context index). Frames name a handler index
 * that runs on the receiving context's lcore.
 *
 * Rules (enforced, not trusted):
 *  - a request may be issued anywhere except inside a handler (-EPERM);
 *  - a request handler may send at most one reply (-EALREADY), only while it runs
 *    (-EPERM afterwards); when it returns without replying the core replies for it
 *    with an empty reply carrying the handler's status, so every request completes;
 *  - a reply handler sends nothing (-EPERM);
 *  - completion callbacks (amrma_am_done_t) are not handlers: they may issue requests.
 *    One failed by a peer's restart (-ECONNRESET) may retry at once: the channel already
 *    speaks to the new life. After a peer left, the retry fails with -ENOTCONN.
 *
 * Delivery is reliable and exactly-once per request: per-channel sequence numbers,
 * cumulative + selective acks, retransmission of the held mbufs with exponential back-off.
 * A peer that stops answering makes its operations complete with -ETIMEDOUT after the
 * retry budget, and later requests to it fail with -ENOTCONN. A peer that restarts (new
 * incarnation) resets its channels: operations in flight complete with -ECONNRESET and
 * the channel works again. Once any context of the node has heard the new life, the
 * others' channels that died with the old one reopen at their next request, so a
 * context that only ever asks is not cut off for good.
 *
 * Threading: all calls naming a context run on the lcore that polls it. Register handlers
 * and add peers before polling starts.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "amrma_net.h"
#include "amrma_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct amrma_node;
struct amrma_ctx;

/** An endpoint: a context of a node. */
struct amrma_ep {
	uint16_t node;
	uint8_t ctx;
};

/** Identifies the request a handler is running for; only valid while it runs. */
typedef uint64_t amrma_am_token_t;

/**
 * What a handler sees of a message. A payload in one segment is read in place (payload
 * points into mbuf, no copy); one that spans segments is copied into a per-context buffer
 * that the next such message overwrites, so payload is valid only while the handler runs.
 * A handler that keeps the mbuf reads kept data from the mbuf (rte_pktmbuf_read()).
 */
struct amrma_am_msg {
	struct amrma_ep src;		/**< sender */
	/** the sender's incarnation (its amrma_node_epoch()): state a layer keeps per
	 *  sender names it, so a restarted peer's new messages never match the old life's */
	uint32_t src_epoch;
	uint16_t handler;		/**< index that was invoked */
	uint8_t nargs;
	int16_t status;			/**< replies: sender's status (0 or -errno) */
	uint64_t args[AMRMA_WIRE_MAX_ARGS];
	const void *payload;
	uint16_t len;			/**< payload bytes */
	struct rte_mbuf *mbuf;		/**< the frame; read-only */
	void *op_arg;			/**< replies: the arg given to amrma_am_request() */
};

/** Handler indices below this are the application's; the rest belong to amrma protocols. */
#define AMRMA_AM_USER_HANDLERS 224

/** The AM core's own handler: a peer says it leaves (amrma_node_leave()). */
#define AMRMA_AM_H_LEAVE 255

/**
 * Handler return value meaning "I keep msg->mbuf and will free it myself". Until the
 * handler has returned the library may still read the mbuf (a reply whose payload lies in
 * it is built then): free it, or hand it to another lcore, only afterwards.
 */
#define AMRMA_AM_KEEP_MBUF 1

/**
 * A request or reply handler.
 *
 * @return 0, AMRMA_AM_KEEP_MBUF, or a negative errno: for a request handler that did not
 *   reply, the status of the automatic reply; for a reply handler, the operation's status.
 */
typedef int (*amrma_am_handler_t)(struct amrma_ctx *ctx, amrma_am_token_t tok,
				  const struct amrma_am_msg *msg, void *arg);

/** Called once when a request completes: status 0, the reply's status, or -errno. */
typedef void (*amrma_am_done_t)(struct amrma_ctx *ctx, void *arg, int status);

/** UDP checksums on AM frames. Both ends of a link must agree on sending them. */
enum amrma_csum {
	/** OFF on links through shared memory (amrma_net_dev.memory_link: net_memif,
	 *  net_ring), ON elsewhere */
	AMRMA_CSUM_AUTO = 0,
	/** sent on TX (by the port when it offers the offload), required and verified on RX */
	AMRMA_CSUM_ON,
	/** UDP checksum 0 on TX; on RX no checksum, IP header or UDP, is verified. For
	 *  links that cannot corrupt a frame: copying through memory is what Linux
	 *  trusts on loopback and veth too. Every other field is still validated */
	AMRMA_CSUM_OFF,
};

/** Node configuration; start from amrma_node_conf_defaults(). */
struct amrma_node_conf {
	uint16_t node_id;		/**< unique id, < max_nodes */
	uint16_t max_nodes;		/**< bound on peer node ids */
	uint16_t nb_ctx;		/**< contexts (<= dev->nb_queues, <= 64 on the wire) */
	rte_be32_t ip;			/**< our IPv4 address */
	uint16_t udp_base;		/**< UDP port of context 0 (same on all nodes) */
	struct amrma_net_dev *dev;	/**< opened transport (caller keeps it alive) */
	struct rte_mempool *pool;	/**< TX mbufs; NULL: the node creates one */
	uint32_t nb_mbufs;		/**< size of the created pool */
	uint16_t window;		/**< unacked frames in flight per channel, <= 64 */
	uint16_t max_ops;		/**< outstanding requests per context */
	uint32_t rto_us;		/**< first retransmit timeout */
	uint32_t rto_max_us;		/**< back-off ceiling */
	uint32_t max_retries;		/**< timeouts without progress before a peer is dead */
	uint32_t ack_delay_us;		/**< delayed standalone ack */
	uint16_t ack_every;		/**< ack at once after this many unacked frames */
	enum amrma_csum csum;		/**< UDP checksums (default AMRMA_CSUM_AUTO) */
	uint16_t coalesce_frame;	/**< requests and replies (with contiguous payloads)
					 *   to one endpoint issued between two TX flushes
					 *   share frames up to this many bytes, Ethernet header
					 *   included (capped by the MTU); 0: one message per
					 *   frame. Default 1514. Nothing waits for company:
					 *   a frame leaves at the next flush as it is */
	uint16_t tx_inline_max;		/**< frames up to this many bytes wait for their ack
					 *   as a copy in the channel's inline store, so the
					 *   port holds their only mbuf reference (a shared
					 *   one costs an atomic per free); longer frames, and
					 *   all with 0, are held by reference count. At most
					 *   192, the default */
};

/** Fill conf with defaults (node_id 0, 1 context, window 64, rto 2 ms, 8 retries...). */
void amrma_node_conf_defaults(struct amrma_node_conf *conf);

/**
 * Create a node on an opened transport.
 * @return 0 or -EINVAL / -ENOMEM / -EEXIST.
 */
int amrma_node_create(const struct amrma_node_conf *conf, struct amrma_node **out);

/**
 * Free a node; outstanding operations complete with -ECANCELED. Layers built on it go
 * first (amrma_rma_destroy() before this: the engine's destroy works in the node's
 * contexts). Not from a handler, a completion callback or inside a poll.
 */
void amrma_node_destroy(struct amrma_node *node);

/** Declare a peer node reachable at (mac, ip) with nb_ctx contexts. */
int amrma_node_add_peer(struct amrma_node *node, uint16_t node_id,
			const struct rte_ether_addr *mac, rte_be32_t ip, uint16_t nb_ctx);

/**
 * Register fn at handler index (< 256, not AMRMA_AM_H_LEAVE); the same index must mean
 * the same on every node. @return 0 or -EINVAL.
 */
int amrma_am_register(struct amrma_node *node, uint16_t index, amrma_am_handler_t fn,
		      void *arg);

/** Context i of a node, or NULL. */
struct amrma_ctx *amrma_node_ctx(struct amrma_node *node, uint16_t i);
/** The node's number of contexts (conf.nb_ctx). */
uint16_t amrma_node_nb_ctx(const struct amrma_node *node);

/** Whether the node sends and verifies UDP checksums (conf.csum resolved for its port). */
bool amrma_node_csum(const struct amrma_node *node);
/** The node's id (conf.node_id). */
uint16_t amrma_node_id(const struct amrma_node *node);
/** This node's incarnation (carried in every frame; see docs/wire-format.md). */
uint32_t amrma_node_epoch(const struct amrma_node *node);
/** The node a context belongs to. */
struct amrma_node *amrma_ctx_node(struct amrma_ctx *ctx);
/** A context's index in its node (its queue on the port, its number on the wire). */
uint16_t amrma_ctx_index(const struct amrma_ctx *ctx);

/**
 * TSC of the context's current (or last) poll: layers reuse it. An idle poll reads the
 * clock only every 16th time, so the value may be that many idle polls old.
 */
uint64_t amrma_ctx_now(const struct amrma_ctx *ctx);

/**
 * Make the context's TX queue free the frames it has sent and still holds. A port may
 * keep sent frames until its next TX call (net_memif's zero-copy mode does); a layer
 * waiting for the last reference to memory attached to its frames calls this, or it
 * could wait for as long as nothing else is sent.
 */
void amrma_ctx_tx_cleanup(struct amrma_ctx *ctx);

/** The mempool this context builds frames from (for payload segments a layer fills). */
struct rte_mempool *amrma_ctx_pool(const struct amrma_ctx *ctx);

/** Largest payload of a message with nargs arguments on this node. */
uint16_t amrma_am_max_payload(const struct amrma_ctx *ctx, unsigned int nargs);

/**
 * Send a request (short: len 0; medium: payload copied into the frame).
 * The payload buffer is reusable on return. done(ctx, arg, status) runs exactly once.
 * Called outside a poll to an endpoint with nothing in flight, the frame goes to the port
 * before this returns; otherwise it leaves with the next poll, sharing a frame with the
 * messages queued behind it when coalescing is on.
 *
 * @return 0; -EPERM inside a handler; -EAGAIN when the operation table or the channel
 *   queue is full (poll, then retry); -EMSGSIZE; -EINVAL; -ENOTCONN for a dead peer;
 *   -ENOBUFS when no mbuf is free.
 */
int amrma_am_request(struct amrma_ctx *ctx, struct amrma_ep dst, uint16_t handler,
		     const uint64_t *args, unsigned int nargs, const void *payload,
		     uint16_t len, amrma_am_done_t done, void *arg);

/**
 * Send a one-way message: the handler runs at the destination exactly once, like a
 * request's, but nothing is replied (amrma_am_reply() there fails with -EPERM and is
 * counted as a rule violation). done(ctx, arg, status) runs exactly once: with 0 when the
 * frame carrying the message is acknowledged, which the peer does only after receiving it
 * (its handler runs in that poll); with an error when the channel fails or resets first.
 * Same rules and errors as amrma_am_request(). For protocols whose completion is a
 * message of their own (RMA puts: one completion per operation instead of a reply per
 * packet).
 */
int amrma_am_send(struct amrma_ctx *ctx, struct amrma_ep dst, uint16_t handler,
		  const uint64_t *args, unsigned int nargs, const void *payload, uint16_t len,
		  amrma_am_done_t done, void *arg);

/** amrma_am_send() with an mbuf payload, as amrma_am_request_mbuf(). */
int amrma_am_send_mbuf(struct amrma_ctx *ctx, struct amrma_ep dst, uint16_t handler,
		       const uint64_t *args, unsigned int nargs, struct rte_mbuf *payload,
		       amrma_am_done_t done, void *arg);

/**
 * Like amrma_am_request() but the payload is an mbuf segment (chain) that the frame
 * references instead of copying: typically a segment attached to the caller's memory with
 * rte_pktmbuf_attach_extbuf() (zero-copy TX). The core owns payload from the call on, also
 * when it fails; the caller's memory is referenced until the frame is acknowledged.
 */
int amrma_am_request_mbuf(struct amrma_ctx *ctx, struct amrma_ep dst, uint16_t handler,
			  const uint64_t *args, unsigned int nargs, struct rte_mbuf *payload,
			  amrma_am_done_t done, void *arg);

/**
 * Reply to the request tok from inside its handler. handler may be AMRMA_WIRE_NO_HANDLER
 * (the initiator's done callback still gets status).
 *
 * @return 0; -EPERM outside the request's handler; -EALREADY for a second reply;
 *   -EMSGSIZE; -EINVAL; -ENOBUFS.
 */
int amrma_am_reply(struct amrma_ctx *ctx, amrma_am_token_t tok, uint16_t handler,
		   const uint64_t *args, unsigned int nargs, const void *payload,
		   uint16_t len, int16_t status);

/**
 * One round of progress: TX flush, RX burst of at most budget frames, validate, dispatch,
 * acks, retransmit timers, TX flush.
 * @return the amount of work done: frames received, frames handed to the port and the
 *   poll hook's work. 0 = idle: frames waiting for a port that takes none do not count.
 *   -EPERM from inside a poll of ctx (a handler, a completion callback, the hook): a
 *   nested poll would dispatch another request over the running handler's.
 */
int amrma_ctx_poll(struct amrma_ctx *ctx, unsigned int budget);

/** Work a protocol layer does on every poll of a context; returns work done. */
typedef int (*amrma_ctx_hook_t)(struct amrma_ctx *ctx, void *arg);

/**
 * Install the poll hook of ctx (one per context; NULL removes it). The RMA engine
 * (amrma_rma_create()) owns the hook and the priv pointer below of every context of its
 * node: with an engine, do not set either.
 */
void amrma_ctx_set_hook(struct amrma_ctx *ctx, amrma_ctx_hook_t fn, void *arg);

/** Per-context pointer for a protocol layer (e.g. RMA state); NULL until set. */
void *amrma_ctx_priv(const struct amrma_ctx *ctx);
/** Set it (one protocol layer per node: amrma_rma_create() refuses a set one, -EEXIST). */
void amrma_ctx_set_priv(struct amrma_ctx *ctx, void *priv);

/** Poll every context of the node (one lcore runs the whole node): work done, or -EPERM
 * as amrma_ctx_poll(). */
int amrma_node_poll(struct amrma_node *node, unsigned int budget);

/**
 * The life (amrma_node_epoch()) of endpoint ep that ctx's channel speaks to: 0 before
 * the first contact, or for an unknown endpoint. A layer whose operation waits for a
 * peer's own later message (not a reply) compares it with the life that took the
 * request: a peer that restarted will never send it.
 *
 * @param closed
 *   Optional: set when the channel is closed to that life (it stopped answering, left,
 *   or the node is being destroyed): nothing more comes from it.
 */
uint32_t amrma_ctx_peer_epoch(struct amrma_ctx *ctx, struct amrma_ep ep, bool *closed);

/** Requests issued on ctx that have not completed. */
unsigned int amrma_ctx_outstanding(const struct amrma_ctx *ctx);

/**
 * Leave cleanly: poll every context of the node, sending every ack it owes at once
 * (not after the ack delay), until every frame it sent is acknowledged (or its peer
 * declared dead) and nothing waits to leave. Call before amrma_node_destroy() when
 * peers stay up: a node that exits with acks owed makes its peers resend their last
 * frames until their retry budget runs out. Operations still outstanding keep
 * running meanwhile; wait for them first (amrma_ctx_outstanding()) if they matter.
 *
 * Runs on the calling thread, so no lcore may poll the node meanwhile.
 *
 * @param timeout_us
 *   Longest wait, in microseconds.
 * @return
 *   0 when settled, -ETIMEDOUT when frames stayed unacknowledged (a peer that left
 *   without acknowledging them), -EBUSY when the node's rte_service is running
 *   (see rte_service_runstate_get()), -EPERM from inside one of the node's polls (a
 *   handler or a completion callback), -EINVAL for a NULL node.
 */
int amrma_node_quiesce(struct amrma_node *node, uint64_t timeout_us);

/**
 * Leave for good: settle (amrma_node_quiesce()), then tell every peer node this node has
 * heard from that it leaves (a one-way message to each of that peer's contexts), and wait
 * until each has acknowledged it. A context acknowledges the message only once it ran its
 * handler, and acknowledges a retransmitted copy again after it closed, so a lost
 * acknowledgement costs a retransmission, not the call.
 *
 * A peer's context that is told closes its channels to the leaving node: frames held for
 * it are dropped, operations on them fail with -ECONNRESET, and new ones with -ENOTCONN
 * until the node's next life (epoch) speaks to any of its contexts. If its port's link goes with its one peer
 * (amrma_net_dev.link_per_peer: net_memif), it also parks: it touches the port no more
 * until the link has gone down and come up again (the next peer attached), or for half a
 * second if the link stays up. So the host may close its port next: net_memif of DPDK
 * 22.11 unmaps the rings of the side that stays, whatever a poll there is doing in them.
 *
 * After -ETIMEDOUT it may be called again: contexts that acknowledged an earlier call
 * (late acknowledgements included) are not told again, since they no longer listen to
 * this node.
 *
 * After it returns, destroy the node: its peers no longer listen. Runs on the calling
 * thread, so no lcore may poll the node meanwhile; not from a handler or a completion
 * callback.
 *
 * @param timeout_us
 *   Longest wait in microseconds, settling included.
 * @return
 *   0; -ETIMEDOUT when frames stayed unacknowledged or a peer did not acknowledge in
 *   time; an error of amrma_am_send() (-ENOTCONN, -ENOBUFS); -EBUSY when the node's
 *   rte_service is running; -EPERM from inside a poll; -EINVAL for a NULL node.
 */
int amrma_node_leave(struct amrma_node *node, uint64_t timeout_us);

/** Per-context counters (each written by one lcore only, summed on read). */
struct amrma_am_stats {
	uint64_t rx_frames;
	uint64_t tx_frames;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t rx_rejected[AMRMA_WIRE_ERR__MAX];	/**< by amrma_wire_err reason */
	uint64_t unknown_peer;
	uint64_t unknown_handler;
	uint64_t bad_token;
	uint64_t bad_ack;
	uint64_t duplicates;
	uint64_t out_of_window;
	uint64_t no_reply_room;		/**< request dropped: no room to reply, resent later */
	uint64_t no_reply_mbuf;		/**< request dropped: no mbuf for its reply, resent later */
	uint64_t reply_spares;		/**< gauge: mbufs set aside for replies (one per request
					     of the largest frame of requests seen, at most 64) */
	uint64_t redirected;		/**< software steering to another context */
	uint64_t redirect_drops;
	uint64_t requests_handled;
	uint64_t replies_handled;
	uint64_t auto_replies;
	uint64_t rule_violations;
	uint64_t retransmits;		/**< frames resent (timer and fast) */
	uint64_t fast_retransmits;	/**< holes resent because later frames were sacked */
	uint64_t timeouts;		/**< retransmit timer expiries */
	uint64_t acks_sent;		/**< standalone ACK frames */
	uint64_t tx_drops;		/**< frames the port did not take */
	uint64_t ops_completed;
	uint64_t ops_failed;
	uint64_t peers_dead;
	uint64_t peer_restarts;		/**< newer incarnation seen: channel reset */
	uint64_t stale_epoch;		/**< frames of or for an older incarnation */
	uint64_t tx_coalesced;		/**< messages sent in another message's frame */
	uint64_t rx_coalesced;		/**< messages received in another message's frame */
	uint64_t sends_handled;		/**< one-way messages whose handler ran */
	uint64_t replies_in_place;	/**< replies built over their request's frame */
	uint64_t peers_left;		/**< LEAVEs taken (amrma_node_leave());
					 *   sends_handled counts them too (requests_handled
					 *   one sent as a request) */
	uint64_t parks;			/**< times the context stopped touching the port
					 *   for a peer that left, until the link cycled */
	uint64_t parked_drops;		/**< frames other contexts redirected to this one
					 *   while it was parked: from the peer that left */
};

/** Copy ctx's counters into out. */
void amrma_ctx_stats_get(const struct amrma_ctx *ctx, struct amrma_am_stats *out);
/** Sum of all contexts' counters. */
void amrma_node_stats_get(const struct amrma_node *node, struct amrma_am_stats *out);
/** Call fn(name, value, arg) for every counter of stats (for telemetry and printing). */
void amrma_am_stats_foreach(const struct amrma_am_stats *stats,
			    void (*fn)(const char *name, uint64_t value, void *arg), void *arg);

/**
 * Idle back-off for busy-polling loops on shared CPUs: after `spin` empty polls yield the
 * CPU, after 2 * spin sleep sleep_us microseconds per empty poll. spin 0 never backs off.
 */
struct amrma_idle {
	uint32_t spin;
	uint32_t sleep_us;
	uint32_t empty;
};

/** Account one poll that did `work`; may yield or sleep. */
void amrma_idle_step(struct amrma_idle *idle, int work);

/**
 * Register an rte_service that polls all contexts of the node (not MT-safe: map it to one
 * service lcore). The caller maps and starts it.
 */
int amrma_node_service_register(struct amrma_node *node, uint32_t *service_id);

#ifdef __cplusplus
}
#endif

#endif /* AMRMA_AM_H */
