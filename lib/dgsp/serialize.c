/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Portable form (docs/dgsp.md): a 40-byte little-endian header followed by
 * the instruction stream, each instruction an opcode byte and LEB128
 * operands (signed ones zigzag-encoded). GOSUB targets are instruction
 * indices, so the form is position independent. The decoder trusts
 * nothing: it bounds allocation by the input length before allocating.
 */
#include <errno.h>
#include <string.h>

#include "dgsp_priv.h"

static const uint8_t dgsp_magic[4] = { 'D', 'G', 'S', 'P' };

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint64_t
zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t
unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Writes when out != NULL; always returns the encoded length. */
static size_t
put_uv(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		if (v)
			b |= 0x80;
		if (out)
			out[n] = b;
		n++;
	} while (v);
	return n;
}

struct rd {
	const uint8_t *p, *end;
	enum amrma_dgsp_reason err;
};

static uint64_t
get_uv(struct rd *r)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	for (;;) {
		uint8_t b;

		if (r->p >= r->end) {
			r->err = AMRMA_DGSP_E_TRUNCATED;
			return 0;
		}
		b = *r->p++;
		/* The 10th byte may only carry the top bit; no overlong zeros. */
		if (shift == 63 && (b & 0xfe)) {
			r->err = AMRMA_DGSP_E_VARINT;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (b == 0 && shift > 0) {
				r->err = AMRMA_DGSP_E_VARINT;
				return 0;
			}
			return v;
		}
		shift += 7;
	}
}

static size_t
encode_ins(const struct dgsp_ins *in, uint8_t *out)
{
	size_t n = 1;

	if (out)
		out[0] = in->op;
#define PUT(v) (n += put_uv(out ? out + n : NULL, (v)))
	switch (in->op) {
	case AMRMA_DGSP_COPY:
		PUT(zz(in->off));
		PUT(in->len);
		break;
	case AMRMA_DGSP_MCOPY:
		PUT(zz(in->off));
		PUT(in->len);
		PUT(in->count);
		PUT(zz(in->stride));
		break;
	case AMRMA_DGSP_GOSUB:
		PUT(zz(in->off));
		PUT(in->target);
		break;
	case AMRMA_DGSP_ITERATE:
		PUT(in->count);
		PUT(zz(in->stride));
		break;
	case AMRMA_DGSP_CONTROL:
		PUT(in->ctl);
		break;
	}
#undef PUT
	return n;
}

ssize_t
amrma_dgsp_serialize(const struct amrma_dgsp *p, void *buf, size_t len)
{
	size_t body = 0, need;
	uint8_t *o = buf;
	uint32_t i;

	if (p == NULL)
		return -EINVAL;
	for (i = 0; i < p->ninsns; i++)
		body += encode_ins(&p->ins[i], NULL);
	need = AMRMA_DGSP_HDR_LEN + body;
	if (body > UINT32_MAX)
		return -E2BIG;
	if (buf == NULL)
		return (ssize_t)need;
	if (len < need)
		return -ENOSPC;
	memcpy(o, dgsp_magic, 4);
	o[4] = AMRMA_DGSP_VERSION_MAJOR;
	o[5] = AMRMA_DGSP_VERSION_MINOR;
	put_le(o + 6, 0, 2);		/* flags */
	put_le(o + 8, p->ninsns, 4);
	put_le(o + 12, body, 4);
	put_le(o + 16, p->info.size, 8);
	put_le(o + 24, (uint64_t)p->lb, 8);
	put_le(o + 32, (uint64_t)p->extent, 8);
	o += AMRMA_DGSP_HDR_LEN;
	for (i = 0; i < p->ninsns; i++)
		o += encode_ins(&p->ins[i], o);
	return (ssize_t)need;
}

static enum amrma_dgsp_reason
decode(struct amrma_dgsp *p, struct rd *r)
{
	uint32_t i;

	for (i = 0; i < p->ninsns && r->err == AMRMA_DGSP_OK; i++) {
		struct dgsp_ins *in = &p->ins[i];
		uint64_t t;

		if (r->p >= r->end)
			return AMRMA_DGSP_E_TRUNCATED;
		in->op = *r->p++;
		switch (in->op) {
		case AMRMA_DGSP_COPY:
			in->off = unzz(get_uv(r));
			in->len = get_uv(r);
			break;
		case AMRMA_DGSP_MCOPY:
			in->off = unzz(get_uv(r));
			in->len = get_uv(r);
			in->count = get_uv(r);
			in->stride = unzz(get_uv(r));
			break;
		case AMRMA_DGSP_GOSUB:
			in->off = unzz(get_uv(r));
			t = get_uv(r);
			if (r->err == AMRMA_DGSP_OK && t >= p->ninsns)
				return AMRMA_DGSP_E_TARGET;
			in->target = (uint32_t)t;
			break;
		case AMRMA_DGSP_ITERATE:
			in->count = get_uv(r);
			in->stride = unzz(get_uv(r));
			break;
		case AMRMA_DGSP_CONTROL:
			t = get_uv(r);
			if (r->err == AMRMA_DGSP_OK && t != AMRMA_DGSP_CTL_RET)
				return AMRMA_DGSP_E_CONTROL;
			in->ctl = (uint8_t)t;
			break;
		default:
			return AMRMA_DGSP_E_OPCODE;
		}
	}
	if (r->err != AMRMA_DGSP_OK)
		return r->err;
	if (r->p != r->end)
		return AMRMA_DGSP_E_TRAILING;
	return AMRMA_DGSP_OK;
}

