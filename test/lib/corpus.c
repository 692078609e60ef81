/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

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

int
corpus_replay(const char *dir, corpus_check_t check, struct corpus_counts *c)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	memset(c, 0, sizeof(*c));
	if (d == NULL) {
		perror(dir);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		char path[4096];
		uint8_t *data;
		size_t len = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		data = slurp(path, &len);
		if (data == NULL) {
			fprintf(stderr, "%s: unreadable\n", path);
			c->errors++;
			continue;
		}
		c->files++;
		switch (check(de->d_name, data, len)) {
		case CORPUS_ACCEPTED:
			c->accepted++;
			break;
		case CORPUS_REJECTED:
			c->rejected++;
			break;
		case CORPUS_WRONG:
			c->errors++;
			break;
		case CORPUS_UNCHECKED:
			break;
		}
		free(data);
	}
	closedir(d);
	return 0;
}

int
corpus_main(int argc, char **argv, const char *what, corpus_check_t check)
{
	struct corpus_counts c;

	if (argc != 2) {
		fprintf(stderr, "usage: %s corpus-dir\n", argv[0]);
		return 2;
	}
	if (corpus_replay(argv[1], check, &c) != 0)
		return 2;
	printf("%s corpus: %d files, %d accepted and %d rejected as expected, %d errors\n",
	       what, c.files, c.accepted, c.rejected, c.errors);
	return c.errors == 0 && c.rejected > 0 ? 0 : 1;
}
