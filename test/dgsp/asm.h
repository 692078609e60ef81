/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test-side DGSP assembler: writes the wire form straight from
 * docs/dgsp.md, bypassing the library, so malformed programs can be built.
 */
#ifndef DGSP_TEST_ASM_H
#define DGSP_TEST_ASM_H

#include <stddef.h>
#include <stdint.h>

struct dasm {
	uint8_t buf[1 << 16];
	size_t len;
	uint32_t ninsns;
};

/* Start a program; the header is written by dasm_finish(). */
void dasm_init(struct dasm *a);
void dasm_copy(struct dasm *a, int64_t off, uint64_t len);
void dasm_mcopy(struct dasm *a, int64_t off, uint64_t len, uint64_t count,
		int64_t stride);
void dasm_gosub(struct dasm *a, int64_t off, uint64_t target);
void dasm_iterate(struct dasm *a, uint64_t count, int64_t stride);
void dasm_ret(struct dasm *a);
void dasm_byte(struct dasm *a, uint8_t b);	/* raw, not an instruction */
void dasm_uv(struct dasm *a, uint64_t v);	/* raw varint */
/* Write the 40-byte header in front; returns the total length. */
size_t dasm_finish(struct dasm *a, uint64_t size, int64_t lb, int64_t extent);
/* Little-endian field poke into a finished program. */
void dasm_poke(struct dasm *a, size_t off, uint64_t v, int n);

#endif
