/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DGSP_TEST_CASES_H
#define DGSP_TEST_CASES_H

#include "amrma_dgsp.h"
#include "asm.h"

/* Window and count the fuzz harness verifies every input against. */
#define FUZZ_WIN 65536
#define FUZZ_COUNT 2

void fuzz_limits(struct amrma_dgsp_limits *lim);
/* Fill a with malicious case i and the reason it must be rejected for. */
int bad_case(int i, struct dasm *a, enum amrma_dgsp_reason *why);
/* Fill a with valid case i. Both return -1 past the last case. */
int good_case(int i, struct dasm *a);
/* Short file-name token of a reason, and back. */
const char *case_token(enum amrma_dgsp_reason r);
int case_reason(const char *tok, size_t len, enum amrma_dgsp_reason *r);
/* The harness body: 0 accepted (and executed), -1 rejected. */
int fuzz_one(const uint8_t *data, size_t len, enum amrma_dgsp_reason *why);

#endif
