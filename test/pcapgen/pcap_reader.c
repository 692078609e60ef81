/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_reader.h"

#define MAGIC_USEC	0xa1b2c3d4u
#define MAGIC_NSEC	0xa1b23c4du
#define GLOBAL_HDR_LEN	24u
#define REC_HDR_LEN	16u

static uint32_t
get32(const struct pcap_reader *r, size_t off)
{
	uint32_t v;

	memcpy(&v, r->buf + off, sizeof(v));
	return r->swap ? __builtin_bswap32(v) : v;
}

static uint16_t
get16(const struct pcap_reader *r, size_t off)
{
	uint16_t v;

	memcpy(&v, r->buf + off, sizeof(v));
	return r->swap ? __builtin_bswap16(v) : v;
}

int
pcap_reader_init(struct pcap_reader *r, const void *buf, size_t len)
{
	uint32_t magic;

	memset(r, 0, sizeof(*r));
	r->buf = buf;
	r->len = len;
	if (len < GLOBAL_HDR_LEN)
		return -EPROTO;
	magic = get32(r, 0);
	if (magic != MAGIC_USEC && magic != MAGIC_NSEC) {
		r->swap = true;
		magic = get32(r, 0);
		if (magic != MAGIC_USEC && magic != MAGIC_NSEC)
			return -EPROTO;
	}
	if (get16(r, 4) != 2)
		return -EPROTO;
	r->snaplen = get32(r, 16);
	r->linktype = get32(r, 20);
	r->off = GLOBAL_HDR_LEN;
	return 0;
}

int
pcap_reader_next(struct pcap_reader *r, const uint8_t **frame, size_t *caplen,
		 size_t *origlen)
{
	uint32_t incl, orig;
	size_t left = r->len - r->off;

	if (left == 0)
		return 0;
	if (left < REC_HDR_LEN)
		return -EPROTO;
	incl = get32(r, r->off + 8);
	orig = get32(r, r->off + 12);
	if (incl > PCAP_READER_MAX_REC || (r->snaplen && incl > r->snaplen) || incl > orig ||
	    incl > left - REC_HDR_LEN)
		return -EPROTO;
	*frame = r->buf + r->off + REC_HDR_LEN;
	*caplen = incl;
	*origlen = orig;
	r->off += REC_HDR_LEN + incl;
	return 1;
}

int
pcap_read_file(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	size_t n;

	if (f == NULL)
		return -errno;
	b = malloc(PCAP_READER_MAX_FILE + 1);
	if (b == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(b, 1, PCAP_READER_MAX_FILE + 1, f);
	fclose(f);
	if (n > PCAP_READER_MAX_FILE) {
		free(b);
		return -EFBIG;
	}
	*buf = b;
	*len = n;
	return 0;
}
