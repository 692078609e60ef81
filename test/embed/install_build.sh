#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# libamrma as a third party sees it: `meson install` into a temporary DESTDIR, then
#  1. every installed public header compiles on its own (-Wall -Wextra -Werror);
#  2. app/embed/embed.c compiles and links with only `pkg-config --cflags --libs libamrma`
#     (plus -lrte_net_ring: libdpdk.pc lists no driver libraries) against that tree;
#  3. the result runs against the installed library (LD_LIBRARY_PATH) and exits 0.
#
# pkg-config finds the installed libamrma.pc through PKG_CONFIG_PATH; the copy it reads
# has prefix= pointed into DESTDIR (what relocating an install means). Neither
# PKG_CONFIG_SYSROOT_DIR nor --define-prefix can do that here: both also rewrite the flags
# of libdpdk (Requires: libdpdk), which lives in the real /usr, not in DESTDIR. The script
# prints what they give.
#
# Usage: install_build.sh BUILD_DIR SOURCE_DIR [--keep]
set -euo pipefail
build=$(cd "${1:?usage: install_build.sh BUILD_DIR SOURCE_DIR}" && pwd)
src=$(cd "${2:?usage: install_build.sh BUILD_DIR SOURCE_DIR}" && pwd)
keep=${3:-}
cc=${CC:-cc}
tmp=$(mktemp -d /tmp/amrma-install.XXXXXX)
trap '[ "$keep" = --keep ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config missing"; exit 77; }

dest=$tmp/dest
meson install -C "$build" --no-rebuild --destdir "$dest" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }
pc=$(find "$dest" -name libamrma.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: no libamrma.pc installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
pcdir=$tmp/pkgconfig
mkdir -p "$pcdir"
prefix=$(sed -n 's/^prefix=//p' "$pc")
sed "s|^prefix=.*|prefix=$dest$prefix|" "$pc" >"$pcdir/libamrma.pc"
incdir=$(find "$dest" -type d -path '*/include/amrma' | head -1)
echo "installed (prefix $prefix): ${pc#"$dest"}"
echo "headers in ${incdir#"$dest"}: $(cd "$incdir" && echo *.h)"

status=0
# 1. each public header on its own
for h in "$incdir"/*.h; do
	printf '#include <%s>\nint main(void) { return 0; }\n' "$(basename "$h")" >"$tmp/h.c"
	# shellcheck disable=SC2046 # pkg-config's flags are meant to be split
	if ! PKG_CONFIG_PATH=$pcdir "$cc" -Wall -Wextra -Werror -c -o "$tmp/h.o" "$tmp/h.c" \
		$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags libamrma) \
		2>"$tmp/h.err"; then
		echo "FAIL: $(basename "$h") does not compile on its own:"
		head -5 "$tmp/h.err" | sed 's/^/    /'
		status=1
	fi
done
[ $status -eq 0 ] && echo "headers: each compiles alone with -Wall -Wextra -Werror"

# 1b. the library exports the public API and nothing else: amrma_* functions, no data
# (the log type variables are internal)
so=$(find "$dest" -name 'libamrma.so.*' -type f | head -1)
if command -v nm >/dev/null && [ -n "$so" ]; then
	bad=$(nm -D --defined-only "$so" | awk '$2 != "A" && !($2 == "T" && $3 ~ /^amrma_/)')
	if [ -n "$bad" ]; then
		echo "FAIL: exported beyond the public functions:"
		echo "$bad" | head -10 | sed 's/^/    /'
		status=1
	else
		echo "exports: $(nm -D --defined-only "$so" | awk '$2 == "T"' | wc -l) amrma_* functions, nothing else"
	fi
fi

# 2. the example, with nothing but pkg-config's flags
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs libamrma)
echo "pkg-config --cflags --libs libamrma:"
echo "  $flags" | sed "s|$dest|\$DESTDIR|g" | cut -c1-300
sysroot=$(PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest \
	pkg-config --cflags libamrma)
echo "(PKG_CONFIG_SYSROOT_DIR=\$DESTDIR on the unmodified .pc would give:" \
	"$(echo "$sysroot" | sed "s|$dest|\$DESTDIR|g" | cut -c1-110)...)"
if ! "$cc" -Wall -Wextra -Werror -O2 -o "$tmp/amrma-embed" "$src/app/embed/embed.c" \
	$flags -lrte_net_ring 2>"$tmp/cc.err"; then
	cat "$tmp/cc.err"
	echo "FAIL: embed.c does not build against the installed library"
	exit 1
fi
lib=$(LD_LIBRARY_PATH=$libdir ldd "$tmp/amrma-embed" | awk '/libamrma/ {print $3}')
echo "built amrma-embed; libamrma resolves to ${lib#"$dest"} (in DESTDIR)"
case $lib in
"$dest"/*) ;;
*) echo "FAIL: not linked against the installed libamrma"; exit 1 ;;
esac

# 3. run it
LD_LIBRARY_PATH=$libdir "$src/test/embed/run.sh" "$tmp/amrma-embed" 5000 16 || status=1
[ $status -eq 0 ] && echo "install_build: OK" || echo "install_build: FAILED"
exit $status
