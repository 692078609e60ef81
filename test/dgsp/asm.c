/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "asm.h"

#define HDR 40

void
dasm_init(struct dasm *a)
{
	memset(a->buf, 0, HDR);
	a->len = HDR;
	a->ninsns = 0;
}

void
dasm_byte(struct dasm *a, uint8_t b)
{
	if (a->len < sizeof(a->buf))
		a->buf[a->len++] = b;
}

void
dasm_uv(struct dasm *a, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		dasm_byte(a, v ? b | 0x80 : b);
	} while (v);
}

static void
sv(struct dasm *a, int64_t v)
{
	dasm_uv(a, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void
dasm_copy(struct dasm *a, int64_t off, uint64_t len)
{
	dasm_byte(a, 1);
	sv(a, off);
	dasm_uv(a, len);
	a->ninsns++;
}

void
dasm_mcopy(struct dasm *a, int64_t off, uint64_t len, uint64_t count,
		int64_t stride)
{
	dasm_byte(a, 2);
	sv(a, off);
	dasm_uv(a, len);
	dasm_uv(a, count);
	sv(a, stride);
	a->ninsns++;
}

void
dasm_gosub(struct dasm *a, int64_t off, uint64_t target)
{
	dasm_byte(a, 3);
	sv(a, off);
	dasm_uv(a, target);
	a->ninsns++;
}

void
dasm_iterate(struct dasm *a, uint64_t count, int64_t stride)
{
	dasm_byte(a, 4);
	dasm_uv(a, count);
	sv(a, stride);
	a->ninsns++;
}

void
dasm_ret(struct dasm *a)
{
	dasm_byte(a, 5);
	dasm_byte(a, 0);
	a->ninsns++;
}

void
dasm_poke(struct dasm *a, size_t off, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		a->buf[off + i] = (uint8_t)(v >> (8 * i));
}

size_t
dasm_finish(struct dasm *a, uint64_t size, int64_t lb, int64_t extent)
{
	memcpy(a->buf, "DGSP", 4);
	a->buf[4] = 1;
	a->buf[5] = 0;
	dasm_poke(a, 6, 0, 2);
	dasm_poke(a, 8, a->ninsns, 4);
	dasm_poke(a, 12, a->len - HDR, 4);
	dasm_poke(a, 16, size, 8);
	dasm_poke(a, 24, (uint64_t)lb, 8);
	dasm_poke(a, 32, (uint64_t)extent, 8);
	return a->len;
}