int
amrma_dgsp_load(const void *buf, size_t len,
		const struct amrma_dgsp_limits *lim, struct amrma_dgsp **out,
		enum amrma_dgsp_reason *why)
{
	struct amrma_dgsp_limits dl;
	enum amrma_dgsp_reason r, dummy;
	const uint8_t *b = buf;
	struct amrma_dgsp *p = NULL;
	uint32_t n, body;
	uint64_t size;
	struct rd rd;

	if (lim == NULL) {
		amrma_dgsp_limits_default(&dl);
		lim = &dl;
	}
	if (why == NULL)
		why = &dummy;
	if (out == NULL || (buf == NULL && len > 0)) {
		*why = AMRMA_DGSP_E_HEADER;
		return -EINVAL;
	}
	if (len < AMRMA_DGSP_HDR_LEN) {
		r = len >= 4 && memcmp(b, dgsp_magic, 4) != 0 ?
			AMRMA_DGSP_E_MAGIC : AMRMA_DGSP_E_TRUNCATED;
		goto fail;
	}
	if (memcmp(b, dgsp_magic, 4) != 0) {
		r = AMRMA_DGSP_E_MAGIC;
		goto fail;
	}
	/* Same major only; a newer minor may carry opcodes we do not know. */
	if (b[4] != AMRMA_DGSP_VERSION_MAJOR ||
			b[5] > AMRMA_DGSP_VERSION_MINOR) {
		r = AMRMA_DGSP_E_VERSION;
		goto fail;
	}
	if (get_le(b + 6, 2) != 0) {
		r = AMRMA_DGSP_E_FLAGS;
		goto fail;
	}
	n = (uint32_t)get_le(b + 8, 4);
	body = (uint32_t)get_le(b + 12, 4);
	size = get_le(b + 16, 8);
	if ((int64_t)get_le(b + 32, 8) < 0 || n == 0) {
		r = AMRMA_DGSP_E_HEADER;
		goto fail;
	}
	if (n > lim->max_insns) {
		r = AMRMA_DGSP_E_TOO_MANY_INSNS;
		goto fail;
	}
	if (body > len - AMRMA_DGSP_HDR_LEN) {
		r = AMRMA_DGSP_E_TRUNCATED;
		goto fail;
	}
	if (body < len - AMRMA_DGSP_HDR_LEN) {
		r = AMRMA_DGSP_E_TRAILING;
		goto fail;
	}
	/* Every instruction takes >= 2 bytes: allocation <= input size. */
	if ((uint64_t)n * 2 > body) {
		r = AMRMA_DGSP_E_TRUNCATED;
		goto fail;
	}
	p = dgsp_alloc(n);
	if (p == NULL) {
		r = AMRMA_DGSP_E_NOMEM;
		goto fail;
	}
	p->lb = (int64_t)get_le(b + 24, 8);
	p->extent = (int64_t)get_le(b + 32, 8);
	rd.p = b + AMRMA_DGSP_HDR_LEN;
	rd.end = rd.p + body;
	rd.err = AMRMA_DGSP_OK;
	r = decode(p, &rd);
	if (r == AMRMA_DGSP_OK)
		r = dgsp_analyze(p, lim);
	if (r == AMRMA_DGSP_OK && p->info.size != size)
		r = AMRMA_DGSP_E_SIZE_MISMATCH;
	if (r == AMRMA_DGSP_OK && lim->check_window)
		amrma_dgsp_check_use(p, lim->count, lim->win_lo, lim->win_hi,
				lim, &r);
	if (r != AMRMA_DGSP_OK)
		goto fail;
	*why = AMRMA_DGSP_OK;
	*out = p;
	return 0;
fail:
	amrma_dgsp_free(p);
	*why = r;
	return r == AMRMA_DGSP_E_NOMEM ? -ENOMEM : -EINVAL;
}
