/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amrma_tag.h"
#include "fuzz_input.h"
#include "tag_model.h"

/* Small limits and value spaces: matches, bin collisions, wildcards and refusals abound. */
#define M_POSTED 48
#define M_UNEXP 40
#define M_BYTES 600

struct model_recv {
	uint64_t id, tag, ignore, len;
	uint32_t src;
};

struct model {
	struct model_recv posted[M_POSTED];	/* post order */
	int nposted;
	struct amrma_tag_msg unexp[M_UNEXP];	/* arrival order */
	int nunexp;
	uint64_t bytes;
};

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "tag model mismatch at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

static int
model_matches(const struct model_recv *r, const struct amrma_tag_msg *m)
{
	return amrma_tag_matches(r->tag, r->ignore, m->tag) &&
		(r->src == AMRMA_TAG_ANY_SRC || r->src == m->src);
}

/* Tags 0..5, sometimes with bit 60: wildcards over bit 60 then match two tags. */
static uint64_t
read_tag(struct fuzz_in *rd)
{
	uint8_t b = fuzz_u8(rd);

	return (uint64_t)(b % 6) | ((b & 0x80) ? 1ull << 60 : 0);
}

static void
unexp_remove(struct model *md, int i)
{
	md->bytes -= md->unexp[i].held_bytes;
	memmove(&md->unexp[i], &md->unexp[i + 1], (md->nunexp - i - 1) * sizeof(md->unexp[0]));
	md->nunexp--;
}

static void
posted_remove(struct model *md, int i)
{
	memmove(&md->posted[i], &md->posted[i + 1],
		(md->nposted - i - 1) * sizeof(md->posted[0]));
	md->nposted--;
}

void
tag_model_run(const uint8_t *data, size_t len, struct tag_model_counts *c)
{
	const struct amrma_tag_config cfg = { .max_posted = M_POSTED, .max_unexpected = M_UNEXP,
					      .max_unexpected_bytes = M_BYTES, .socket_id = -1 };
	struct fuzz_in rd = { data, len };
	struct amrma_tag_engine *e = amrma_tag_engine_create(&cfg);
	struct amrma_tag_stats st;
	struct amrma_tag_match m;
	static char buf[64];
	struct model *md;
	uint64_t cookie = 0;
	int i, ret;

	md = calloc(1, sizeof(*md));
	CHECK(e != NULL && md != NULL);
	memset(c, 0, sizeof(*c));
	while (rd.left > 0) {
		uint8_t op = fuzz_u8(&rd) % 8;

		if (op < 3) {			/* post a receive */
			struct amrma_tag_recv r = { .tag = read_tag(&rd), .buf = buf };
			uint8_t b = fuzz_u8(&rd);
			uint64_t id;

			r.ignore = (b & 3) == 0 ? AMRMA_TAG_ANY_TAG : (b & 3) == 1 ? 1ull << 60 : 0;
			r.src = (b & 0x0c) == 0 ? AMRMA_TAG_ANY_SRC : (uint32_t)((b >> 4) % 3);
			r.len = b >> 2;		/* sometimes shorter than the message */
			ret = amrma_tag_post_recv(e, &r, &id, &m);
			if (md->nposted == M_POSTED) {
				CHECK(ret == -ENOSPC);	/* pool full: refused before matching */
				continue;
			}
			for (i = 0; i < md->nunexp; i++) {
				struct model_recv mr = { 0, r.tag, r.ignore, r.len, r.src };

				if (model_matches(&mr, &md->unexp[i]))
					break;
			}
			if (i < md->nunexp) {
				CHECK(ret == 1);
				CHECK(m.msg.cookie == md->unexp[i].cookie);
				CHECK(m.copy_len == (md->unexp[i].len < r.len ?
						     md->unexp[i].len : r.len));
				CHECK(m.status == (md->unexp[i].len > r.len ? -EMSGSIZE : 0));
				unexp_remove(md, i);
				CHECK(amrma_tag_complete(e, id, 0) == 0);
				c->matched++;
			} else {
				CHECK(ret == 0);
				md->posted[md->nposted++] =
					(struct model_recv){ id, r.tag, r.ignore, r.len, r.src };
			}
		} else if (op < 7) {		/* a message arrives */
			struct amrma_tag_msg msg = { .tag = read_tag(&rd) };
			uint8_t b = fuzz_u8(&rd);

			msg.src = b % 3;
			msg.len = b >> 2;
			msg.held_bytes = (b & 0x80) ? msg.len * 8 : msg.len;
			msg.cookie = (void *)(uintptr_t)++cookie;
			ret = amrma_tag_arrive(e, &msg, &m);
			for (i = 0; i < md->nposted; i++)
				if (model_matches(&md->posted[i], &msg))
					break;
			if (i < md->nposted) {
				CHECK(ret == 1);
				CHECK(m.recv_id == md->posted[i].id);
				CHECK(m.msg.cookie == msg.cookie);
				CHECK(m.copy_len == (msg.len < md->posted[i].len ? msg.len :
						     md->posted[i].len));
				CHECK(m.status == (msg.len > md->posted[i].len ? -EMSGSIZE : 0));
				posted_remove(md, i);
				CHECK(amrma_tag_complete(e, m.recv_id, 0) == 0);
				c->matched++;
			} else if (md->nunexp == M_UNEXP || md->bytes + msg.held_bytes > M_BYTES) {
				CHECK(ret == -ENOBUFS);
				c->refused++;
			} else {
				CHECK(ret == 0);
				md->unexp[md->nunexp++] = msg;
				md->bytes += msg.held_bytes;
				c->queued++;
			}
		} else {			/* cancel a receive, purge a source, drain */
			uint8_t b = fuzz_u8(&rd);

			if ((b & 0x0f) == 0x0e) {
				uint32_t src = (b >> 4) % 3;
				int n = 0;

				for (i = md->nunexp - 1; i >= 0; i--)
					if (md->unexp[i].src == src) {
						unexp_remove(md, i);
						n++;
					}
				for (i = md->nposted - 1; i >= 0; i--)
					if (md->posted[i].src == src) {
						posted_remove(md, i);
						n++;
					}
				CHECK(amrma_tag_purge_src(e, src, NULL, NULL) == n);
				c->purged += n;
			} else if ((b & 1) && md->nposted > 0) {
				i = (b >> 1) % md->nposted;
				CHECK(amrma_tag_cancel(e, md->posted[i].id) == 0);
				CHECK(amrma_tag_cancel(e, md->posted[i].id) == -ENOENT);
				posted_remove(md, i);
				c->cancelled++;
			} else if (md->nunexp > 0) {
				struct amrma_tag_msg msg;

				CHECK(amrma_tag_unexpected_pop(e, &msg) == 1);
				CHECK(msg.cookie == md->unexp[0].cookie);
				unexp_remove(md, 0);
				c->drained++;
			}
		}
		amrma_tag_stats_get(e, &st);
		CHECK(st.posted == (uint32_t)md->nposted);
		CHECK(st.unexpected == (uint32_t)md->nunexp);
		CHECK(st.unexpected_bytes == md->bytes);
		CHECK(st.in_progress == 0);
	}
	amrma_tag_engine_free(e);
	free(md);
}
