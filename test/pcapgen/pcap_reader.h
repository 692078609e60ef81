/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_PCAP_READER_H
#define TEST_PCAP_READER_H

/*
 * Minimal classic-pcap reader over a memory buffer, independent of the generator's writer.
 * The file is untrusted: every length is checked against what is left in the buffer.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCAP_READER_MAX_FILE	(64u << 20)
#define PCAP_READER_MAX_REC	262144u

struct pcap_reader {
	const uint8_t *buf;
	size_t len;
	size_t off;
	bool swap;		/* file byte order differs from the host's */
	uint32_t snaplen;
	uint32_t linktype;
};

/* Check the global header. 0, or -EPROTO (short or unknown magic/version). */
int pcap_reader_init(struct pcap_reader *r, const void *buf, size_t len);
/* Next record: 1 with frame/caplen/origlen set, 0 at a clean end, -EPROTO when truncated
 * or inconsistent. */
int pcap_reader_next(struct pcap_reader *r, const uint8_t **frame, size_t *caplen,
		size_t *origlen);
/* Read a whole file (at most PCAP_READER_MAX_FILE bytes) into a malloc'd buffer. */
int pcap_read_file(const char *path, uint8_t **buf, size_t *len);

#endif /* TEST_PCAP_READER_H */
