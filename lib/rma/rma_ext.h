/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * For a layer built on the RMA engine (lib/reflect): the engine owns each context's
 * poll hook, so such a layer runs as an extension of it. Not installed.
 */
#ifndef AMRMA_RMA_EXT_H
#define AMRMA_RMA_EXT_H

#include "amrma_am.h"
#include "amrma_rma.h"

/*
 * Run fn(ctx, arg) at the start of the engine's poll hook of ctx, on every poll (NULL
 * removes it). One extension per context. Set it where ctx's poll hook cannot run (before
 * polling starts, or on the lcore that polls ctx).
 * @return 0, -EINVAL (no RMA engine on ctx), -EEXIST (another extension is set).
 */
int rma_ext_set(struct amrma_ctx *ctx, amrma_ctx_hook_t fn, void *arg);

/* The node an engine serves. */
struct amrma_node *rma_node(const struct amrma_rma *rma);

/* The arg of ctx's extension; NULL when none is set, or ctx has no engine (any more). */
void *rma_ext_arg(const struct amrma_ctx *ctx);

#endif
