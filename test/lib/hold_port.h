/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port that keeps every frame it sent until asked to let go (amrma_net_ops.tx_cleanup,
 * rte_eth_tx_done_cleanup on a real port): NICs recycle TX descriptors lazily, net_memif
 * in zero-copy mode frees on its next TX call. While hold_stubborn is set it ignores the
 * request. One port at a time.
 */
#ifndef AMRMA_TEST_HOLD_PORT_H
#define AMRMA_TEST_HOLD_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "amrma_net.h"

extern bool hold_stubborn;		/* cleanups are ignored */
extern unsigned int hold_cleanups;	/* cleanups asked for */

/** dev sends through the holding port (its own ops underneath) until hold_port_detach(). */
void hold_port_attach(struct amrma_net_dev *dev);
/** Free every held frame and give dev its own ops back; nothing if not attached. */
void hold_port_detach(struct amrma_net_dev *dev);
/** Free every held frame, stubborn or not. */
void hold_port_release(void);
/** Frames held. */
unsigned int hold_nb_held(void);
/** Held frames' segments attached to [p, p + len) (external buffers). */
unsigned int hold_refs_into(const uint8_t *p, uint64_t len);

#endif
