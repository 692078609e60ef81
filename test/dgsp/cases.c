/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Malformed/malicious and good programs, shared by test_serial (direct),
 * mkcorpus (writes test/dgsp/corpus/) and the fuzz replay (checks names).
 */
#include <stdio.h>
#include <string.h>

#include "cases.h"

static const char *const tokens[AMRMA_DGSP_E_MAX] = {
	[AMRMA_DGSP_OK] = "ok",
	[AMRMA_DGSP_E_TRUNCATED] = "truncated",
	[AMRMA_DGSP_E_MAGIC] = "magic",
	[AMRMA_DGSP_E_VERSION] = "version",
	[AMRMA_DGSP_E_FLAGS] = "flags",
	[AMRMA_DGSP_E_HEADER] = "header",
	[AMRMA_DGSP_E_TOO_MANY_INSNS] = "toomany",
	[AMRMA_DGSP_E_OPCODE] = "opcode",
	[AMRMA_DGSP_E_VARINT] = "varint",
	[AMRMA_DGSP_E_CONTROL] = "control",
	[AMRMA_DGSP_E_UNTERMINATED] = "unterminated",
	[AMRMA_DGSP_E_TARGET] = "target",
	[AMRMA_DGSP_E_RECURSION] = "recursion",
	[AMRMA_DGSP_E_ZERO_COUNT] = "zerocount",
	[AMRMA_DGSP_E_COUNT_LIMIT] = "countlimit",
	[AMRMA_DGSP_E_DEPTH_LIMIT] = "depth",
	[AMRMA_DGSP_E_WORK_LIMIT] = "work",
	[AMRMA_DGSP_E_OVERFLOW] = "overflow",
	[AMRMA_DGSP_E_SIZE_MISMATCH] = "size",
	[AMRMA_DGSP_E_TRAILING] = "trailing",
	[AMRMA_DGSP_E_WINDOW] = "window",
	[AMRMA_DGSP_E_NOMEM] = "nomem",
};

const char *
case_token(enum amrma_dgsp_reason r)
{
	return (unsigned int)r < AMRMA_DGSP_E_MAX ? tokens[r] : "?";
}

int
case_reason(const char *tok, size_t len, enum amrma_dgsp_reason *r)
{
	int i;

	for (i = 0; i < AMRMA_DGSP_E_MAX; i++) {
		if (strlen(tokens[i]) == len && memcmp(tokens[i], tok, len) == 0) {
			*r = (enum amrma_dgsp_reason)i;
			return 0;
		}
	}
	return -1;
}

void
fuzz_limits(struct amrma_dgsp_limits *lim)
{
	amrma_dgsp_limits_default(lim);
	lim->max_insns = 4096;
	lim->max_iter = 1u << 20;
	lim->max_work = 1u << 22;
	lim->max_bytes = 1u << 20;
	lim->check_window = true;
	lim->count = FUZZ_COUNT;
	lim->win_lo = -FUZZ_WIN;
	lim->win_hi = FUZZ_WIN;
}

/* A small valid program: one COPY then RET. */
static void
simple(struct dasm *a)
{
	dasm_init(a);
	dasm_copy(a, 0, 8);
	dasm_ret(a);
	dasm_finish(a, 8, 0, 8);
}

