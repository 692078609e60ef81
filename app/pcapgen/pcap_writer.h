/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PCAPGEN_PCAP_WRITER_H
#define PCAPGEN_PCAP_WRITER_H

/* Classic libpcap file writer (no libpcap): global header + one record per frame. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PCAPGEN_PCAP_SNAPLEN	65535u
#define PCAPGEN_LINKTYPE_ETHERNET	1u

struct pcapgen_pcap {
	FILE *f;
	uint32_t ts_sec;
	uint32_t ts_usec;
};

/* Create path and write the global header. Returns 0 or -errno. */
int pcapgen_pcap_open(struct pcapgen_pcap *w, const char *path);
/* Append one frame as a record. Returns 0 or -errno. */
int pcapgen_pcap_write(struct pcapgen_pcap *w, const void *frame, size_t len);
/* Flush and close; returns 0 or -errno (a failed flush means a short file). */
int pcapgen_pcap_close(struct pcapgen_pcap *w);

#endif /* PCAPGEN_PCAP_WRITER_H */
