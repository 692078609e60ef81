#!/usr/bin/env bash
# Configure (once) and build. Usage: scripts/build.sh [BUILD_DIR [meson options...]]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" "$@" >/dev/null
elif [ $# -gt 0 ]; then
	meson configure "$dir" "$@" >/dev/null
fi
ninja -C "$dir" >/dev/null
