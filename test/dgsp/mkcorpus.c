/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes the seed corpus: every bad/good case plus compiled types. */
#include <stdio.h>
#include <stdlib.h>

#include "cases.h"

static int
put(const char *dir, const char *name, const void *b, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(b, 1, len, f) != len) {
		perror(path);
		return -1;
	}
	return fclose(f);
}

int
main(int argc, char **argv)
{
	static struct dasm a;
	struct amrma_dgsp_type *i4, *v, *s, *t[2];
	uint64_t bl[2] = { 1, 2 }, sz[3] = { 6, 7, 8 }, sub[3] = { 2, 3, 4 };
	uint64_t st[3] = { 1, 2, 3 };
	int64_t d[2] = { 0, 24 };
	enum amrma_dgsp_reason why;
	char name[64];
	uint8_t buf[4096];
	int i;

	if (argc != 2)
		return 2;
	for (i = 0; bad_case(i, &a, &why) == 0; i++) {
		snprintf(name, sizeof(name), "bad_%s_%02d.dgsp",
			case_token(why), i);
		if (put(argv[1], name, a.buf, a.len))
			return 1;
	}
	for (i = 0; good_case(i, &a) == 0; i++) {
		snprintf(name, sizeof(name), "good_asm_%02d.dgsp", i);
		if (put(argv[1], name, a.buf, a.len))
			return 1;
	}
	amrma_dgsp_type_basic(4, &i4);
	amrma_dgsp_type_vector(5, 2, 3, i4, &v);
	t[0] = i4;
	t[1] = v;
	amrma_dgsp_type_struct(2, bl, d, t, &s);
	amrma_dgsp_type_commit(v);
	amrma_dgsp_type_commit(s);
	i = (int)amrma_dgsp_serialize(amrma_dgsp_type_program(v), buf,
			sizeof(buf));
	put(argv[1], "good_type_vector.dgsp", buf, (size_t)i);
	i = (int)amrma_dgsp_serialize(amrma_dgsp_type_program(s), buf,
			sizeof(buf));
	put(argv[1], "good_type_struct.dgsp", buf, (size_t)i);
	amrma_dgsp_type_free(s);
	amrma_dgsp_type_free(v);
	amrma_dgsp_type_subarray(3, sz, sub, st, AMRMA_DGSP_ORDER_FORTRAN, i4,
			&s);
	amrma_dgsp_type_commit(s);
	i = (int)amrma_dgsp_serialize(amrma_dgsp_type_program(s), buf,
			sizeof(buf));
	put(argv[1], "good_type_subarray.dgsp", buf, (size_t)i);
	amrma_dgsp_type_free(s);
	amrma_dgsp_type_free(i4);
	return 0;
}
