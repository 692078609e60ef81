/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal layout shared by the dgsp sources. Not installed. */
#ifndef DGSP_PRIV_H
#define DGSP_PRIV_H

#include "amrma_dgsp.h"

enum dgsp_tkind {
	TK_BASIC,
	TK_HVECTOR,
	TK_HSTRUCT,	/* also indexed, hindexed, blocks, dup */
	TK_RESIZED,
};

struct amrma_dgsp_type {
	uint32_t refcnt;
	enum dgsp_tkind kind;
	uint64_t size;
	int64_t lb, ub, true_lb, true_ub;
	bool lb_mark, ub_mark;	/* sticky explicit bounds (resized) */
	bool empty;		/* typemap has no entries and no markers */
	uint32_t depth;
	union {
		struct {
			uint64_t count, blocklen;
			int64_t stride;
			struct amrma_dgsp_type *child;
		} vec;
		struct {
			uint32_t n;
			uint64_t *bl;
			int64_t *disp;
			struct amrma_dgsp_type **child;
		} st;
		struct {
			struct amrma_dgsp_type *child;
		} rs;
	} u;
	struct amrma_dgsp *prog;	/* cached by commit */
};

/* Per-subroutine facts computed by the verifier (dgsp_analyze). */
struct dgsp_sub {
	uint32_t start;		/* first instruction */
	uint32_t term;		/* RET or ITERATE closing it */
	uint64_t iter;		/* body passes */
	int64_t stride;		/* base advance per pass */
	uint64_t body;		/* bytes per pass */
	uint64_t total;		/* bytes for all passes */
	uint64_t chunks;	/* chunks for all passes */
	uint64_t work;		/* chunks + calls for all passes */
	int64_t lo, hi;		/* footprint relative to base (hi exclusive) */
	bool touch;		/* any byte touched */
	uint32_t depth;		/* frames needed, self included */
};

/* In-memory instruction: operands plus cached analysis. */
struct dgsp_ins {
	uint8_t op;
	uint8_t ctl;
	uint32_t target;	/* GOSUB: callee instruction index */
	uint32_t callee;	/* GOSUB: callee subroutine index */
	int64_t off;
	uint64_t len;
	uint64_t count;
	int64_t stride;
	uint64_t pos;		/* packed offset within one body pass */
	uint64_t bytes;		/* packed bytes of this item */
};

struct amrma_dgsp {
	uint32_t ninsns, nsubs;
	struct dgsp_ins *ins;
	struct dgsp_sub *subs;
	uint32_t *sub_of;	/* instruction -> subroutine */
	int64_t lb, extent;
	struct amrma_dgsp_info info;
};

/* Verify p->ins (ops, targets, counts, bounds) and fill every cached fact. */
enum amrma_dgsp_reason dgsp_analyze(struct amrma_dgsp *p,
		const struct amrma_dgsp_limits *lim);
/* Allocate an empty program able to hold n instructions. */
struct amrma_dgsp *dgsp_alloc(uint32_t n);

#endif /* DGSP_PRIV_H */
