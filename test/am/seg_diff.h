/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One frame, two receivers alike in all but this: one gets the frame in one segment, the
 * other in a chain cut where the caller says. Their verdicts (the rx_rejected[] reason
 * counted, or none), the counters that follow from what arrived and what the handlers
 * saw must be the same, and the first verdict the codec's. Shared by test_seg_verdict
 * (meson test) and the libFuzzer target seg_fuzz (-Dfuzz=true with clang).
 *
 * The nodes sit on a transport of the test's own (struct amrma_net_ops) that hands them
 * the frames it is given: no port, no timing. Receivers are node 2 with 4 contexts at UDP
 * base 7000 and MAC 02:00:00:00:00:02, as the wire corpus frames are addressed
 * (test/wire/fuzz_wire.h), and know node 1 (02:00:00:00:00:01, 4 contexts).
 */
#ifndef AMRMA_TEST_SEG_DIFF_H
#define AMRMA_TEST_SEG_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "amrma_am.h"

#define SEG_NB_Q	4
#define SEG_UDP_BASE	7000
#define SEG_NODE_RX	2
#define SEG_NODE_TX	1
#define SEG_IP_RX	RTE_BE32(0xc6120002)
#define SEG_IP_TX	RTE_BE32(0xc6120001)
#define SEG_FIFO	1024u		/* per RX queue of the test transport */
/* headers and arguments: what a first segment may end inside */
#define SEG_HDR_MAX	(AMRMA_WIRE_HDR_LEN + 8u * AMRMA_WIRE_MAX_ARGS)
/* the longest frame delivered (an MTU of 9600 and trailing bytes) */
#define SEG_FRAME_MAX	9728u
#define SEG_DATA_ROOM	(RTE_PKTMBUF_HEADROOM + SEG_FRAME_MAX)
#define SEG_MAX_CUTS	3u
#define SEG_NB_CNT	20u

extern const struct rte_ether_addr seg_mac_rx, seg_mac_tx;

/* A failure of the machinery itself (no mbuf, a full queue): the run cannot go on. */
void seg_die(const char *fmt, ...) __rte_format_printf(1, 2) __rte_noreturn;

/* --- randomness: splitmix64, so that every seed gives a good stream --- */

uint64_t seg_rnd(uint64_t *s);
/* Uniform in [0, n); 0 for n 0. */
uint32_t seg_below(uint64_t *s, uint32_t n);

/* --- the transport --- */

struct seg_dev {
	struct amrma_net_dev dev;	/* first: the ops are handed &dev */
	struct rte_mbuf *rx[SEG_NB_Q][SEG_FIFO];
	uint32_t rx_head[SEG_NB_Q], rx_tail[SEG_NB_Q];
	struct seg_dev *peer;		/* where sent frames go; NULL: freed */
	void (*on_tx)(const struct rte_mbuf *m);	/* sees each frame sent, or NULL */
};

struct seg_dev *seg_dev_new(const struct rte_ether_addr *mac, uint16_t mtu);
/* Frees the frames still queued for RX too. */
void seg_dev_free(struct seg_dev *d);
/* Queue m for RX on queue q. */
void seg_dev_push(struct seg_dev *d, uint16_t q, struct rte_mbuf *m);
/* The context a frame is addressed to (its UDP port), 0 when it names none of ours. */
uint16_t seg_dst_queue(const uint8_t *frame, uint32_t len);

/*
 * A node of 4 contexts on d knowing one peer. No timer fires within a test and acks leave
 * at once: a node does what the frames say, whenever they come.
 */
struct amrma_node *seg_node_new(struct seg_dev *d, uint16_t id, rte_be32_t ip,
				enum amrma_csum csum, struct rte_mempool *pool,
				const struct rte_ether_addr *peer_mac, uint16_t peer,
				rte_be32_t peer_ip);

/* --- the receivers and the comparison --- */

enum { SEG_CSUM_ON, SEG_CSUM_OFF, SEG_NB_PAIRS };

struct seg_outcome {
	int reason;			/* AMRMA_WIRE_OK, or the rx_rejected[] counted */
	uint64_t cnt[SEG_NB_CNT];	/* seg_cnt_name(): rx_frames first */
	uint64_t digest;		/* of what the handlers that ran saw */
	uint64_t calls;			/* handlers run */
};

struct seg_result {
	enum amrma_wire_err codec;	/* amrma_wire_parse() of the bytes */
	struct seg_outcome one;		/* in one segment */
	struct seg_outcome split;	/* in the chain */
};

/*
 * The pool of the delivered frames and two pairs of receivers (checksums on and off),
 * each with a handler at every index but AMRMA_AM_H_LEAVE. 0 or a negative errno.
 */
int seg_rcv_init(void);
/* Destroy them; returns the delivered mbufs that were not freed (0: none leaked). */
unsigned int seg_rcv_fini(void);
/* Where the counter of struct amrma_am_stats called name is in seg_outcome.cnt, or -1. */
int seg_cnt_index(const char *name);
/* Handlers run in all by receiver k (0: one segment, 1: split) of a pair. */
uint64_t seg_rcv_runs(unsigned int pair, unsigned int k);

/* A frame as a chain cut at cut[0..nb) (increasing); segment i > 0 starts shift[i] on. */
struct rte_mbuf *seg_chain(const uint8_t *p, uint32_t len, const uint16_t *cut,
			   unsigned int nb, const uint8_t *shift);

/*
 * Deliver p to both receivers of pair on queue q, in one segment and cut at cut[].
 * Returns whether they did the same, the first as the codec says.
 */
bool seg_diff(unsigned int pair, const uint8_t *p, uint16_t len, uint16_t q,
	      const uint16_t *cut, unsigned int nb, const uint8_t *shift, struct seg_result *r);

/* Print what differed; with hex, the frame too. */
void seg_report(FILE *f, const char *what, unsigned int pair, const uint8_t *p, uint16_t len,
		const uint16_t *cut, unsigned int nb, const uint8_t *shift,
		const struct seg_result *r, bool hex);

/* 1 to SEG_MAX_CUTS distinct cuts in (0, len): many in the headers, many odd; 0 if
 * len < 2. shift[1..nb]: where later segments start (odd addresses too). */
unsigned int seg_pick_cuts(uint64_t *rng, uint16_t len, uint16_t *cut, uint8_t *shift);

#endif
