/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays every file of the wire corpus through the fuzz harness. Names carry the
 * expected verdict: accept_*.bin must parse, reject_<reason>_<n>.bin must be rejected for
 * exactly that reason (amrma_wire_err_name()), anything else (fuzzer finds) must merely
 * not crash.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_wire.h"

static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		b = malloc((size_t)n + 1);
		if (b != NULL && fread(b, 1, (size_t)n, f) != (size_t)n) {
			free(b);
			b = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return b;
}

/* "reject_bad_type_03.bin" -> "bad_type"; NULL for other names. */
static const char *
wanted_reason(const char *name, char *out, size_t cap)
{
	const char *start = name + strlen("reject_"), *end = strrchr(name, '_');
	size_t n;

	if (strncmp(name, "reject_", strlen("reject_")) != 0 || end == NULL || end <= start)
		return NULL;
	n = (size_t)(end - start);
	if (n >= cap)
		return NULL;
	memcpy(out, start, n);
	out[n] = '\0';
	return out;
}

int
main(int argc, char **argv)
{
	int files = 0, checked = 0, errors = 0;
	struct dirent *de;
	DIR *d;

	if (argc != 2) {
		fprintf(stderr, "usage: %s corpus-dir\n", argv[0]);
		return 2;
	}
	d = opendir(argv[1]);
	if (d == NULL) {
		perror(argv[1]);
		return 2;
	}
	while ((de = readdir(d)) != NULL) {
		char path[4096], want[64];
		enum amrma_wire_err got;
		const char *reason;
		uint8_t *data;
		size_t len = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[1], de->d_name);
		data = slurp(path, &len);
		if (data == NULL) {
			perror(path);
			errors++;
			continue;
		}
		got = fuzz_wire_one(data, len);
		files++;
		reason = wanted_reason(de->d_name, want, sizeof(want));
		if (strncmp(de->d_name, "accept_", 7) == 0) {
			checked++;
			if (got != AMRMA_WIRE_OK) {
				fprintf(stderr, "%s: rejected (%s), expected to parse\n", de->d_name,
					amrma_wire_err_name(got));
				errors++;
			}
		} else if (reason != NULL) {
			checked++;
			if (strcmp(amrma_wire_err_name(got), reason) != 0) {
				fprintf(stderr, "%s: verdict %s, expected %s\n", de->d_name,
					amrma_wire_err_name(got), reason);
				errors++;
			}
		}
		free(data);
	}
	closedir(d);
	printf("wire corpus: %d files, %d with an expected verdict, %d errors\n", files, checked,
	       errors);
	return errors == 0 && checked > 0 ? 0 : 1;
}
