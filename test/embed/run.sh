#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run the embedding example (app/embed/embed.c) with two lcores and no hugepages, under a
# unique --file-prefix whose runtime directory is removed afterwards.
# Usage: run.sh AMRMA_EMBED_BINARY [COUNT [WINDOW]]
set -u
bin=${1:?usage: run.sh AMRMA_EMBED_BINARY [COUNT [WINDOW]]}
shift
prefix=amrma_embed_$$
trap 'rm -rf "/var/run/dpdk/$prefix" "${XDG_RUNTIME_DIR:-/nonexistent}/dpdk/$prefix"' EXIT
# two lcores: the main one polls node 1, the service lcore runs node 2 (on one CPU both
# share it, which works, only slower)
if [ "$(nproc)" -ge 2 ]; then lcores=0@0,1@1; else lcores=0@0,1@0; fi
"$bin" --lcores "$lcores" --no-huge --no-pci --no-shconf -m 256 --file-prefix "$prefix" \
	--log-level lib.eal:error -- "$@"
