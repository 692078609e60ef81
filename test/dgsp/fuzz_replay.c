/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays every file of the corpus directory through the fuzz harness.
 * Names carry the expected verdict: bad_<reason>_<n>.dgsp must be rejected
 * for exactly that reason, good_*.dgsp must be accepted, anything else
 * (fuzzer finds) must merely not crash.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
			fseek(f, 0, SEEK_SET) == 0) {
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

int
main(int argc, char **argv)
{
	int files = 0, bad = 0, errors = 0;
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
		enum amrma_dgsp_reason want, got = AMRMA_DGSP_OK;
		char path[4096];
		uint8_t *data;
		size_t len = 0;
		int rc;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[1], de->d_name);
		data = slurp(path, &len);
		if (data == NULL) {
			fprintf(stderr, "%s: unreadable\n", path);
			errors++;
			continue;
		}
		files++;
		LLVMFuzzerTestOneInput(data, len);
		rc = fuzz_one(data, len, &got);
		if (strncmp(de->d_name, "bad_", 4) == 0) {
			const char *tok = de->d_name + 4;
			const char *end = strchr(tok, '_');

			bad++;
			if (end == NULL ||
					case_reason(tok, (size_t)(end - tok), &want)) {
				fprintf(stderr, "%s: bad name\n", de->d_name);
				errors++;
			} else if (rc == 0 || got != want) {
				fprintf(stderr, "%s: got %s, want %s\n",
					de->d_name, amrma_dgsp_reason_str(got),
					amrma_dgsp_reason_str(want));
				errors++;
			}
		} else if (strncmp(de->d_name, "good_", 5) == 0 && rc != 0) {
			fprintf(stderr, "%s: rejected: %s\n", de->d_name,
				amrma_dgsp_reason_str(got));
			errors++;
		}
		free(data);
	}
	closedir(d);
	printf("replayed %d files (%d malicious), %d errors\n", files, bad,
		errors);
	return errors == 0 && files > 0 && bad > 0 ? 0 : 1;
}
