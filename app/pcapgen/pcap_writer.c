/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * All fields are written little-endian whatever the host, so the same seed gives the same
 * bytes everywhere; readers learn the byte order from the magic.
 */

#include <errno.h>

#include "pcap_writer.h"

#define PCAP_MAGIC_USEC	0xa1b2c3d4u
/* Fixed start time (2023-11-14): reproducible files, plausible in Wireshark. */
#define PCAP_TS_START	1700000000u

static void
put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void
put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, v & 0xffff);
	put_le16(p + 2, v >> 16);
}

int
pcapgen_pcap_open(struct pcapgen_pcap *w, const char *path)
{
	uint8_t h[24];

	w->f = fopen(path, "wb");
	if (w->f == NULL)
		return -errno;
	w->ts_sec = PCAP_TS_START;
	w->ts_usec = 0;
	put_le32(h, PCAP_MAGIC_USEC);
	put_le16(h + 4, 2);		/* version 2.4 */
	put_le16(h + 6, 4);
	put_le32(h + 8, 0);		/* thiszone */
	put_le32(h + 12, 0);		/* sigfigs */
	put_le32(h + 16, PCAPGEN_PCAP_SNAPLEN);
	put_le32(h + 20, PCAPGEN_LINKTYPE_ETHERNET);
	if (fwrite(h, sizeof(h), 1, w->f) != 1) {
		fclose(w->f);
		w->f = NULL;
		return -EIO;
	}
	return 0;
}

int
pcapgen_pcap_write(struct pcapgen_pcap *w, const void *frame, size_t len)
{
	uint8_t h[16];

	if (len > PCAPGEN_PCAP_SNAPLEN)
		return -EMSGSIZE;
	put_le32(h, w->ts_sec);
	put_le32(h + 4, w->ts_usec);
	put_le32(h + 8, (uint32_t)len);	/* captured */
	put_le32(h + 12, (uint32_t)len);	/* on the wire */
	if (fwrite(h, sizeof(h), 1, w->f) != 1 ||
	    (len && fwrite(frame, len, 1, w->f) != 1))
		return -EIO;
	/* 1 us apart: distinct, ordered timestamps */
	if (++w->ts_usec == 1000000) {
		w->ts_usec = 0;
		w->ts_sec++;
	}
	return 0;
}

int
pcapgen_pcap_close(struct pcapgen_pcap *w)
{
	int rc = 0;

	if (w->f == NULL)
		return 0;
	if (fflush(w->f) != 0 || ferror(w->f))
		rc = -EIO;
	if (fclose(w->f) != 0 && rc == 0)
		rc = -EIO;
	w->f = NULL;
	return rc;
}