int
bad_case(int i, struct dasm *a, enum amrma_dgsp_reason *why)
{
	int k;

	switch (i) {
	case 0:		/* header cut short */
		simple(a);
		a->len = 20;
		*why = AMRMA_DGSP_E_TRUNCATED;
		break;
	case 1:		/* instruction stream cut short */
		simple(a);
		a->len--;
		*why = AMRMA_DGSP_E_TRUNCATED;
		break;
	case 2:
		simple(a);
		a->buf[3] = 'Q';
		*why = AMRMA_DGSP_E_MAGIC;
		break;
	case 3:
		simple(a);
		a->buf[4] = 2;
		*why = AMRMA_DGSP_E_VERSION;
		break;
	case 4:
		simple(a);
		a->buf[5] = 1;
		*why = AMRMA_DGSP_E_VERSION;
		break;
	case 5:
		simple(a);
		dasm_poke(a, 6, 1, 2);
		*why = AMRMA_DGSP_E_FLAGS;
		break;
	case 6:
		simple(a);
		dasm_poke(a, 32, (uint64_t)-1, 8);
		*why = AMRMA_DGSP_E_HEADER;
		break;
	case 7:
		simple(a);
		dasm_poke(a, 8, 0, 4);
		*why = AMRMA_DGSP_E_HEADER;
		break;
	case 8:
		simple(a);
		dasm_poke(a, 8, 5000, 4);
		*why = AMRMA_DGSP_E_TOO_MANY_INSNS;
		break;
	case 9:		/* claims 4000 insns in 5 bytes: no big allocation */
		simple(a);
		dasm_poke(a, 8, 4000, 4);
		*why = AMRMA_DGSP_E_TRUNCATED;
		break;
	case 10:
		simple(a);
		dasm_byte(a, 0);
		*why = AMRMA_DGSP_E_TRAILING;
		break;
	case 11:
		dasm_init(a);
		dasm_byte(a, 9);
		dasm_byte(a, 0);
		a->ninsns++;
		dasm_ret(a);
		dasm_finish(a, 0, 0, 0);
		*why = AMRMA_DGSP_E_OPCODE;
		break;
	case 12:
		dasm_init(a);
		dasm_byte(a, 0);
		dasm_byte(a, 0);
		a->ninsns++;
		dasm_ret(a);
		dasm_finish(a, 0, 0, 0);
		*why = AMRMA_DGSP_E_OPCODE;
		break;
	case 13:	/* 11-byte varint */
		dasm_init(a);
		dasm_byte(a, 1);
		for (k = 0; k < 10; k++)
			dasm_byte(a, 0x80);
		dasm_byte(a, 0x01);
		dasm_byte(a, 8);
		a->ninsns++;
		dasm_ret(a);
		dasm_finish(a, 8, 0, 8);
		*why = AMRMA_DGSP_E_VARINT;
		break;
	case 14:	/* non-minimal varint */
		dasm_init(a);
		dasm_byte(a, 1);
		dasm_byte(a, 0x80);
		dasm_byte(a, 0x00);
		dasm_byte(a, 8);
		a->ninsns++;
		dasm_ret(a);
		dasm_finish(a, 8, 0, 8);
		*why = AMRMA_DGSP_E_VARINT;
		break;
	case 15:
		dasm_init(a);
		dasm_copy(a, 0, 8);
		dasm_byte(a, 5);
		dasm_byte(a, 7);
		a->ninsns++;
		dasm_finish(a, 8, 0, 8);
		*why = AMRMA_DGSP_E_CONTROL;
		break;
	case 16:
		dasm_init(a);
		dasm_copy(a, 0, 8);
		dasm_copy(a, 8, 8);
		dasm_finish(a, 16, 0, 16);
		*why = AMRMA_DGSP_E_UNTERMINATED;
		break;
	case 17:	/* jump far out of range */
		dasm_init(a);
		dasm_gosub(a, 0, 99);
		dasm_ret(a);
		dasm_finish(a, 0, 0, 0);
		*why = AMRMA_DGSP_E_TARGET;
		break;
	case 18:	/* jump into the middle of a subroutine */
		dasm_init(a);
		dasm_gosub(a, 0, 3);
		dasm_ret(a);
		dasm_copy(a, 0, 4);
		dasm_copy(a, 8, 4);
		dasm_ret(a);
		dasm_finish(a, 4, 0, 16);
		*why = AMRMA_DGSP_E_TARGET;
		break;
	case 19:	/* infinite recursion: main calls itself */
		dasm_init(a);
		dasm_copy(a, 0, 1);
		dasm_gosub(a, 1, 0);
		dasm_ret(a);
		dasm_finish(a, 1, 0, 1);
		*why = AMRMA_DGSP_E_RECURSION;
		break;
	case 20:	/* loop through two subroutines */
		dasm_init(a);
		dasm_gosub(a, 0, 2);
		dasm_ret(a);
		dasm_gosub(a, 0, 0);
		dasm_ret(a);
		dasm_finish(a, 0, 0, 0);
		*why = AMRMA_DGSP_E_RECURSION;
		break;
	case 21:
		dasm_init(a);
		dasm_copy(a, 0, 8);
		dasm_iterate(a, 0, 8);
		dasm_finish(a, 0, 0, 8);
		*why = AMRMA_DGSP_E_ZERO_COUNT;
		break;
	case 22:
		dasm_init(a);
		dasm_mcopy(a, 0, 8, 0, 8);
		dasm_ret(a);
		dasm_finish(a, 0, 0, 8);
		*why = AMRMA_DGSP_E_ZERO_COUNT;
		break;
	case 23:	/* "infinite" loop */
		dasm_init(a);
		dasm_copy(a, 0, 1);
		dasm_iterate(a, UINT64_MAX, 0);
		dasm_finish(a, 0, 0, 1);
		*why = AMRMA_DGSP_E_COUNT_LIMIT;
		break;
	case 24:
		dasm_init(a);
		dasm_mcopy(a, 0, 1, (uint64_t)1 << 40, 1);
		dasm_ret(a);
		dasm_finish(a, (uint64_t)1 << 40, 0, 1);
		*why = AMRMA_DGSP_E_COUNT_LIMIT;
		break;
	case 25:	/* call chain deeper than the machine stack */
		dasm_init(a);
		for (k = 0; k < 20; k++) {
			dasm_gosub(a, 0, (uint64_t)(2 * k + 2));
			dasm_ret(a);
		}
		dasm_copy(a, 0, 1);
		dasm_ret(a);
		dasm_finish(a, 1, 0, 1);
		*why = AMRMA_DGSP_E_DEPTH_LIMIT;
		break;
	case 26:	/* nested loops: each count legal, product huge */
		dasm_init(a);
		dasm_gosub(a, 0, 2);
		dasm_ret(a);
		dasm_gosub(a, 0, 4);
		dasm_iterate(a, 1u << 20, 0);
		dasm_mcopy(a, 0, 1, 1u << 20, 0);
		dasm_iterate(a, 1u << 20, 0);
		dasm_finish(a, (uint64_t)1 << 60, 0, 1);
		*why = AMRMA_DGSP_E_WORK_LIMIT;
		break;
	case 27:
		simple(a);
		dasm_poke(a, 16, 9, 8);
		*why = AMRMA_DGSP_E_SIZE_MISMATCH;
		break;
	case 28:
		dasm_init(a);
		dasm_copy(a, INT64_MAX, 10);
		dasm_ret(a);
		dasm_finish(a, 10, 0, 10);
		*why = AMRMA_DGSP_E_OVERFLOW;
		break;
	case 29:
		dasm_init(a);
		dasm_mcopy(a, 0, 8, 1u << 20, INT64_MAX / 4);
		dasm_ret(a);
		dasm_finish(a, 8u << 20, 0, 8);
		*why = AMRMA_DGSP_E_OVERFLOW;
		break;
	case 30:	/* footprint below the window */
		dasm_init(a);
		dasm_copy(a, -FUZZ_WIN - 8, 8);
		dasm_ret(a);
		dasm_finish(a, 8, 0, 8);
		*why = AMRMA_DGSP_E_WINDOW;
		break;
	case 31:	/* second element runs past the window */
		dasm_init(a);
		dasm_copy(a, 0, 8);
		dasm_ret(a);
		dasm_finish(a, 8, 0, FUZZ_WIN);
		*why = AMRMA_DGSP_E_WINDOW;
		break;
	case 32:	/* strided reach past the window */
		dasm_init(a);
		dasm_gosub(a, 0, 2);
		dasm_ret(a);
		dasm_mcopy(a, 0, 8, 4, 1024);
		dasm_iterate(a, 64, 4096);
		dasm_finish(a, 8 * 4 * 64, 0, 0);
		*why = AMRMA_DGSP_E_WINDOW;
		break;
	case 33:	/* negative-stride loop reaching below the window */
		dasm_init(a);
		dasm_copy(a, 0, 4);
		dasm_iterate(a, 1000, -100);
		dasm_finish(a, 4000, 0, 0);
		*why = AMRMA_DGSP_E_WINDOW;
		break;
	default:
		return -1;
	}
	return 0;
}

int
good_case(int i, struct dasm *a)
{
	switch (i) {
	case 0:
		simple(a);
		break;
	case 1:		/* strided column, 2 elements */
		dasm_init(a);
		dasm_mcopy(a, 0, 8, 16, 64);
		dasm_ret(a);
		dasm_finish(a, 128, 0, 1024);
		break;
	case 2:		/* struct of vector through a subroutine with ITERATE */
		dasm_init(a);
		dasm_copy(a, 0, 4);
		dasm_gosub(a, 16, 4);
		dasm_copy(a, 4096, 2);
		dasm_ret(a);
		dasm_mcopy(a, 0, 3, 5, 7);
		dasm_copy(a, 40, 1);
		dasm_iterate(a, 10, 100);
		dasm_finish(a, 4 + 160 + 2, 0, 8192);
		break;
	case 3:		/* negative displacements and strides */
		dasm_init(a);
		dasm_gosub(a, -64, 2);
		dasm_ret(a);
		dasm_mcopy(a, 0, 2, 3, -9);
		dasm_iterate(a, 4, -30);
		dasm_finish(a, 24, -200, 300);
		break;
	default:
		return -1;
	}
	return 0;
}
